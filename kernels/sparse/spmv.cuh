// baton: a, b, c from a recorded R1CS on the device (sparse matrix times witness).  Requires
// field/fr.cuh.
//
// One matrix in compressed rows: row r's terms are row_ptr[r] .. row_ptr[r + 1]; term k has
// column cols[k] (columns below first_aux are inputs, read from inputs[col]; the others are
// private, read from aux[col - first_aux]) and the coefficient table[idx[k]], where index 0
// always means +1 and index 1 always means -1 (an addition or a subtraction, no product).
// One thread per row.  Witness values 0 and 1 skip the product too (most of a bit-heavy
// circuit's witness).  The host checked every buffer's length against the recording, whose
// columns and indices it validated when it was made or read.
#ifndef BATON_SPARSE_SPMV_CUH
#define BATON_SPARSE_SPMV_CUH

template <class I>
DEVI void spmv_rows_dev(fr_t* out, const u32* row_ptr, const u32* cols, const I* idx,
                        const fr_t* table, const fr_t* inputs, const fr_t* aux, u32 first_aux,
                        u32 rows) {
    const u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    fr_t acc = f_zero<FrParams>();
    const u32 end = row_ptr[r + 1];
    for (u32 k = row_ptr[r]; k < end; k++) {
        const u32 col = cols[k];
        const fr_t v = col < first_aux ? f_ldg<FrParams>(inputs + col)
                                       : f_ldg<FrParams>(aux + (col - first_aux));
        const u32 i = (u32)idx[k];
        if (i == 0u) {
            acc = f_add<FrParams>(acc, v);
        } else if (i == 1u) {
            acc = f_sub<FrParams>(acc, v);
        } else if (f_is_one<FrParams>(v)) {
            acc = f_add<FrParams>(acc, f_ldg<FrParams>(table + i));
        } else if (!f_is_zero<FrParams>(v)) {
            acc = f_add<FrParams>(acc, f_mul<FrParams>(f_ldg<FrParams>(table + i), v));
        }
    }
    f_store<FrParams>(out + r, acc);
}

// first_bad <- min(first_bad, r) for every row r < rows where a[r] * b[r] != c[r] (the host
// sets it to 0xffffffff first).  Rows with a or b equal to 0 or 1 need no product.
DEVI void abc_check_dev(const fr_t* a, const fr_t* b, const fr_t* c, u32 rows, u32* first_bad) {
    const u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const fr_t x = f_ldg<FrParams>(a + r);
    const fr_t y = f_ldg<FrParams>(b + r);
    const fr_t z = f_ldg<FrParams>(c + r);
    bool holds;
    if (f_is_zero<FrParams>(x) || f_is_zero<FrParams>(y)) {
        holds = f_is_zero<FrParams>(z);
    } else if (f_is_one<FrParams>(x)) {
        holds = f_eq<FrParams>(y, z);
    } else if (f_is_one<FrParams>(y)) {
        holds = f_eq<FrParams>(x, z);
    } else {
        holds = f_eq<FrParams>(f_mul<FrParams>(x, y), z);
    }
    if (!holds) atomicMin(first_bad, r);
}

#endif // BATON_SPARSE_SPMV_CUH
