//! Launch checks of the sparse a/b/c kernels (kernels/sparse/spmv.cuh): one matrix times the
//! witness, and the a·b = c check. The recording's columns and coefficient indices were
//! validated against its counts when it was made or read; here every buffer must hold what
//! those counts say.

use super::check::{blocks, Check, Launch, ELEMENTWISE_BLOCK};
use crate::gpu::error::GpuResult;
use crate::gpu::host::FR_LIMBS;

/// The sizes one `spmv_*` launch is checked against: `rows` rows of `terms` terms, a table of
/// `table` coefficients, `inputs` + `aux` witness columns.
#[derive(Clone, Copy, Debug)]
pub struct SpmvShape {
    /// Rows of the matrix (values written).
    pub rows: usize,
    /// Terms of the matrix.
    pub terms: usize,
    /// Coefficient-table entries.
    pub table: usize,
    /// Input columns (`first_aux`).
    pub inputs: usize,
    /// Private columns.
    pub aux: usize,
}

/// Buffer lengths of one `spmv_*` launch, each in its own element type (out, table, inputs and
/// aux in u64 limbs).
#[derive(Clone, Copy, Debug)]
pub struct SpmvBufs {
    /// The output (a, b or c).
    pub out: usize,
    /// Row pointers.
    pub row_ptr: usize,
    /// Columns.
    pub cols: usize,
    /// Coefficient indices.
    pub idx: usize,
    /// The coefficient table.
    pub table: usize,
    /// Public inputs.
    pub inputs: usize,
    /// Private variables.
    pub aux: usize,
}

/// `kernel` (`spmv_u8`, `spmv_u16` or `spmv_u32`) for shape `s` over buffers `b`.
pub fn spmv(kernel: &'static str, s: SpmvShape, b: SpmvBufs) -> GpuResult<Launch> {
    Check::new(kernel, blocks(s.rows, ELEMENTWISE_BLOCK), ELEMENTWISE_BLOCK)
        .rule((1..1 << 32).contains(&s.rows), || {
            format!("{} rows", s.rows)
        })
        .rule(s.terms < 1 << 32 && s.inputs + s.aux < 1 << 32, || {
            format!("{} terms over {} columns", s.terms, s.inputs + s.aux)
        })
        .rule(s.table >= 2, || {
            format!("a table of {} coefficients", s.table)
        })
        .buf("out", b.out, s.rows * FR_LIMBS)
        .buf("row_ptr", b.row_ptr, s.rows + 1)
        .buf("cols", b.cols, s.terms)
        .buf("idx", b.idx, s.terms)
        .buf("table", b.table, s.table * FR_LIMBS)
        .buf("inputs", b.inputs, s.inputs * FR_LIMBS)
        .buf("aux", b.aux, s.aux * FR_LIMBS)
        .done()
}

/// `abc_check` over `rows` rows of a, b and c (u64 limbs) with its one-word result.
pub fn abc_check(rows: usize, a: usize, b: usize, c: usize, first_bad: usize) -> GpuResult<Launch> {
    Check::new(
        "abc_check",
        blocks(rows, ELEMENTWISE_BLOCK),
        ELEMENTWISE_BLOCK,
    )
    .rule((1..1 << 32).contains(&rows), || format!("{rows} rows"))
    .buf("a", a, rows * FR_LIMBS)
    .buf("b", b, rows * FR_LIMBS)
    .buf("c", c, rows * FR_LIMBS)
    .buf("first_bad", first_bad, 1)
    .done()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::error::GpuError;

    #[test]
    fn sparse_launches_check_every_buffer() {
        let s = SpmvShape {
            rows: 1000,
            terms: 3000,
            table: 10,
            inputs: 5,
            aux: 900,
        };
        let b = SpmvBufs {
            out: 4000,
            row_ptr: 1001,
            cols: 3000,
            idx: 3000,
            table: 40,
            inputs: 20,
            aux: 3600,
        };
        assert_eq!(spmv("spmv_u8", s, b).unwrap().dims(), (4, 256, 0));
        for (short, arg) in [
            (SpmvBufs { row_ptr: 1000, ..b }, "row_ptr"),
            (SpmvBufs { idx: 2999, ..b }, "idx"),
            (SpmvBufs { aux: 3599, ..b }, "aux"),
            (SpmvBufs { out: 3999, ..b }, "out"),
        ] {
            match spmv("spmv_u8", s, short) {
                Err(GpuError::BufferTooShort { arg: a, .. }) => assert_eq!(a, arg),
                other => panic!("{arg}: {other:?}"),
            }
        }
        assert!(matches!(
            spmv("spmv_u8", SpmvShape { table: 1, ..s }, b),
            Err(GpuError::BadLaunch { .. })
        ));
        assert!(abc_check(1000, 4000, 4000, 4000, 1).is_ok());
        assert!(matches!(
            abc_check(1000, 4000, 4000, 4000, 0),
            Err(GpuError::BufferTooShort {
                arg: "first_bad",
                ..
            })
        ));
    }
}
