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

__attribute__((target("avx2,fma"))) static inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

// Finishes one output: lane reduction, then the tail in increasing k.
__attribute__((target("avx2,fma"))) static inline float finish8(__m256 acc, const float *a,
                                                                 const float *b, int k8, int K) {
    float s = hsum8(acc);
    for (int k = k8; k < K; k++) s += a[k] * b[k];
    return s;
}

__attribute__((target("avx2,fma"))) void cpu_gemm_tile_avx2(const float *in, const float *w,
                                                             float *out, int ldo, int nc, int K) {
    int k8 = K / 8 * 8;
    for (int j = 0; j < nc; j += 2) {
        int two = j + 1 < nc;
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
            float *o = out + (long)r * ldo + j;
            o[0] = finish8(c00, a0, b0, k8, K);
            o[ldo] = finish8(c10, a1, b0, k8, K);
            o[2L * ldo] = finish8(c20, a2, b0, k8, K);
            o[3L * ldo] = finish8(c30, a3, b0, k8, K);
            if (!two) continue;  // odd nc: b1 == b0, its results are not stored
            o[1] = finish8(c01, a0, b1, k8, K);
            o[ldo + 1] = finish8(c11, a1, b1, k8, K);
            o[2L * ldo + 1] = finish8(c21, a2, b1, k8, K);
            o[3L * ldo + 1] = finish8(c31, a3, b1, k8, K);
        }
    }
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
