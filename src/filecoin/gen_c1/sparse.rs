//! Sparse Merkle trees: the few leaves a C1 opens, at their positions, and every subtree that
//! holds none of them stood in for by one value (a seeded random field element, or the root of
//! an all-zero subtree), so a 2^30-leaf tree costs a few thousand hashes.

use std::collections::BTreeMap;

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use storage_proofs_core::merkle::Hasher;

use crate::filecoin::error::{FilecoinError, Result};

use super::hashing::{hash_children, trimmed};

/// What an untouched subtree's root is.
pub(crate) enum Fill<D> {
    /// A field element derived from this secret, the level and the index (as if the leaves
    /// under it were random).
    Random([u8; 32]),
    /// The root of an all-zero subtree of each level (`zeros[0]` is the zero leaf).
    Zero(Vec<D>),
}

/// A Merkle tree of `H` whose levels have the given arities (leaves first), holding only the
/// nodes above the leaves it was given.
pub(crate) struct SparseTree<H: Hasher> {
    arities: Vec<usize>,
    /// `levels[0]` are the given leaves, `levels[arities.len()]` the root.
    levels: Vec<BTreeMap<usize, H::Domain>>,
    fill: Fill<H::Domain>,
}

impl<H: Hasher> SparseTree<H> {
    /// The roots of all-zero subtrees of each level, for trees of these arities.
    pub(crate) fn zero_roots(arities: &[usize]) -> Vec<H::Domain> {
        let mut zeros = vec![H::Domain::default()];
        for (level, &a) in arities.iter().enumerate() {
            let below = zeros[level];
            zeros.push(hash_children::<H>(&vec![below; a], level));
        }
        zeros
    }

    /// Builds the tree over `leaves` (index → value).
    pub(crate) fn build(
        arities: Vec<usize>,
        leaves: BTreeMap<usize, H::Domain>,
        fill: Fill<H::Domain>,
    ) -> Result<Self> {
        let capacity: usize = arities.iter().product();
        if let Some((&last, _)) = leaves.last_key_value() {
            if last >= capacity {
                return Err(FilecoinError::BadInput(format!(
                    "leaf {last} is outside a tree of {capacity} leaves"
                )));
            }
        }
        if let Fill::Zero(z) = &fill {
            if z.len() != arities.len() + 1 {
                return Err(FilecoinError::BadInput(format!(
                    "{} zero roots for a tree of {} levels",
                    z.len(),
                    arities.len() + 1
                )));
            }
        }
        let mut tree = SparseTree {
            levels: vec![leaves],
            arities,
            fill,
        };
        for level in 0..tree.arities.len() {
            let a = tree.arities[level];
            let mut parents: Vec<usize> = tree.levels[level].keys().map(|i| i / a).collect();
            parents.dedup();
            let next: BTreeMap<usize, H::Domain> = parents
                .into_par_iter()
                .map(|p| {
                    let children: Vec<H::Domain> =
                        (0..a).map(|j| tree.value(level, p * a + j)).collect();
                    (p, hash_children::<H>(&children, level))
                })
                .collect();
            tree.levels.push(next);
        }
        Ok(tree)
    }

    /// The node at `index` of `level`: built, or its subtree's stand-in.
    fn value(&self, level: usize, index: usize) -> H::Domain {
        if let Some(v) = self.levels.get(level).and_then(|l| l.get(&index)) {
            return *v;
        }
        match &self.fill {
            Fill::Zero(zeros) => zeros[level],
            Fill::Random(secret) => {
                let h = Sha256::new()
                    .chain_update(secret)
                    .chain_update((level as u32).to_le_bytes())
                    .chain_update((index as u64).to_le_bytes())
                    .finalize();
                trimmed(h.into())
            }
        }
    }

    /// The root.
    pub(crate) fn root(&self) -> H::Domain {
        self.value(self.arities.len(), 0)
    }

    /// The opening of leaf `index` as filecoin-proofs holds it: the leaf, the root and, per
    /// level, the siblings and the leaf's position among them (`MerkleProof::from_parts`).
    pub(crate) fn opening(&self, index: usize) -> Opening<H::Domain> {
        let mut path = Vec::with_capacity(self.arities.len());
        let mut i = index;
        for (level, &a) in self.arities.iter().enumerate() {
            let first = i - i % a;
            let siblings = (first..first + a)
                .filter(|&j| j != i)
                .map(|j| self.value(level, j))
                .collect();
            path.push((siblings, i % a));
            i /= a;
        }
        (self.value(0, index), self.root(), path)
    }
}

/// A leaf, the root, and the path between them.
pub(crate) type Opening<D> = (D, D, Vec<(Vec<D>, usize)>);
