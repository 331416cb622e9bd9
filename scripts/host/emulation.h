// The CUDA side of the kernel headers emulated in plain C++, for the host checks in this folder
// (field_check.cpp, affine_check.cpp): CUDA's qualifiers defined away, the vector types the
// loads and stores use, and the PTX carry-chain wrappers of common.cuh with one carry flag. The
// kernel headers (kernels/field/*.cuh, kernels/ec/*.cuh) are included after this, in
// kernels/NOTES.md's order, common.cuh left out (its include guard is defined here).
#ifndef BATON_HOST_EMULATION_H
#define BATON_HOST_EMULATION_H

typedef unsigned int u32;
typedef unsigned long long u64;
#define DEVI inline  // not static: g1.cuh's ops classes declare their members `static DEVI`
#define __device__
#define __host__
#define __noinline__
#define __forceinline__ inline
#define __constant__
#define BATON_COMMON_CUH  // common.cuh's definitions are the ones below
struct uint4 { u32 x, y, z, w; };
static inline uint4 make_uint4(u32 x, u32 y, u32 z, u32 w) { return uint4{x, y, z, w}; }
template <class T> static inline T __ldg(const T* p) { return *p; }

// The carry flag of the emulated carry chain; one per thread, so that a check may split its
// operands over threads (affine_check.cpp), each thread being its own chain as on the GPU.
static thread_local u32 CF = 0;
static inline u32 ptx_add_cc(u32 a, u32 b) { u64 s = (u64)a + b; CF = s >> 32; return (u32)s; }
static inline u32 ptx_addc_cc(u32 a, u32 b) { u64 s = (u64)a + b + CF; CF = s >> 32; return (u32)s; }
static inline u32 ptx_addc(u32 a, u32 b) { return a + b + CF; }
static inline u32 ptx_sub_cc(u32 a, u32 b) { u64 d = (u64)a - b; CF = (d >> 32) & 1; return (u32)d; }
static inline u32 ptx_subc_cc(u32 a, u32 b) { u64 d = (u64)a - b - CF; CF = (d >> 32) & 1; return (u32)d; }
static inline u32 ptx_subc(u32 a, u32 b) { return a - b - CF; }
static inline u32 lo(u32 a, u32 b) { return (u32)((u64)a * b); }
static inline u32 hi(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
static inline u32 __umulhi(u32 a, u32 b) { return hi(a, b); }
static inline u32 ptx_mad_lo_cc(u32 a, u32 b, u32 c) { u64 s = (u64)lo(a, b) + c; CF = s >> 32; return (u32)s; }
static inline u32 ptx_madc_lo_cc(u32 a, u32 b, u32 c) { u64 s = (u64)lo(a, b) + c + CF; CF = s >> 32; return (u32)s; }
static inline u32 ptx_mad_hi_cc(u32 a, u32 b, u32 c) { u64 s = (u64)hi(a, b) + c; CF = s >> 32; return (u32)s; }
static inline u32 ptx_madc_hi_cc(u32 a, u32 b, u32 c) { u64 s = (u64)hi(a, b) + c + CF; CF = s >> 32; return (u32)s; }
static inline u32 ptx_madc_hi(u32 a, u32 b, u32 c) { return hi(a, b) + c + CF; }

#endif // BATON_HOST_EMULATION_H
