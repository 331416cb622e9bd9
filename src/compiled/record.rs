//! The recording constraint system: runs a circuit once, keeping its witness and appending
//! every constraint's A, B and C terms to growing sparse rows, coefficients deduplicated into
//! one table. [`RecordingCs::finish`] adds the prover's input rows (`input_i · 0 = 0`, as
//! `cs::ProvingAssignment` does) and yields the [`Recording`].

use std::collections::HashMap;

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::coeffs::{CoeffIndices, MINUS_ONE_INDEX, ONE_INDEX};
use super::error::CompiledError;
use super::matrix::SparseMatrix;
use super::recording::{Recording, Shape};
use super::witness::WitnessCs;

/// Marks an input column while recording (aux columns are shifted past the inputs at the end,
/// when their count is known).
const INPUT_TAG: u32 = 1 << 31;

/// The coefficient table being built: +1 and −1 first, then each new value once.
struct CoeffTable {
    values: Vec<Scalar>,
    // Keyed by the Montgomery limbs: equal scalars have equal limbs, and no conversion is paid.
    index: HashMap<[u64; 4], u32>,
}

impl CoeffTable {
    fn new() -> Self {
        CoeffTable {
            values: vec![Scalar::ONE, -Scalar::ONE],
            index: HashMap::new(),
        }
    }

    fn index_of(&mut self, c: &Scalar) -> u32 {
        if *c == Scalar::ONE {
            return ONE_INDEX;
        }
        if *c == -Scalar::ONE {
            return MINUS_ONE_INDEX;
        }
        let key = blst::blst_fr::from(*c).l;
        let next = self.values.len() as u32;
        let values = &mut self.values;
        *self.index.entry(key).or_insert_with(|| {
            values.push(*c);
            next
        })
    }
}

/// One matrix while its rows grow.
#[derive(Default)]
struct RowsBuilder {
    row_ptr: Vec<u32>,
    cols: Vec<u32>,
    coeffs: Vec<u32>,
}

impl RowsBuilder {
    fn new() -> Self {
        RowsBuilder {
            row_ptr: vec![0],
            ..Self::default()
        }
    }

    /// Appends one row; `false` when the term count no longer fits a `u32` row pointer.
    fn push_row(&mut self, lc: &LinearCombination<Scalar>, table: &mut CoeffTable) -> bool {
        // An index too large to tag becomes u32::MAX, which reads as an input that no circuit
        // can have allocated, so `finish` reports it.
        let tagged = |i: usize, tag: u32| match u32::try_from(i) {
            Ok(i) if i < INPUT_TAG => i | tag,
            _ => u32::MAX,
        };
        let terms = lc
            .iter_inputs()
            .map(|(i, c)| (tagged(*i, INPUT_TAG), c))
            .chain(lc.iter_aux().map(|(i, c)| (tagged(*i, 0), c)));
        for (col, coeff) in terms {
            // A zero coefficient contributes nothing and must not count in the densities.
            if *coeff == Scalar::ZERO {
                continue;
            }
            self.cols.push(col);
            self.coeffs.push(table.index_of(coeff));
        }
        match u32::try_from(self.cols.len()) {
            Ok(end) => {
                self.row_ptr.push(end);
                true
            }
            Err(_) => false,
        }
    }
}

/// A constraint system that records the R1CS and keeps the witness.
pub struct RecordingCs {
    /// The witness and the counts, kept as witness-only synthesis keeps them.
    witness: WitnessCs,
    table: CoeffTable,
    rows: [RowsBuilder; 3],
    overflow: bool,
}

impl Default for RecordingCs {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordingCs {
    /// An empty system with the constant ONE allocated as input 0.
    pub fn new() -> Self {
        RecordingCs {
            witness: WitnessCs {
                inputs: vec![Scalar::ONE],
                ..WitnessCs::default()
            },
            table: CoeffTable::new(),
            rows: std::array::from_fn(|_| RowsBuilder::new()),
            overflow: false,
        }
    }

    /// Adds the input rows, checks every column against the variables allocated and returns
    /// the recording with the witness (inputs, aux).
    pub fn finish(mut self) -> Result<(Recording, Vec<Scalar>, Vec<Scalar>), CompiledError> {
        let shape = self.witness.shape();
        let limit = (INPUT_TAG - 1) as u64;
        for (what, count) in [
            ("public inputs", shape.inputs),
            ("private variables", shape.aux),
        ] {
            if count as u64 > limit {
                return Err(CompiledError::TooLarge {
                    what,
                    count: count as u64,
                    max: limit,
                });
            }
        }
        for i in 0..shape.inputs {
            let input = LinearCombination::zero() + Variable::new_unchecked(Index::Input(i));
            self.push(
                &input,
                &LinearCombination::zero(),
                &LinearCombination::zero(),
            );
        }
        if self.overflow {
            return Err(CompiledError::TooLarge {
                what: "terms of one matrix",
                count: u32::MAX as u64 + 1,
                max: u32::MAX as u64,
            });
        }
        let columns = shape.inputs + shape.aux;
        let width = CoeffIndices::width_for(self.table.values.len());
        let mut matrices = Vec::with_capacity(3);
        for rows in std::mem::take(&mut self.rows) {
            let mut cols = rows.cols;
            resolve_columns(&mut cols, &rows.row_ptr, shape)?;
            let coeffs = CoeffIndices::narrowed(rows.coeffs, width);
            let m = SparseMatrix::new(rows.row_ptr, cols, coeffs, columns, self.table.values.len())
                .map_err(internal)?;
            matrices.push(m);
        }
        let matrices: [SparseMatrix; 3] = matrices
            .try_into()
            .map_err(|_| internal("three matrices".into()))?;
        let recording =
            Recording::from_parts(shape, self.table.values, matrices).map_err(internal)?;
        Ok((recording, self.witness.inputs, self.witness.aux))
    }

    fn push(
        &mut self,
        a: &LinearCombination<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    ) {
        let table = &mut self.table;
        for (rows, lc) in self.rows.iter_mut().zip([a, b, c]) {
            self.overflow |= !rows.push_row(lc, table);
        }
    }
}

/// A recording that fails its own structural checks is a bug here, not bad input.
fn internal(reason: String) -> CompiledError {
    CompiledError::Internal { reason }
}

/// Turns tagged columns into final ones (inputs first, then aux), rejecting variables that were
/// never allocated with the constraint that used them.
fn resolve_columns(cols: &mut [u32], row_ptr: &[u32], shape: Shape) -> Result<(), CompiledError> {
    for (k, col) in cols.iter_mut().enumerate() {
        let input = *col & INPUT_TAG != 0;
        let (kind, index, allocated) = if input {
            ("input", (*col & !INPUT_TAG) as usize, shape.inputs)
        } else {
            ("aux", *col as usize, shape.aux)
        };
        if index >= allocated {
            let constraint = row_ptr.partition_point(|&p| p as usize <= k) - 1;
            return Err(CompiledError::Unallocated {
                constraint,
                kind,
                index,
                allocated,
            });
        }
        // Both counts are below 2^31 (checked in `finish`), so the sum fits a u32.
        *col = if input {
            index as u32
        } else {
            (shape.inputs + index) as u32
        };
    }
    Ok(())
}

impl ConstraintSystem<Scalar> for RecordingCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, name: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        crate::scheduler::yield_point::checkpoint();
        self.witness.alloc(name, f)
    }

    fn alloc_input<F, A, AR>(&mut self, name: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.witness.alloc_input(name, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        crate::scheduler::yield_point::checkpoint();
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        self.push(&a, &b, &c);
        self.witness.constraints += 1;
    }

    ignore_namespaces!();
}
