// cpu_gemm_avx512.c: our AVX-512F + FMA GEMM tile kernel. Each output is computed as: for
// each chunk of KC k (in order), a chain of fused multiply-adds over the chunk's k in increasing
// order starting from 0, added to the running sum of the earlier chunks (blocked summation:
// smaller rounding error than one long chain). The order depends only on K: never on the
// output's place in the tile, on nc or on the register blocking below. With OpenBLAS's chunks
// instead (cpu_gemm_tile_packed_blas) the same code gives OpenBLAS's sums.
// Blocking: 32-column panels of w are packed k-major (KC k at a time on the stack, or all of
// w once at load: cpu_gemm_pack_panel); an 8-row by
// 32-column block of out lives in 16 zmm accumulators across one k chunk (A broadcast, two B
// loads per k); the running sums live in `out` between chunks (a float store/load is exact).
#include <immintrin.h>

#include "kernels/cpu/cpu_gemm.h"

void cpu_gemm_tile_avx512(const float *in, const float *w, float *out, int ldo, int nc, int K);

#define GEMM512_KC 128  // k per packed panel: 16 KiB of B, stays in L1
#define GEMM512_NR CPU_GEMM_PANEL  // columns per panel: two zmm
#define GEMM512_MR 8    // rows per register block; CPU_GEMM_ROWS is a multiple of it

int cpu_gemm_have_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}

// bp (kc, NR) = w[j0 .. j0+nj) [k0 .. k0+kc) transposed, columns nj..NR-1 zero.
static void pack_panel(const float *w, int K, int k0, int kc, int j0, int nj, float *bp) {
    for (int j = 0; j < GEMM512_NR; j++) {
        if (j >= nj) {
            for (int k = 0; k < kc; k++) bp[k * GEMM512_NR + j] = 0.0f;
            continue;
        }
        const float *src = w + (long)(j0 + j) * K + k0;
        for (int k = 0; k < kc; k++) bp[k * GEMM512_NR + j] = src[k];
    }
}

// c (MR, 32 masked by m0/m1; stride ldc) = [c +] a (MR, kc; stride lda) @ bp (kc, 32): the
// chunk's sums start from 0 and are added to c (unless first) only at the end.
__attribute__((target("avx512f,fma"), always_inline)) static inline void
micro_8x32(const float *a, long lda, const float *bp, int kc, float *c, long ldc, __mmask16 m0,
           __mmask16 m1, int first) {
    __m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = _mm512_setzero_ps();
    c40 = c41 = c50 = c51 = c60 = c61 = c70 = c71 = _mm512_setzero_ps();
    const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    const float *a4 = a + 4 * lda, *a5 = a + 5 * lda, *a6 = a + 6 * lda, *a7 = a + 7 * lda;
    for (int k = 0; k < kc; k++) {
        __m512 b0 = _mm512_load_ps(bp + k * GEMM512_NR), b1 = _mm512_load_ps(bp + k * GEMM512_NR + 16);
        __m512 x;
#define FM(r) x = _mm512_set1_ps(a##r[k]), c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0), c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1)
        FM(0); FM(1); FM(2); FM(3); FM(4); FM(5); FM(6); FM(7);
#undef FM
    }
    if (!first) {  // add this chunk's sums to the earlier chunks' (blocked summation)
#define AD(r) c##r##0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, c + r * ldc), c##r##0), c##r##1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, c + r * ldc + 16), c##r##1)
        AD(0); AD(1); AD(2); AD(3); AD(4); AD(5); AD(6); AD(7);
#undef AD
    }
#define ST(r) _mm512_mask_storeu_ps(c + r * ldc, m0, c##r##0), _mm512_mask_storeu_ps(c + r * ldc + 16, m1, c##r##1)
    ST(0); ST(1); ST(2); ST(3); ST(4); ST(5); ST(6); ST(7);
#undef ST
}

size_t cpu_gemm_packed_size(int N, int K) {
    return (size_t)((N + CPU_GEMM_PANEL - 1) / CPU_GEMM_PANEL) * CPU_GEMM_PANEL * (size_t)K;
}

void cpu_gemm_pack_panel(const float *w, int N, int K, int p, float *wp) {
    int j0 = p * CPU_GEMM_PANEL, nj = N - j0 < CPU_GEMM_PANEL ? N - j0 : CPU_GEMM_PANEL;
    pack_panel(w, K, 0, K, j0, nj, wp + (size_t)p * CPU_GEMM_PANEL * K);
}

// Length of the k chunk that starts at k0. Ours (q == 0): GEMM512_KC at a time. OpenBLAS's
// (q: its GEMM_Q, u: its GEMM_UNROLL_M): the split of its level-3 driver, which halves a rest
// between q and 2q (rounded up to u) instead of leaving a short last chunk.
static inline int chunk_len(int K, int k0, int q, int u) {
    int ml = K - k0;
    if (!q) return ml < GEMM512_KC ? ml : GEMM512_KC;
    if (ml >= 2 * q) return q;
    if (ml > q) return (ml / 2 + u - 1) / u * u;
    return ml;
}

// The tile over 32-column panels; each (panel, k chunk) comes packed from wp (the tile's
// first panel) or is packed here into bp (ours only: q == 0). Same arithmetic either way.
__attribute__((target("avx512f,fma"), always_inline)) static inline void
tile_avx512(const float *in, const float *w, const float *wp, float *out, int ldo, int nc, int K, int q,
            int u) {
    _Alignas(64) float bp[GEMM512_KC * GEMM512_NR];  // (KC, NR) packed panel
    for (int j0 = 0; j0 < nc; j0 += GEMM512_NR) {
        int nj = nc - j0 < GEMM512_NR ? nc - j0 : GEMM512_NR;
        __mmask16 m0 = (__mmask16)(nj >= 16 ? 0xFFFF : (1u << nj) - 1);
        __mmask16 m1 = (__mmask16)(nj >= 32 ? 0xFFFF : nj <= 16 ? 0 : (1u << (nj - 16)) - 1);
        if (K == 0) {  // no k: every output is the empty sum
            for (int r = 0; r < CPU_GEMM_ROWS; r++)
                for (int j = 0; j < nj; j++) out[(long)r * ldo + j0 + j] = 0.0f;
            continue;
        }
        for (int k0 = 0, kc; k0 < K; k0 += kc) {
            kc = chunk_len(K, k0, q, u);
            const float *b = bp;
            if (wp)
                b = wp + (long)j0 * K + (long)k0 * GEMM512_NR;
            else
                pack_panel(w, K, k0, kc, j0, nj, bp);
            for (int r = 0; r < CPU_GEMM_ROWS; r += GEMM512_MR)
                micro_8x32(in + (long)r * K + k0, K, b, kc, out + (long)r * ldo + j0, ldo, m0, m1, k0 == 0);
        }
    }
}

// out (CPU_GEMM_ROWS, nc; stride ldo) = in (CPU_GEMM_ROWS, K) @ w (nc, K)^T.
__attribute__((target("avx512f,fma"))) void cpu_gemm_tile_avx512(const float *in, const float *w,
                                                                  float *out, int ldo, int nc, int K) {
    tile_avx512(in, w, NULL, out, ldo, nc, K, 0, 0);
}

// The same from w packed by cpu_gemm_pack_panel (wp: the panel of the tile's first column).
// Packing once at load saves the per-tile transpose: about 1.5x on this kernel.
__attribute__((target("avx512f,fma"))) void cpu_gemm_tile_packed(const float *in, const float *wp,
                                                                  float *out, int ldo, int nc, int K) {
    tile_avx512(in, NULL, wp, out, ldo, nc, K, 0, 0);
}

// OpenBLAS's sums from the same packed weights: its SkylakeX/Cooperlake sgemm kernel keeps one
// fused multiply-add chain per output over each chunk of its driver's k split, from 0, and adds
// the chunk to C, which is exactly micro_8x32 over chunk_len(K, k0, q, u). It skips OpenBLAS's
// packing of both operands on every tile (a fifth of a parameter-golf run); cpu_gemm_blas_order_ok
// checks the bits against OpenBLAS itself before any use.
__attribute__((target("avx512f,fma"))) void cpu_gemm_tile_packed_blas(const float *in, const float *wp,
                                                                       float *out, int ldo, int nc, int K,
                                                                       int q, int u) {
    tile_avx512(in, NULL, wp, out, ldo, nc, K, q, u);
}
