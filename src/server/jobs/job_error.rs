//! Why an accepted job failed ([`JobError`]): each reason typed up to the moment the job ends,
//! where its Display text becomes the error AwaitProof answers with, the journal keeps and
//! `/status` lists (so journals written before it read the same).

use crate::engine::EngineError;
use crate::keys::store::KeyLoadError;
use crate::server::requests::kinds::KindError;

/// Why an accepted job failed. (A request refused before acceptance is a
/// [`CallError`](crate::server::CallError); a cancelled job ends as cancelled, not failed.)
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Its built-in key could not be loaded or made.
    #[error(transparent)]
    Key(#[from] KeyLoadError),
    /// A Filecoin job could not be built (inputs, parameters, its key) or its proof was refused
    /// by the verifier; `kind` is the proof kind's name.
    #[cfg(feature = "filecoin")]
    #[error("{kind}: {source}")]
    Filecoin {
        /// The proof kind.
        kind: &'static str,
        /// Why.
        source: crate::filecoin::FilecoinError,
    },
    /// A blocking task of the job (`task`: the job builder, the verifier) stopped before it
    /// answered (it panicked or the runtime is shutting down).
    #[error("{kind}: the {task} stopped: {reason}")]
    Stopped {
        /// The proof kind.
        kind: &'static str,
        /// Which task.
        task: &'static str,
        /// Why.
        reason: String,
    },
    /// The engine failed the job (no room, a partition failed after its retries, ...).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The partition proofs could not be written out.
    #[error("{0}")]
    Proofs(String),
    /// After a restart, the journaled request bytes no longer decode.
    #[error("after a restart the request no longer parses: {0}")]
    Undecodable(#[from] prost::DecodeError),
    /// After a restart, the journaled request is refused by this build's checks.
    #[error("after a restart the request no longer parses: {0}")]
    Refused(#[from] KindError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_what_the_daemon_said_before_it_was_typed() {
        let e = JobError::Refused(KindError::Invalid("bad field".into()));
        assert_eq!(
            e.to_string(),
            "after a restart the request no longer parses: bad field"
        );
        let e = JobError::Stopped {
            kind: "PROOF_KIND_POREP_SEAL_COMMIT",
            task: "verifier",
            reason: "panicked".into(),
        };
        assert_eq!(
            e.to_string(),
            "PROOF_KIND_POREP_SEAL_COMMIT: the verifier stopped: panicked"
        );
        let e = JobError::Key(KeyLoadError::Made {
            circuit_id: "synthetic-16".into(),
            reason: "gone".into(),
        });
        assert_eq!(e.to_string(), "key synthetic-16: gone");
    }
}
