//! The status page: `GET /`, one self-contained HTML file (`status_page.html`: no external
//! assets, a small script polling `status`), served on the daemon's HTTP port
//! ([`web`](super::routes)) and on the CLI's `--status-port` ([`serve_engine`]), where `/status`
//! is the engine's document without a daemon.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::status_build;
use super::status_json::StatusDoc;
use crate::engine::Engine;

/// The page: HTML, CSS and script in one file.
pub const PAGE: &str = include_str!("status_page.html");

/// What the page may load: nothing from elsewhere, its own inline script and style, and
/// `status` from where it came from.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'";

/// `GET /`: the page.
pub async fn page() -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (headers, PAGE).into_response()
}

/// `GET /status`: the document as JSON (500 with `{"error": ...}` when it cannot be had),
/// readable from any web page, as cuzk's.
pub fn json(doc: Result<StatusDoc, String>) -> Response {
    let doc = doc.and_then(|doc| serde_json::to_string(&doc).map_err(|e| e.to_string()));
    let (code, body) = match doc {
        Ok(body) => (StatusCode::OK, body),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({ "error": e }).to_string(),
        ),
    };
    let headers = [
        (header::CONTENT_TYPE, "application/json"),
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (code, headers, body).into_response()
}

/// Serves the page, `/status` (the engine's document: its jobs named `job-{id}`, of kind
/// `kind`), `/metrics` and `/healthz` on 127.0.0.1:`port` (0: any free port) from a background
/// thread, for a local run's `--status-port`: loopback only, so no gate. Returns the bound
/// address.
pub fn serve_engine(
    port: u16,
    engine: Arc<Engine>,
    synthesis_workers: usize,
    kind: &str,
) -> std::io::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    let started = Instant::now();
    let kind: Arc<str> = kind.into();
    let metrics = engine.clone();
    let render: crate::http::Render = Arc::new(move || metrics.metric_handles().render());
    let app = crate::http::routes(render)
        .route("/", get(page))
        .route(
            "/status",
            get(move || {
                let (engine, kind) = (engine.clone(), kind.clone());
                async move {
                    let doc = engine.status().await.map(|st| {
                        let up = started.elapsed().as_secs_f64();
                        status_build::of_engine(&engine, &st, synthesis_workers, up, &kind, started)
                    });
                    json(doc.map_err(|e| e.to_string()))
                }
            }),
        )
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "try /, /status, /metrics or /healthz\n",
            )
                .into_response()
        });
    crate::http::serve_router(listener, app)
}
