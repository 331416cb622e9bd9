//! The hashes of a C1 as filecoin-proofs computes them: Merkle nodes (the hasher's
//! `multi_node`), SDR labels (SHA-256 of the replica id, layer, node and parents' labels,
//! trimmed to a field element), and tree arities read off a tree shape.

use filecoin_hashers::HashFunction;
use merkletree::hash::Algorithm;
use sha2::{Digest, Sha256};
use storage_proofs_core::merkle::{Hasher, MerkleTreeTrait};
use typenum::Unsigned;

use crate::filecoin::error::{FilecoinError, Result};

/// The parent of `children` at `level` (0: just above the leaves).
pub(crate) fn hash_children<H: Hasher>(children: &[H::Domain], level: usize) -> H::Domain {
    let mut f = H::Function::default();
    f.multi_node(children, level)
}

/// `H(a, b)`: comm_r from comm_c and comm_r_last.
pub(crate) fn hash2<H: Hasher>(a: &H::Domain, b: &H::Domain) -> H::Domain {
    H::Function::hash2(a, b)
}

/// 32 bytes as a field element's little-endian bytes, the two top bits cleared (always < r).
pub(crate) fn trimmed<D: From<[u8; 32]>>(mut bytes: [u8; 32]) -> D {
    bytes[31] &= 0b0011_1111;
    D::from(bytes)
}

/// The label of `node` at `layer` from its parents' labels (already repeated to the total
/// count of parents): what `LabelingProof` checks and sealing computes.
pub(crate) fn label<D: AsRef<[u8]> + From<[u8; 32]>>(
    replica_id: &D,
    layer: u32,
    node: u64,
    parents: &[D],
) -> D {
    let mut head = [0u8; 64];
    head[..32].copy_from_slice(replica_id.as_ref());
    head[32..36].copy_from_slice(&layer.to_be_bytes());
    head[36..44].copy_from_slice(&node.to_be_bytes());
    let mut h = Sha256::new();
    h.update(head);
    for p in parents {
        h.update(p.as_ref());
    }
    trimmed(h.finalize().into())
}

/// The arities of `Tree`'s levels over `nodes` leaves, leaves first: the base arity up to the
/// sub-trees' roots, then the sub-tree and top-tree layers if the shape has them.
pub(crate) fn tree_arities<Tree: MerkleTreeTrait>(nodes: usize) -> Result<Vec<usize>> {
    let base = Tree::Arity::to_usize();
    let sub = Tree::SubTreeArity::to_usize();
    let top = Tree::TopTreeArity::to_usize();
    let bad = || {
        FilecoinError::BadInput(format!(
            "{nodes} nodes do not fill a tree of arity {base}/{sub}/{top}"
        ))
    };
    let mut per_base = nodes / sub.max(1) / top.max(1);
    if base < 2 || per_base * sub.max(1) * top.max(1) != nodes {
        return Err(bad());
    }
    let mut arities = Vec::new();
    while per_base > 1 {
        if !per_base.is_multiple_of(base) {
            return Err(bad());
        }
        arities.push(base);
        per_base /= base;
    }
    arities.extend([sub, top].into_iter().filter(|a| *a > 0));
    Ok(arities)
}

/// The levels of a binary tree over `nodes` leaves (tree_d).
pub(crate) fn binary_arities(nodes: usize) -> Result<Vec<usize>> {
    if !nodes.is_power_of_two() || nodes < 2 {
        return Err(FilecoinError::BadInput(format!(
            "{nodes} nodes do not fill a binary tree"
        )));
    }
    Ok(vec![2; nodes.trailing_zeros() as usize])
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_proofs::constants::{
        SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB,
    };

    #[test]
    fn arities_follow_the_tree_shapes() {
        assert_eq!(tree_arities::<SectorShape2KiB>(64).ok(), Some(vec![8, 8]));
        assert_eq!(
            tree_arities::<SectorShape512MiB>(1 << 24).ok(),
            Some(vec![8; 8])
        );
        // 32 GiB: eight sub-trees of 8^9 leaves under one 8-ary layer.
        let mut want = vec![8; 9];
        want.push(8);
        assert_eq!(
            tree_arities::<SectorShape32GiB>(1 << 30).ok(),
            Some(want.clone())
        );
        // 64 GiB: two of those under a binary top layer.
        want.push(2);
        assert_eq!(tree_arities::<SectorShape64GiB>(1 << 31).ok(), Some(want));
        assert!(tree_arities::<SectorShape2KiB>(96).is_err());
        assert_eq!(binary_arities(64).ok(), Some(vec![2; 6]));
        assert!(binary_arities(48).is_err());
    }

    #[test]
    fn labels_are_field_elements_of_the_header_and_parents() {
        let id = [7u8; 32];
        let parents = [[1u8; 32], [2u8; 32]];
        let a: [u8; 32] = label(&id, 1, 5, &parents);
        assert!(a[31] <= 0x3f, "top two bits cleared");
        assert_ne!(a, label(&id, 2, 5, &parents), "the layer counts");
        assert_ne!(a, label(&id, 1, 6, &parents), "the node counts");
        assert_ne!(a, label(&id, 1, 5, &parents[..1]), "the parents count");
    }
}
