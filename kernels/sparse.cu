// baton: sparse a/b/c entry points (thin wrappers; see sparse/spmv.cuh and NOTES.md).  One
// per coefficient-index width.
#ifndef BATON_SPARSE_CU
#define BATON_SPARSE_CU

#define BATON_SPMV_ENTRY(name, I)                                                          \
    extern "C" __global__ void name(fr_t* out, const u32* row_ptr, const u32* cols,         \
                                    const I* idx, const fr_t* table, const fr_t* inputs,      \
                                    const fr_t* aux, u32 first_aux, u32 rows, u32 long_row) { \
        spmv_rows_dev<I>(out, row_ptr, cols, idx, table, inputs, aux, first_aux, rows,        \
                         long_row);                                                           \
    }

BATON_SPMV_ENTRY(spmv_u8, unsigned char)
BATON_SPMV_ENTRY(spmv_u16, unsigned short)
BATON_SPMV_ENTRY(spmv_u32, u32)

extern "C" __global__ void abc_check(const fr_t* a, const fr_t* b, const fr_t* c, u32 rows,
                                     u32* first_bad) {
    abc_check_dev(a, b, c, rows, first_bad);
}

#endif // BATON_SPARSE_CU
