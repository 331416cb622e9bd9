//! The daemon's HTTP port: the engine's `/metrics` and `/healthz`, `/status` (cuzk's JSON
//! document, [`status_json`](super::status_json)) and `/`, the page that draws it
//! ([`status_page`](super::status_page)), behind the gRPC service's gate: a client on
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

use super::{status_build, status_page};
use crate::metrics::Endpoint;
use crate::server::grpc::access::{Gate, Peer};
use crate::server::jobs::daemon::Daemon;

/// The routes, gated by `gate`; `synthesis_workers` goes into `/status`.
pub fn router(d: Arc<Daemon>, gate: Gate, synthesis_workers: usize) -> Router {
    let engine = d.engine.clone();
    let render: crate::http::Render = Arc::new(move || engine.metric_handles().render());
    crate::http::routes(render)
        .route("/", get(status_page::page))
        .route(
            "/status",
            get(move || {
                let d = d.clone();
                async move {
                    let doc = status_build::snapshot(&d, synthesis_workers).await;
                    status_page::json(doc.map_err(|e| e.to_string()))
                }
            }),
        )
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "try /, /status, /metrics or /healthz\n",
            )
                .into_response()
        })
        .layer(axum::middleware::from_fn_with_state(gate, guard))
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
