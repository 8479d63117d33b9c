// cpu_gemm.h: out = in @ W^T + b on fixed-shape tiles, so a row's result is bit-identical
// whatever else is in the batch and however many threads run.
//
// OpenBLAS picks kernels (small-matrix paths, edge kernels, thread splits) by the shape of a
// call, so every call here has the same shape: CPU_GEMM_ROWS rows (callers pad their row
// count to a multiple of it) by CPU_GEMM_COLS output columns (the last column block of a
// weight has a fixed, smaller width), run single-threaded inside our own worker pool.
// Some OpenBLAS kernels (Haswell/Zen sgemm in 0.3.21) still round a row differently by its
// place in the tile; cpu_gemm_pick() detects that once and then uses our own kernel, whose
// every output is one dot product in a fixed order.
#ifndef XSA_KERNELS_CPU_GEMM_H
#define XSA_KERNELS_CPU_GEMM_H

#include <stddef.h>

#include "common/xalloc.h"
#include "kernels/cpu/cpu_pool.h"

#define CPU_GEMM_ROWS 64
#define CPU_GEMM_COLS 256
#define CPU_GEMM_PANEL 32  // columns per packed panel of the AVX-512 kernel (divides CPU_GEMM_COLS)

enum cpu_gemm_kind {
    CPU_GEMM_BLAS = 0,    // OpenBLAS cblas_sgemm, single-threaded per tile
    CPU_GEMM_AVX2 = 1,    // our AVX2 + FMA kernel
    CPU_GEMM_SCALAR = 2,  // our portable C kernel
    CPU_GEMM_AVX512 = 3,  // our AVX-512F + FMA kernel (cpu_gemm_avx512.c)
};

// Rounds n up to a multiple of CPU_GEMM_ROWS.
int cpu_gemm_pad_rows(int n);

// Chooses the kernel for tiles of the given (K, nc) shapes (n of them): OpenBLAS when a row's
// result does not depend on its place in a tile, else ours (also when OpenBLAS runs pre-AVX
// kernels on an AVX2 CPU; our AVX-512 kernel first where the CPU has it). Deterministic for a given machine
// and OpenBLAS build.
int cpu_gemm_pick(const int (*shapes)[2], int n);
// 1 when OpenBLAS gives a row the same bits wherever it sits in a tile of each shape, 0 when
// not.
int cpu_gemm_blas_invariant(const int (*shapes)[2], int n);
const char *cpu_gemm_kind_name(enum cpu_gemm_kind kind);
// The OPENBLAS_CORETYPE whose kernels this CPU runs ("SkylakeX" with AVX-512 F/BW/DQ/VL, else
// "Haswell" with AVX2 + FMA) when OpenBLAS runs SSE-only ones (a DYNAMIC_ARCH build that did not
// know the CPU), else NULL. OpenBLAS reads the variable as it loads: it takes a new process.
const char *cpu_gemm_blas_core_to_force(void);
int cpu_gemm_have_avx2(void);    // 1 when the CPU runs AVX2 + FMA
int cpu_gemm_have_avx512(void);  // 1 when the CPU runs AVX-512F + FMA

// in (M, K), w (N, K), b (N) or NULL, out (M, N); M a multiple of CPU_GEMM_ROWS. wp: w packed
// by cpu_gemm_pack (AVX-512 kind, or OpenBLAS kind once cpu_gemm_blas_order_ok), or NULL.
void cpu_gemm_linear(struct cpu_pool *pool, enum cpu_gemm_kind kind, const float *in,
                     const float *w, const float *wp, const float *b, float *out, int M, int K, int N);

// Called on each finished tile of out (rows [r0, r0 + CPU_GEMM_ROWS), columns [c0, c0 + nc),
// bias added) by the thread that computed it, while the tile is still in its cache: a
// row-wise step fused into the GEMM instead of another pass over memory.
typedef void (*cpu_gemm_epilogue)(void *ctx, float *out, int ldo, int r0, int c0, int nc);
void cpu_gemm_linear_then(struct cpu_pool *pool, enum cpu_gemm_kind kind, const float *in, const float *w,
                          const float *wp, const float *b, float *out, int M, int K, int N,
                          cpu_gemm_epilogue epi, void *epi_ctx);

// Weights packed once for the AVX-512 kernel: panel p holds columns [32p, 32p + 32) of w^T,
// k-major (K rows of 32 floats, zero past N), panels one after another.
size_t cpu_gemm_packed_size(int N, int K);  // floats
void cpu_gemm_pack_panel(const float *w, int N, int K, int p, float *wp);  // panel p of wp
void cpu_gemm_pack(struct cpu_pool *pool, const float *w, int N, int K, float *wp);  // all panels

// One tile on the calling thread: out (CPU_GEMM_ROWS, nc; row stride ldo) =
// in (CPU_GEMM_ROWS, K) @ w (nc, K)^T. Callers keep nc fixed per column position.
void cpu_gemm_tile(enum cpu_gemm_kind kind, const float *in, const float *w, float *out, int ldo,
                   int nc, int K);
// The tile of columns [c0, c0 + nc) of w (N, K): from wp (w packed by cpu_gemm_pack) when
// given and the kind is AVX-512, else from w; the same bits either way.
void cpu_gemm_tile_w(enum cpu_gemm_kind kind, const float *in, const float *w, const float *wp, int c0,
                     float *out, int ldo, int nc, int K);
// 1 when our AVX-512 tile reproduces OpenBLAS's bits from packed weights on tiles of every
// given (K, nc) shape (cpu_gemm_tile_packed_blas with OpenBLAS's own k split, found once per
// process), so CPU_GEMM_BLAS may run from weights packed at load; 0 when not (no AVX-512, or
// an OpenBLAS core with other sums): OpenBLAS itself runs. OpenBLAS must run one thread per
// call, as cpu_backend_open sets it (its threaded sums are others).
int cpu_gemm_blas_order_ok(const int (*shapes)[2], int n);
// OpenBLAS's sums from packed weights: one fused multiply-add chain per output over each
// chunk of k (chunks of q, the rest between q and 2q halved and rounded up to u), from 0,
// added to the running sum.
void cpu_gemm_tile_packed_blas(const float *in, const float *wp, float *out, int ldo, int nc, int K, int q,
                               int u);
// The AVX-512 tile from packed weights (wp: the panel of the tile's first column); the same
// bits as cpu_gemm_tile with CPU_GEMM_AVX512.
void cpu_gemm_tile_packed(const float *in, const float *wp, float *out, int ldo, int nc, int K);

#endif
