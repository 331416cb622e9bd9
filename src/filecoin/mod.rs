//! Filecoin proofs through the engine (feature `filecoin`): the field's inputs (a C1 output,
//! PoSt and SnapDeals vanilla proofs) become a [`crate::Request`] of partition circuits built as
//! filecoin-proofs builds them, under keys from the standard parameter cache; the proofs come
//! back as the bytes filecoin-proofs returns, checked by its own verifiers first.
//!
//! Two layers:
//! - [`Filecoin`](crate::filecoin::Filecoin) builds a [`Job`](crate::filecoin::Job): the request (submit it to any [`crate::Engine`] or scheduler)
//!   and the [`Finisher`](crate::filecoin::Finisher) that turns the proofs into output bytes and verifies them;
//! - drop-in functions named after filecoin-proofs-api's ([`seal_commit_phase2`](crate::filecoin::seal_commit_phase2),
//!   [`generate_winning_post_with_vanilla`](crate::filecoin::generate_winning_post_with_vanilla), ...) that do both through an engine.
//!
//! Keys come from a [`crate::KeyStore`] the caller owns (load once, list, evict): borrowed
//! ([`Filecoin::new`](crate::filecoin::Filecoin::new)), shared
//! ([`Filecoin::shared`](crate::filecoin::Filecoin::shared), as the daemon does), or one of its
//! own ([`Filecoin::from_env`](crate::filecoin::Filecoin::from_env)); the drop-in functions take
//! the store to share keys between calls. Circuits are named like cuzk's keys
//! ([`CircuitId`](crate::filecoin::CircuitId): `porep-32g`, `wpost-2k`, ...).
//! This module knows nothing of actors or the network.

mod api;
mod c1;
mod error;
mod finish;
mod gen_c1;
mod ids;
mod mix;
mod params;
mod porep;
mod porep_circuit;
mod post;
mod setup;
mod shape;
mod shape_only;
mod snap;
/// Sealing small sectors offline for tests and benchmarks (feature `test-util`).
#[cfg(feature = "test-util")]
pub mod testing;
mod values;
mod vanilla;

use std::sync::Arc;

pub use api::{
    generate_empty_sector_update_proof_with_vanilla, generate_single_window_post_with_vanilla,
    generate_window_post_with_vanilla, generate_winning_post_with_vanilla, prove_job,
    seal_commit_phase2,
};
pub use c1::{envelope, parse_c1, C1Input};
pub use error::{FilecoinError, Result};
pub use finish::{Finisher, Job, ProofKind};
pub use gen_c1::{generate_c1, GenC1};
pub use ids::{
    parse_sector_size, post_proof_for, post_proof_from_number, prover_id_from_miner,
    seal_proof_for, seal_proof_from_number, sector_size_name, update_proof_for,
    update_proof_from_number, CircuitId, CircuitKind,
};
pub use mix::{witness_mix, witness_mix_by, Sha256Route, WitnessMix};
pub use params::{ParamCache, ParamFiles};
pub use porep_circuit::{PorepCircuit, PorepPartition};
pub use setup::{generate_params, Generated};
pub use shape_only::{full_shape, shape_circuit, shape_key, ShapeKey, SHAPE_ONLY};

/// Re-exported input and output types of filecoin-proofs-api, so callers need not depend on it.
pub use filecoin_proofs::EmptySectorUpdateProof;
pub use filecoin_proofs_api::{
    seal::{SealCommitPhase1Output, SealCommitPhase2Output},
    ChallengeSeed, Commitment, PartitionProofBytes, PartitionSnarkProof, ProverId,
    RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof, SectorId, SnarkProof,
};

use crate::groth16::key::ProvingKey;
use crate::keys::store::{Evicted, KeyInfo, KeyStore, Loaded};

/// The key store a [`Filecoin`] takes its keys from: borrowed, or shared.
#[derive(Clone)]
enum Keys<'k> {
    Borrowed(&'k KeyStore),
    Shared(Arc<KeyStore>),
}

/// Builds Filecoin jobs from a parameter cache and a key store.
#[derive(Clone)]
pub struct Filecoin<'k> {
    params: ParamCache,
    keys: Keys<'k>,
}

impl Filecoin<'static> {
    /// filecoin-proofs' parameter cache and a key store of its own (shared by this value and its
    /// clones only: use [`Filecoin::shared`] to share keys with others).
    pub fn from_env() -> Self {
        Self::shared(ParamCache::from_env(), Arc::new(KeyStore::new()))
    }

    /// A parameter cache and a key store shared with others (a daemon's).
    pub fn shared(params: ParamCache, keys: Arc<KeyStore>) -> Self {
        Filecoin {
            params,
            keys: Keys::Shared(keys),
        }
    }
}

impl<'k> Filecoin<'k> {
    /// A parameter cache and a key store the caller keeps.
    pub fn new(params: ParamCache, keys: &'k KeyStore) -> Self {
        Filecoin {
            params,
            keys: Keys::Borrowed(keys),
        }
    }

    /// The key store.
    pub fn keys(&self) -> &KeyStore {
        match &self.keys {
            Keys::Borrowed(k) => k,
            Keys::Shared(k) => k,
        }
    }

    /// The parameter cache.
    pub fn params(&self) -> &ParamCache {
        &self.params
    }

    /// Makes the key of `circuit` resident (the daemon's PreloadSRS).
    pub fn preload(&self, circuit: CircuitId) -> Result<Loaded> {
        Ok(self.params.load(circuit, self.keys())?.2)
    }

    /// Drops the key of `circuit` unless a job holds it (the daemon's EvictSRS).
    pub fn evict(&self, circuit: CircuitId) -> Evicted {
        self.keys().evict(&circuit.to_string())
    }

    /// The resident keys with their size and users (the daemon's GetStatus).
    pub fn loaded(&self) -> Vec<KeyInfo> {
        self.keys().list()
    }

    /// The key of `circuit`, refused if its public-input count is not `inputs`.
    fn key_for(&self, circuit: CircuitId, inputs: usize) -> Result<Arc<ProvingKey>> {
        let (pk, path, _) = self.params.load(circuit, self.keys())?;
        params::check_inputs(&pk, circuit, &path, inputs)?;
        Ok(pk)
    }
}
