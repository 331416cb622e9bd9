//! A PoRep challenge's witness with its labels' SHA-256 computed by value
//! ([`sha256`]), for the witness-only systems ([`ValuesOnly`]).
//!
//! filecoin-proofs' challenge circuit allocates, in order: the data leaf and its tree-D path,
//! each parent's column and its tree-C path, the challenge index, each layer's label from its
//! parents' bits (SHA-256 of 39 × 32 bytes, about 80 % of the partition's constraints), the
//! encoded node and its tree-R path, and the challenged column's hash and path. [`challenge`]
//! makes the same allocations in the same order, through the same public gadgets, except that
//! the SHA-256 hashes (the labels' and tree D's, nearly all the constraints) are computed by
//! value. The one circuit type it needs is private
//! upstream, so it is inferred from `StackedCircuit::synthesize`'s signature (its fields and
//! its column proofs' methods are public).
//!
//! The counts are checked against the recording as for any witness-only synthesis, a/b/c's
//! evaluation checks that the values satisfy every recorded row, and the tests compare the
//! assignments with the circuit's own at every sector size's shape.

mod sha256;

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::multipack;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::poseidon::PoseidonFunction;
use filecoin_hashers::{HashFunction, Hasher, PoseidonArity};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::{DefaultPieceDomain, VanillaSealProof};
use filecoin_proofs_api::MerkleTreeTrait;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::encode::encode;
use storage_proofs_core::gadgets::insertion::insert;
use storage_proofs_core::gadgets::por::{AuthPath, PoRCircuit};
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::{DiskStore, MerkleProofTrait, MerkleTreeWrapper};
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{StackedCircuit, TOTAL_PARENTS};
use typenum::{U11, U2};

use crate::compiled::{ValuesOnly, WitnessCs};
use sha256::Bit;

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// A partition's public values, as its circuit allocates them first.
#[derive(Clone, Copy)]
pub(crate) struct Commitments {
    pub replica_id: Fr,
    pub comm_d: Fr,
    pub comm_r: Fr,
    pub comm_r_last: Fr,
    pub comm_c: Fr,
}

/// What the prelude leaves for every challenge.
struct Prelude {
    replica_id_bits: Vec<Bit>,
    comm_d: AllocatedNum<Fr>,
    comm_r_last: AllocatedNum<Fr>,
    comm_c: AllocatedNum<Fr>,
}

/// The prelude (the replica id and its bits, the commitments, comm_r = H(comm_c, comm_r_last))
/// then one challenge, as `StackedCircuit` over that challenge assigns them.
pub(crate) fn challenge<Tree: 'static + MerkleTreeTrait, C: ValuesOnly>(
    cs: &mut C,
    publics: Commitments,
    vanilla: &VanillaSealProof<Tree>,
) -> Result<(), SynthesisError> {
    let pre = prelude::<Tree, C>(cs, publics)?;
    let layers = vanilla.labeling_proofs.len();
    let proof = circuit_form(
        StackedCircuit::<Tree, DefaultPieceHasher>::synthesize::<WitnessCs>,
        vanilla.clone(),
    );

    let data_leaf = alloc(cs, proof.data_leaf)?;
    include_in_tree_d(
        cs,
        vanilla.comm_d_proofs.as_options(),
        &pre.comm_d,
        &data_leaf,
    )?;

    // Every parent's column and its tree-C path: the base graph's parents, then the expander's.
    let base = proof.drg_parents_proofs.len();
    let mut columns = Vec::with_capacity(base + proof.exp_parents_proofs.len());
    for parent in proof
        .drg_parents_proofs
        .into_iter()
        .chain(proof.exp_parents_proofs)
    {
        let (column, path) = parent.alloc(&mut *cs)?;
        let hash = column.hash(&mut *cs)?;
        include(cs, path, &pre.comm_c, &hash)?;
        columns.push(column);
    }
    let (drg, exp) = columns.split_at(base);

    let node = UInt64::alloc(&mut *cs, proof.challenge)?;
    node.pack_into_input(&mut *cs)?;
    let node = bits_of(&node.to_bits_be())?;

    let mut labels = Vec::with_capacity(layers);
    for layer in 1..=layers {
        // The first layer has only the base graph's parents; the expander's are a layer behind.
        let mut parents = Vec::with_capacity(drg.len() + exp.len());
        for value in drg.iter().map(|c| c.get_value(layer)) {
            parents.push(label_bits(cs, value)?);
        }
        if layer > 1 {
            for value in exp.iter().map(|c| c.get_value(layer - 1)) {
                parents.push(label_bits(cs, value)?);
            }
        }
        labels.push(label(
            cs,
            &pre.replica_id_bits,
            &parents,
            layer as u32,
            &node,
        )?);
    }

    let key = labels.last().ok_or(SynthesisError::AssignmentMissing)?;
    let encoded = encode(&mut *cs, key, &data_leaf)?;
    include(cs, proof.comm_r_last_path, &pre.comm_r_last, &encoded)?;
    let column = match labels.len() {
        2 => PoseidonFunction::hash_multi_leaf_circuit::<U2, _>(&mut *cs, &labels, 0)?,
        11 => PoseidonFunction::hash_multi_leaf_circuit::<U11, _>(&mut *cs, &labels, 0)?,
        _ => return Err(SynthesisError::Unsatisfiable),
    };
    include(cs, proof.comm_c_path, &pre.comm_c, &column)
}

fn prelude<Tree: 'static + MerkleTreeTrait, C: ValuesOnly>(
    cs: &mut C,
    p: Commitments,
) -> Result<Prelude, SynthesisError> {
    let replica_id = alloc(cs, Some(p.replica_id))?;
    replica_id.inputize(&mut *cs)?;
    let replica_id_bits = bits_of(&reverse_bit_numbering(replica_id.to_bits_le(&mut *cs)?))?;
    let comm_d = alloc(cs, Some(p.comm_d))?;
    comm_d.inputize(&mut *cs)?;
    let comm_r = alloc(cs, Some(p.comm_r))?;
    comm_r.inputize(&mut *cs)?;
    let comm_r_last = alloc(cs, Some(p.comm_r_last))?;
    let comm_c = alloc(cs, Some(p.comm_c))?;
    let hash = <Tree::Hasher as Hasher>::Function::hash2_circuit(&mut *cs, &comm_c, &comm_r_last)?;
    constraint::equal(cs, || "comm_r", &comm_r, &hash);
    Ok(Prelude {
        replica_id_bits,
        comm_d,
        comm_r_last,
        comm_c,
    })
}

/// One layer's label: SHA-256 of the replica id, the layer and node, and the parents' labels
/// repeated to 37, its first 254 bits (in storage-proofs' bit order) packed into a number.
fn label<C: ValuesOnly>(
    cs: &mut C,
    replica_id: &[Bit],
    parents: &[Vec<Bit>],
    layer: u32,
    node: &[Bit],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    const WORD: usize = 256;
    let pad = |bits: &mut Vec<Bit>, to: usize| {
        let len = bits.len().next_multiple_of(to);
        bits.resize(len, Bit::Const(false));
    };
    let mut input = Vec::with_capacity((2 + TOTAL_PARENTS) * WORD);
    input.extend_from_slice(replica_id);
    pad(&mut input, WORD);
    input.extend(sha256::constant_be(layer));
    input.extend_from_slice(node);
    pad(&mut input, 2 * WORD);
    for parent in parents.iter().cycle().take(TOTAL_PARENTS) {
        input.extend_from_slice(parent);
        pad(&mut input, WORD);
    }
    if input.len() != (2 + TOTAL_PARENTS) * WORD {
        return Err(SynthesisError::Unsatisfiable);
    }
    hash_to_num(cs, &input)
}

/// SHA-256 of `input`, its first 254 bits (in storage-proofs' bit order) packed into an
/// allocated number: how the labels and tree D's nodes are hashed.
fn hash_to_num<C: ValuesOnly>(
    cs: &mut C,
    input: &[Bit],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let digest = sha256::reverse_bit_numbering(sha256::sha256(cs, input)?);
    let num = alloc(cs, Some(sha256::pack(&digest)))?;
    cs.count(1);
    Ok(num)
}

/// Inclusion of the data leaf in tree D (binary, SHA-256), as the circuit checks it with
/// `PoRCircuit`: per level the index bit, the sibling, the pair in order, their hash (by
/// value); then the index bits packed into one input, and the root's equality.
fn include_in_tree_d<C: ValuesOnly>(
    cs: &mut C,
    path: Vec<(Vec<Option<Fr>>, Option<usize>)>,
    root: &AllocatedNum<Fr>,
    leaf: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let mut cur = leaf.clone();
    let mut index_bits = Vec::with_capacity(path.len());
    for (siblings, index) in path {
        let [sibling] = siblings[..] else {
            return Err(SynthesisError::Unsatisfiable);
        };
        let bit = AllocatedBit::alloc(&mut *cs, index.map(|i| i & 1 == 1))?;
        index_bits.push(Boolean::from(bit));
        let sibling = alloc(cs, sibling)?;
        let pair = insert(
            &mut *cs,
            &cur,
            &index_bits[index_bits.len() - 1..],
            &[sibling],
        )?;
        let mut input = Vec::with_capacity(2 * 256);
        for node in &pair {
            input.extend(label_bits(cs, node)?);
        }
        cur = hash_to_num(cs, &input)?;
    }
    multipack::pack_into_inputs(&mut *cs, &index_bits)?;
    constraint::equal(cs, || "tree D's root", &cur, root);
    Ok(())
}

/// A number as the circuit decomposes it for SHA-256 (allocated bits, a zero bit to fill the
/// last byte, each byte's bits reversed).
fn label_bits<C: ValuesOnly>(
    cs: &mut C,
    value: &AllocatedNum<Fr>,
) -> Result<Vec<Bit>, SynthesisError> {
    bits_of(&reverse_bit_numbering(value.to_bits_le(&mut *cs)?))
}

fn bits_of(bits: &[Boolean]) -> Result<Vec<Bit>, SynthesisError> {
    bits.iter().map(Bit::of).collect()
}

fn alloc<C: ValuesOnly>(cs: &mut C, v: Option<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError> {
    AllocatedNum::alloc(&mut *cs, || v.ok_or(SynthesisError::AssignmentMissing))
}

/// Merkle inclusion of `leaf` under `root` along `path`, as the challenge circuit checks it.
fn include<H, U, V, W, C>(
    cs: &mut C,
    path: AuthPath<H, U, V, W>,
    root: &AllocatedNum<Fr>,
    leaf: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError>
where
    H: 'static + Hasher,
    U: 'static + PoseidonArity,
    V: 'static + PoseidonArity,
    W: 'static + PoseidonArity,
    C: ConstraintSystem<Fr>,
{
    PoRCircuit::<MerkleTreeWrapper<H, DiskStore<H::Domain>, U, V, W>>::synthesize(
        &mut *cs,
        Root::from_allocated::<C>(leaf.clone()),
        path,
        Root::from_allocated::<C>(root.clone()),
        true,
    )
}

/// The circuit's form of a challenge's vanilla proof, its type taken from the signature that
/// names it (see the module docs).
#[allow(clippy::type_complexity)]
fn circuit_form<Tree: MerkleTreeTrait, P>(
    _signature: fn(
        WitnessCs,
        Option<Domain<Tree>>,
        Option<DefaultPieceDomain>,
        Option<Domain<Tree>>,
        Option<Domain<Tree>>,
        Option<Domain<Tree>>,
        Vec<P>,
    ) -> Result<(), SynthesisError>,
    vanilla: VanillaSealProof<Tree>,
) -> P
where
    VanillaSealProof<Tree>: Into<P>,
{
    vanilla.into()
}
