// baton: test/benchmark entry points (not needed by the prover).
#ifndef BATON_TEST_CU
#define BATON_TEST_CU

extern "C" __global__ void test_fr_ops(const fr_t* a, const fr_t* b, fr_t* out, u32 n, u32 n_inv) {
    test_field_ops_dev<FrParams>(a, b, out, n, n_inv);
}
extern "C" __global__ void test_fp_ops(const fp_t* a, const fp_t* b, fp_t* out, u32 n, u32 n_inv) {
    test_field_ops_dev<FpParams>(a, b, out, n, n_inv);
}
extern "C" __global__ void test_g1_ops(const g1_affine* P, const g1_affine* Q, g1_xyzz* out, u32 n) {
    test_g1_ops_dev(P, Q, out, n);
}
extern "C" __global__ void test_gen_bases(const g1_affine* A, const g1_affine* B, g1_affine* out, u32 n) {
    test_gen_bases_dev(A, B, out, n);
}
extern "C" __global__ void __launch_bounds__(256) test_fr_dot_eidx(const fr_t* scalars, u32 n, fr_t* partials) {
    test_fr_dot_eidx_dev(scalars, n, partials);
}
extern "C" __global__ void test_fp_mul_bench(fp_t* data, u32 iters) { test_mul_bench_dev<FpParams>(data, iters); }
extern "C" __global__ void test_fr_mul_bench(fr_t* data, u32 iters) { test_mul_bench_dev<FrParams>(data, iters); }

#endif // BATON_TEST_CU
