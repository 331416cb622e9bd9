//! C1 outputs for any sector size without sealing one (`baton fil-gen-c1`): the vanilla proofs
//! a CC sector (all-zero data) would give for its challenges, built from the challenged nodes
//! alone. The challenges come from the replica id and the seed exactly as filecoin-proofs
//! derives them; each challenged node's labels are hashed from its parents' labels layer by
//! layer (parents that are not challenged get seeded random labels); the columns go into a
//! sparse tree_c and the replica nodes into a sparse tree_r_last, whose untouched subtrees are
//! seeded random roots; tree_d is the all-zero sector's tree, so comm_d (hence the replica id
//! and the challenges) exists before anything else. comm_r = H(comm_c, comm_r_last).
//!
//! The result passes filecoin-proofs' vanilla verifier and its C2 passes `verify_seal`; it is
//! a deterministic function of the proof type, prover, sector, ticket and seed (but unlike a
//! real sector's, its comm_r depends on the seed).

mod columns;
pub(crate) mod hashing;
mod sparse;

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};

use blstrs::Scalar as Fr;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::{DefaultPieceDomain, VanillaSealProof};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof as AnyProofs};
use filecoin_proofs_api::{ApiFeature, RegisteredSealProof};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use storage_proofs_core::drgraph::{Graph, BASE_DEGREE};
use storage_proofs_core::merkle::{Hasher, MerkleProof, MerkleTreeTrait};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{
    generate_replica_id, ColumnProof, EncodingProof, LabelingProof, Proof, PublicInputs,
    PublicParams, ReplicaColumnProof, StackedDrg, Tau,
};

use super::error::{FilecoinError, Result};
use super::shape::{guard, with_tree};
use columns::Columns;
use hashing::{binary_arities, hash2, tree_arities};
use sparse::{Fill, SparseTree};

/// What to generate a C1 output for.
#[derive(Clone, Debug)]
pub struct GenC1 {
    /// The seal proof type (interactive PoRep: `StackedDrg<size>V1_1`).
    pub proof: RegisteredSealProof,
    /// The prover id ([`super::prover_id_from_miner`]).
    pub prover_id: [u8; 32],
    /// The sector number.
    pub sector_id: u64,
    /// The ticket (PreCommit randomness).
    pub ticket: [u8; 32],
    /// The interactive seed (the challenges' randomness).
    pub seed: [u8; 32],
}

impl GenC1 {
    /// The newest interactive proof type of `sector_size` for miner `miner_id`'s sector
    /// `sector_id`, with a ticket and a seed derived from them (replace either at will).
    pub fn new(sector_size: u64, miner_id: u64, sector_id: u64) -> Result<Self> {
        let proof = super::seal_proof_for(sector_size).ok_or_else(|| {
            FilecoinError::BadInput(format!("no seal proof for sector size {sector_size}"))
        })?;
        let derive = |what: &str| {
            let h: [u8; 32] = Sha256::new()
                .chain_update(b"baton fil-gen-c1 ")
                .chain_update(what)
                .chain_update(miner_id.to_le_bytes())
                .chain_update(sector_id.to_le_bytes())
                .finalize()
                .into();
            let mut v = h;
            v[31] &= 0x3f;
            v
        };
        Ok(GenC1 {
            proof,
            prover_id: super::prover_id_from_miner(miner_id),
            sector_id,
            ticket: derive("ticket"),
            seed: derive("seed"),
        })
    }
}

/// Generates the C1 output of `spec`, checked with baton's challenge-by-challenge vanilla
/// verifier (filecoin-proofs' `Proof::verify` for each challenge) before it is returned.
pub fn generate_c1(spec: &GenC1) -> Result<SealCommitPhase1Output> {
    let proof = spec.proof;
    if proof.major_version() != 1
        || proof.feature_enabled(ApiFeature::SyntheticPoRep)
        || proof.feature_enabled(ApiFeature::NonInteractivePoRep)
    {
        return Err(FilecoinError::Unsupported(format!(
            "generating a C1 for {proof:?}: only interactive PoRep (StackedDrg<size>V1_1)"
        )));
    }
    let size = u64::from(proof.sector_size());
    guard("generating a C1", || with_tree!(size, generate, spec))
}

type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;
type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

fn up<E: std::fmt::Display>(during: &'static str) -> impl Fn(E) -> FilecoinError {
    move |e| FilecoinError::upstream(during, e)
}

fn bytes32<D: AsRef<[u8]>>(d: D) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

fn generate<Tree: 'static + MerkleTreeTrait>(spec: &GenC1) -> Result<SealCommitPhase1Output> {
    let config = spec.proof.as_v1_config();
    let setup = filecoin_proofs::parameters::setup_params(&config)
        .map_err(up("setting up the PoRep parameters"))?;
    let pp: PublicParams<Tree> = StackedDrg::<Tree, DefaultPieceHasher>::setup(&setup)
        .map_err(up("setting up the PoRep parameters"))?;
    let nodes = pp.graph.size();
    let layers = pp.num_layers;

    // tree_d: the all-zero sector's.
    let d_arities = binary_arities(nodes)?;
    let zeros = SparseTree::<DefaultPieceHasher>::zero_roots(&d_arities);
    let tree_d =
        SparseTree::<DefaultPieceHasher>::build(d_arities, BTreeMap::new(), Fill::Zero(zeros))?;
    let comm_d: DefaultPieceDomain = tree_d.root();
    let replica_id: Domain<Tree> = generate_replica_id::<Tree::Hasher, _>(
        &spec.prover_id,
        spec.sector_id,
        &spec.ticket,
        comm_d,
        &config.porep_id,
    );
    let mut pub_in = PublicInputs::<Domain<Tree>, DefaultPieceDomain> {
        replica_id,
        seed: Some(spec.seed),
        tau: None,
        k: None,
    };
    let partitions = usize::from(config.partitions);
    let challenges: Vec<Vec<usize>> = (0..partitions)
        .map(|k| pub_in.challenges(&pp.challenges, nodes, Some(k)))
        .collect();
    let challenged: BTreeSet<usize> = challenges.iter().flatten().copied().collect();

    let secret: [u8; 32] = Sha256::new()
        .chain_update(b"baton fil-gen-c1 fill")
        .chain_update(bytes32(replica_id))
        .chain_update(spec.seed)
        .finalize()
        .into();
    let columns = Columns::derive(&challenged, layers, &replica_id, &secret, |node| {
        let mut ps = vec![0u32; pp.graph.degree()];
        pp.graph
            .parents(node, &mut ps)
            .map_err(up("computing a node's parents"))?;
        Ok(ps)
    })?;

    let arities = tree_arities::<Tree>(nodes)?;
    let column_leaves = columns
        .nodes()
        .map(|(n, rows)| column_hash::<Tree>(n, rows).map(|h| (n, h)))
        .collect::<Result<BTreeMap<_, _>>>()?;
    let mut secret_c = secret;
    secret_c[0] ^= 0xc0;
    let tree_c =
        SparseTree::<Tree::Hasher>::build(arities.clone(), column_leaves, Fill::Random(secret_c))?;
    // The data is zero, so each replica node is its key (the last layer's label) plus zero.
    let replica_leaves: BTreeMap<usize, Domain<Tree>> = challenged
        .iter()
        .map(|&c| {
            let key: Fr = columns.rows(c)[layers - 1].into();
            let data: Fr = tree_d.opening(c).0.into();
            (c, (key + data).into())
        })
        .collect();
    let mut secret_r = secret;
    secret_r[0] ^= 0x4e;
    let tree_r =
        SparseTree::<Tree::Hasher>::build(arities, replica_leaves, Fill::Random(secret_r))?;
    let comm_r = hash2::<Tree::Hasher>(&tree_c.root(), &tree_r.root());

    let trees = Trees {
        columns: &columns,
        tree_c: &tree_c,
        tree_r: &tree_r,
        tree_d: &tree_d,
    };
    let proofs: Vec<Vec<VanillaSealProof<Tree>>> = challenges
        .iter()
        .map(|cs| cs.par_iter().map(|&c| trees.proof::<Tree>(c)).collect())
        .collect();

    pub_in.tau = Some(Tau { comm_d, comm_r });
    super::vanilla::check(&pp, &pub_in, &proofs)?;
    let replica_fr: Fr = replica_id.into();
    Ok(SealCommitPhase1Output {
        registered_proof: spec.proof,
        vanilla_proofs: wrap::<Tree>(proofs, u64::from(spec.proof.sector_size()))?,
        comm_r: bytes32(comm_r),
        comm_d: bytes32(comm_d),
        replica_id: replica_fr.into(),
        seed: spec.seed,
        ticket: spec.ticket,
    })
}

/// What a column hashes to in tree_c.
fn column_hash<Tree: MerkleTreeTrait>(node: usize, rows: &[Domain<Tree>]) -> Result<Domain<Tree>> {
    let column =
        storage_proofs_porep::stacked::Column::<Tree::Hasher>::new(node as u32, rows.to_vec())
            .map_err(up("making a column"))?;
    Ok(column.hash().into())
}

/// The generated sector's labels and trees.
struct Trees<'a, H: Hasher> {
    columns: &'a Columns<H::Domain>,
    tree_c: &'a SparseTree<H>,
    tree_r: &'a SparseTree<H>,
    tree_d: &'a SparseTree<DefaultPieceHasher>,
}

impl<H: Hasher> Trees<'_, H> {
    /// The vanilla proof of challenge `c`, laid out as filecoin-proofs lays it out.
    fn proof<Tree: 'static + MerkleTreeTrait<Hasher = H>>(
        &self,
        c: usize,
    ) -> VanillaSealProof<Tree> {
        let layers = self.columns.layers();
        let column = |n: usize| -> ColumnProof<TreeProof<Tree>> {
            let (leaf, root, path) = self.tree_c.opening(n);
            ColumnProof::new(
                n as u32,
                self.columns.rows(n).to_vec(),
                MerkleProof::from_parts(leaf, root, path),
            )
        };
        let parents = self.columns.parents(c);
        let labeling_proofs = (1..=layers)
            .map(|layer| {
                LabelingProof::new(layer as u32, c as u64, self.columns.parent_labels(c, layer))
            })
            .collect();
        let (leaf_d, root_d, path_d) = self.tree_d.opening(c);
        let (leaf_r, root_r, path_r) = self.tree_r.opening(c);
        Proof {
            comm_d_proofs: MerkleProof::from_parts(leaf_d, root_d, path_d),
            comm_r_last_proof: MerkleProof::from_parts(leaf_r, root_r, path_r),
            replica_column_proofs: ReplicaColumnProof {
                c_x: column(c),
                drg_parents: parents[..BASE_DEGREE]
                    .iter()
                    .map(|&p| column(p as usize))
                    .collect(),
                exp_parents: parents[BASE_DEGREE..]
                    .iter()
                    .map(|&p| column(p as usize))
                    .collect(),
            },
            labeling_proofs,
            encoding_proof: EncodingProof::new(
                layers as u32,
                c as u64,
                self.columns.parent_labels(c, layers),
            ),
        }
    }
}

/// The proofs as filecoin-proofs-api's per-size enum.
fn wrap<Tree: 'static + MerkleTreeTrait>(
    proofs: Vec<Vec<VanillaSealProof<Tree>>>,
    size: u64,
) -> Result<AnyProofs> {
    use filecoin_proofs::constants::*;
    fn take<T: 'static>(b: Box<dyn Any>) -> Result<T> {
        b.downcast::<T>()
            .map(|b| *b)
            .map_err(|_| FilecoinError::BadInput("vanilla proofs of another tree shape".into()))
    }
    let any: Box<dyn Any> = Box::new(proofs);
    Ok(match size {
        SECTOR_SIZE_2_KIB => AnyProofs::StackedDrg2KiBV1(take(any)?),
        SECTOR_SIZE_8_MIB => AnyProofs::StackedDrg8MiBV1(take(any)?),
        SECTOR_SIZE_512_MIB => AnyProofs::StackedDrg512MiBV1(take(any)?),
        SECTOR_SIZE_32_GIB => AnyProofs::StackedDrg32GiBV1(take(any)?),
        SECTOR_SIZE_64_GIB => AnyProofs::StackedDrg64GiBV1(take(any)?),
        other => {
            return Err(FilecoinError::BadInput(format!(
                "sector size {other} is not one filecoin-proofs supports"
            )))
        }
    })
}
