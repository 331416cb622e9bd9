//! The daemon's errors: why it could not start ([`ServerError`]) and why a call was refused
//! ([`CallError`], each variant one gRPC status).

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

/// Why one call was refused; each variant maps to one gRPC status code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The request is malformed (INVALID_ARGUMENT).
    #[error("{0}")]
    Invalid(String),
    /// The proof kind is not served by this build (UNIMPLEMENTED).
    #[error("{0}")]
    Unimplemented(String),
    /// No such job or key (NOT_FOUND).
    #[error("{0}")]
    NotFound(String),
    /// The daemon is draining and takes no new jobs (UNAVAILABLE).
    #[error("the daemon is shutting down and takes no new jobs")]
    Draining,
    /// The operation conflicts with the current state, e.g. evicting a key in use
    /// (FAILED_PRECONDITION).
    #[error("{0}")]
    Precondition(String),
    /// The daemon failed (INTERNAL).
    #[error("{0}")]
    Internal(String),
}

impl From<CallError> for tonic::Status {
    fn from(e: CallError) -> Self {
        let msg = e.to_string();
        match e {
            CallError::Invalid(_) => tonic::Status::invalid_argument(msg),
            CallError::Unimplemented(_) => tonic::Status::unimplemented(msg),
            CallError::NotFound(_) => tonic::Status::not_found(msg),
            CallError::Draining => tonic::Status::unavailable(msg),
            CallError::Precondition(_) => tonic::Status::failed_precondition(msg),
            CallError::Internal(_) => tonic::Status::internal(msg),
        }
    }
}

impl From<crate::server::requests::kinds::KindError> for CallError {
    fn from(e: crate::server::requests::kinds::KindError) -> Self {
        match e {
            crate::server::requests::kinds::KindError::Invalid(m) => CallError::Invalid(m),
            crate::server::requests::kinds::KindError::Unimplemented(m) => {
                CallError::Unimplemented(m)
            }
            crate::server::requests::kinds::KindError::Precondition(m) => {
                CallError::Precondition(m)
            }
        }
    }
}

impl From<JournalError> for CallError {
    fn from(e: JournalError) -> Self {
        CallError::Internal(e.to_string())
    }
}
