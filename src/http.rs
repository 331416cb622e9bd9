//! The HTTP side: `GET /metrics` (Prometheus text) and `GET /healthz`, served by axum on its own
//! thread. Connections are served concurrently, so a client that connects and sends nothing
//! holds only its own connection. `baton serve` adds its routes and its gate to [`routes`] and
//! serves them with [`serve_router`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

/// Produces the text `/metrics` answers with (the registry's exposition, rendered per request).
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// The content type of the Prometheus text format.
pub const METRICS_CONTENT_TYPE: &str = "text/plain; version=0.0.4";

/// `/metrics` from `render` and `/healthz` answering `ok`, with no fallback.
pub fn routes(render: Render) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(move || {
                let render = render.clone();
                async move { ([(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)], render()) }
            }),
        )
        .route("/healthz", get(|| async { "ok\n" }))
}

/// [`routes`], anything else 404.
pub fn router(render: Render) -> Router {
    routes(render).fallback(|| async {
        (StatusCode::NOT_FOUND, "try /metrics or /healthz\n").into_response()
    })
}

/// Binds `addr` now (so a bad address is an error here) and serves [`router`] from a background
/// thread with its own single-threaded runtime. Returns the bound address.
pub fn serve_in_thread(addr: &str, render: Render) -> std::io::Result<SocketAddr> {
    serve_router(std::net::TcpListener::bind(addr)?, router(render))
}

/// Serves `app` on `listener` from a background thread with its own single-threaded runtime;
/// handlers find the client's address as `axum::extract::ConnectInfo<SocketAddr>`. Returns the
/// bound address.
pub fn serve_router(listener: std::net::TcpListener, app: Router) -> std::io::Result<SocketAddr> {
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("baton-http".into())
        .spawn(move || {
            runtime.block_on(async move {
                let served = async {
                    let listener = tokio::net::TcpListener::from_std(listener)?;
                    let app = app.into_make_service_with_connect_info::<SocketAddr>();
                    axum::serve(listener, app).await
                };
                if let Err(e) = served.await {
                    tracing::error!(error = %e, "the HTTP endpoint stopped");
                }
            })
        })?;
    Ok(local)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .expect("send");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("answer within 5 s");
        out
    }

    #[test]
    fn a_silent_client_does_not_block_the_others() {
        let addr =
            serve_in_thread("127.0.0.1:0", Arc::new(|| "baton_x 1\n".to_string())).expect("bind");
        // Connects and sends nothing, and stays connected during the requests below.
        let _silent = TcpStream::connect(addr).expect("connect");
        let half = TcpStream::connect(addr).expect("connect");
        (&half).write_all(b"GET /metr").expect("half a request");
        let metrics = get(addr, "/metrics");
        assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
        assert!(metrics.contains("baton_x 1"), "{metrics}");
        assert!(metrics.contains(METRICS_CONTENT_TYPE), "{metrics}");
        let health = get(addr, "/healthz");
        assert!(
            health.starts_with("HTTP/1.1 200") && health.ends_with("ok\n"),
            "{health}"
        );
        assert!(get(addr, "/nope").starts_with("HTTP/1.1 404"));
        assert!(serve_in_thread("not an address", Arc::new(String::new)).is_err());
    }
}
