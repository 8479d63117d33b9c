// cpu_ops.c: norms, activations, RoPE. Reductions accumulate in double so a row's result
// does not hinge on summation order.
#include "kernels/cpu/cpu_ops.h"

#include <immintrin.h>
#include <math.h>

#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cuda/cuda_math.h"

// RMSNorm of 4 rows at once on AVX2: lane j of the double accumulator runs row j's sum of
// squares in the one-row loop's order (each square is exact in double, so the FMA rounds as
// the loop's add does), 4 rows' dependency chains in flight instead of one. Then
// out = w * (x * rstd) 8 floats at a time: the same bits as the loop below.
__attribute__((target("avx2,fma"))) static void rms_norm4(const float *x, float *out, int C, const float *w,
                                                          float eps) {
    __m256d acc = _mm256_setzero_pd();
    int i = 0;
    for (; i + 4 <= C; i += 4) {
        __m128 c0 = _mm_loadu_ps(x + i), c1 = _mm_loadu_ps(x + C + i);
        __m128 c2 = _mm_loadu_ps(x + 2L * C + i), c3 = _mm_loadu_ps(x + 3L * C + i);
        _MM_TRANSPOSE4_PS(c0, c1, c2, c3);  // ck: element i + k of rows 0..3
        __m256d d = _mm256_cvtps_pd(c0);
        acc = _mm256_fmadd_pd(d, d, acc);
        d = _mm256_cvtps_pd(c1), acc = _mm256_fmadd_pd(d, d, acc);
        d = _mm256_cvtps_pd(c2), acc = _mm256_fmadd_pd(d, d, acc);
        d = _mm256_cvtps_pd(c3), acc = _mm256_fmadd_pd(d, d, acc);
    }
    double ss[4];
    _mm256_storeu_pd(ss, acc);
    for (int j = 0; j < 4; j++) {
        const float *xr = x + (long)j * C;
        float *o = out + (long)j * C;
        for (int k = i; k < C; k++) ss[j] += (double)xr[k] * xr[k];
        float rstd = (float)(1.0 / sqrt((float)(ss[j] / C) + eps));
        const __m256 vr = _mm256_set1_ps(rstd);
        int k = 0;
        if (!w) {  // weightless (F.rms_norm without a weight)
            for (; k + 8 <= C; k += 8) _mm256_storeu_ps(o + k, _mm256_mul_ps(_mm256_loadu_ps(xr + k), vr));
            for (; k < C; k++) o[k] = xr[k] * rstd;
            continue;
        }
        for (; k + 8 <= C; k += 8)
            _mm256_storeu_ps(o + k, _mm256_mul_ps(_mm256_loadu_ps(w + k), _mm256_mul_ps(_mm256_loadu_ps(xr + k), vr)));
        for (; k < C; k++) o[k] = w[k] * (xr[k] * rstd);
    }
}

void cpu_layer_norm_rows(const float *x, float *out, int n, int C, const float *w, const float *b, float eps) {
    for (int r = 0; r < n; r++) {
        const float *xr = x + (long)r * C;
        float *o = out + (long)r * C;
        double mean = 0, var = 0;
        for (int i = 0; i < C; i++) mean += xr[i];
        mean /= C;
        for (int i = 0; i < C; i++) var += (xr[i] - mean) * (xr[i] - mean);
        var /= C;
        float m = (float)mean, rstd = (float)(1.0 / sqrt(var + eps));
        if (b)
            for (int i = 0; i < C; i++) o[i] = (xr[i] - m) * rstd * w[i] + b[i];
        else
            for (int i = 0; i < C; i++) o[i] = (xr[i] - m) * rstd * w[i];
    }
}

void cpu_norm_rows(const float *x, float *out, int n, int C, const float *w, const float *b,
                   float eps) {
    int r = 0;
    if (!b && cpu_gemm_have_avx2())  // with a gain or weightless (parameter golf)
        for (; r + 4 <= n; r += 4) rms_norm4(x + (long)r * C, out + (long)r * C, C, w, eps);
    for (; r < n; r++) {
        const float *xr = x + (long)r * C;
        float *o = out + (long)r * C;
        if (b) {
            cpu_layer_norm_rows(xr, o, 1, C, w, b, eps);
        } else {
            double ss = 0;
            for (int i = 0; i < C; i++) ss += (double)xr[i] * xr[i];
            float rstd = (float)(1.0 / sqrt((float)(ss / C) + eps));
            if (w)
                for (int i = 0; i < C; i++) o[i] = w[i] * (xr[i] * rstd);
            else
                for (int i = 0; i < C; i++) o[i] = xr[i] * rstd;
        }
    }
}

__attribute__((target("avx2"))) static void add_avx2(float *x, const float *y, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++) x[i] += y[i];
}

void cpu_add_inplace(float *x, const float *y, long n) {
    if (cpu_gemm_have_avx2()) {
        add_avx2(x, y, n);
        return;
    }
    for (long i = 0; i < n; i++) x[i] += y[i];
}

void cpu_clamp(float *x, long n, float c) {
    for (long i = 0; i < n; i++) x[i] = x[i] < -c ? -c : x[i] > c ? c : x[i];  // (NaN stays NaN, as torch.clamp)
}

void cpu_gelu_tanh(float *x, long n) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    for (long i = 0; i < n; i++) {
        float v = x[i];
        x[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
    }
}

void cpu_gelu_erf(float *x, long n) {
    for (long i = 0; i < n; i++) x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}

// vec: the AVX2 vector exp, else libm's expf.
static void exp_inplace(float *x, long n, int vec) {
    if (!vec) {
        for (long i = 0; i < n; i++) x[i] = expf(x[i]);
        return;
    }
    for (long i = 0; i < n; i += 1 << 20) cpu_attn_exp_avx2(x + i, x + i, n - i < (1 << 20) ? (int)(n - i) : 1 << 20);
}

// x = e^x in place for x <= 88: the AVX2 vector exp (0.9 ulp, cpu_attn_exp_avx2) where the
// CPU has it, else libm's expf; (n)
static void cpu_exp_inplace(float *x, long n) { exp_inplace(x, n, cpu_gemm_have_avx2()); }

// The vector path of cpu_swiglu: the scalar loops' operations, 8 lanes at a time.
__attribute__((target("avx2,fma"))) static void swiglu_avx2(float *g, const float *u, long n) {
    _Alignas(32) float e[256];
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    for (long i0 = 0; i0 < n; i0 += 256) {
        int m = n - i0 < 256 ? (int)(n - i0) : 256, i = 0;
        for (; i + 8 <= m; i += 8) _mm256_store_ps(e + i, _mm256_xor_ps(_mm256_loadu_ps(g + i0 + i), sign));
        for (; i < m; i++) e[i] = -g[i0 + i];
        cpu_attn_exp_avx2(e, e, m);
        for (i = 0; i + 8 <= m; i += 8) {
            __m256 gi = _mm256_loadu_ps(g + i0 + i);
            gi = _mm256_mul_ps(_mm256_div_ps(gi, _mm256_add_ps(one, _mm256_load_ps(e + i))), _mm256_loadu_ps(u + i0 + i));
            _mm256_storeu_ps(g + i0 + i, gi);
        }
        for (; i < m; i++) g[i0 + i] = g[i0 + i] / (1.0f + e[i]) * u[i0 + i];
    }
}

// silu(g) = g / (1 + e^-g), e^-g by exp_inplace in chunks (-g clamped at 88 on the vector
// path, where silu is 0 to 1e-36 either way).
void cpu_swiglu(float *gate, const float *up, long n) {
    if (cpu_gemm_have_avx2()) {
        swiglu_avx2(gate, up, n);
        return;
    }
    float e[256];
    for (long i0 = 0; i0 < n; i0 += 256) {
        int m = n - i0 < 256 ? (int)(n - i0) : 256;
        float *g = gate + i0;
        const float *u = up + i0;
        for (int i = 0; i < m; i++) e[i] = -g[i];
        exp_inplace(e, m, 0);
        for (int i = 0; i < m; i++) g[i] = g[i] / (1.0f + e[i]) * u[i];
    }
}

void cpu_rope_table(const int32_t *pos, int T, const struct model_config *c, float *cos_t, float *sin_t) {
    int h2 = model_rope_dims(c) / 2;
    float scale = xsa_rope_cos_scale(c);
    // parameter-golf rotates by -angle: sin negated (exactly) turns rotate_half's formulas into its
    float sgn = c->rope == ROPE_HALF_NEG ? -1.0f : 1.0f;
    for (int i = 0; i < h2; i++) {
        float inv = xsa_rope_inv_freq_cfg(c, i);  // the formula both backends share
        for (int t = 0; t < T; t++) {
            float a = xsa_rope_angle_inv(pos[t], inv);
            cos_t[(long)t * h2 + i] = cosf(a);
            sin_t[(long)t * h2 + i] = sgn * sinf(a);
            if (scale != 1.0f) cos_t[(long)t * h2 + i] *= scale, sin_t[(long)t * h2 + i] *= scale;
        }
    }
}

void cpu_rope_apply(float *x, int T, int ld, int n_heads, int hd, int rd, int half, const float *cos_t,
                    const float *sin_t) {
    int h2 = rd / 2;
    for (int t = 0; t < T; t++) {
        const float *c = cos_t + (long)t * h2, *s = sin_t + (long)t * h2;
        for (int h = 0; h < n_heads; h++) {
            float *v = x + (long)t * ld + (long)h * hd;
            for (int i = 0; i < h2; i++) {
                int a = half ? i : 2 * i, b = half ? i + h2 : 2 * i + 1;  // rd < hd: the first rd rotate
                float x0 = v[a], x1 = v[b];
                v[a] = x0 * c[i] - x1 * s[i];
                v[b] = x1 * c[i] + x0 * s[i];
            }
        }
    }
}

static int argmax_scalar(const float *x, int n, float *mx) {
    float m = x[0];
    int am = 0;
    for (int j = 1; j < n; j++)
        if (x[j] > m) m = x[j], am = j;
    *mx = m;
    return am;
}

// Lane l follows positions l, l + 8, ... with the scalar loop's strict >, so it holds its
// first maximum; the first position of the overall maximum is the least index among lanes
// holding it. NaN never wins a compare; lanes that start on one start from -inf instead.
__attribute__((target("avx2"))) static int argmax_avx2(const float *x, int n, float *mx) {
    __m256 v = _mm256_loadu_ps(x);
    __m256 vm = _mm256_blendv_ps(v, _mm256_set1_ps(-INFINITY), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    __m256i vi = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), idx = vi;
    const __m256i eight = _mm256_set1_epi32(8);
    int j = 8;
    for (; j + 8 <= n; j += 8) {
        v = _mm256_loadu_ps(x + j);
        idx = _mm256_add_epi32(idx, eight);
        __m256 gt = _mm256_cmp_ps(v, vm, _CMP_GT_OQ);
        vm = _mm256_blendv_ps(vm, v, gt);
        vi = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(vi), _mm256_castsi256_ps(idx), gt));
    }
    float lm[8];
    int li[8];
    _mm256_storeu_ps(lm, vm);
    _mm256_storeu_si256((__m256i *)li, vi);
    float m = lm[0];
    for (int l = 1; l < 8; l++) m = lm[l] > m ? lm[l] : m;
    int am = n, best = 0;
    for (int l = 0; l < 8; l++)
        if (lm[l] == m && li[l] < am) am = li[l], best = l;
    m = lm[best];  // -0 and +0 compare equal: the value at the first index, as the loop keeps it
    for (; j < n; j++)
        if (x[j] > m) m = x[j], am = j;
    *mx = m;
    return am;
}

int cpu_argmax(const float *x, int n, float *mx) {
    // A NaN first element wins outright in the scalar loop.
    if (n < 16 || x[0] != x[0] || !cpu_gemm_have_avx2()) return argmax_scalar(x, n, mx);
    return argmax_avx2(x, n, mx);
}

__attribute__((target("avx2"))) static void sub_avx2(float *x, long n, float m) {
    long i = 0;
    const __m256 vm = _mm256_set1_ps(m);
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
    for (; i < n; i++) x[i] -= m;
}

void cpu_exp_minus(float *x, long n, float m) {
    if (cpu_gemm_have_avx2())
        sub_avx2(x, n, m);
    else
        for (long i = 0; i < n; i++) x[i] -= m;
    cpu_exp_inplace(x, n);
}

// The vector paths of cpu_leaky_relu2 and its backward: the scalar loops' operations (a select,
// then the same multiplies in the same order), 8 lanes at a time, so the same bits.
__attribute__((target("avx2"))) static long leaky_relu2_avx2(const float *x, float *out, long n, float slope) {
    const __m256 zero = _mm256_setzero_ps(), s = _mm256_set1_ps(slope);
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 u = _mm256_loadu_ps(x + i);
        __m256 r = _mm256_blendv_ps(_mm256_mul_ps(u, s), u, _mm256_cmp_ps(u, zero, _CMP_GT_OQ));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(r, r));
    }
    return i;
}

__attribute__((target("avx2"))) static long leaky_relu2_bwd_avx2(const float *x, float *dh, long n, float slope) {
    const __m256 zero = _mm256_setzero_ps(), s = _mm256_set1_ps(slope), one = _mm256_set1_ps(1.0f),
                 two = _mm256_set1_ps(2.0f);
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 u = _mm256_loadu_ps(x + i), pos = _mm256_cmp_ps(u, zero, _CMP_GT_OQ);
        __m256 r = _mm256_blendv_ps(_mm256_mul_ps(u, s), u, pos), d = _mm256_blendv_ps(s, one, pos);
        _mm256_storeu_ps(dh + i, _mm256_mul_ps(_mm256_loadu_ps(dh + i), _mm256_mul_ps(_mm256_mul_ps(two, r), d)));
    }
    return i;
}

void cpu_leaky_relu2(const float *x, float *out, long n, float slope) {
    long i = cpu_gemm_have_avx2() ? leaky_relu2_avx2(x, out, n, slope) : 0;
    for (; i < n; i++) {
        float r = x[i] > 0 ? x[i] : x[i] * slope;  // F.leaky_relu(x, slope).square(); slope 0: torch.relu(x).square()
        out[i] = r * r;
    }
}

void cpu_leaky_relu2_bwd(const float *x, float *dh, long n, float slope) {
    long i = cpu_gemm_have_avx2() ? leaky_relu2_bwd_avx2(x, dh, n, slope) : 0;
    for (; i < n; i++) {
        float r = x[i] > 0 ? x[i] : x[i] * slope;
        dh[i] *= 2.0f * r * (x[i] > 0 ? 1.0f : slope);
    }
}

// The vector path of cpu_add_scaled: the loop's multiply, then its add, 8 lanes at a time.
__attribute__((target("avx2"))) static long add_scaled_avx2(float *x, const float *s, const float *y, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_loadu_ps(x + i),
                                              _mm256_mul_ps(_mm256_loadu_ps(s + i), _mm256_loadu_ps(y + i))));
    return i;
}

void cpu_add_scaled(float *x, const float *s, const float *y, long n) {
    long i = cpu_gemm_have_avx2() ? add_scaled_avx2(x, s, y, n) : 0;
    for (; i < n; i++) x[i] += s[i] * y[i];
}

double cpu_cosine(const float *a, const float *b, int n) {
    double ab = 0, aa = 0, bb = 0;
    for (int d = 0; d < n; d++) ab += (double)a[d] * b[d], aa += (double)a[d] * a[d], bb += (double)b[d] * b[d];
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}
