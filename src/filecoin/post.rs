//! WinningPoSt and WindowPoSt from vanilla proofs (bincode `FallbackPoStSectorProof`s, as
//! filecoin-ffi passes them): partitioned and checked by filecoin-proofs' own partitioning (which
//! verifies the vanilla proofs), then one fallback-PoSt circuit per partition.

use std::collections::BTreeMap;
use std::sync::Arc;

use filecoin_proofs::{
    as_safe_commitment, commitment_from_fr, partition_vanilla_proofs,
    single_partition_vanilla_proofs, FallbackPoStSectorProof, PoStConfig, PoStType,
};
use filecoin_proofs_api::{
    Hasher, MerkleTreeTrait, PublicReplicaInfo, RegisteredPoStProof, SectorId,
};
use storage_proofs_core::compound_proof::{CompoundProof, SetupParams};
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_core::util::NODE_SIZE;
use storage_proofs_post::fallback::{FallbackPoStCompound, PublicInputs, PublicSector};

use crate::engine::request::Request;
use crate::groth16::key::ProvingKey;

use super::error::{FilecoinError, Result};
use super::finish::{Check, Finisher, Job, ProofKind};
use super::ids::CircuitId;
use super::shape::{decode_vanilla, guard, with_tree};
use super::Filecoin;

/// What the generic half hands back.
struct Built {
    request: Request,
    partitions: usize,
    replicas: BTreeMap<SectorId, PublicReplicaInfo>,
}

impl Filecoin<'_> {
    /// A WinningPoSt job (one partition), verified with `verify_winning_post`.
    pub fn winning_post(
        &self,
        proof: RegisteredPoStProof,
        randomness: &[u8; 32],
        prover_id: [u8; 32],
        vanilla_proofs: &[Vec<u8>],
    ) -> Result<Job> {
        let kind = ProofKind::WinningPost;
        self.post(kind, proof, randomness, prover_id, vanilla_proofs, None)
    }

    /// A WindowPoSt job: every partition of `vanilla_proofs` (`partition` = `None`), or the one
    /// partition those sectors form (`Some(k)`, as cuzk's WINDOW_POST_PARTITION). Verified with
    /// `verify_window_post` over the same sectors.
    pub fn window_post(
        &self,
        proof: RegisteredPoStProof,
        randomness: &[u8; 32],
        prover_id: [u8; 32],
        vanilla_proofs: &[Vec<u8>],
        partition: Option<usize>,
    ) -> Result<Job> {
        let kind = match partition {
            None => ProofKind::WindowPost,
            Some(_) => ProofKind::WindowPostPartition,
        };
        self.post(
            kind,
            proof,
            randomness,
            prover_id,
            vanilla_proofs,
            partition,
        )
    }

    fn post(
        &self,
        kind: ProofKind,
        proof: RegisteredPoStProof,
        randomness: &[u8; 32],
        prover_id: [u8; 32],
        vanilla_proofs: &[Vec<u8>],
        partition: Option<usize>,
    ) -> Result<Job> {
        let (want, name) = match kind {
            ProofKind::WinningPost => (PoStType::Winning, "WinningPoSt"),
            _ => (PoStType::Window, "WindowPoSt"),
        };
        if proof.typ() != want {
            return Err(FilecoinError::BadInput(format!(
                "{proof:?} is not a {name} type"
            )));
        }
        if proof.major_version() != 1 {
            return Err(FilecoinError::Unsupported(format!("PoSt proof {proof:?}")));
        }
        if vanilla_proofs.is_empty() {
            return Err(FilecoinError::BadInput("no vanilla proofs".into()));
        }
        let circuit = CircuitId::of_post(proof);
        self.params.existing(circuit)?;
        let key = |inputs: usize| self.key_for(circuit, inputs);
        let size = u64::from(proof.sector_size());
        let built = guard("building the PoSt circuits", || {
            with_tree!(
                size,
                post_request,
                proof,
                randomness,
                &prover_id,
                vanilla_proofs,
                partition,
                &key
            )
        })?;
        Ok(Job {
            request: built.request,
            finisher: Finisher {
                kind,
                circuit,
                partitions: built.partitions,
                check: Check::Post {
                    proof,
                    randomness: *randomness,
                    prover_id,
                    replicas: built.replicas,
                },
            },
        })
    }
}

/// Refuses vanilla proofs not shaped as filecoin-proofs makes them: one sector proof of
/// `challenge_count` inclusion proofs, each a path as long as the sector's tree is deep (as its
/// verifier checks too) with at most 7 siblings a level. Checked before its partitioning, which
/// fills a WindowPoSt partition with copies of the last sector proof, up to `sector_count`
/// (2349 at 32 GiB), before it verifies anything: an oversized proof would be copied that often.
fn check_shape<Tree: MerkleTreeTrait>(
    vanilla: &[FallbackPoStSectorProof<Tree>],
    config: &PoStConfig,
    what: &str,
) -> Result<()> {
    let leaves = u64::from(config.sector_size) as usize / NODE_SIZE;
    for (i, v) in vanilla.iter().enumerate() {
        let bad = |why: String| {
            FilecoinError::BadInput(format!("vanilla proof {i} is not {what}: {why}"))
        };
        let [sector] = v.vanilla_proof.sectors.as_slice() else {
            let n = v.vanilla_proof.sectors.len();
            return Err(bad(format!("it holds {n} sector proofs, not 1")));
        };
        let (n, want) = (sector.inclusion_proofs.len(), config.challenge_count);
        if n != want {
            return Err(bad(format!("it holds {n} inclusion proofs, not {want}")));
        }
        for (j, p) in sector.inclusion_proofs.iter().enumerate() {
            let (path, levels) = (p.path(), p.expected_len(leaves));
            if path.len() != levels || path.iter().any(|(siblings, _)| siblings.len() > 7) {
                return Err(bad(format!(
                    "inclusion proof {j} has {} levels, not {levels} of at most 7 siblings",
                    path.len()
                )));
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn post_request<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    vanilla_bytes: &[Vec<u8>],
    partition: Option<usize>,
    key: &dyn Fn(usize) -> Result<Arc<ProvingKey>>,
) -> Result<Built> {
    let up = FilecoinError::upstream;
    let config = proof.as_v1_config();
    let what = format!("a {proof:?} sector proof");
    let vanilla: Vec<FallbackPoStSectorProof<Tree>> = decode_vanilla(vanilla_bytes, &what)?;
    check_shape(&vanilla, &config, &what)?;
    let per_partition = config.sector_count;
    let (vanilla_params, partitions) = match (config.typ.clone(), partition) {
        (PoStType::Winning, None) => {
            if vanilla.len() != per_partition {
                return Err(FilecoinError::BadInput(format!(
                    "WinningPoSt takes {per_partition} vanilla proof(s), got {}",
                    vanilla.len()
                )));
            }
            let vp = filecoin_proofs::parameters::winning_post_setup_params(&config)
                .map_err(|e| up("setting up WinningPoSt", e))?;
            (vp, None)
        }
        (PoStType::Winning, Some(_)) => {
            return Err(FilecoinError::BadInput(
                "WinningPoSt has no partition index".into(),
            ))
        }
        (PoStType::Window, p) => {
            let n = vanilla.len().div_ceil(per_partition);
            if p.is_some() && n > 1 {
                return Err(FilecoinError::BadInput(format!(
                    "one WindowPoSt partition holds at most {per_partition} sectors, got {}",
                    vanilla.len()
                )));
            }
            let vp = filecoin_proofs::parameters::window_post_setup_params(&config);
            (vp, (p.is_none() && n > 1).then_some(n))
        }
    };
    let setup = SetupParams {
        vanilla_params,
        partitions,
        priority: config.priority,
    };
    let pp = FallbackPoStCompound::<Tree>::setup(&setup).map_err(|e| up("setting up PoSt", e))?;
    let sectors = vanilla
        .iter()
        .map(|v| PublicSector {
            id: v.sector_id,
            comm_r: v.comm_r,
        })
        .collect();
    let pub_inputs = PublicInputs::<<Tree::Hasher as Hasher>::Domain> {
        randomness: as_safe_commitment(randomness, "randomness")
            .map_err(|e| up("reading the randomness", e))?,
        prover_id: as_safe_commitment(prover_id, "prover_id")
            .map_err(|e| up("reading the prover id", e))?,
        sectors,
        k: partition,
    };
    // filecoin-proofs' own partitioning, which verifies the vanilla proofs before any proving.
    let partitioned = match partition {
        None => partition_vanilla_proofs(
            &config,
            &pp.vanilla_params,
            &pub_inputs,
            partitions.unwrap_or(1),
            &vanilla,
        ),
        Some(_) => {
            single_partition_vanilla_proofs(&config, &pp.vanilla_params, &pub_inputs, &vanilla)
                .map(|p| vec![p])
        }
    }
    .map_err(|e| FilecoinError::VanillaInvalid(format!("{e:#}")))?;
    let inputs = FallbackPoStCompound::<Tree>::generate_public_inputs(
        &pub_inputs,
        &pp.vanilla_params,
        Some(0),
    )
    .map_err(|e| up("computing the public inputs", e))?;
    let pk = key(inputs.len())?;
    let circuits = partitioned
        .iter()
        .enumerate()
        .map(|(j, p)| {
            FallbackPoStCompound::<Tree>::circuit(
                &pub_inputs,
                Default::default(),
                p,
                &pp.vanilla_params,
                Some(j),
            )
            .map_err(|e| up("building a partition circuit", e))
        })
        .collect::<Result<Vec<_>>>()?;
    let replicas = vanilla
        .iter()
        .map(|v| {
            let comm_r = commitment_from_fr(v.comm_r.into());
            (v.sector_id, PublicReplicaInfo::new(proof, comm_r))
        })
        .collect();
    Ok(Built {
        partitions: circuits.len(),
        request: Request::new(pk, circuits),
        replicas,
    })
}
