//! The configuration's error: every problem named by its key.

/// A configuration problem, named by its key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A key has a value that cannot be used.
    #[error("config key `{key}`: {reason}")]
    Invalid {
        /// The dotted key.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// The file or the environment could not be read or parsed.
    #[error("config: {0}")]
    Source(#[from] config::ConfigError),
}
