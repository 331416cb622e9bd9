//! baton: an actor-model Groth16 proving engine for BLS12-381.
//!
//! Proofs are byte-compatible with bellperson and verify with its verifier. The prover core
//! ([`prove`], [`ProvingKey`], [`verify()`]) works without any actor; the engine that pipelines
//! synthesis, the GPU and the G2 MSM under a memory budget is described in `actors.md`.
#![warn(missing_docs)]

#[macro_use]
mod macros;

/// Where files are kept between runs.
pub mod cache;
/// Circuits shipped for examples, tests and benchmarks.
pub mod circuits;
/// Compiled circuits: a recorded R1CS, witness-only synthesis, sparse a/b/c.
pub mod compiled;
/// Engine configuration.
pub mod config;
/// The engine: its API, requests, status, and the actors behind it.
pub mod engine;
/// Filecoin proofs (PoRep C2, PoSt, SnapDeals) through the engine (feature `filecoin`).
#[cfg(feature = "filecoin")]
pub mod filecoin;
/// GPU backends (CUDA behind the `cuda` feature).
pub mod gpu;
/// The Groth16 core: constraint system, domain, MSM, keys, proving, proofs, verification.
pub mod groth16;
/// HTTP endpoints `/metrics` and `/healthz` (axum).
pub mod http;
/// Proving keys: the one key store (file and built-in keys), trust records, baton's own files
/// for a key.
pub mod keys;
/// The memory-budget ledger (no actix inside).
pub mod ledger;
/// Prometheus metrics.
pub mod metrics;
/// Admission order: priorities, cancellation, retries (no actix inside).
pub mod scheduler;
/// The `baton serve` daemon: cuzk's gRPC API, the journal, keys (tonic).
pub mod server;
/// The proving stages a partition passes through, and the backends they run on.
pub mod stages;
/// Fake stages and counters for actor tests (feature `test-util`).
#[cfg(feature = "test-util")]
pub mod testing;
/// Sizes as written in configuration ("64GiB").
pub mod units;

pub use cache::cache_dir;
pub use config::Config;
pub use engine::{Engine, EngineError, EngineStatus, Request};
pub use groth16::backend::{Backend, CpuBackend};
pub use groth16::error::{Error, Result};
pub use groth16::key::{Check, ProvingKey, VerifyingKey};
pub use groth16::proof::Proof;
pub use groth16::prover::{prove, prove_timed};
pub use groth16::setup::generate_random_parameters;
pub use groth16::verify::{verify, PreparedVerifyingKey};
pub use keys::store::KeyStore;

pub use blstrs::Scalar;
