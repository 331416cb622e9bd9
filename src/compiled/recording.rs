//! A recorded R1CS: the A, B and C matrices of one circuit shape with their shared coefficient
//! table, the shape's counts, and the density trackers derived from the matrices once. It turns
//! a witness into a/b/c (parallel over rows) and checks its shape against a proving key.

use blstrs::Scalar;
use ff::Field;

use super::coeffs::{MINUS_ONE_INDEX, ONE_INDEX};
use super::error::CompiledError;
use super::matrix::{Columns, SparseMatrix};
use crate::groth16::cs::Density;
use crate::groth16::key::ProvingKey;
use crate::groth16::packed::PackedScalars;
use crate::groth16::prover::{Abc, Witness};
use crate::ledger::{BufferClass, Footprint, PartitionShape};

/// The variable counts of a circuit shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Public inputs, the constant one included.
    pub inputs: usize,
    /// Private variables.
    pub aux: usize,
    /// The circuit's own constraints (without the prover's one input constraint per input).
    pub constraints: usize,
}

impl Shape {
    /// Rows of each matrix: the circuit's constraints, then one per public input.
    pub fn rows(&self) -> usize {
        self.constraints + self.inputs
    }

    /// The evaluation domain's size: the next power of two of the rows (at least 2).
    pub fn domain_size(&self) -> usize {
        self.rows().max(2).next_power_of_two()
    }
}

/// Which variables occur in the A and B queries (what a proving key's queries are built from).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Densities {
    /// Private variables present in A.
    pub a_aux: Density,
    /// Inputs present in B.
    pub b_input: Density,
    /// Private variables present in B.
    pub b_aux: Density,
}

/// Rows per block of the streamed evaluation: the unit in which rows become ready as the
/// witness grows (see `compiled::stream`).
pub const BLOCK_ROWS: usize = 1 << 12;

/// The recorded constraint system of one circuit shape.
#[derive(Clone, Debug)]
pub struct Recording {
    /// Process-unique, for backends that keep the matrices resident (clones share it: they hold
    /// the same rows).
    id: u64,
    shape: Shape,
    coeffs: Vec<Scalar>,
    matrices: [SparseMatrix; 3],
    densities: Densities,
    /// Per block of rows: the inputs and aux variables its rows use, as counts.
    needs: Vec<[u32; 2]>,
}

impl PartialEq for Recording {
    fn eq(&self, o: &Self) -> bool {
        self.shape == o.shape
            && self.coeffs == o.coeffs
            && self.matrices == o.matrices
            && self.densities == o.densities
    }
}

impl Eq for Recording {}

static NEXT_RECORDING_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The first named pair of counts that differ.
pub(crate) fn first_difference<const N: usize>(
    counts: [(&'static str, usize, usize); N],
) -> Option<(&'static str, usize, usize)> {
    counts.into_iter().find(|(_, x, y)| x != y)
}

fn tracker(len: usize) -> Density {
    let mut d = Density::default();
    (0..len).for_each(|_| d.push());
    d
}

impl Recording {
    /// Assembles a recording from validated matrices (each with `shape.rows()` rows and columns
    /// below `shape.inputs + shape.aux`) and a table whose first two entries are +1 and −1;
    /// derives the density trackers.
    pub fn from_parts(
        shape: Shape,
        coeffs: Vec<Scalar>,
        matrices: [SparseMatrix; 3],
    ) -> Result<Self, String> {
        if coeffs.get(ONE_INDEX as usize) != Some(&Scalar::ONE)
            || coeffs.get(MINUS_ONE_INDEX as usize) != Some(&-Scalar::ONE)
        {
            return Err("the coefficient table must start with +1 and −1".into());
        }
        for (name, m) in ["A", "B", "C"].iter().zip(&matrices) {
            if m.rows() != shape.rows() {
                return Err(format!(
                    "matrix {name} has {} rows, the shape has {}",
                    m.rows(),
                    shape.rows()
                ));
            }
        }
        let mut densities = Densities {
            a_aux: tracker(shape.aux),
            b_input: tracker(shape.inputs),
            b_aux: tracker(shape.aux),
        };
        // Inputs are dense in A by construction (the input rows), so only aux is tracked there.
        matrices[0].mark_columns(shape.inputs, None, Some(&mut densities.a_aux));
        matrices[1].mark_columns(
            shape.inputs,
            Some(&mut densities.b_input),
            Some(&mut densities.b_aux),
        );
        let mut needs = matrices[0].needs(BLOCK_ROWS, shape.inputs);
        for m in &matrices[1..] {
            for (n, m) in needs.iter_mut().zip(m.needs(BLOCK_ROWS, shape.inputs)) {
                *n = [n[0].max(m[0]), n[1].max(m[1])];
            }
        }
        Ok(Recording {
            id: NEXT_RECORDING_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            shape,
            coeffs,
            matrices,
            densities,
            needs,
        })
    }

    /// A process-unique id (backends key resident copies by it).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The shape's counts.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The shared coefficient table (+1 and −1 first).
    pub fn coeffs(&self) -> &[Scalar] {
        &self.coeffs
    }

    /// The A, B and C matrices.
    pub fn matrices(&self) -> &[SparseMatrix; 3] {
        &self.matrices
    }

    /// The density trackers derived from A and B.
    pub fn densities(&self) -> &Densities {
        &self.densities
    }

    /// Terms in A, B and C together.
    pub fn terms(&self) -> usize {
        self.matrices.iter().map(SparseMatrix::terms).sum()
    }

    /// Bytes held in memory (matrices, table and trackers).
    pub fn heap_bytes(&self) -> usize {
        self.matrices
            .iter()
            .map(SparseMatrix::heap_bytes)
            .sum::<usize>()
            + self.coeffs.len() * 32
            + self.densities.a_aux.heap_bytes()
            + self.densities.b_input.heap_bytes()
            + self.densities.b_aux.heap_bytes()
    }

    /// Checks that `pk` was made for this shape: inputs, aux, domain and the A/B query sizes
    /// (the key stores the variables present in A and B, so the densities must agree too).
    pub fn check_key(&self, pk: &ProvingKey) -> Result<(), CompiledError> {
        let s = self.shape;
        let d = &self.densities;
        let b_count = d.b_input.count() + d.b_aux.count();
        let dims = [
            ("public inputs (IC query)", pk.vk.ic.len(), s.inputs),
            ("private variables (L query)", pk.l.len(), s.aux),
            ("domain size (H query + 1)", pk.h.len() + 1, s.domain_size()),
            ("A query", pk.a.len(), s.inputs + d.a_aux.count()),
            ("B_G1 query", pk.b_g1.len(), b_count),
            ("B_G2 query", pk.b_g2.len(), b_count),
        ];
        match first_difference(dims) {
            Some((what, key, recording)) => Err(CompiledError::KeyShape {
                what,
                key,
                recording,
            }),
            None => Ok(()),
        }
    }

    /// The ledger footprint of one partition of this shape: a/b/c on the host (the CPU path,
    /// and CUDA backends that take them from the host), or charged to the device when the
    /// backend evaluates them there, leaving the host the witness and its densities.
    pub fn footprint(&self, abc_on_device: bool) -> Footprint {
        let s = self.shape;
        let host = Footprint::for_shape(PartitionShape {
            constraints: s.constraints as u64,
            inputs: s.inputs as u64,
            aux: s.aux as u64,
        });
        if !abc_on_device {
            return host;
        }
        Footprint::new(
            0,
            host.bytes(BufferClass::Aux),
            host.bytes(BufferClass::Inputs),
            host.bytes(BufferClass::Density),
        )
    }

    /// [`Recording::footprint`] on the device for a witness that synthesis packs as bits: the
    /// plain witness and the room to pack it ([`crate::groth16::packed::packing_room`]), most of
    /// which the synthesis worker gives back once the witness is packed.
    pub fn packed_footprint(&self) -> Footprint {
        self.witness_footprint(|aux| aux + crate::groth16::packed::packing_room(aux))
    }

    /// [`Recording::packed_footprint`] for a circuit that packs as it goes
    /// ([`crate::stages::pipeline::PartitionCircuit::packs_as_it_goes`]): its room alone
    /// ([`crate::groth16::packed::streamed_room`]), as the witness is never plain on the host.
    pub fn streamed_footprint(&self) -> Footprint {
        self.witness_footprint(crate::groth16::packed::streamed_room)
    }

    /// [`Recording::footprint`] on the device with its private variables' bytes charged as
    /// `aux` of their plain bytes.
    fn witness_footprint(&self, aux: impl FnOnce(u64) -> u64) -> Footprint {
        let f = self.footprint(true);
        Footprint::new(
            0,
            aux(f.bytes(BufferClass::Aux)),
            f.bytes(BufferClass::Inputs),
            f.bytes(BufferClass::Density),
        )
    }

    /// Checks that a witness has the recorded lengths.
    pub fn check_witness(&self, inputs: &[Scalar], aux: &[Scalar]) -> Result<(), CompiledError> {
        self.check_witness_len(inputs.len(), aux.len())
    }

    /// [`Recording::check_witness`] by the lengths alone (a witness packed as bits).
    pub fn check_witness_len(&self, inputs: usize, aux: usize) -> Result<(), CompiledError> {
        let lengths = [
            ("inputs", self.shape.inputs, inputs),
            ("aux", self.shape.aux, aux),
        ];
        match first_difference(lengths) {
            Some((what, recording, witness)) => Err(CompiledError::WitnessLength {
                what,
                recording,
                witness,
            }),
            None => Ok(()),
        }
    }

    /// a, b, c = A·w, B·w, C·w (each parallel over rows), in buffers with the domain's capacity
    /// so they hold what the ledger charges for them; refused when a·b ≠ c at some row.
    pub fn evaluate(&self, inputs: &[Scalar], aux: &[Scalar]) -> Result<Abc, CompiledError> {
        let d = self.shape.domain_size();
        let mut abc = Abc {
            a: Vec::with_capacity(d),
            b: Vec::with_capacity(d),
            c: Vec::with_capacity(d),
        };
        self.evaluate_into(inputs, aux, &mut abc)?;
        Ok(abc)
    }

    /// [`Recording::evaluate`] into existing buffers (cleared first, their capacity reused).
    /// The satisfaction check runs inside the C pass; the first failing row is named.
    pub fn evaluate_into(
        &self,
        inputs: &[Scalar],
        aux: &[Scalar],
        abc: &mut Abc,
    ) -> Result<(), CompiledError> {
        self.check_witness(inputs, aux)?;
        for v in [&mut abc.a, &mut abc.b, &mut abc.c] {
            v.clear();
        }
        match self.evaluate_rows(0..self.shape.rows(), self.columns(inputs, aux), abc) {
            Some(index) => Err(CompiledError::Unsatisfied { index }),
            None => Ok(()),
        }
    }

    /// A view of a (possibly partial) witness in this recording's column order.
    pub fn columns<'a>(&self, inputs: &'a [Scalar], aux: &'a [Scalar]) -> Columns<'a> {
        Columns {
            inputs,
            aux,
            first_aux: self.shape.inputs,
        }
    }

    /// Number of row blocks.
    pub fn blocks(&self) -> usize {
        self.needs.len()
    }

    /// Whether a witness holding `inputs` inputs and `aux` aux variables covers block `b`.
    pub fn block_ready(&self, b: usize, inputs: usize, aux: usize) -> bool {
        self.needs
            .get(b)
            .is_some_and(|[i, a]| *i as usize <= inputs && *a as usize <= aux)
    }

    /// Row `first_block · BLOCK_ROWS`, where block `first_block` starts, and the end of the run
    /// of blocks from there that a witness holding `inputs` inputs and `aux` aux covers.
    pub fn ready_rows(
        &self,
        first_block: usize,
        inputs: usize,
        aux: usize,
    ) -> std::ops::Range<usize> {
        let mut end = first_block;
        while self.block_ready(end, inputs, aux) {
            end += 1;
        }
        let rows = self.shape.rows();
        (first_block * BLOCK_ROWS).min(rows)..(end * BLOCK_ROWS).min(rows)
    }

    /// Appends `rows` of a, b and c in parallel, after the rows before them (`w` must cover
    /// them); returns the first row where a·b ≠ c.
    pub fn evaluate_rows(
        &self,
        rows: std::ops::Range<usize>,
        w: Columns<'_>,
        abc: &mut Abc,
    ) -> Option<usize> {
        let [ma, mb, mc] = &self.matrices;
        let t = &self.coeffs;
        ma.evaluate_rows(rows.clone(), t, w, None, &mut abc.a);
        mb.evaluate_rows(rows.clone(), t, w, None, &mut abc.b);
        mc.evaluate_rows(rows, t, w, Some((&abc.a, &abc.b)), &mut abc.c)
    }

    /// The partition's witness with this shape's density trackers (copied, not derived again).
    pub fn witness(&self, inputs: Vec<Scalar>, aux: Vec<Scalar>) -> Witness {
        Witness {
            inputs,
            aux,
            packed: None,
            a_aux_density: self.densities.a_aux.clone(),
            b_input_density: self.densities.b_input.clone(),
            b_aux_density: self.densities.b_aux.clone(),
        }
    }

    /// [`Recording::witness`] with the private variables packed as bits.
    pub fn packed_witness(&self, inputs: Vec<Scalar>, packed: PackedScalars) -> Witness {
        Witness {
            packed: Some(packed),
            ..self.witness(inputs, Vec::new())
        }
    }
}
