// cpu_gemm_kernel.c: our GEMM tile kernels, used when OpenBLAS's kernel rounds a row
// differently by its place in a tile. Each output is one dot product computed the same way
// wherever it sits: 8 lane sums over k (k = lane mod 8, in increasing k), reduced in a fixed
// tree, plus the k % 8 tail in order. Register blocking only groups independent outputs.
#include <immintrin.h>

#include "kernels/cpu/cpu_gemm.h"

void cpu_gemm_tile_avx2(const float *in, const float *w, float *out, int ldo, int nc, int K);
void cpu_gemm_tile_scalar(const float *in, const float *w, float *out, int ldo, int nc, int K);

int cpu_gemm_have_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// The k % 8 tail of one output, added after the lane sums, in increasing k.
__attribute__((target("avx2,fma"))) static inline float tail8(float s, const float *a, const float *b, int k8, int K) {
    for (int k = k8; k < K; k++) s += a[k] * b[k];
    return s;
}

// The lane sums of eight vectors at once, each in the fixed tree ((l0 + l4) + (l2 + l6)) +
// ((l1 + l5) + (l3 + l7)), first operands first. Result lanes hold the sums of v0, v2, v4,
// v6, v1, v3, v5, v7 in that order.
__attribute__((target("avx2,fma"))) static inline __m256 hsum8x8(__m256 v0, __m256 v1, __m256 v2, __m256 v3,
                                                                 __m256 v4, __m256 v5, __m256 v6, __m256 v7) {
#define LO_HI(x, y) _mm256_add_ps(_mm256_permute2f128_ps(x, y, 0x20), _mm256_permute2f128_ps(x, y, 0x31))
    __m256 u01 = LO_HI(v0, v1), u23 = LO_HI(v2, v3), u45 = LO_HI(v4, v5), u67 = LO_HI(v6, v7);
#undef LO_HI
    __m256 w0 = _mm256_add_ps(_mm256_shuffle_ps(u01, u23, 0x44), _mm256_shuffle_ps(u01, u23, 0xEE));
    __m256 w1 = _mm256_add_ps(_mm256_shuffle_ps(u45, u67, 0x44), _mm256_shuffle_ps(u45, u67, 0xEE));
    return _mm256_add_ps(_mm256_shuffle_ps(w0, w1, 0x88), _mm256_shuffle_ps(w0, w1, 0xDD));
}

// Columns j, j+1 (j + 1 < nc when two): 4 rows by 2 columns a register block.
__attribute__((target("avx2,fma"))) static void tile_cols2(const float *in, const float *w, float *out, int ldo,
                                                          int j, int two, int K) {
    int k8 = K / 8 * 8;
    const float *b0 = w + (long)j * K, *b1 = w + (long)(j + two) * K;
    for (int r = 0; r < CPU_GEMM_ROWS; r += 4) {
        const float *a0 = in + (long)r * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;
        __m256 c00 = _mm256_setzero_ps(), c10 = c00, c20 = c00, c30 = c00;
        __m256 c01 = c00, c11 = c00, c21 = c00, c31 = c00;
        for (int k = 0; k < k8; k += 8) {
            __m256 x0 = _mm256_loadu_ps(a0 + k), x1 = _mm256_loadu_ps(a1 + k);
            __m256 x2 = _mm256_loadu_ps(a2 + k), x3 = _mm256_loadu_ps(a3 + k);
            __m256 y0 = _mm256_loadu_ps(b0 + k), y1 = _mm256_loadu_ps(b1 + k);
            c00 = _mm256_fmadd_ps(x0, y0, c00);
            c10 = _mm256_fmadd_ps(x1, y0, c10);
            c20 = _mm256_fmadd_ps(x2, y0, c20);
            c30 = _mm256_fmadd_ps(x3, y0, c30);
            c01 = _mm256_fmadd_ps(x0, y1, c01);
            c11 = _mm256_fmadd_ps(x1, y1, c11);
            c21 = _mm256_fmadd_ps(x2, y1, c21);
            c31 = _mm256_fmadd_ps(x3, y1, c31);
        }
        float s[8];
        _mm256_storeu_ps(s, hsum8x8(c00, c01, c10, c11, c20, c21, c30, c31));  // c00 c10 c20 c30 c01 c11 c21 c31
        float *o = out + (long)r * ldo + j;
        o[0] = tail8(s[0], a0, b0, k8, K);
        o[ldo] = tail8(s[1], a1, b0, k8, K);
        o[2L * ldo] = tail8(s[2], a2, b0, k8, K);
        o[3L * ldo] = tail8(s[3], a3, b0, k8, K);
        if (!two) continue;  // one column: b1 == b0, its results are not stored
        o[1] = tail8(s[4], a0, b1, k8, K);
        o[ldo + 1] = tail8(s[5], a1, b1, k8, K);
        o[2L * ldo + 1] = tail8(s[6], a2, b1, k8, K);
        o[3L * ldo + 1] = tail8(s[7], a3, b1, k8, K);
    }
}

// 4 rows by 3 columns a register block: 12 accumulators, the 3 columns' w in registers and one
// input row at a time, so 7 loads feed 12 FMAs (4 rows by 2 columns: 6 or more for 8).
__attribute__((target("avx2,fma"))) void cpu_gemm_tile_avx2(const float *in, const float *w,
                                                             float *out, int ldo, int nc, int K) {
    int k8 = K / 8 * 8, j = 0;
    for (; j + 3 <= nc; j += 3) {
        const float *b0 = w + (long)j * K, *b1 = b0 + K, *b2 = b1 + K;
        for (int r = 0; r < CPU_GEMM_ROWS; r += 4) {
            const float *a0 = in + (long)r * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;
            __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
            __m256 c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
            for (int k = 0; k < k8; k += 8) {
                __m256 y0 = _mm256_loadu_ps(b0 + k), y1 = _mm256_loadu_ps(b1 + k), y2 = _mm256_loadu_ps(b2 + k);
                __m256 x = _mm256_loadu_ps(a0 + k);
                c00 = _mm256_fmadd_ps(x, y0, c00);
                c01 = _mm256_fmadd_ps(x, y1, c01);
                c02 = _mm256_fmadd_ps(x, y2, c02);
                x = _mm256_loadu_ps(a1 + k);
                c10 = _mm256_fmadd_ps(x, y0, c10);
                c11 = _mm256_fmadd_ps(x, y1, c11);
                c12 = _mm256_fmadd_ps(x, y2, c12);
                x = _mm256_loadu_ps(a2 + k);
                c20 = _mm256_fmadd_ps(x, y0, c20);
                c21 = _mm256_fmadd_ps(x, y1, c21);
                c22 = _mm256_fmadd_ps(x, y2, c22);
                x = _mm256_loadu_ps(a3 + k);
                c30 = _mm256_fmadd_ps(x, y0, c30);
                c31 = _mm256_fmadd_ps(x, y1, c31);
                c32 = _mm256_fmadd_ps(x, y2, c32);
            }
            float s[16];
            _mm256_storeu_ps(s, hsum8x8(c00, c01, c02, c10, c11, c12, c20, c21));  // c00 c02 c11 c20 c01 c10 c12 c21
            _mm256_storeu_ps(s + 8, hsum8x8(c22, c30, c31, c32, c22, c30, c31, c32));  // c22 c31 c22 c31 c30 c32 ..
            float *o = out + (long)r * ldo + j;
            o[0] = tail8(s[0], a0, b0, k8, K);
            o[1] = tail8(s[4], a0, b1, k8, K);
            o[2] = tail8(s[1], a0, b2, k8, K);
            o[ldo] = tail8(s[5], a1, b0, k8, K);
            o[ldo + 1] = tail8(s[2], a1, b1, k8, K);
            o[ldo + 2] = tail8(s[6], a1, b2, k8, K);
            o[2L * ldo] = tail8(s[3], a2, b0, k8, K);
            o[2L * ldo + 1] = tail8(s[7], a2, b1, k8, K);
            o[2L * ldo + 2] = tail8(s[8], a2, b2, k8, K);
            o[3L * ldo] = tail8(s[12], a3, b0, k8, K);
            o[3L * ldo + 1] = tail8(s[9], a3, b1, k8, K);
            o[3L * ldo + 2] = tail8(s[13], a3, b2, k8, K);
        }
    }
    if (j < nc) tile_cols2(in, w, out, ldo, j, j + 1 < nc, K);
}

void cpu_gemm_tile_scalar(const float *in, const float *w, float *out, int ldo, int nc, int K) {
    int k8 = K / 8 * 8;
    for (int j = 0; j < nc; j++) {
        const float *b = w + (long)j * K;
        for (int r = 0; r < CPU_GEMM_ROWS; r++) {
            const float *a = in + (long)r * K;
            float acc[8] = {0};
            for (int k = 0; k < k8; k += 8)
                for (int u = 0; u < 8; u++) acc[u] += a[k + u] * b[k + u];
            float s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
            for (int k = k8; k < K; k++) s += a[k] * b[k];
            out[(long)r * ldo + j] = s;
        }
    }
}
