//! A job: the engine [`Request`] of a Filecoin proof and the [`Finisher`] that turns the engine's
//! partition proofs into the bytes filecoin-proofs returns, after its own verifier accepted them.
//! A scheduler submits the request itself and calls the finisher with what comes back.

use std::collections::BTreeMap;

use filecoin_proofs_api::{
    Commitment, PublicReplicaInfo, RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof,
    SectorId,
};

use crate::engine::request::Request;
use crate::groth16::proof::Proof;

use super::error::{FilecoinError, Result};
use super::ids::CircuitId;
use super::shape::guard;

/// Which Filecoin proof a job makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofKind {
    /// PoRep commit phase 2 (`seal_commit_phase2`).
    PorepC2,
    /// WinningPoSt (`generate_winning_post_with_vanilla`).
    WinningPost,
    /// WindowPoSt, all partitions (`generate_window_post_with_vanilla`).
    WindowPost,
    /// One WindowPoSt partition (`generate_single_window_post_with_vanilla`).
    WindowPostPartition,
    /// SnapDeals (`generate_empty_sector_update_proof_with_vanilla`).
    SnapDeals,
}

impl ProofKind {
    /// A short name for messages and metrics.
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::PorepC2 => "porep-c2",
            ProofKind::WinningPost => "winning-post",
            ProofKind::WindowPost => "window-post",
            ProofKind::WindowPostPartition => "window-post-partition",
            ProofKind::SnapDeals => "snap-deals",
        }
    }
}

/// A Filecoin proof ready for the engine: submit `request`, hand the proofs to `finisher`.
pub struct Job {
    /// One circuit per partition, under the circuit's shared key.
    pub request: Request,
    /// Turns the partition proofs into the output bytes, verified.
    pub finisher: Finisher,
}

/// What the verifier needs, per kind.
#[derive(Clone, Debug)]
pub(crate) enum Check {
    Porep {
        proof: RegisteredSealProof,
        comm_r: Commitment,
        comm_d: Commitment,
        prover_id: [u8; 32],
        sector_id: u64,
        ticket: [u8; 32],
        seed: [u8; 32],
    },
    Post {
        proof: RegisteredPoStProof,
        randomness: [u8; 32],
        prover_id: [u8; 32],
        /// The sectors the proof covers (one partition's, for a single WindowPoSt partition).
        replicas: BTreeMap<SectorId, PublicReplicaInfo>,
    },
    Snap {
        proof: RegisteredUpdateProof,
        comm_r_old: Commitment,
        comm_r_new: Commitment,
        comm_d_new: Commitment,
    },
}

/// Turns a job's partition proofs into the bytes filecoin-proofs returns and checks them with
/// filecoin-proofs' own verifier (its `.vk` from its parameter cache); a proof that does not
/// verify is an error, never output.
#[derive(Clone, Debug)]
pub struct Finisher {
    pub(crate) kind: ProofKind,
    pub(crate) circuit: CircuitId,
    pub(crate) partitions: usize,
    pub(crate) check: Check,
}

impl Finisher {
    /// The proof kind.
    pub fn kind(&self) -> ProofKind {
        self.kind
    }

    /// The circuit (and key) the job proves with.
    pub fn circuit(&self) -> CircuitId {
        self.circuit
    }

    /// Partitions (proofs) the job makes.
    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// The partition proofs concatenated (192 bytes each, in partition order), once the
    /// verifier has accepted them.
    pub fn finish(&self, proofs: &[Proof]) -> Result<Vec<u8>> {
        if proofs.len() != self.partitions {
            return Err(FilecoinError::ProofCount {
                expected: self.partitions,
                got: proofs.len(),
            });
        }
        let mut bytes = Vec::with_capacity(192 * proofs.len());
        for p in proofs {
            p.write(&mut bytes)?;
        }
        self.verify(&bytes)?;
        Ok(bytes)
    }

    /// Checks output bytes with filecoin-proofs' verifier for this job's public inputs.
    pub fn verify(&self, bytes: &[u8]) -> Result<()> {
        let kind = self.kind.name();
        let verdict = guard("verifying the proof", || {
            Ok(match &self.check {
                Check::Porep {
                    proof,
                    comm_r,
                    comm_d,
                    prover_id,
                    sector_id,
                    ticket,
                    seed,
                } => filecoin_proofs_api::seal::verify_seal(
                    *proof,
                    *comm_r,
                    *comm_d,
                    *prover_id,
                    SectorId::from(*sector_id),
                    *ticket,
                    *seed,
                    bytes,
                ),
                Check::Post {
                    proof,
                    randomness,
                    prover_id,
                    replicas,
                } => match proof.typ() {
                    filecoin_proofs_api::PoStType::Winning => {
                        filecoin_proofs_api::post::verify_winning_post(
                            randomness, bytes, replicas, *prover_id,
                        )
                    }
                    filecoin_proofs_api::PoStType::Window => {
                        filecoin_proofs_api::post::verify_window_post(
                            randomness,
                            &[(*proof, bytes)],
                            replicas,
                            *prover_id,
                        )
                    }
                },
                Check::Snap {
                    proof,
                    comm_r_old,
                    comm_r_new,
                    comm_d_new,
                } => filecoin_proofs_api::update::verify_empty_sector_update_proof(
                    *proof,
                    bytes,
                    *comm_r_old,
                    *comm_r_new,
                    *comm_d_new,
                ),
            })
        })?;
        match verdict {
            Ok(true) => Ok(()),
            Ok(false) => Err(FilecoinError::Rejected { kind, detail: None }),
            Err(e) => Err(FilecoinError::Rejected {
                kind,
                detail: Some(format!("{e:#}")),
            }),
        }
    }
}
