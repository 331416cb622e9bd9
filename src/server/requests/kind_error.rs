//! Why a request cannot be served, as the request parsers (built-in and Filecoin kinds) say it;
//! the service maps each variant to its gRPC status.

use crate::server::error::CallError;

/// Why a request cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    /// The request is malformed (maps to INVALID_ARGUMENT).
    #[error("{0}")]
    Invalid(String),
    /// The kind (or this proof type of it) exists on the wire but this build does not prove it
    /// (UNIMPLEMENTED); the message names it.
    #[error("{0}")]
    Unimplemented(String),
    /// The request is well formed but the daemon cannot serve it as things stand, e.g. its
    /// parameters file is missing (FAILED_PRECONDITION); the message names what is missing.
    #[error("{0}")]
    Precondition(String),
}

impl From<KindError> for CallError {
    fn from(e: KindError) -> Self {
        match e {
            KindError::Invalid(m) => CallError::Invalid(m),
            KindError::Unimplemented(m) => CallError::Unimplemented(m),
            KindError::Precondition(m) => CallError::Precondition(m),
        }
    }
}
