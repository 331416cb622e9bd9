//! Why `baton serve` could not start or stopped ([`ServerError`]).

use crate::config::ConfigError;
use crate::engine::EngineError;
use crate::server::jobs::journal::JournalError;

/// Why `baton serve` could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The configuration is not usable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The `[server]` section is not usable.
    #[error(transparent)]
    ServerConfig(#[from] crate::config::ServerConfigError),
    /// The journal cannot be opened or read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The engine did not start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The listen address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The Unix socket's directory cannot be created.
    #[error("cannot create {dir}, the directory of the socket {listen}: {source}")]
    SocketDir {
        /// The directory.
        dir: String,
        /// The listen address.
        listen: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TLS certificate or key cannot be read.
    #[error("TLS: {0}")]
    Tls(String),
    /// The gRPC transport failed.
    #[error("gRPC transport: {0}")]
    Transport(#[from] tonic::transport::Error),
}
