// cpu_ops.c: norms, activations, RoPE. Reductions accumulate in double so a row's result
// does not hinge on summation order.
#include "kernels/cpu/cpu_ops.h"

#include <math.h>

#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_gemm.h"

void cpu_norm_rows(const float *x, float *out, int n, int C, const float *w, const float *b,
                   float eps) {
    for (int r = 0; r < n; r++) {
        const float *xr = x + (long)r * C;
        float *o = out + (long)r * C;
        if (b) {
            double mean = 0, var = 0;
            for (int i = 0; i < C; i++) mean += xr[i];
            mean /= C;
            for (int i = 0; i < C; i++) var += (xr[i] - mean) * (xr[i] - mean);
            var /= C;
            float m = (float)mean, rstd = (float)(1.0 / sqrt(var + eps));
            for (int i = 0; i < C; i++) o[i] = (xr[i] - m) * rstd * w[i] + b[i];
        } else {
            double ss = 0;
            for (int i = 0; i < C; i++) ss += (double)xr[i] * xr[i];
            float rstd = (float)(1.0 / sqrt((float)(ss / C) + eps));
            for (int i = 0; i < C; i++) o[i] = w[i] * (xr[i] * rstd);
        }
    }
}

void cpu_add_inplace(float *x, const float *y, long n) {
    for (long i = 0; i < n; i++) x[i] += y[i];
}

void cpu_gelu_tanh(float *x, long n) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    for (long i = 0; i < n; i++) {
        float v = x[i];
        x[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
    }
}

// vec: the AVX2 vector exp, else libm's expf.
static void exp_inplace(float *x, long n, int vec) {
    if (!vec) {
        for (long i = 0; i < n; i++) x[i] = expf(x[i]);
        return;
    }
    for (long i = 0; i < n; i += 1 << 20) cpu_attn_exp_avx2(x + i, x + i, n - i < (1 << 20) ? (int)(n - i) : 1 << 20);
}

void cpu_exp_inplace(float *x, long n) { exp_inplace(x, n, cpu_gemm_have_avx2()); }

// silu(g) = g / (1 + e^-g), e^-g by exp_inplace in chunks (-g clamped at 88 on the vector
// path, where silu is 0 to 1e-36 either way).
void cpu_swiglu(float *gate, const float *up, long n) {
    int vec = cpu_gemm_have_avx2();
    float e[256];
    for (long i0 = 0; i0 < n; i0 += 256) {
        int m = n - i0 < 256 ? (int)(n - i0) : 256;
        float *g = gate + i0;
        const float *u = up + i0;
        for (int i = 0; i < m; i++) e[i] = -g[i];
        exp_inplace(e, m, vec);
        for (int i = 0; i < m; i++) g[i] = g[i] / (1.0f + e[i]) * u[i];
    }
}

void cpu_rope_table(const int32_t *pos, int T, int hd, float theta, float *cos_t, float *sin_t) {
    int h2 = hd / 2;
    for (int i = 0; i < h2; i++) {
        float inv = 1.0f / powf(theta, (float)(2 * i) / (float)hd);
        for (int t = 0; t < T; t++) {
            float a = (float)pos[t] * inv;
            cos_t[(long)t * h2 + i] = cosf(a);
            sin_t[(long)t * h2 + i] = sinf(a);
        }
    }
}

void cpu_rope_apply(float *x, int T, int ld, int n_heads, int hd, int half, const float *cos_t,
                    const float *sin_t) {
    int h2 = hd / 2;
    for (int t = 0; t < T; t++) {
        const float *c = cos_t + (long)t * h2, *s = sin_t + (long)t * h2;
        for (int h = 0; h < n_heads; h++) {
            float *v = x + (long)t * ld + (long)h * hd;
            for (int i = 0; i < h2; i++) {
                int a = half ? i : 2 * i, b = half ? i + h2 : 2 * i + 1;
                float x0 = v[a], x1 = v[b];
                v[a] = x0 * c[i] - x1 * s[i];
                v[b] = x1 * c[i] + x0 * s[i];
            }
        }
    }
}
