//! The crate's error type: one enum for the prover core, each variant with the numbers that explain it.

use bellperson::SynthesisError;

/// Everything the prover core can refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The witness violates a constraint: a·b ≠ c at `index`.
    #[error("circuit is not satisfied: constraint {index} (`{name}`) has a·b ≠ c")]
    Unsatisfied {
        /// Index of the first violated constraint, in synthesis order.
        index: usize,
        /// The constraint's annotation; its full namespace path where the circuit could be
        /// synthesized again to find it (the engine does; see `cs::constraint_path`).
        name: String,
    },
    /// The circuit's own synthesis code returned an error.
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    /// The circuit and the proving key disagree on a dimension.
    #[error(
        "circuit does not match the proving key: {what}: key has {key}, circuit has {circuit}"
    )]
    KeyMismatch {
        /// Which dimension differs.
        what: &'static str,
        /// The key's value.
        key: usize,
        /// The circuit's value.
        circuit: usize,
    },
    /// A key or proof file is truncated or holds bytes that are not a valid encoding.
    #[error("malformed {what} at byte {offset}: {reason}")]
    Malformed {
        /// What was being read ("proving key", "proof", ...).
        what: &'static str,
        /// Byte offset where the problem was found.
        offset: u64,
        /// What is wrong there.
        reason: String,
    },
    /// The engine skipped this partition because another partition of its job failed for good.
    #[error("skipped: another partition of the job failed")]
    Abandoned,
    /// An I/O error from the operating system.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The verifier was given a different number of public inputs than the key has.
    #[error("wrong number of public inputs: the key expects {expected}, got {got}")]
    PublicInputCount {
        /// Inputs the key expects (not counting the constant one).
        expected: usize,
        /// Inputs given.
        got: usize,
    },
    /// Two slices that must have the same length do not.
    #[error("length mismatch in {what}: {left} vs {right}")]
    LengthMismatch {
        /// Where.
        what: &'static str,
        /// First length.
        left: usize,
        /// Second length.
        right: usize,
    },
    /// A key component that must not be the point at infinity is.
    #[error("the key's {what} is the point at infinity")]
    Identity {
        /// Which element.
        what: &'static str,
    },
    /// A proving backend failed (device error, out of memory, ...).
    #[error("backend {backend} failed: {reason}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// A device failed: no device, a driver error, out of device memory, a kernel that did not
    /// compile, a refused launch (the GPU layer's own error, boxed: see [`DeviceError`]).
    #[error("GPU: {0}")]
    Device(DeviceError),
    /// The proof does not satisfy the pairing equation for these public inputs.
    #[error("proof does not verify against the given public inputs")]
    VerificationFailed,
    /// A circuit is too large for the field's two-adicity.
    #[error("domain of {size} elements exceeds the field's maximum of 2^{max_log}")]
    DomainTooLarge {
        /// Requested size.
        size: usize,
        /// log2 of the largest supported domain.
        max_log: u32,
    },
}

impl Error {
    /// Whether a device lacked the memory for the call ([`DeviceError::is_out_of_memory`]).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::Device(d) if d.is_out_of_memory())
    }
}

/// A device's failure, boxed so that the core names no device layer: the device's own error
/// (reach it with [`DeviceError::downcast_ref`]) and the two facts the engine decides by.
#[derive(Debug)]
pub struct DeviceError {
    source: Box<dyn std::error::Error + Send + Sync>,
    retryable: bool,
    out_of_memory: bool,
}

impl DeviceError {
    /// `source`, which another attempt may pass (`retryable`) and which came from a lack of
    /// device memory (`out_of_memory`: the call may run on the CPU instead).
    pub fn new(
        source: impl std::error::Error + Send + Sync + 'static,
        retryable: bool,
        out_of_memory: bool,
    ) -> Self {
        DeviceError {
            source: Box::new(source),
            retryable,
            out_of_memory,
        }
    }

    /// Whether another attempt may pass.
    pub fn retryable(&self) -> bool {
        self.retryable
    }

    /// Whether the device lacked memory for the call.
    pub fn is_out_of_memory(&self) -> bool {
        self.out_of_memory
    }

    /// The device layer's own error, if it is a `T`.
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.source.downcast_ref()
    }
}

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for DeviceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.source()
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
