//! PoRep C2: a C1 output's vanilla proofs become one stacked-DRG circuit per partition, built
//! as filecoin-proofs builds them (the values `StackedCompound::circuit` takes from the sector's
//! public inputs, held as a [`PorepPartition`] whose challenges synthesize in parallel), after
//! the vanilla proofs and the replica id were checked, before any proving.

use std::sync::Arc;

use blstrs::Scalar as Fr;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::{ApiFeature, Hasher, MerkleTreeTrait};
use storage_proofs_core::compound_proof::{CompoundProof, SetupParams};
use storage_proofs_porep::stacked::{
    generate_replica_id, PublicInputs, StackedCompound, StackedDrg, Tau,
};

use crate::engine::request::Request;
use crate::groth16::key::ProvingKey;

use super::error::{FilecoinError, Result};
use super::finish::{Check, Finisher, Job, ProofKind};
use super::ids::CircuitId;
use super::porep_circuit::{PorepCircuit, PorepPartition};
use super::shape::{guard, with_tree};
use super::Filecoin;

type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;

impl Filecoin<'_> {
    /// The checks of [`porep_c2`](Self::porep_c2) that need neither the key nor the vanilla
    /// proofs' verification, so a daemon can refuse bad input before accepting the job: the
    /// proof type is served, the commitments are set, the parameters file exists and the replica
    /// id matches this prover and sector (a wrong miner or sector id). Returns the circuit.
    pub fn porep_check(
        &self,
        c1: &SealCommitPhase1Output,
        prover_id: [u8; 32],
        sector_id: u64,
    ) -> Result<CircuitId> {
        let proof = c1.registered_proof;
        if proof.major_version() != 1 {
            return Err(FilecoinError::Unsupported(format!("seal proof {proof:?}")));
        }
        if proof.feature_enabled(ApiFeature::NonInteractivePoRep) {
            return Err(FilecoinError::Unsupported(format!(
                "{proof:?}: non-interactive PoRep C2 is an aggregated proof"
            )));
        }
        for (name, v) in [
            ("comm_d", &c1.comm_d),
            ("comm_r", &c1.comm_r),
            ("seed", &c1.seed),
        ] {
            if v.iter().all(|b| *b == 0) {
                return Err(FilecoinError::BadInput(format!(
                    "the C1 output's {name} is all zero"
                )));
            }
        }
        let circuit = CircuitId::of_seal(proof);
        // A missing key is named before anything else is done.
        self.params.existing(circuit)?;
        let size = u64::from(proof.sector_size());
        guard("checking the replica id", || {
            with_tree!(size, replica_id, c1, &prover_id, sector_id).map(|_| ())
        })?;
        Ok(circuit)
    }

    /// The C2 job of a C1 output: one circuit per partition under the sector size's key, and a
    /// finisher that returns exactly what filecoin-proofs' `seal_commit_phase2` returns, checked
    /// with `verify_seal`. `prover_id` is the miner's ([`super::prover_id_from_miner`]).
    pub fn porep_c2(
        &self,
        c1: &SealCommitPhase1Output,
        prover_id: [u8; 32],
        sector_id: u64,
    ) -> Result<Job> {
        let circuit = self.porep_check(c1, prover_id, sector_id)?;
        let proof = c1.registered_proof;
        let key = |inputs: usize| self.key_for(circuit, inputs);
        let size = u64::from(proof.sector_size());
        let (request, partitions) = guard("building the PoRep circuits", || {
            with_tree!(size, porep_request, c1, &prover_id, sector_id, &key)
        })?;
        Ok(Job {
            request,
            finisher: Finisher {
                kind: ProofKind::PorepC2,
                circuit,
                partitions,
                check: Check::Porep {
                    proof,
                    comm_r: c1.comm_r,
                    comm_d: c1.comm_d,
                    prover_id,
                    sector_id,
                    ticket: c1.ticket,
                    seed: c1.seed,
                },
            },
        })
    }
}

fn porep_request<Tree: 'static + MerkleTreeTrait>(
    c1: &SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
    key: &dyn Fn(usize) -> Result<Arc<ProvingKey>>,
) -> Result<(Request, usize)> {
    let (circuits, inputs) = porep_circuits::<Tree>(c1, prover_id, sector_id)?;
    let pk = key(inputs)?;
    let partitions = circuits.len();
    Ok((Request::new(pk, circuits), partitions))
}

/// The partition circuits of a C1 output and their public-input count, after the vanilla proofs
/// and the replica id were checked.
pub(crate) fn porep_circuits<Tree: 'static + MerkleTreeTrait>(
    c1: &SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
) -> Result<(Vec<PorepPartition<Tree>>, usize)> {
    let up = FilecoinError::upstream;
    let config = c1.registered_proof.as_v1_config();
    let vanilla: Vec<Vec<filecoin_proofs::VanillaSealProof<Tree>>> = c1
        .vanilla_proofs
        .clone()
        .try_into()
        .map_err(|e| FilecoinError::Mismatch {
            what: "vanilla proofs vs proof type",
            left: format!("{e}"),
            right: format!("{:?}", c1.registered_proof),
        })?;
    let partitions = usize::from(config.partitions);
    if vanilla.len() != partitions || vanilla.iter().any(Vec::is_empty) {
        return Err(FilecoinError::Mismatch {
            what: "vanilla proof partitions",
            left: format!(
                "C1 has {} (non-empty: {})",
                vanilla.len(),
                vanilla.iter().filter(|v| !v.is_empty()).count()
            ),
            right: format!("{:?} has {partitions}", c1.registered_proof),
        });
    }
    let comm_r = as_safe_commitment(&c1.comm_r, "comm_r").map_err(|e| up("reading comm_r", e))?;
    let replica_id = replica_id::<Tree>(c1, prover_id, sector_id)?;
    let comm_d: DefaultPieceDomain =
        as_safe_commitment(&c1.comm_d, "comm_d").map_err(|e| up("reading comm_d", e))?;
    let pub_in = PublicInputs {
        replica_id,
        tau: Some(Tau { comm_d, comm_r }),
        k: None,
        seed: Some(c1.seed),
    };
    let setup = SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config)
            .map_err(|e| up("setting up the PoRep parameters", e))?,
        partitions: Some(partitions),
        priority: false,
    };
    let pp = <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(
        &setup,
    )
    .map_err(|e| up("setting up the PoRep parameters", e))?;
    // filecoin-proofs' checks, challenge by challenge, so a refusal names the challenge.
    super::vanilla::check(&pp.vanilla_params, &pub_in, &vanilla)?;
    let inputs = Compound::<Tree>::generate_public_inputs(&pub_in, &pp.vanilla_params, Some(0))
        .map_err(|e| up("computing the public inputs", e))?;
    // What `StackedCompound::circuit` builds, held so the challenges can be synthesized apart.
    let circuits = vanilla
        .iter()
        .enumerate()
        .map(|(k, v)| {
            PorepCircuit::new(replica_id, comm_d, comm_r, v)
                .map(PorepPartition::new)
                .ok_or_else(|| FilecoinError::Mismatch {
                    what: "vanilla proofs of a partition",
                    left: format!("partition {k}'s comm_r_last and comm_c"),
                    right: "the same in every challenge's proof".into(),
                })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((circuits, inputs.len()))
}

/// The C1 output's replica id, once it matches the one derived from `prover_id`, `sector_id`,
/// the ticket and comm_d (a mismatch means the wrong miner or sector id).
fn replica_id<Tree: 'static + MerkleTreeTrait>(
    c1: &SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
) -> Result<<Tree::Hasher as Hasher>::Domain> {
    let comm_d: DefaultPieceDomain = as_safe_commitment(&c1.comm_d, "comm_d")
        .map_err(|e| FilecoinError::upstream("reading comm_d", e))?;
    let replica_id: <Tree::Hasher as Hasher>::Domain = Fr::from(c1.replica_id).into();
    let derived = generate_replica_id::<Tree::Hasher, _>(
        prover_id,
        sector_id,
        &c1.ticket,
        comm_d,
        &c1.registered_proof.as_v1_config().porep_id,
    );
    if derived != replica_id {
        return Err(FilecoinError::Mismatch {
            what: "replica id",
            left: "the C1 output's".into(),
            right: format!(
                "the one derived from this prover id ({}) and sector {sector_id}: wrong miner or sector id?",
                hex::encode(&prover_id[..8])
            ),
        });
    }
    Ok(replica_id)
}
