//! SnapDeals (empty sector update) from its partition vanilla proofs (bincode `PartitionProof`s):
//! checked with filecoin-proofs' vanilla verifier, then one update circuit per partition.

use std::sync::Arc;

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_proofs::{PartitionProof, SectorUpdateConfig, TreeRHasher};
use filecoin_proofs_api::{Commitment, MerkleTreeTrait, RegisteredUpdateProof};
use storage_proofs_core::compound_proof::{CompoundProof, SetupParams};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::constants::{TreeDDomain, TreeRDomain};
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCompound, PublicInputs, PublicParams,
};

use crate::engine::request::Request;
use crate::groth16::key::ProvingKey;

use super::error::{FilecoinError, Result};
use super::finish::{Check, Finisher, Job, ProofKind};
use super::ids::CircuitId;
use super::shape::{decode_vanilla, guard, with_tree};
use super::Filecoin;

/// One partition's update circuit, rebuilt from the shared vanilla proof on each synthesis
/// (filecoin-proofs' circuit type cannot be cloned, and a retry synthesizes again).
struct SnapCircuit<TreeR: MerkleTreeTrait<Hasher = TreeRHasher>> {
    pub_inputs: PublicInputs,
    pub_params: PublicParams,
    vanilla: Arc<PartitionProof<TreeR>>,
    k: usize,
}

impl<TreeR: MerkleTreeTrait<Hasher = TreeRHasher>> Clone for SnapCircuit<TreeR> {
    fn clone(&self) -> Self {
        SnapCircuit {
            pub_inputs: self.pub_inputs.clone(),
            pub_params: self.pub_params.clone(),
            vanilla: self.vanilla.clone(),
            k: self.k,
        }
    }
}

impl<TreeR: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> Circuit<Fr> for SnapCircuit<TreeR> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        // Built (and so checked) once when the job was made; this cannot fail now.
        let circuit = EmptySectorUpdateCompound::<TreeR>::circuit(
            &self.pub_inputs,
            (),
            &self.vanilla,
            &self.pub_params,
            Some(self.k),
        )
        .map_err(|_| SynthesisError::AssignmentMissing)?;
        circuit.synthesize(cs)
    }
}

impl Filecoin<'_> {
    /// A SnapDeals job from its partition vanilla proofs (one per partition, in order), verified
    /// with `verify_empty_sector_update_proof`.
    pub fn snap_deals(
        &self,
        proof: RegisteredUpdateProof,
        vanilla_proofs: &[Vec<u8>],
        comm_r_old: Commitment,
        comm_r_new: Commitment,
        comm_d_new: Commitment,
    ) -> Result<Job> {
        if proof.major_version() != 1 {
            return Err(FilecoinError::Unsupported(format!(
                "update proof {proof:?}"
            )));
        }
        let circuit = CircuitId::of_update(proof);
        self.params.existing(circuit)?;
        let key = |inputs: usize| self.key_for(circuit, inputs);
        let size = u64::from(proof.sector_size());
        let comms = [comm_r_old, comm_r_new, comm_d_new];
        let (request, partitions) = guard("building the SnapDeals circuits", || {
            with_tree!(size, snap_request, proof, vanilla_proofs, &comms, &key)
        })?;
        Ok(Job {
            request,
            finisher: Finisher {
                kind: ProofKind::SnapDeals,
                circuit,
                partitions,
                check: Check::Snap {
                    proof,
                    comm_r_old,
                    comm_r_new,
                    comm_d_new,
                },
            },
        })
    }
}

fn tree_r(c: &Commitment, what: &'static str) -> Result<TreeRDomain> {
    filecoin_proofs::as_safe_commitment(c, what)
        .map_err(|e| FilecoinError::upstream("reading a commitment", e))
}

fn snap_request<TreeR: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
    vanilla_bytes: &[Vec<u8>],
    comms: &[Commitment; 3],
    key: &dyn Fn(usize) -> Result<Arc<ProvingKey>>,
) -> Result<(Request, usize)> {
    let up = FilecoinError::upstream;
    let config = SectorUpdateConfig::from_porep_config(&proof.as_v1_config());
    let partitions = usize::from(config.update_partitions);
    if vanilla_bytes.len() != partitions {
        return Err(FilecoinError::BadInput(format!(
            "{proof:?} has {partitions} partitions, got {} vanilla proofs",
            vanilla_bytes.len()
        )));
    }
    let vanilla: Vec<PartitionProof<TreeR>> =
        decode_vanilla(vanilla_bytes, &format!("a {proof:?} partition proof"))?;
    let pub_inputs = PublicInputs {
        k: 0,
        comm_r_old: tree_r(&comms[0], "comm_r_old")?,
        comm_d_new: filecoin_proofs::as_safe_commitment::<TreeDDomain, _>(&comms[2], "comm_d_new")
            .map_err(|e| up("reading a commitment", e))?,
        comm_r_new: tree_r(&comms[1], "comm_r_new")?,
        h: config.h,
    };
    let setup = SetupParams {
        vanilla_params: storage_proofs_update::SetupParams {
            sector_bytes: u64::from(config.sector_size),
        },
        partitions: Some(partitions),
        priority: false,
    };
    let pp = EmptySectorUpdateCompound::<TreeR>::setup(&setup)
        .map_err(|e| up("setting up SnapDeals", e))?;
    let valid = EmptySectorUpdate::<TreeR>::verify_all_partitions(
        &pp.vanilla_params,
        &pub_inputs,
        &vanilla,
    )
    .map_err(|e| FilecoinError::VanillaInvalid(format!("{e:#}")))?;
    if !valid {
        return Err(FilecoinError::VanillaInvalid(
            "update partition proofs do not match the commitments".into(),
        ));
    }
    let inputs = EmptySectorUpdateCompound::<TreeR>::generate_public_inputs(
        &pub_inputs,
        &pp.vanilla_params,
        Some(0),
    )
    .map_err(|e| up("computing the public inputs", e))?;
    let pk = key(inputs.len())?;
    let circuits = vanilla
        .into_iter()
        .enumerate()
        .map(|(k, v)| {
            let vanilla = Arc::new(v);
            // Build it once now, so synthesis cannot meet an error later.
            EmptySectorUpdateCompound::<TreeR>::circuit(
                &pub_inputs,
                (),
                &vanilla,
                &pp.vanilla_params,
                Some(k),
            )
            .map_err(|e| up("building a partition circuit", e))?;
            Ok(SnapCircuit {
                pub_inputs: pub_inputs.clone(),
                pub_params: pp.vanilla_params.clone(),
                vanilla,
                k,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((Request::new(pk, circuits), partitions))
}
