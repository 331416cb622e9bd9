//! The daemon's side of the proving keys, thin over the one [`crate::KeyStore`] the daemon owns:
//! `held` the daemon's handle on it ([`Keys`](held::Keys): the store, where built-in keys are
//! cached, the turn to make room), mapping a circuit id (built-in in `builtin`, Filecoin in
//! `filecoin` with the feature) to where its key comes from; `pins` PreloadSRS and GetStatus, and
//! `eviction` EvictSRS and eviction under memory pressure (least recently used idle key first).
//! Every key, built-in or Filecoin, goes the same way: the store pins or leases it, the engine
//! pins it so that the ledger counts its bytes as resident, and eviction undoes both. They take
//! the engine and the keys, not the daemon: `jobs` and `grpc` sit above them.

pub mod builtin;
pub mod eviction;
#[cfg(feature = "filecoin")]
pub mod filecoin;
pub mod held;
pub mod pins;
