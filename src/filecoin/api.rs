//! Drop-in counterparts of filecoin-proofs-api's proving functions, with the same names and
//! arguments plus the engine to prove on and the key store to take the key from (read from
//! filecoin-proofs' parameter cache once per store, so keep one store for every call), and every
//! proof is verified before it is returned.

use filecoin_proofs::EmptySectorUpdateProof;
use filecoin_proofs_api::seal::{SealCommitPhase1Output, SealCommitPhase2Output};
use filecoin_proofs_api::{
    ChallengeSeed, Commitment, PartitionProofBytes, PartitionSnarkProof, ProverId,
    RegisteredPoStProof, RegisteredUpdateProof, SectorId, SnarkProof,
};

use crate::engine::Engine;
use crate::keys::store::KeyStore;

use super::error::Result;
use super::finish::Job;
use super::{Filecoin, ParamCache};

/// filecoin-proofs' parameter cache, with the keys of `keys`.
fn fil(keys: &KeyStore) -> Filecoin<'_> {
    Filecoin::new(ParamCache::from_env(), keys)
}

/// Proves `job` on `engine` and finishes it: the verified output bytes.
pub fn prove_job(engine: &Engine, job: Job) -> Result<Vec<u8>> {
    let proofs = engine.prove_blocking(job.request)?;
    job.finisher.finish(&proofs)
}

/// `seal_commit_phase2` on the engine: the C2 proof of a C1 output, checked with `verify_seal`.
pub fn seal_commit_phase2(
    engine: &Engine,
    keys: &KeyStore,
    phase1_output: SealCommitPhase1Output,
    prover_id: ProverId,
    sector_id: SectorId,
) -> Result<SealCommitPhase2Output> {
    let job = fil(keys).porep_c2(&phase1_output, prover_id, u64::from(sector_id))?;
    Ok(SealCommitPhase2Output {
        proof: prove_job(engine, job)?,
    })
}

/// A WinningPoSt or WindowPoSt (all partitions, or one) proved on `engine`, verified.
fn post(
    engine: &Engine,
    keys: &KeyStore,
    proof: RegisteredPoStProof,
    randomness: &ChallengeSeed,
    prover_id: ProverId,
    vanilla: &[Vec<u8>],
    partition: Option<usize>,
) -> Result<Vec<u8>> {
    let fc = fil(keys);
    let job = match proof.typ() {
        filecoin_proofs_api::PoStType::Winning => {
            fc.winning_post(proof, randomness, prover_id, vanilla)?
        }
        filecoin_proofs_api::PoStType::Window => {
            fc.window_post(proof, randomness, prover_id, vanilla, partition)?
        }
    };
    prove_job(engine, job)
}

/// `generate_winning_post_with_vanilla` on the engine.
pub fn generate_winning_post_with_vanilla(
    engine: &Engine,
    keys: &KeyStore,
    registered_post_proof_type: RegisteredPoStProof,
    randomness: &ChallengeSeed,
    prover_id: ProverId,
    vanilla_proofs: &[Vec<u8>],
) -> Result<Vec<(RegisteredPoStProof, SnarkProof)>> {
    let proof = post(
        engine,
        keys,
        registered_post_proof_type,
        randomness,
        prover_id,
        vanilla_proofs,
        None,
    )?;
    Ok(vec![(registered_post_proof_type, proof)])
}

/// `generate_window_post_with_vanilla` on the engine (every partition).
pub fn generate_window_post_with_vanilla(
    engine: &Engine,
    keys: &KeyStore,
    registered_post_proof_type: RegisteredPoStProof,
    randomness: &ChallengeSeed,
    prover_id: ProverId,
    vanilla_proofs: &[Vec<u8>],
) -> Result<Vec<(RegisteredPoStProof, SnarkProof)>> {
    let proof = post(
        engine,
        keys,
        registered_post_proof_type,
        randomness,
        prover_id,
        vanilla_proofs,
        None,
    )?;
    Ok(vec![(registered_post_proof_type, proof)])
}

/// `generate_single_window_post_with_vanilla` on the engine (one partition's sectors).
pub fn generate_single_window_post_with_vanilla(
    engine: &Engine,
    keys: &KeyStore,
    registered_post_proof_type: RegisteredPoStProof,
    randomness: &ChallengeSeed,
    prover_id: ProverId,
    vanilla_proofs: &[Vec<u8>],
    partition_index: usize,
) -> Result<PartitionSnarkProof> {
    let proof = post(
        engine,
        keys,
        registered_post_proof_type,
        randomness,
        prover_id,
        vanilla_proofs,
        Some(partition_index),
    )?;
    Ok(PartitionSnarkProof(proof))
}

/// `generate_empty_sector_update_proof_with_vanilla` on the engine.
pub fn generate_empty_sector_update_proof_with_vanilla(
    engine: &Engine,
    keys: &KeyStore,
    registered_proof: RegisteredUpdateProof,
    vanilla_proofs: Vec<PartitionProofBytes>,
    comm_r_old: Commitment,
    comm_r_new: Commitment,
    comm_d_new: Commitment,
) -> Result<EmptySectorUpdateProof> {
    let bytes: Vec<Vec<u8>> = vanilla_proofs.into_iter().map(|p| p.0).collect();
    let job = fil(keys).snap_deals(registered_proof, &bytes, comm_r_old, comm_r_new, comm_d_new)?;
    Ok(EmptySectorUpdateProof(prove_job(engine, job)?))
}
