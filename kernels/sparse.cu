// baton: sparse a/b/c entry points (thin wrappers; see sparse/spmv.cuh and NOTES.md).  One
// per coefficient-index width.
#ifndef BATON_SPARSE_CU
#define BATON_SPARSE_CU

extern "C" __global__ void spmv_u8(fr_t* out, const u32* row_ptr, const u32* cols,
                                   const unsigned char* idx, const fr_t* table,
                                   const fr_t* inputs, const fr_t* aux, u32 first_aux, u32 rows) {
    spmv_rows_dev<unsigned char>(out, row_ptr, cols, idx, table, inputs, aux, first_aux, rows);
}

extern "C" __global__ void spmv_u16(fr_t* out, const u32* row_ptr, const u32* cols,
                                    const unsigned short* idx, const fr_t* table,
                                    const fr_t* inputs, const fr_t* aux, u32 first_aux, u32 rows) {
    spmv_rows_dev<unsigned short>(out, row_ptr, cols, idx, table, inputs, aux, first_aux, rows);
}

extern "C" __global__ void spmv_u32(fr_t* out, const u32* row_ptr, const u32* cols,
                                    const u32* idx, const fr_t* table, const fr_t* inputs,
                                    const fr_t* aux, u32 first_aux, u32 rows) {
    spmv_rows_dev<u32>(out, row_ptr, cols, idx, table, inputs, aux, first_aux, rows);
}

extern "C" __global__ void abc_check(const fr_t* a, const fr_t* b, const fr_t* c, u32 rows,
                                     u32* first_bad) {
    abc_check_dev(a, b, c, rows, first_bad);
}

#endif // BATON_SPARSE_CU
