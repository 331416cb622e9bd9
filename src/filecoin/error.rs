//! The Filecoin layer's error: every bad input named, with the file or value that is wrong.

use std::path::PathBuf;

use crate::engine::status::EngineError;
use crate::keys::store::KeyLoadError;

/// Why a Filecoin job could not be built, proved or finished.
#[derive(Debug, thiserror::Error)]
pub enum FilecoinError {
    /// The C1 file is not JSON of a known shape (truncated, garbled, or another document).
    #[error("C1 output: {reason}")]
    C1Json {
        /// What serde found, with line and column.
        reason: String,
    },
    /// The envelope's `Phase1Out` is not base64.
    #[error("C1 envelope: Phase1Out is not base64: {reason}")]
    C1Base64 {
        /// The decoder's message.
        reason: String,
    },
    /// A bare C1 output carries no sector number, and none was given.
    #[error("a bare C1 output carries no sector number: give the sector id")]
    MissingSectorId,
    /// Two sources of the same value disagree (envelope vs C1, caller vs C1, ...).
    #[error("{what}: {left} vs {right}")]
    Mismatch {
        /// Which value.
        what: &'static str,
        /// One side, described.
        left: String,
        /// The other side, described.
        right: String,
    },
    /// An input value is out of range or malformed (a zero commitment, a bad randomness, ...).
    #[error("bad input: {0}")]
    BadInput(String),
    /// The proof type or feature is not built (yet).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// No parameters file where filecoin-proofs would look for it.
    #[error("no Groth16 parameters for {circuit}: looked for {} (set FIL_PROOFS_PARAMETER_CACHE, or make test parameters with `baton fil-params`)", path.display())]
    ParamsMissing {
        /// The circuit, e.g. `porep-32g`.
        circuit: String,
        /// The file looked for.
        path: PathBuf,
    },
    /// The parameters file belongs to another circuit.
    #[error("{} does not hold the parameters of {circuit}: the key has {key} {what}, the circuit {expected}", path.display())]
    ParamsMismatch {
        /// The circuit the file was read for.
        circuit: String,
        /// The file.
        path: PathBuf,
        /// Which dimension differs.
        what: &'static str,
        /// The key's value.
        key: usize,
        /// The circuit's value.
        expected: usize,
    },
    /// The parameters file could not be read or failed its point check.
    #[error(transparent)]
    Key(#[from] KeyLoadError),
    /// The vanilla proofs do not verify: nothing was proved.
    #[error("vanilla proofs do not verify ({0}); nothing was proved")]
    VanillaInvalid(String),
    /// filecoin-proofs refused an input or failed.
    #[error("filecoin-proofs, {during}: {reason}")]
    Upstream {
        /// The step.
        during: &'static str,
        /// Its message.
        reason: String,
    },
    /// filecoin-proofs panicked on this input (caught; nothing else is affected).
    #[error("filecoin-proofs panicked while {during}: {reason}")]
    Panicked {
        /// The step.
        during: &'static str,
        /// The panic's message.
        reason: String,
    },
    /// The engine refused or failed the request.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The engine returned another number of proofs than the job has partitions.
    #[error("expected {expected} partition proofs, got {got}")]
    ProofCount {
        /// Partitions of the job.
        expected: usize,
        /// Proofs received.
        got: usize,
    },
    /// The finished proof does not verify with filecoin-proofs' verifier; it is not returned.
    #[error("the {kind} proof does not verify with filecoin-proofs' verifier{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Rejected {
        /// The proof kind.
        kind: &'static str,
        /// The verifier's error, when it returned one rather than `false`.
        detail: Option<String>,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The prover core failed (key generation, encoding).
    #[error(transparent)]
    Core(#[from] crate::groth16::error::Error),
}

/// Result with [`FilecoinError`].
pub type Result<T, E = FilecoinError> = std::result::Result<T, E>;

impl FilecoinError {
    /// An upstream error during `during`.
    pub(crate) fn upstream(during: &'static str, e: impl std::fmt::Display) -> Self {
        FilecoinError::Upstream {
            during,
            reason: format!("{e:#}"),
        }
    }
}
