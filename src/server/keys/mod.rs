//! The resident proving keys: `builtin` the daemon's store of built-in circuit keys (leased per
//! job, pinned by PreloadSRS), with the `filecoin` feature `filecoin` preloading, evicting and
//! listing the Filecoin keys, and `eviction` evicting either on request and under memory
//! pressure (least recently used idle key first). They take the engine and the key store, not the
//! daemon: `jobs` and `grpc` sit above them.

pub mod builtin;
pub mod eviction;
#[cfg(feature = "filecoin")]
pub mod filecoin;
