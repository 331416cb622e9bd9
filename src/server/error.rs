//! Why a call to the daemon was refused ([`CallError`], each variant one gRPC status). A leaf:
//! it names no other module of the daemon, so every one of them may use it; the conversions from
//! their own errors sit beside those errors.

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
