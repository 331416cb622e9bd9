//! baton: an actor-model Groth16 proving engine for BLS12-381.
//!
//! Proofs are byte-compatible with bellperson and verify with its verifier. The prover core
//! ([`prove`], [`ProvingKey`], [`verify()`]) works without any actor; the engine that pipelines
//! synthesis, the GPU and the G2 MSM under a memory budget is described in `actors.md`.
#![warn(missing_docs)]

#[macro_use]
mod macros;

/// The engine's actors.
pub mod actors;
/// Proving primitives behind a trait (CPU reference, CUDA).
pub mod backend;
/// Which backend each GPU actor runs, and the real stages on them.
pub mod backend_pick;
/// Where files are kept between runs.
pub mod cache;
/// Circuits shipped for examples, tests and benchmarks.
pub mod circuits;
/// Compiled circuits: a recorded R1CS, witness-only synthesis, sparse a/b/c.
pub mod compiled;
/// Engine configuration.
pub mod config;
/// The proving constraint system and density trackers.
pub mod cs;
/// Radix-2 evaluation domain and the H computation.
pub mod domain;
/// The embedding API.
pub mod engine;
/// The crate's error type.
pub mod error;
/// Filecoin proofs (PoRep C2, PoSt, SnapDeals) through the engine (feature `filecoin`).
#[cfg(feature = "filecoin")]
pub mod filecoin;
/// GPU backends (CUDA behind the `cuda` feature).
pub mod gpu;
/// HTTP endpoints `/metrics` and `/healthz` (axum).
pub mod http;
/// Proving and verifying keys in bellperson's `.params` layout.
pub mod key;
/// baton's own files for a key file (recording, check record): where they live, by identity.
pub mod key_files;
/// A process-wide store of proving keys, shared by every job (preload, list, evict).
pub mod key_store;
/// Checking a key file once, then trusting it by identity or content.
pub mod key_trust;
/// The memory-budget ledger (no actix inside).
pub mod ledger;
/// Messages between the actors.
pub mod messages;
/// Prometheus metrics.
pub mod metrics;
/// CPU multi-scalar multiplication through blst.
pub mod msm;
/// The device share of a partition as one backend call.
pub mod partition;
/// The proving stages as swappable traits.
pub mod pipeline;
/// The Groth16 proof and its encoding.
pub mod proof;
/// Proving in stages.
pub mod prover;
/// A proving request and its partitions' footprint.
pub mod request;
/// Admission order: priorities, cancellation, retries (no actix inside).
pub mod scheduler;
/// The `baton serve` daemon: cuzk's gRPC API, the journal, keys (tonic).
pub mod server;
/// Random setup for tests, examples and benchmarks.
pub mod setup;
/// Engine errors and status snapshots.
pub mod status;
/// Batched prime-order subgroup checks.
pub mod subgroup;
/// Fake stages and counters for actor tests (feature `test-util`).
#[cfg(feature = "test-util")]
pub mod testing;
/// Verification.
pub mod verify;

pub use backend::{Backend, CpuBackend};
pub use cache::cache_dir;
pub use config::Config;
pub use engine::Engine;
pub use error::{Error, Result};
pub use key::{Check, ProvingKey, VerifyingKey};
pub use key_store::KeyStore;
pub use proof::Proof;
pub use prover::{prove, prove_timed};
pub use request::Request;
pub use setup::generate_random_parameters;
pub use status::{EngineError, EngineStatus};
pub use verify::{verify, PreparedVerifyingKey};

pub use blstrs::Scalar;
