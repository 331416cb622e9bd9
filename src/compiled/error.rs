//! Errors of the compiled-circuit layer: recording, the cache file, witness-only synthesis and
//! the sparse evaluation. Each names what is wrong and the numbers that show it.

use std::path::PathBuf;

use bellperson::SynthesisError;

/// Everything recording, loading or running a compiled circuit can refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum CompiledError {
    /// The circuit's own synthesis code returned an error.
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    /// Reading or writing a recording file failed in the operating system.
    #[error("recording file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The recording file ends before the section that should be at `offset`.
    #[error(
        "recording file {path} is truncated: {section} at byte {offset}, file has {len} bytes"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The section that is missing or cut short.
        section: &'static str,
        /// Where that section starts (or was being read).
        offset: u64,
        /// The file's length.
        len: u64,
    },
    /// The recording file holds bytes that are not a valid recording.
    #[error("recording file {path} is corrupt: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The recording file was written by another format version.
    #[error(
        "recording file {path} has format version {found}; this build reads version {supported}"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },
    /// The recording file was written for another proving key.
    #[error(
        "recording file {path} was made for another proving key (its verifying-key tag differs)"
    )]
    OtherKey {
        /// The file.
        path: PathBuf,
    },
    /// A recording does not fit the proving key it is meant to serve.
    #[error("recording does not match the proving key: {what}: key has {key}, recording has {recording}")]
    KeyShape {
        /// Which dimension differs.
        what: &'static str,
        /// The key's value.
        key: usize,
        /// The recording's value.
        recording: usize,
    },
    /// The circuit's witness code did something other than what was recorded.
    #[error("circuit diverges from its recording: {what}: recording has {recording}, circuit has {circuit}")]
    Diverged {
        /// What was counted.
        what: &'static str,
        /// The recorded count.
        recording: usize,
        /// The count this synthesis produced.
        circuit: usize,
    },
    /// The witness does not satisfy the recorded constraints: a·b ≠ c at `index`.
    #[error("witness does not satisfy the recorded constraint {index} (a·b ≠ c)")]
    Unsatisfied {
        /// Index of the first violated constraint, in synthesis order.
        index: usize,
    },
    /// A constraint uses a variable the circuit never allocated.
    #[error(
        "constraint {constraint} uses {kind} variable {index}, but only {allocated} were allocated"
    )]
    Unallocated {
        /// The constraint, in synthesis order.
        constraint: usize,
        /// "input" or "aux".
        kind: &'static str,
        /// The variable's index.
        index: usize,
        /// How many variables of that kind exist.
        allocated: usize,
    },
    /// A count exceeds what the compact encoding can index.
    #[error("circuit too large to record: {what} is {count}, at most {max}")]
    TooLarge {
        /// What overflowed.
        what: &'static str,
        /// Its value.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// This circuit type cannot be synthesized through a recording (it is not a bellperson
    /// circuit the engine can run on its own constraint systems).
    #[error("this circuit does not support compiled synthesis")]
    Unsupported,
    /// A bug in this layer (a panicked helper thread, a recording failing its own checks).
    #[error("internal error in the compiled path: {reason}")]
    Internal {
        /// What went wrong.
        reason: String,
    },
    /// A witness handed to the evaluation has another length than the recording.
    #[error("witness length mismatch: {what}: recording has {recording}, witness has {witness}")]
    WitnessLength {
        /// "inputs" or "aux".
        what: &'static str,
        /// The recorded count.
        recording: usize,
        /// The witness's length.
        witness: usize,
    },
}

impl From<CompiledError> for crate::Error {
    fn from(e: CompiledError) -> Self {
        match e {
            CompiledError::Synthesis(s) => crate::Error::Synthesis(s),
            CompiledError::Unsatisfied { index } => crate::Error::Unsatisfied {
                index,
                name: "(compiled path: name not recorded)".into(),
            },
            CompiledError::KeyShape {
                what,
                key,
                recording,
            } => crate::Error::KeyMismatch {
                what,
                key,
                circuit: recording,
            },
            other => crate::Error::Malformed {
                what: "circuit recording",
                offset: 0,
                reason: other.to_string(),
            },
        }
    }
}
