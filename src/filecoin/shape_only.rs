//! Shape-only PoRep keys, for benches at sector sizes whose parameters cannot be made here (a
//! 32 GiB key comes from a trusted setup, ~47 GB): a C1 output is generated for the size
//! ([`super::generate_c1`], fixed miner and sector), partition 0's circuit is synthesized (its
//! challenges in parallel, their densities joined: [`full_shape`] is the one-thread check), and
//! a key of its exact query sizes and densities is built in memory with tiled random points
//! ([`crate::groth16::tiled`]). Proving with it is a real proof's work; the proofs cannot verify.
//! [`ShapeKey`] says so in its label and hands the key out only as
//! [`unverifiable_key`](ShapeKey::unverifiable_key).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::Scalar as Fr;
use filecoin_proofs_api::MerkleTreeTrait;
use rayon::prelude::*;

use crate::engine::request::Request;
use crate::groth16::cs::{Density, ProvingAssignment};
use crate::groth16::key::ProvingKey;
use crate::groth16::tiled::{tiled_key_of, KeyShape};

use super::error::{FilecoinError, Result};
use super::gen_c1::{generate_c1, GenC1};
use super::ids::CircuitId;
use super::porep::porep_circuits;
use super::porep_circuit::{PorepCircuit, PorepPartition};
use super::shape::{guard, with_tree};

/// What a shape key is labelled with, wherever it is shown or written.
pub const SHAPE_ONLY: &str = "shape-only: NOT a real key, proofs will not verify";

/// The miner and sector the shape key's C1 output is generated for.
const MINER: u64 = 1000;
const SECTOR: u64 = 1;

/// A PoRep key of the real circuit's exact shape with random points: labelled, so that nothing
/// takes it for a real key.
pub struct ShapeKey {
    circuit: CircuitId,
    shape: KeyShape,
    pk: Arc<ProvingKey>,
    synthesis: Duration,
    tiling: Duration,
}

impl ShapeKey {
    /// [`SHAPE_ONLY`].
    pub fn label(&self) -> &'static str {
        SHAPE_ONLY
    }

    /// The circuit whose shape it has (`porep-32g`, ...).
    pub fn circuit(&self) -> CircuitId {
        self.circuit
    }

    /// The query sizes and densities.
    pub fn shape(&self) -> &KeyShape {
        &self.shape
    }

    /// The time the C1 output and partition 0's synthesis took.
    pub fn synthesis_time(&self) -> Duration {
        self.synthesis
    }

    /// The time the random points and their tiling took.
    pub fn tiling_time(&self) -> Duration {
        self.tiling
    }

    /// The key, for proving work whose proofs are thrown away: they do not verify.
    pub fn unverifiable_key(&self) -> Arc<ProvingKey> {
        self.pk.clone()
    }

    /// A whole PoRep C2's work under this key, for benches: every partition of a C1 output
    /// generated for sector `sector` of the shape's miner (another sector, other challenges),
    /// under [`ShapeKey::unverifiable_key`]. The proofs it gives do not verify.
    pub fn unverifiable_request(&self, sector: u64) -> Result<Request> {
        let size = self.circuit.sector_size;
        let pk = self.pk.clone();
        guard("building the PoRep circuits", || {
            with_tree!(size, request_of, size, sector, pk)
        })
    }
}

fn request_of<Tree: 'static + MerkleTreeTrait>(
    sector_size: u64,
    sector: u64,
    pk: Arc<ProvingKey>,
) -> Result<Request> {
    Ok(Request::new(pk, partitions::<Tree>(sector_size, sector)?))
}

impl fmt::Debug for ShapeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShapeKey")
            .field("label", &SHAPE_ONLY)
            .field("circuit", &self.circuit.to_string())
            .field("shape", &self.shape)
            .finish()
    }
}

/// The shape key of PoRep C2 at `sector_size` (bytes: 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB).
pub fn shape_key(sector_size: u64) -> Result<ShapeKey> {
    let t = Instant::now();
    let shape = with_tree!(sector_size, circuit_shape, sector_size)?;
    let synthesis = t.elapsed();
    let t = Instant::now();
    let pk = Arc::new(tiled_key_of(&shape));
    Ok(ShapeKey {
        circuit: CircuitId {
            kind: super::CircuitKind::Porep,
            sector_size,
        },
        shape,
        pk,
        synthesis,
        tiling: t.elapsed(),
    })
}

fn circuit_shape<Tree: 'static + MerkleTreeTrait>(sector_size: u64) -> Result<KeyShape> {
    let circuit = shape_circuit::<Tree>(sector_size)?;
    guard("synthesizing partition 0", || parallel_shape(&circuit))
}

/// What one challenge's synthesis (the prelude, then that challenge) adds to the shape: the
/// prelude's variables it puts in A or B, and the counts past the prelude.
struct Part {
    prelude_a: Vec<bool>,
    prelude_b: Vec<bool>,
    prelude_b_inputs: Vec<bool>,
    shape: KeyShape,
}

fn part<C: bellperson::Circuit<Fr>>(circuit: C, prelude: &KeyShape) -> Result<Part> {
    let cs = ProvingAssignment::synthesize(circuit)
        .map_err(|e| FilecoinError::upstream("synthesizing partition 0", e))?;
    let (pi, pa) = (prelude.inputs, prelude.aux);
    if cs.inputs.len() < pi || cs.aux.len() < pa {
        return Err(FilecoinError::upstream(
            "synthesizing partition 0",
            "a challenge's synthesis is smaller than the prelude alone",
        ));
    }
    let bits = |d: &Density, n: usize| (0..n).map(|i| d.get(i)).collect::<Vec<_>>();
    let ones = |b: &[bool]| b.iter().filter(|x| **x).count();
    let (prelude_a, prelude_b) = (bits(&cs.a_aux_density, pa), bits(&cs.b_aux_density, pa));
    let prelude_b_inputs = bits(&cs.b_input_density, pi);
    let shape = KeyShape {
        inputs: cs.inputs.len() - pi,
        aux: cs.aux.len() - pa,
        // Without the input constraints: those are counted once, from the inputs.
        constraints: cs.num_constraints() - cs.inputs.len() - (prelude.constraints - pi),
        domain: 0,
        a_aux: cs.a_aux_density.count() - ones(&prelude_a),
        b_inputs: cs.b_input_density.count() - ones(&prelude_b_inputs),
        b_aux: cs.b_aux_density.count() - ones(&prelude_b),
    };
    Ok(Part {
        prelude_a,
        prelude_b,
        prelude_b_inputs,
        shape,
    })
}

/// Partition 0's shape with its challenges synthesized in parallel (each after its own run of
/// the prelude, as the witness path runs them: `porep_circuit.rs`): the variables past the
/// prelude add up; the prelude's count once, present where any challenge puts them.
fn parallel_shape<Tree: 'static + MerkleTreeTrait>(c: &PorepCircuit<Tree>) -> Result<KeyShape> {
    let prelude = KeyShape::of(c.only(0..0))
        .map_err(|e| FilecoinError::upstream("synthesizing the PoRep prelude", e))?;
    let parts = (0..c.challenges())
        .into_par_iter()
        .map(|i| part(c.only(i..i + 1), &prelude))
        .collect::<Result<Vec<_>>>()?;
    let union = |pick: fn(&Part) -> &Vec<bool>, n: usize| {
        (0..n).filter(|&i| parts.iter().any(|p| pick(p)[i])).count()
    };
    let sum = |pick: fn(&KeyShape) -> usize| parts.iter().map(|p| pick(&p.shape)).sum::<usize>();
    let inputs = prelude.inputs + sum(|s| s.inputs);
    let constraints = (prelude.constraints - prelude.inputs) + sum(|s| s.constraints) + inputs;
    Ok(KeyShape {
        inputs,
        aux: prelude.aux + sum(|s| s.aux),
        constraints,
        domain: constraints.next_power_of_two(),
        a_aux: union(|p| &p.prelude_a, prelude.aux) + sum(|s| s.a_aux),
        b_inputs: union(|p| &p.prelude_b_inputs, prelude.inputs) + sum(|s| s.b_inputs),
        b_aux: union(|p| &p.prelude_b, prelude.aux) + sum(|s| s.b_aux),
    })
}

/// Partition 0's shape by one full synthesis, to check [`shape_key`]'s parallel one against.
pub fn full_shape<Tree: 'static + MerkleTreeTrait>(sector_size: u64) -> Result<KeyShape> {
    let circuit = shape_circuit::<Tree>(sector_size)?;
    guard("synthesizing partition 0", || {
        KeyShape::of(circuit).map_err(|e| FilecoinError::upstream("synthesizing partition 0", e))
    })
}

/// Partition 0's circuit of the C1 output a shape key is made from, for the tree `Tree` of
/// `sector_size` (`SectorShape2KiB` for 2048, ...: filecoin-proofs' tree of that size, or an error).
pub fn shape_circuit<Tree: 'static + MerkleTreeTrait>(
    sector_size: u64,
) -> Result<PorepCircuit<Tree>> {
    let tree = guard("naming the tree", || with_tree!(sector_size, tree_name, ()))?;
    if tree != std::any::type_name::<Tree>() {
        return Err(FilecoinError::Mismatch {
            what: "tree shape vs sector size",
            left: std::any::type_name::<Tree>().into(),
            right: format!("sector size {sector_size} has {tree}"),
        });
    }
    guard("building a shape circuit", || {
        partition0::<Tree>(sector_size)
    })
}

fn tree_name<Tree: 'static + MerkleTreeTrait>(_: ()) -> Result<&'static str> {
    Ok(std::any::type_name::<Tree>())
}

fn partition0<Tree: 'static + MerkleTreeTrait>(sector_size: u64) -> Result<PorepCircuit<Tree>> {
    partitions::<Tree>(sector_size, SECTOR)?
        .first()
        .map(|p| p.circuit().clone())
        .ok_or_else(|| FilecoinError::BadInput("the C1 output has no partition".into()))
}

/// The partitions of a C1 output generated for sector `sector` of [`MINER`].
fn partitions<Tree: 'static + MerkleTreeTrait>(
    sector_size: u64,
    sector: u64,
) -> Result<Vec<PorepPartition<Tree>>> {
    let spec = GenC1::new(sector_size, MINER, sector)?;
    let c1 = generate_c1(&spec)?;
    Ok(porep_circuits::<Tree>(&c1, &spec.prover_id, spec.sector_id)?.0)
}
