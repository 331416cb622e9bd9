//! The labels a generated C1 opens: every challenged node's column (its label in each layer)
//! computed from its parents' labels as sealing computes it, and the columns of the parents
//! that are not challenged themselves drawn at random (seeded), since only their openings in
//! tree_c are ever checked. One map holds every node's column, so a node that is both a
//! challenge and another challenge's parent shows the same labels in both proofs.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};
use storage_proofs_core::drgraph::BASE_DEGREE;
use storage_proofs_porep::stacked::TOTAL_PARENTS;

use crate::filecoin::error::{FilecoinError, Result};

use super::hashing::{label, trimmed};

/// The columns of the challenged nodes and their parents.
pub(crate) struct Columns<D> {
    layers: usize,
    /// A challenged node's parents: base (same layer) then expansion (previous layer).
    parents: BTreeMap<usize, Vec<u32>>,
    /// A node's labels in layers 1..=layers.
    rows: BTreeMap<usize, Vec<D>>,
}

impl<D: Copy + AsRef<[u8]> + From<[u8; 32]>> Columns<D> {
    /// Labels every challenged node in `layers` layers under `replica_id`; `parents_of` gives a
    /// node's parents as the graph does; `secret` seeds the labels of the other nodes.
    pub(crate) fn derive(
        challenged: &BTreeSet<usize>,
        layers: usize,
        replica_id: &D,
        secret: &[u8; 32],
        parents_of: impl Fn(usize) -> Result<Vec<u32>>,
    ) -> Result<Self> {
        let mut parents = BTreeMap::new();
        for &c in challenged {
            let ps = parents_of(c)?;
            if ps.len() <= BASE_DEGREE {
                return Err(FilecoinError::BadInput(format!(
                    "node {c} has {} parents, expected more than {BASE_DEGREE}",
                    ps.len()
                )));
            }
            parents.insert(c, ps);
        }
        let mut rows = BTreeMap::new();
        let needed = challenged.iter().copied().chain(
            parents
                .values()
                .flat_map(|ps: &Vec<u32>| ps.iter().map(|&p| p as usize)),
        );
        for node in needed {
            rows.entry(node).or_insert_with(|| {
                (1..=layers)
                    .map(|layer| random_label(secret, layer, node))
                    .collect()
            });
        }
        let mut columns = Columns {
            layers,
            parents,
            rows,
        };
        // Base parents precede their child, so each layer in node order sees its challenged
        // base parents labelled; expansion parents are in the layer before, done already.
        for layer in 1..=layers {
            for &c in challenged {
                if let Some(&p) = columns.parents[&c][..BASE_DEGREE]
                    .iter()
                    .find(|&&p| p as usize >= c && challenged.contains(&(p as usize)))
                {
                    return Err(FilecoinError::BadInput(format!(
                        "node {c}'s base parent {p} is not before it: the graph is not a DRG"
                    )));
                }
                let parent_labels = columns.parent_labels(c, layer);
                let l = label(replica_id, layer as u32, c as u64, &parent_labels);
                if let Some(row) = columns.rows.get_mut(&c) {
                    row[layer - 1] = l;
                }
            }
        }
        Ok(columns)
    }

    /// The layers.
    pub(crate) fn layers(&self) -> usize {
        self.layers
    }

    /// A challenged node's parents (base, then expansion).
    pub(crate) fn parents(&self, node: usize) -> &[u32] {
        self.parents.get(&node).map(Vec::as_slice).unwrap_or(&[])
    }

    /// A node's column (labels of layers 1..=layers); empty for a node never opened.
    pub(crate) fn rows(&self, node: usize) -> &[D] {
        self.rows.get(&node).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every node with a column, in order.
    pub(crate) fn nodes(&self) -> impl Iterator<Item = (usize, &[D])> {
        self.rows.iter().map(|(n, r)| (*n, r.as_slice()))
    }

    /// The labels a challenged node's label at `layer` hashes: its base parents' in `layer`
    /// and, above layer 1, its expansion parents' in `layer - 1`, repeated to the total count.
    pub(crate) fn parent_labels(&self, node: usize, layer: usize) -> Vec<D> {
        let ps = self.parents(node);
        let at = |p: &u32, layer: usize| self.rows(*p as usize)[layer - 1];
        let mut labels: Vec<D> = ps[..BASE_DEGREE].iter().map(|p| at(p, layer)).collect();
        if layer > 1 {
            labels.extend(ps[BASE_DEGREE..].iter().map(|p| at(p, layer - 1)));
        }
        labels.iter().cycle().take(TOTAL_PARENTS).copied().collect()
    }
}

/// The label of a node nobody challenged: any field element will do, fixed by the secret.
fn random_label<D: From<[u8; 32]>>(secret: &[u8; 32], layer: usize, node: usize) -> D {
    let h = Sha256::new()
        .chain_update(secret)
        .chain_update(b"label")
        .chain_update((layer as u32).to_le_bytes())
        .chain_update((node as u64).to_le_bytes())
        .finalize();
    trimmed(h.into())
}
