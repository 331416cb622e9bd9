//! A C1's vanilla proofs checked challenge by challenge, as filecoin-proofs'
//! `verify_all_partitions` checks them (each challenge through its own `Proof::verify`), so
//! that a refusal names the partition, the challenge, its node and the part of its proof that
//! is wrong: a changed label reads "partition 0, challenge 3 (node 17): its layer-2 label ...".

use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::{DefaultPieceDomain, VanillaSealProof};
use rayon::prelude::*;
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{Hasher, MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_porep::stacked::{PublicInputs, PublicParams};

use super::error::{FilecoinError, Result};
use super::gen_c1::hashing::hash2;

type Inputs<Tree> =
    PublicInputs<<<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain, DefaultPieceDomain>;

fn invalid(why: String) -> FilecoinError {
    FilecoinError::VanillaInvalid(why)
}

/// Checks every partition's proofs against comm_r, comm_d, the replica id and the seed's
/// challenges; the first failure (by partition, then challenge) is the error.
pub(crate) fn check<Tree: 'static + MerkleTreeTrait>(
    pp: &PublicParams<Tree>,
    pub_in: &Inputs<Tree>,
    partitions: &[Vec<VanillaSealProof<Tree>>],
) -> Result<()> {
    let tau = pub_in
        .tau
        .as_ref()
        .ok_or_else(|| invalid("no comm_d and comm_r to check against".into()))?;
    if pub_in.seed.is_none() {
        return Err(invalid("no seed to derive the challenges from".into()));
    }
    let mut work = Vec::new();
    for (k, proofs) in partitions.iter().enumerate() {
        let first = proofs
            .first()
            .ok_or_else(|| invalid(format!("partition {k} has no proofs")))?;
        if hash2::<Tree::Hasher>(&first.comm_c(), &first.comm_r_last()) != tau.comm_r {
            return Err(invalid(format!(
                "partition {k}: H(comm_c, comm_r_last) of its proofs is not the C1's comm_r"
            )));
        }
        let challenges = pub_in.challenges(&pp.challenges, pp.graph.size(), Some(k));
        if challenges.len() != proofs.len() {
            return Err(invalid(format!(
                "partition {k} has {} challenge proofs, the seed gives {} challenges",
                proofs.len(),
                challenges.len()
            )));
        }
        work.extend(
            proofs
                .iter()
                .zip(challenges)
                .enumerate()
                .map(|(i, (p, c))| (k, i, c, p, first)),
        );
    }
    let failure = work
        .par_iter()
        .filter_map(|&(k, i, c, proof, first)| {
            problem(pp, pub_in, c, proof, first).map(|why| (k, i, c, why))
        })
        .min_by_key(|(k, i, _, _)| (*k, *i));
    match failure {
        Some((k, i, c, why)) => Err(invalid(format!(
            "partition {k}, challenge {i} (node {c}): {why}"
        ))),
        None => Ok(()),
    }
}

/// What is wrong with the proof of `challenge`, if anything.
fn problem<Tree: 'static + MerkleTreeTrait>(
    pp: &PublicParams<Tree>,
    pub_in: &Inputs<Tree>,
    challenge: usize,
    proof: &VanillaSealProof<Tree>,
    first: &VanillaSealProof<Tree>,
) -> Option<String> {
    if proof.comm_c() != first.comm_c() {
        return Some("its comm_c is not the partition's".into());
    }
    if proof.comm_r_last() != first.comm_r_last() {
        return Some("its comm_r_last is not the partition's".into());
    }
    let cols = &proof.replica_column_proofs;
    let opened = cols.drg_parents.len() + cols.exp_parents.len();
    if opened != pp.graph.degree() {
        return Some(format!(
            "it opens {opened} parent columns, the graph gives each node {}",
            pp.graph.degree()
        ));
    }
    if proof.verify(pp, pub_in, challenge, &pp.graph) {
        return None;
    }
    Some(diagnose(pp, pub_in, challenge, proof))
}

/// Which of `Proof::verify`'s checks fails, in words.
fn diagnose<Tree: 'static + MerkleTreeTrait>(
    pp: &PublicParams<Tree>,
    pub_in: &Inputs<Tree>,
    c: usize,
    proof: &VanillaSealProof<Tree>,
) -> String {
    let d = &proof.comm_d_proofs;
    let comm_d = pub_in.tau.as_ref().map(|t| t.comm_d);
    if !d.verify() || !d.proves_challenge(c) || Some(d.root()) != comm_d {
        return format!("its data opening does not prove node {c} under comm_d");
    }
    let mut parents = vec![0u32; pp.graph.degree()];
    if pp.graph.parents(c, &mut parents).is_err() {
        return "the graph gives no parents for it".into();
    }
    let cols = &proof.replica_column_proofs;
    let comm_c = cols.c_x.root();
    if !cols.c_x.verify(c as u32, &comm_c) {
        return format!("its column (its labels) does not open at node {c} under comm_c");
    }
    let opened = cols.drg_parents.iter().chain(&cols.exp_parents);
    for (j, (col, p)) in opened.zip(&parents).enumerate() {
        if !col.verify(*p, &comm_c) {
            return format!("the column of its parent {j} (node {p}) does not open under comm_c");
        }
    }
    let r = &proof.comm_r_last_proof;
    if !r.verify() || !r.proves_challenge(c) {
        return format!("its replica opening does not prove node {c} under comm_r_last");
    }
    for layer in 1..=pp.num_layers {
        let Some(lp) = proof.labeling_proofs.get(layer - 1) else {
            return format!("it has no labeling proof for layer {layer}");
        };
        match cols.c_x.get_node_at_layer(layer) {
            Ok(label) if lp.verify(&pub_in.replica_id, label) => {}
            _ => return format!("its layer-{layer} label is not the hash of its parents' labels"),
        }
    }
    if !proof
        .encoding_proof
        .verify::<DefaultPieceHasher>(&pub_in.replica_id, &r.leaf(), &d.leaf())
    {
        return "its replica node is not its data encoded with its last layer's label".into();
    }
    "it does not verify".into()
}
