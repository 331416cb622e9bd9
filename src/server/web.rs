//! The daemon's HTTP port: the engine's `/metrics` and `/healthz`, and `/status` (cuzk's JSON
//! document, [`status_json`](super::status_json)), behind the gRPC service's gate: a client on
//! this machine always passes, another one needs an address in `server.allow_clients` or the
//! bearer token when either is set (401 otherwise, counted and logged like a gRPC refusal).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::access::{Gate, Peer};
use super::daemon::Daemon;
use super::status_json;
use crate::metrics::Endpoint;

/// The routes, gated by `gate`; `synthesis_workers` goes into `/status`.
pub fn router(d: Arc<Daemon>, gate: Gate, synthesis_workers: usize) -> Router {
    let engine = d.engine.clone();
    let render: crate::http::Render = Arc::new(move || engine.metric_handles().render());
    crate::http::routes(render)
        .route(
            "/status",
            get(move || {
                let d = d.clone();
                async move { status(&d, synthesis_workers).await }
            }),
        )
        .fallback(|| async {
            (StatusCode::NOT_FOUND, "try /metrics, /healthz or /status\n").into_response()
        })
        .layer(axum::middleware::from_fn_with_state(gate, guard))
}

/// `GET /status`: the document as JSON, readable from any web page (as cuzk's).
async fn status(d: &Daemon, synthesis_workers: usize) -> Response {
    let doc = status_json::snapshot(d, synthesis_workers)
        .await
        .map_err(|e| e.to_string())
        .and_then(|doc| serde_json::to_string(&doc).map_err(|e| e.to_string()));
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
    ];
    (code, headers, body).into_response()
}

/// Lets a request through the gate, or answers 401 saying what would admit it.
async fn guard(State(gate): State<Gate>, req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(Peer::Unknown, |c| Peer::Ip(c.0.ip().to_canonical()));
    let auth = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    match gate.check(Endpoint::Http, peer, auth, req.uri().path()) {
        Ok(()) => next.run(req).await,
        Err(why) => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            format!("{why}\n"),
        )
            .into_response(),
    }
}
