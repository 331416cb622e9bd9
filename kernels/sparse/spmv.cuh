// baton: a, b, c from a recorded R1CS on the device (sparse matrix times witness).  Requires
// field/fr.cuh.
//
// One matrix in compressed rows: row r's terms are row_ptr[r] .. row_ptr[r + 1]; term k has
// column cols[k] (columns below first_aux are inputs, read from inputs[col]; the others are
// private, read from aux[col - first_aux]) and the coefficient table[idx[k]], where index 0
// always means +1 and index 1 always means -1 (an addition or a subtraction, no product).
// One thread per row, a warp per long row (below).  Witness values 0 and 1 skip the product
// too (most of a bit-heavy circuit's witness).  The host checked every buffer's length against the recording, whose
// columns and indices it validated when it was made or read.
#ifndef BATON_SPARSE_SPMV_CUH
#define BATON_SPARSE_SPMV_CUH

// One term of a row: acc + table[idx[k]] * (column cols[k]'s value).
template <class I>
DEVI fr_t spmv_term(fr_t acc, u32 k, const u32* cols, const I* idx, const fr_t* table,
                    const fr_t* inputs, const fr_t* aux, u32 first_aux) {
    const u32 col = cols[k];
    const fr_t v = col < first_aux ? f_ldg<FrParams>(inputs + col)
                                   : f_ldg<FrParams>(aux + (col - first_aux));
    const u32 i = (u32)idx[k];
    if (i == 0u) return f_add<FrParams>(acc, v);
    if (i == 1u) return f_sub<FrParams>(acc, v);
    if (f_is_one<FrParams>(v)) return f_add<FrParams>(acc, f_ldg<FrParams>(table + i));
    if (f_is_zero<FrParams>(v)) return acc;
    return f_add<FrParams>(acc, f_mul<FrParams>(f_ldg<FrParams>(table + i), v));
}

// Rows of more than long_row terms (long_row 0: none) are summed by the whole warp of their
// row's thread, one such row after another, the 32 lanes striding over its terms and the
// partial sums added by shuffles: a bit-heavy circuit's recording has a few rows of hundreds of
// terms (a 2 KiB PoRep's A: 2,584 rows of ~840 among 2.7 M of 1-3), and one thread walking such
// a row holds its whole warp for that long (NOTES.md, "Sparse a/b/c").  Every warp of a launch
// is whole (blocks of a multiple of 32 threads); threads past the last row take part with no
// row.
template <class I>
DEVI void spmv_rows_dev(fr_t* out, const u32* row_ptr, const u32* cols, const I* idx,
                        const fr_t* table, const fr_t* inputs, const fr_t* aux, u32 first_aux,
                        u32 rows, u32 long_row) {
    const u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    const bool mine = r < rows;
    const u32 start = mine ? row_ptr[r] : 0u;
    const u32 end = mine ? row_ptr[r + 1] : 0u;
    const bool shared = long_row != 0u && end - start > long_row;
    fr_t acc = f_zero<FrParams>();
    if (!shared) {
        for (u32 k = start; k < end; k++)
            acc = spmv_term<I>(acc, k, cols, idx, table, inputs, aux, first_aux);
    }
    const u32 lane = threadIdx.x & 31u;
    u32 pending = __ballot_sync(0xffffffffu, shared);
    while (pending != 0u) {
        const int owner = __ffs(pending) - 1;
        pending &= pending - 1u;
        const u32 s = __shfl_sync(0xffffffffu, start, owner);
        const u32 e = __shfl_sync(0xffffffffu, end, owner);
        fr_t part = f_zero<FrParams>();
        for (u32 k = s + lane; k < e; k += 32u)
            part = spmv_term<I>(part, k, cols, idx, table, inputs, aux, first_aux);
        // Lane 0 ends with the sum of all 32 (lanes past the top read their own value, which
        // only lanes above 0 ever add).
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            fr_t other;
#pragma unroll
            for (int j = 0; j < FrParams::N; j++)
                other.v[j] = __shfl_down_sync(0xffffffffu, part.v[j], o);
            part = f_add<FrParams>(part, other);
        }
#pragma unroll
        for (int j = 0; j < FrParams::N; j++) part.v[j] = __shfl_sync(0xffffffffu, part.v[j], 0);
        if ((int)lane == owner) acc = part;
    }
    if (mine) f_store<FrParams>(out + r, acc);
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
