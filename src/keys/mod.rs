//! Proving keys: the one store of them (`store`: file keys and built-in keys a caller makes,
//! taken bare, leased by jobs, pinned; `residency`: listing them and evicting the idle ones),
//! checking a key file once and then trusting it by identity or content (`trust`), and where
//! baton keeps its own files for a key, outside the parameter directory (`files`).
//!
//! There is no process-wide store: whoever starts things (a daemon, the CLI, a library caller)
//! makes a [`KeyStore`](crate::keys::store::KeyStore) and hands it down as `Arc<KeyStore>` (or
//! `&KeyStore`).
//!
//! What changed for callers when the daemon's store of built-in keys and the Filecoin store
//! became this one: `KeyStore::global()` is gone (make a `KeyStore::new()` and keep it);
//! `Filecoin::from_env()` owns a store of its own, `Filecoin::shared` takes an `Arc<KeyStore>`;
//! the Filecoin drop-in functions (`seal_commit_phase2`, ...) take `&KeyStore` after the engine;
//! `FilWork::build` takes the daemon's `Arc<KeyStore>`;
//! [`KeyLoadError`](crate::keys::store::KeyLoadError) is an enum (a file, or a maker);
//! [`KeyInfo`](crate::keys::residency::KeyInfo) names its key by
//! [`KeyId`](crate::keys::store::KeyId) instead of a path and tells its engine id and pin; the
//! daemon takes its keys as `server::keys::held::Keys`. `load`, `get`, `touch`, `list`, `idle`
//! and `evict` answer as before for file keys.

pub mod files;
pub mod residency;
pub mod store;
pub mod trust;
