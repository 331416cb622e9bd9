//! One sparse R1CS matrix (A, B or C) in compressed-row form: per row a range of terms, per term
//! a column (the variable: inputs first, then aux) and an index into the recording's shared
//! coefficient table, stored in the narrowest integer width that holds the table.
//!
//! Coefficient indices 0 and 1 always mean +1 and −1, so the commonest terms cost one addition
//! or subtraction and no multiplication.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cs::Density;

/// Table index of the coefficient +1.
pub const ONE_INDEX: u32 = 0;
/// Table index of the coefficient −1.
pub const MINUS_ONE_INDEX: u32 = 1;

/// Rows evaluated per rayon task at the least.
const MIN_ROWS_PER_TASK: usize = 1 << 10;

/// The coefficient index of each term, in the narrowest width that holds the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoeffIndices {
    /// Tables of at most 256 entries.
    U8(Vec<u8>),
    /// Tables of at most 65,536 entries.
    U16(Vec<u16>),
    /// Larger tables.
    U32(Vec<u32>),
}

/// An integer usable as a coefficient index.
trait Idx: Copy + Send + Sync {
    fn at(self) -> u32;
}

impl Idx for u8 {
    fn at(self) -> u32 {
        self.into()
    }
}

impl Idx for u16 {
    fn at(self) -> u32 {
        self.into()
    }
}

impl Idx for u32 {
    fn at(self) -> u32 {
        self
    }
}

impl CoeffIndices {
    /// Bytes per index for a table of `table_len` entries.
    pub fn width_for(table_len: usize) -> usize {
        match table_len {
            0..=0x100 => 1,
            0x101..=0x1_0000 => 2,
            _ => 4,
        }
    }

    /// Narrows `wide` to `width` bytes per index (1, 2 or 4); the caller has checked that every
    /// index fits, so nothing is lost (the conversion saturates rather than wraps otherwise).
    pub fn narrowed(wide: Vec<u32>, width: usize) -> Self {
        match width {
            1 => Self::U8(wide.iter().map(|&i| i.min(0xff) as u8).collect()),
            2 => Self::U16(wide.iter().map(|&i| i.min(0xffff) as u16).collect()),
            _ => Self::U32(wide),
        }
    }

    /// Bytes per index.
    pub fn width(&self) -> usize {
        match self {
            Self::U8(_) => 1,
            Self::U16(_) => 2,
            Self::U32(_) => 4,
        }
    }

    /// Number of indices.
    pub fn len(&self) -> usize {
        match self {
            Self::U8(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::U32(v) => v.len(),
        }
    }

    /// True when there are no terms.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest index, if any.
    pub fn max(&self) -> Option<u32> {
        match self {
            Self::U8(v) => v.par_iter().map(|i| i.at()).max(),
            Self::U16(v) => v.par_iter().map(|i| i.at()).max(),
            Self::U32(v) => v.par_iter().copied().max(),
        }
    }

    /// Appends the indices as little-endian bytes.
    pub fn write_le(&self, out: &mut Vec<u8>, range: std::ops::Range<usize>) {
        match self {
            Self::U8(v) => out.extend_from_slice(&v[range]),
            Self::U16(v) => v[range].iter().for_each(|i| out.extend(i.to_le_bytes())),
            Self::U32(v) => v[range].iter().for_each(|i| out.extend(i.to_le_bytes())),
        }
    }
}

/// A read-only view of one partition's witness in the recording's column order.
#[derive(Clone, Copy)]
pub struct Columns<'a> {
    /// Public inputs, the constant one first: columns `0..inputs.len()`.
    pub inputs: &'a [Scalar],
    /// Private variables: the columns after the inputs.
    pub aux: &'a [Scalar],
}

impl Columns<'_> {
    #[inline(always)]
    fn value(&self, col: u32) -> Scalar {
        let col = col as usize;
        match self.inputs.get(col) {
            Some(v) => *v,
            // Columns are validated against the witness lengths before any evaluation.
            None => self.aux[col - self.inputs.len()],
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

    /// M·w: one value per row, into `out` (cleared first; its capacity is kept when it suffices).
    /// With `check = Some((a, b))` each row's value v is also compared with a·b, and the first
    /// row where they differ is returned (the C pass checks satisfaction without another pass).
    /// The caller has checked `w` against the column count the matrix was validated for.
    pub fn evaluate_into(
        &self,
        table: &[Scalar],
        w: Columns<'_>,
        check: Option<(&[Scalar], &[Scalar])>,
        out: &mut Vec<Scalar>,
    ) -> Option<usize> {
        match &self.coeffs {
            CoeffIndices::U8(idx) => self.evaluate_with(idx, table, w, check, out),
            CoeffIndices::U16(idx) => self.evaluate_with(idx, table, w, check, out),
            CoeffIndices::U32(idx) => self.evaluate_with(idx, table, w, check, out),
        }
    }

    fn evaluate_with<I: Idx>(
        &self,
        idx: &[I],
        table: &[Scalar],
        w: Columns<'_>,
        check: Option<(&[Scalar], &[Scalar])>,
        out: &mut Vec<Scalar>,
    ) -> Option<usize> {
        let first_bad = AtomicUsize::new(usize::MAX);
        self.row_ptr
            .par_windows(2)
            .enumerate()
            .with_min_len(MIN_ROWS_PER_TASK)
            .map(|(r, range)| {
                let (start, end) = (range[0] as usize, range[1] as usize);
                let v = dot(&self.cols[start..end], &idx[start..end], table, w);
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
            })
            .collect_into_vec(out);
        Some(first_bad.into_inner()).filter(|r| *r != usize::MAX)
    }
}

/// Whether a·b = c, without the multiplication when a or b is 0 or 1 (most rows of
/// bit-heavy circuits: booleanity, packing and XOR rows).
#[inline(always)]
fn product_is(a: &Scalar, b: &Scalar, c: &Scalar) -> bool {
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

/// One row's value: Σ table[idx_k]·w[col_k].
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
                if v == Scalar::ONE {
                    acc += table[k as usize];
                } else if v != Scalar::ZERO {
                    acc += table[k as usize] * v;
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

    #[test]
    fn index_width_follows_the_table() {
        assert_eq!(CoeffIndices::width_for(256), 1);
        assert_eq!(CoeffIndices::width_for(257), 2);
        assert_eq!(CoeffIndices::width_for(65_537), 4);
        assert_eq!(
            CoeffIndices::narrowed(vec![3, 255], 1),
            CoeffIndices::U8(vec![3, 255])
        );
    }
}
