//! `baton serve`: a proving daemon speaking cuzk's gRPC API (`cuzk.v1.ProvingEngine`, our own
//! `proto/cuzk/v1/proving.proto`), with a journal that survives restarts, keys that can be
//! preloaded and evicted, `/metrics`, `/healthz` and cuzk's `/status` over HTTP, a bearer token,
//! client address ranges admitted without it, and TLS.
//!
//! Folders: `grpc` (the gate and the service) → `jobs` (job table, journal first; a job's run on
//! the [`Engine`](crate::Engine)); `requests` turns requests into circuits, `keys` holds and
//! evicts the proving keys, `web` serves the HTTP port. `proto` (the wire types) and `error`
//! (why a call was refused) are shared by all of them; `serve_error` says why the daemon did
//! not start or stopped.

pub mod error;
pub mod grpc;
pub mod jobs;
pub mod keys;
pub mod proto;
pub mod requests;
pub mod serve_error;
pub mod web;

use std::sync::Arc;
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::config::{Config, Listen};
use crate::engine::Engine;
pub use error::CallError;
pub use serve_error::ServerError;

/// The HTTP port when `metrics.listen` is unset.
pub const DEFAULT_HTTP: &str = "127.0.0.1:9821";

/// How often finished jobs past their retention are pruned from the journal.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// Resolves at the first SIGTERM or SIGINT; a second one ends the process at once (the journal
/// keeps the jobs not yet finished for the next start).
async fn first_signal() {
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot listen for SIGTERM/SIGINT; stop the daemon with SIGKILL");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    eprintln!(
        "baton serve: draining (a second signal stops at once; the journal keeps what is left)"
    );
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        eprintln!("baton serve: stopped before draining; unfinished jobs resume at the next start");
        std::process::exit(130);
    });
}

fn tls(cfg: &Config) -> Result<Option<ServerTlsConfig>, ServerError> {
    let Some((cert, key)) = &cfg.server.tls else {
        return Ok(None);
    };
    let read = |p: &std::path::Path| {
        std::fs::read(p).map_err(|e| ServerError::Tls(format!("{}: {e}", p.display())))
    };
    let identity = Identity::from_pem(read(cert)?, read(key)?);
    Ok(Some(ServerTlsConfig::new().identity(identity)))
}

/// Runs the daemon until SIGTERM (or SIGINT) has drained it: accepted jobs finish and are
/// journaled, then the engine stops. Prints the bound addresses on stdout first.
pub async fn serve(mut cfg: Config) -> Result<(), ServerError> {
    cfg.server.validate()?;
    // The daemon serves the HTTP port itself (its routes and gate beside the engine's), bound
    // before anything heavy starts.
    let http_addr = cfg
        .metrics_listen
        .take()
        .unwrap_or_else(|| DEFAULT_HTTP.into());
    let http_listener =
        std::net::TcpListener::bind(&http_addr).map_err(|source| ServerError::Bind {
            addr: format!("{http_addr} (metrics.listen)"),
            source,
        })?;
    let state = cfg.server.state_dir.clone();
    let journal = Arc::new(jobs::journal::Journal::open(&state)?);
    let retention_ms = cfg.server.retention_secs.saturating_mul(1000);
    let pruned = journal.prune(jobs::live::now_ms(), retention_ms)?;
    let last_seq = journal.last_seq()?;
    let engine_cfg = cfg.clone();
    let engine = tokio::task::spawn_blocking(move || Engine::start(engine_cfg))
        .await
        .map_err(|e| crate::engine::StartError::Interrupted(e.to_string()))
        .map_err(crate::EngineError::from)??;
    let engine = Arc::new(engine);
    // The daemon's one key store: built-in and Filecoin keys alike.
    let store = Arc::new(crate::keys::store::KeyStore::new());
    let keys = keys::held::Keys::new(store, state.join("keys"));
    let d = jobs::daemon::Daemon::new(engine.clone(), journal.clone(), keys, last_seq);
    let gate = grpc::access::Gate::of_config(&cfg.server, Some(engine.metric_handles().clone()));
    let web = web::routes::router(d.clone(), gate.clone(), cfg.synthesis_workers);
    let http = crate::http::serve_router(http_listener, web)
        .map_err(|source| ServerError::Bind {
            addr: format!("{http_addr} (metrics.listen)"),
            source,
        })?
        .to_string();
    let resumed = d.resume()?;
    tracing::info!(pruned, resumed, state = %state.display(), "journal opened");
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(PRUNE_EVERY).await;
            let j = journal.clone();
            let _ =
                tokio::task::spawn_blocking(move || j.prune(jobs::live::now_ms(), retention_ms))
                    .await;
        }
    });

    let max = usize::try_from(cfg.server.max_request_bytes).unwrap_or(usize::MAX);
    let svc = proto::proving_engine_server::ProvingEngineServer::new(grpc::service::Service::new(
        d.clone(),
    ))
    .max_decoding_message_size(max)
    .max_encoding_message_size(usize::MAX);
    let mut builder = Server::builder();
    if let Some(t) = tls(&cfg)? {
        builder = builder.tls_config(t)?;
    }
    if cfg.server.admits_anyone_remote() {
        tracing::warn!(
            listen = %cfg.server.listen,
            "TLS without server.token or server.allow_clients: every client that reaches this address is admitted (TLS encrypts, it does not authenticate clients)"
        );
    }
    let router = builder
        .layer(grpc::access::AccessLayer::new(
            gate,
            cfg.server.max_request_bytes,
        ))
        .add_service(svc);
    let drained = {
        let d = d.clone();
        async move {
            first_signal().await;
            d.drain().await;
        }
    };
    match &cfg.server.listen {
        Listen::Tcp(addr) => {
            let incoming = TcpIncoming::bind(*addr).map_err(|source| ServerError::Bind {
                addr: addr.to_string(),
                source,
            })?;
            let local = incoming.local_addr().map_err(|source| ServerError::Bind {
                addr: addr.to_string(),
                source,
            })?;
            println!(
                "baton serve: grpc {local} http {http} state {}",
                state.display()
            );
            router
                .serve_with_incoming_shutdown(incoming, drained)
                .await?;
        }
        Listen::Unix(path) => {
            // As cuzk does: Curio's default socket lives in a directory that may not exist yet.
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|source| ServerError::SocketDir {
                    dir: dir.display().to_string(),
                    listen: cfg.server.listen.to_string(),
                    source,
                })?;
            }
            // A socket file left by a killed daemon would make the bind fail.
            if std::fs::symlink_metadata(path)
                .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
            {
                let _ = std::fs::remove_file(path);
            }
            let listener =
                tokio::net::UnixListener::bind(path).map_err(|source| ServerError::Bind {
                    addr: cfg.server.listen.to_string(),
                    source,
                })?;
            println!(
                "baton serve: grpc {} http {http} state {}",
                cfg.server.listen,
                state.display()
            );
            let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
            router
                .serve_with_incoming_shutdown(incoming, drained)
                .await?;
        }
    }
    engine.shutdown().await;
    eprintln!("baton serve: drained and stopped");
    Ok(())
}
