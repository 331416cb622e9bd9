//! A backend's state tied to a proving key's host memory (the CUDA backend's page-locked
//! ranges of its queries): made once, dropped with the key, before its points.

use std::any::Any;
use std::sync::OnceLock;

/// The attachment slot of one key; the key declares it ahead of its points, so that it drops
/// first.
#[derive(Default)]
pub struct KeyAttachment(OnceLock<Box<dyn Any + Send + Sync>>);

impl KeyAttachment {
    /// The attached state, made by `make` on first use (the first caller's wins).
    pub fn get_or_init(
        &self,
        make: impl FnOnce() -> Box<dyn Any + Send + Sync>,
    ) -> &(dyn Any + Send + Sync) {
        self.0.get_or_init(make).as_ref()
    }
}

impl std::fmt::Debug for KeyAttachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.get() {
            Some(_) => f.write_str("KeyAttachment(set)"),
            None => f.write_str("KeyAttachment(none)"),
        }
    }
}
