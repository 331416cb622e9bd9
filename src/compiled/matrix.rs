//! One sparse R1CS matrix (A, B or C) in compressed-row form: per row a range of terms, per term
//! a column (the variable: inputs first, then aux) and a coefficient index ([`CoeffIndices`]).
//! Coefficient indices 0 and 1 mean +1 and −1, so the commonest terms cost one addition or
//! subtraction and no multiplication.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::coeffs::{CoeffIndices, Idx, MINUS_ONE_INDEX, ONE_INDEX};
use crate::groth16::cs::Density;

/// Rows evaluated per rayon task at the least.
const MIN_ROWS_PER_TASK: usize = 1 << 10;

/// A read-only view of one partition's witness in the recording's column order: columns below
/// the recording's input count are inputs, the others aux. While a witness streams in, the
/// slices hold what has been published so far; a row is only evaluated once every column it
/// uses is there.
#[derive(Clone, Copy)]
pub struct Columns<'a> {
    /// Public inputs, the constant one first.
    pub inputs: &'a [Scalar],
    /// Private variables.
    pub aux: &'a [Scalar],
    /// The recording's input count: where the aux columns start.
    pub first_aux: usize,
}

impl Columns<'_> {
    #[inline(always)]
    fn value(&self, col: u32) -> Scalar {
        let col = col as usize;
        // Columns are validated against the recording's counts, and rows are evaluated only
        // once the witness holds every column they use.
        if col < self.first_aux {
            self.inputs[col]
        } else {
            self.aux[col - self.first_aux]
        }
    }
}

/// One matrix of a recorded R1CS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseMatrix {
    /// Row r's terms are `row_ptr[r]..row_ptr[r + 1]`.
    row_ptr: Vec<u32>,
    /// Column of each term, ascending within a row.
    cols: Vec<u32>,
    /// Coefficient-table index of each term.
    coeffs: CoeffIndices,
}

impl SparseMatrix {
    /// Assembles a matrix, checking that the row pointers are monotone from 0 to the term count,
    /// every column is below `columns` and every coefficient index below `table_len`.
    pub fn new(
        row_ptr: Vec<u32>,
        cols: Vec<u32>,
        coeffs: CoeffIndices,
        columns: usize,
        table_len: usize,
    ) -> Result<Self, String> {
        if cols.len() != coeffs.len() {
            return Err(format!(
                "{} columns but {} coefficient indices",
                cols.len(),
                coeffs.len()
            ));
        }
        match (row_ptr.first(), row_ptr.last()) {
            (Some(0), Some(&end)) if end as usize == cols.len() => {}
            (first, last) => {
                return Err(format!(
                    "row pointers run {first:?}..{last:?}, expected 0..{}",
                    cols.len()
                ))
            }
        }
        if let Some(r) = row_ptr.par_windows(2).position_any(|w| w[0] > w[1]) {
            return Err(format!("row pointer {r} decreases"));
        }
        if let Some(c) = cols.par_iter().copied().max() {
            if c as usize >= columns {
                return Err(format!("column {c} out of {columns} variables"));
            }
        }
        if let Some(i) = coeffs.max() {
            if i as usize >= table_len {
                return Err(format!(
                    "coefficient index {i} out of a table of {table_len}"
                ));
            }
        }
        Ok(SparseMatrix {
            row_ptr,
            cols,
            coeffs,
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }

    /// Number of terms.
    pub fn terms(&self) -> usize {
        self.cols.len()
    }

    /// The row pointers.
    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }

    /// The column of each term.
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }

    /// The coefficient index of each term.
    pub fn coeffs(&self) -> &CoeffIndices {
        &self.coeffs
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.row_ptr.len() + self.cols.len()) * 4 + self.coeffs.len() * self.coeffs.width()
    }

    /// Marks in the trackers the variables that occur in this matrix: columns below `inputs` in
    /// `input_density`, the others (shifted by `inputs`) in `aux_density`.
    pub fn mark_columns(
        &self,
        inputs: usize,
        mut input_density: Option<&mut Density>,
        mut aux_density: Option<&mut Density>,
    ) {
        for &c in &self.cols {
            let c = c as usize;
            let target = if c < inputs {
                input_density.as_deref_mut().map(|d| (d, c))
            } else {
                aux_density.as_deref_mut().map(|d| (d, c - inputs))
            };
            if let Some((d, i)) = target {
                d.mark(i);
            }
        }
    }

    /// Per block of `block_rows` rows: how many inputs and how many aux variables a witness
    /// must hold before every row of the block can be evaluated (columns below `first_aux` are
    /// inputs).
    pub fn needs(&self, block_rows: usize, first_aux: usize) -> Vec<[u32; 2]> {
        let blocks = self.rows().div_ceil(block_rows.max(1));
        (0..blocks)
            .into_par_iter()
            .map(|b| {
                let first = self.row_ptr[b * block_rows] as usize;
                let last = self.row_ptr[((b + 1) * block_rows).min(self.rows())] as usize;
                let mut need = [0u32; 2];
                for &c in &self.cols[first..last] {
                    let (kind, count) = match (c as usize).checked_sub(first_aux) {
                        None => (0, c + 1),
                        Some(a) => (1, a as u32 + 1),
                    };
                    need[kind] = need[kind].max(count);
                }
                need
            })
            .collect()
    }

    /// Row `r`'s value (`r` below [`SparseMatrix::rows`]).
    #[inline]
    pub fn row(&self, r: usize, table: &[Scalar], w: Columns<'_>) -> Scalar {
        let (start, end) = (self.row_ptr[r] as usize, self.row_ptr[r + 1] as usize);
        match &self.coeffs {
            CoeffIndices::U8(idx) => dot(&self.cols[start..end], &idx[start..end], table, w),
            CoeffIndices::U16(idx) => dot(&self.cols[start..end], &idx[start..end], table, w),
            CoeffIndices::U32(idx) => dot(&self.cols[start..end], &idx[start..end], table, w),
        }
    }

    /// The values of `rows`, in parallel, appended to `out`. With `check = Some((a, b))` each
    /// row r's value v is also compared with a[r]·b[r], and the first row where they differ is
    /// returned (the C pass checks satisfaction without another pass).
    pub fn evaluate_rows(
        &self,
        rows: std::ops::Range<usize>,
        table: &[Scalar],
        w: Columns<'_>,
        check: Option<(&[Scalar], &[Scalar])>,
        out: &mut Vec<Scalar>,
    ) -> Option<usize> {
        let first_bad = AtomicUsize::new(usize::MAX);
        let values = rows
            .into_par_iter()
            .with_min_len(MIN_ROWS_PER_TASK)
            .map(|r| {
                let v = self.row(r, table, w);
                if let Some((a, b)) = check {
                    let holds = a
                        .get(r)
                        .zip(b.get(r))
                        .is_some_and(|(a, b)| product_is(a, b, &v));
                    if !holds {
                        first_bad.fetch_min(r, Ordering::Relaxed);
                    }
                }
                v
            });
        out.par_extend(values);
        Some(first_bad.into_inner()).filter(|r| *r != usize::MAX)
    }

    /// M·w for every row into `out` (cleared first; its capacity is kept when it suffices),
    /// checked against `check` as in [`SparseMatrix::evaluate_rows`].
    pub fn evaluate_into(
        &self,
        table: &[Scalar],
        w: Columns<'_>,
        check: Option<(&[Scalar], &[Scalar])>,
        out: &mut Vec<Scalar>,
    ) -> Option<usize> {
        out.clear();
        self.evaluate_rows(0..self.rows(), table, w, check, out)
    }
}

/// Whether a·b = c, without the multiplication when a or b is 0 or 1 (most rows of
/// bit-heavy circuits: booleanity, packing and XOR rows).
#[inline(always)]
pub fn product_is(a: &Scalar, b: &Scalar, c: &Scalar) -> bool {
    if *a == Scalar::ZERO || *b == Scalar::ZERO {
        *c == Scalar::ZERO
    } else if *a == Scalar::ONE {
        b == c
    } else if *b == Scalar::ONE {
        a == c
    } else {
        *a * b == *c
    }
}

/// One row's value: Σ table[idx_k]·w[col_k]. (Memory-bound: adding on raw limbs inline
/// instead of through blst measured the same, 160 ms for PoRep's 15 M terms on one thread.)
#[inline(always)]
fn dot<I: Idx>(cols: &[u32], idx: &[I], table: &[Scalar], w: Columns<'_>) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (col, i) in cols.iter().zip(idx) {
        let v = w.value(*col);
        match i.at() {
            ONE_INDEX => acc += v,
            MINUS_ONE_INDEX => acc -= v,
            // Witnesses are mostly bits: skip the multiplication for 0 and 1 (plain limb
            // compares; the prover's MSMs branch on these values too).
            k => {
                let c = &table[k as usize];
                if v == Scalar::ONE {
                    acc += c;
                } else if v != Scalar::ZERO {
                    acc += *c * v;
                }
            }
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SparseMatrix {
        // Rows: [x0 + 2·x2], [], [−x1]
        SparseMatrix::new(
            vec![0, 2, 2, 3],
            vec![0, 2, 1],
            CoeffIndices::U8(vec![0, 2, 1]),
            3,
            3,
        )
        .unwrap()
    }

    #[test]
    fn evaluates_rows_with_the_table() {
        let m = small();
        let table = [Scalar::ONE, -Scalar::ONE, Scalar::from(2u64)];
        let inputs = [Scalar::ONE, Scalar::from(5u64)];
        let aux = [Scalar::from(7u64)];
        let w = Columns {
            inputs: &inputs,
            aux: &aux,
            first_aux: 2,
        };
        let mut out = Vec::new();
        assert_eq!(m.evaluate_into(&table, w, None, &mut out), None);
        let want = vec![Scalar::from(15u64), Scalar::ZERO, -Scalar::from(5u64)];
        assert_eq!(out, want);
        // As the C pass: a·b must equal each row; rows 0 and 2 hold, row 1 (0 ≠ 1·1) fails.
        let a = [Scalar::from(3u64), Scalar::ONE, Scalar::ONE];
        let b = [Scalar::from(5u64), Scalar::ONE, -Scalar::from(5u64)];
        assert_eq!(
            m.evaluate_into(&table, w, Some((&a, &b)), &mut out),
            Some(1)
        );
        assert_eq!(out, want);
    }

    #[test]
    fn product_shortcuts_agree_with_multiplication() {
        let vals = [
            Scalar::ZERO,
            Scalar::ONE,
            Scalar::from(2u64),
            -Scalar::ONE,
            Scalar::from(7u64),
        ];
        for a in vals {
            for b in vals {
                for c in vals {
                    assert_eq!(product_is(&a, &b, &c), a * b == c, "{a:?}·{b:?} = {c:?}");
                }
            }
        }
    }

    #[test]
    fn rejects_bad_structure() {
        let idx = || CoeffIndices::U8(vec![0, 0]);
        assert!(SparseMatrix::new(vec![0, 2, 1], vec![0, 1], idx(), 2, 2).is_err());
        assert!(SparseMatrix::new(vec![0, 2], vec![0, 5], idx(), 2, 2).is_err());
        assert!(SparseMatrix::new(vec![0, 3], vec![0, 1], idx(), 2, 2).is_err());
        assert!(
            SparseMatrix::new(vec![0, 2], vec![0, 1], CoeffIndices::U8(vec![0, 9]), 2, 2).is_err()
        );
        assert!(SparseMatrix::new(vec![0, 2], vec![0, 1], idx(), 2, 2).is_ok());
    }
}
