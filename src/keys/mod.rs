//! Proving keys: the one store of them (`store`: file keys and built-in keys a caller makes,
//! taken bare, leased by jobs, pinned; `residency`: listing them and evicting the idle ones),
//! checking a key file once and then trusting it by identity or content (`trust`), and where
//! baton keeps its own files for a key, outside the parameter directory (`files`).
//!
//! There is no process-wide store: whoever starts things (a daemon, the CLI, a library caller)
//! makes a [`KeyStore`](store::KeyStore) and hands it down as `Arc<KeyStore>` (or `&KeyStore`).

pub mod files;
pub mod residency;
pub mod store;
pub mod trust;
