//! Turning a `SubmitProofRequest` of each kind into work: `kinds` checks a request and builds
//! the built-in circuits (and names the kinds), `kind_error` says why a request cannot be
//! served, and, with the `filecoin` feature, `fil_kinds` checks and builds the Filecoin kinds.

#[cfg(feature = "filecoin")]
pub mod fil_kinds;
pub mod kind_error;
pub mod kinds;
