// cuda_math.h: the arithmetic of every CUDA kernel, as __host__ __device__ helpers, so the
// CPU tests (tests/test_cuda_math.c, plain C11) check the same code the GPU runs; the CPU
// backend takes formulas both backends must share from here too (RoPE's frequencies).
// C-compatible: under nvcc the helpers are __host__ __device__, under a C compiler plain
// static inline functions. No CUDA types appear here; bf16 travels as its uint16_t bits.
#ifndef XSA_KERNELS_CUDA_MATH_H
#define XSA_KERNELS_CUDA_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"

#ifdef __CUDACC__
#define XSA_HD __host__ __device__ __forceinline__
#else
#define XSA_HD static inline
#endif

#define XSA_ATT_TILE 32  // keys per tile of the attention kernel (one per lane of a warp)

// ---- bf16 -----------------------------------------------------------------------------
XSA_HD uint32_t xsa_f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

XSA_HD float xsa_bits_f32(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

// float -> bf16 bits, round to nearest even (as torch's .to(bfloat16)); NaN stays a quiet NaN.
XSA_HD uint16_t xsa_f32_to_bf16(float x) {
    uint32_t u = xsa_f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

XSA_HD float xsa_bf16_to_f32(uint16_t h) { return xsa_bits_f32((uint32_t)h << 16); }

XSA_HD float xsa_bf16_round(float x) { return xsa_bf16_to_f32(xsa_f32_to_bf16(x)); }

// ---- activations ----------------------------------------------------------------------
// HF gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
XSA_HD float xsa_gelu_tanh(float v) {
    const float k = 0.7978845608028654f;
    return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

// HF gelu (nn.functional.gelu, exact): 0.5 x (1 + erf(x / sqrt(2)))
XSA_HD float xsa_gelu_erf(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

// SwiGLU: silu(gate) * up
XSA_HD float xsa_swiglu(float g, float up) { return g / (1.0f + expf(-g)) * up; }

// ---- norms ----------------------------------------------------------------------------
// RMSNorm as HF LlamaRMSNorm: rstd from the mean square (float), in double like the CPU.
XSA_HD float xsa_rms_rstd(float mean_sq, float eps) {
    return (float)(1.0 / sqrt((double)(mean_sq + eps)));
}

// LayerNorm: rstd from the biased variance.
XSA_HD float xsa_ln_rstd(double var, float eps) { return (float)(1.0 / sqrt(var + eps)); }

// One output element: LayerNorm when has_bias, else RMSNorm (mean is ignored then).
XSA_HD float xsa_norm_apply(float x, float mean, float rstd, float w, float b, int has_bias) {
    return has_bias ? (x - mean) * rstd * w + b : w * (x * rstd);
}

// ---- RoPE -----------------------------------------------------------------------------
// Inverse frequency of pair i, as HF computes it in float32. The backend computes this table
// on the host (the same powf as the CPU backend) and uploads it: the device's powf may differ by
// a few ulp, and an angle's error grows with the position.
XSA_HD float xsa_rope_inv_freq(int i, int hd, float theta) {
    return 1.0f / powf(theta, (float)(2 * i) / (float)hd);
}

// Pair i's inverse frequency with the checkpoint's RoPE scaling, in float32 as transformers'
// rope_utils computes it (_compute_linear_scaling_rope_parameters, _compute_llama3_parameters,
// _compute_dynamic_ntk_parameters at max_position_embeddings: positions stay below it, so the
// base is unchanged; _compute_yarn_parameters), over the rotated dims (partial rotary).
// Host only: both backends build their tables with it.
static inline float xsa_rope_inv_freq_cfg(const struct model_config *c, int i) {
    int dim = model_rope_dims(c);
    float inv = xsa_rope_inv_freq(i, dim, c->rope_theta), f = c->rope_factor;
    if (c->rope_scaling == ROPE_SCALE_LINEAR) return inv / f;
    if (c->rope_scaling == ROPE_SCALE_YARN) {
        // pos_freqs = base^(2i/dim); extrapolation 1 / pos_freqs, interpolation 1 / (factor pos_freqs)
        float pf = powf(c->rope_theta, (float)(2 * i) / (float)dim), extra = 1.0f / pf, inter = 1.0f / (f * pf);
        double lb = log((double)c->rope_theta), two_pi = 2 * 3.14159265358979323846;
        double lo = dim * log(c->rope_orig_ctx / (c->rope_beta_fast * two_pi)) / (2 * lb);
        double hi = dim * log(c->rope_orig_ctx / (c->rope_beta_slow * two_pi)) / (2 * lb);
        if (c->rope_truncate) lo = floor(lo), hi = ceil(hi);
        lo = lo > 0 ? lo : 0;
        hi = hi < dim - 1 ? hi : dim - 1;
        if (lo == hi) hi += 0.001;  // transformers' guard against a zero-width ramp
        float ramp = ((float)i - (float)lo) / (float)(hi - lo);
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        float ef = 1 - ramp;  // extrapolation share
        return inter * (1 - ef) + extra * ef;
    }
    if (c->rope_scaling != ROPE_SCALE_LLAMA3) return inv;
    double low_wavelen = (double)c->rope_orig_ctx / c->rope_low_freq, high_wavelen = (double)c->rope_orig_ctx / c->rope_high_freq;
    // torch: `2 * math.pi / inv` is reciprocal(inv) * 2pi, a scalar taken in float32.
    float wavelen = (1.0f / inv) * (float)(2 * 3.14159265358979323846);
    float scaled = wavelen > (float)low_wavelen ? inv / f : inv;
    if (wavelen < (float)high_wavelen || wavelen > (float)low_wavelen) return scaled;
    float smooth = ((1.0f / wavelen) * c->rope_orig_ctx - c->rope_low_freq) /
                   (float)((double)c->rope_high_freq - c->rope_low_freq);
    return (1 - smooth) * scaled / f + smooth * scaled;
}

// What cos and sin are multiplied by (transformers' attention_scaling): yarn's factor, else 1.
static inline float xsa_rope_cos_scale(const struct model_config *c) {
    return c->rope_scaling == ROPE_SCALE_YARN ? c->rope_attn_factor : 1.0f;
}

// Angle of pair i at position pos from its inverse frequency.
XSA_HD float xsa_rope_angle_inv(int pos, float inv) { return (float)pos * inv; }

XSA_HD float xsa_rope_angle(int pos, int i, int hd, float theta) {
    return xsa_rope_angle_inv(pos, xsa_rope_inv_freq(i, hd, theta));
}

// Elements of pair i: half = 1 (HF rotate_half) (i, i + hd/2); half = 0 (llama2.c) (2i, 2i+1).
XSA_HD void xsa_rope_pair(int i, int hd, int half, int *a, int *b) {
    *a = half ? i : 2 * i;
    *b = half ? i + hd / 2 : 2 * i + 1;
}

XSA_HD void xsa_rope_rotate(float *x0, float *x1, float c, float s) {
    float a = *x0, b = *x1;
    *x0 = a * c - b * s;
    *x1 = b * c + a * s;
}

// ---- sliding window -------------------------------------------------------------------
// Of a token's keys (span 0 then span 1, positions 0..n-1, the token itself last) a sliding
// window of w keeps the last w (transformers: kv_idx > q_idx - sliding_window); w <= 0 keeps
// all. Keys are dropped from the front: span 0 shrinks, and once it is empty what is left of
// span 1 becomes span 0 (span 1 then empty), so every kernel sees ordinary spans.
XSA_HD void xsa_window_spans(int lo[2], int hi[2], int w) {
    int n0 = hi[0] - lo[0], drop = n0 + hi[1] - lo[1] - w;
    if (w <= 0 || drop <= 0) return;
    if (drop < n0) {
        lo[0] += drop;
        return;
    }
    lo[0] = lo[1] + (drop - n0);
    hi[0] = hi[1];
    lo[1] = hi[1];
}

// The window of layer l: the model's sliding_window where swa[l], else 0 (all keys).
XSA_HD int xsa_layer_window(const struct model_config *c, int l) { return c->swa[l] ? c->sliding_window : 0; }

// ---- online softmax (attention) -------------------------------------------------------
// State of one (token, head) after some key tiles: running max m, running sum l of
// exp(score - m). Start: m = -INFINITY, l = 0. A tile with maximum tile_max (finite) moves the
// max to *m_new; the old sum and accumulator are multiplied by the returned factor.
XSA_HD float xsa_online_rescale(float m, float tile_max, float *m_new) {
    float mn = m > tile_max ? m : tile_max;
    *m_new = mn;
    return m == -INFINITY ? 0.0f : expf(m - mn);
}

// Weight of one key with score s once the running max is m_new.
XSA_HD float xsa_online_weight(float s, float m_new) { return expf(s - m_new); }

// Merges two partial softmax states (m, l): the result describes the union of their keys.
XSA_HD void xsa_online_merge(float *m, float *l, float m2, float l2) {
    if (m2 == -INFINITY) return;
    if (*m == -INFINITY) {
        *m = m2;
        *l = l2;
        return;
    }
    float mn = *m > m2 ? *m : m2;
    *l = *l * expf(*m - mn) + l2 * expf(m2 - mn);
    *m = mn;
}

// XSA: z = y - c v with c = (y.v) / |v|^2; v == 0 leaves y unchanged.
XSA_HD float xsa_xsa_coef(float yv, float vv) { return vv == 0.0f ? 0.0f : yv / vv; }

// The probe's cosine (backend.h) from the dot product and the two squared norms; 0 when either
// vector is zero, as the CPU backend's.
XSA_HD float xsa_probe_cos(float ab, float aa, float bb) { return aa > 0.0f && bb > 0.0f ? ab / sqrtf(aa * bb) : 0.0f; }

// The attention of one (token, head) exactly as the kernel orders it: key tiles of
// XSA_ATT_TILE over span0 then span1, online softmax per tile, then the XSA epilogue.
// The kernel runs the same steps with one lane per key (scores) and one lane per dimension
// (values); this serial twin lets the CPU tests check the algorithm.
// q (hd), k/v rows at k + j * ld (hd used), y (hd) out; vo: the token's own value row (NULL:
// neither XSA nor statistics); xsa: project y off vo. stats (BACKEND_PROBE_STATS) or NULL: the
// probe's statistics, cos(y, vo) before the projection, cos(z, vo) after it (the same without
// XSA), and a_ii, the softmax weight of the last key (the token itself, as the CPU backend's).
XSA_HD void xsa_attend_serial_stats(const float *q, const float *k, const float *v, long ld, int hd, const int lo[2],
                                    const int hi[2], const float *vo, int xsa, float *y, float *stats) {
    float scale = 1.0f / sqrtf((float)hd), m = -INFINITY, l = 0.0f, s_last = -INFINITY;
    for (int d = 0; d < hd; d++) y[d] = 0.0f;
    for (int s = 0; s < 2; s++)
        for (int j0 = lo[s]; j0 < hi[s]; j0 += XSA_ATT_TILE) {
            int n = hi[s] - j0 < XSA_ATT_TILE ? hi[s] - j0 : XSA_ATT_TILE;
            float sc[XSA_ATT_TILE], tmax = -INFINITY;
            for (int u = 0; u < n; u++) {
                const float *kj = k + (long)(j0 + u) * ld;
                float acc = 0.0f;
                for (int d = 0; d < hd; d++) acc += q[d] * kj[d];
                sc[u] = acc * scale;
                tmax = sc[u] > tmax ? sc[u] : tmax;
            }
            s_last = sc[n - 1];
            float mn, f = xsa_online_rescale(m, tmax, &mn), ps = 0.0f;
            for (int d = 0; d < hd; d++) y[d] *= f;
            for (int u = 0; u < n; u++) {
                float p = xsa_online_weight(sc[u], mn);
                ps += p;
                const float *vj = v + (long)(j0 + u) * ld;
                for (int d = 0; d < hd; d++) y[d] += p * vj[d];
            }
            l = l * f + ps;
            m = mn;
        }
    float inv = 1.0f / l;
    for (int d = 0; d < hd; d++) y[d] *= inv;
    if (!vo) return;
    float yv = 0.0f, yy = 0.0f, vv = 0.0f;
    for (int d = 0; d < hd; d++) {
        yv += y[d] * vo[d];
        yy += y[d] * y[d];
        vv += vo[d] * vo[d];
    }
    if (stats) {
        stats[0] = stats[1] = xsa_probe_cos(yv, yy, vv);  // (BACKEND_PROBE_COS_Y, _COS_Z)
        stats[2] = xsa_online_weight(s_last, m) / l;       // (BACKEND_PROBE_AII)
    }
    if (!xsa) return;
    float c = xsa_xsa_coef(yv, vv), zv = 0.0f, zz = 0.0f;
    for (int d = 0; d < hd; d++) {
        y[d] -= c * vo[d];
        zv += y[d] * vo[d];
        zz += y[d] * y[d];
    }
    if (stats) stats[1] = xsa_probe_cos(zv, zz, vv);
}

// The same without statistics; own_v: the token's value row for XSA, or NULL (no XSA).
XSA_HD void xsa_attend_serial(const float *q, const float *k, const float *v, long ld, int hd, const int lo[2],
                              const int hi[2], const float *own_v, float *y) {
    xsa_attend_serial_stats(q, k, v, ld, hd, lo, hi, own_v, own_v != NULL, y, NULL);
}

// ---- GEMM parameters ---------------------------------------------------------------------
// cuBLAS is column-major. Our y (M, N; row stride ldy) = x (M, K) @ W^T with x and the weight
// W (N, K) row-major ((OUT, IN), nn.Linear) is, read column-major, y^T (N, M) = W (N, K) x^T:
// A = W seen as a (K, N) column-major matrix, transposed (lda = K); B = x seen as (K, M)
// column-major, not transposed (ldb = K); C = y^T with ldc = ldy. cu_gemm passes these fields
// to cublasGemmEx in order; tests/test_cuda_math.c checks them against a literal column-major
// reference. transa/transb: 1 = CUBLAS_OP_T, 0 = CUBLAS_OP_N.
struct xsa_gemm_cm {
    int transa, transb, m, n, k, lda, ldb, ldc;
};

XSA_HD struct xsa_gemm_cm xsa_gemm_params(int M, int K, int N, int ldy) {
    struct xsa_gemm_cm p;
    p.transa = 1;
    p.transb = 0;
    p.m = N;
    p.n = M;
    p.k = K;
    p.lda = K;
    p.ldb = K;
    p.ldc = ldy;
    return p;
}

// cuBLAS's own argument checks (CUBLAS_STATUS_INVALID_VALUE otherwise): 1 when valid.
XSA_HD int xsa_gemm_params_valid(struct xsa_gemm_cm p) {
    int rows_a = p.transa ? p.k : p.m, rows_b = p.transb ? p.n : p.k;
    return p.m >= 0 && p.n >= 0 && p.k >= 0 && p.lda >= (rows_a > 1 ? rows_a : 1) &&
           p.ldb >= (rows_b > 1 ? rows_b : 1) && p.ldc >= (p.m > 1 ? p.m : 1);
}

// ---- sub-batches ------------------------------------------------------------------------
// A packed batch too large for the activation buffers is scored in sub-batches [t0, t1) cut
// only where no token at or after the cut reads a key before it, so rows stay whole.
// cut_min (T + 1): cut_min[t] = the smallest key index read by any token >= t; cut_min[T] = T.
XSA_HD void xsa_cut_min_fill(const int32_t *lo0, const int32_t *hi0, const int32_t *lo1, int T,
                             int32_t *cut_min) {
    cut_min[T] = T;
    for (int t = T - 1; t >= 0; t--) {
        int lo = lo0[t] < hi0[t] ? lo0[t] : lo1[t];  // span0 precedes span1 when both are non-empty
        cut_min[t] = lo < cut_min[t + 1] ? lo : cut_min[t + 1];
    }
}

// End of the sub-batch starting at t0 (a valid cut) with at most cap tokens; t0 when even the
// first row is longer than cap.
XSA_HD int xsa_cut_end(const int32_t *cut_min, int t0, int T, int cap) {
    int t1 = T - t0 <= cap ? T : t0 + cap;
    while (t1 > t0 && cut_min[t1] < t1) t1--;
    return t1;
}

// ---- log-softmax over vocabulary chunks -----------------------------------------------
// Running statistics of one row's logits: max, lowest id reaching it, sum of exp(x - max).
struct xsa_lse {
    float max;
    int32_t argmax;
    float sum;
};

XSA_HD struct xsa_lse xsa_lse_empty(void) {
    struct xsa_lse s;
    s.max = -INFINITY;
    s.argmax = INT32_MAX;
    s.sum = 0.0f;
    return s;
}

// Adds logit x of vocabulary id `id`; ties keep the lowest id (torch.argmax).
XSA_HD void xsa_lse_push(struct xsa_lse *s, float x, int32_t id) {
    if (x > s->max) {
        s->sum = s->max == -INFINITY ? 1.0f : s->sum * expf(s->max - x) + 1.0f;
        s->max = x;
        s->argmax = id;
    } else {
        s->sum += expf(x - s->max);
        if (x == s->max && id < s->argmax) s->argmax = id;
    }
}

// Merges b into a (any order of merges gives the same max and argmax).
XSA_HD void xsa_lse_merge(struct xsa_lse *a, struct xsa_lse b) {
    if (b.max == -INFINITY) return;
    if (a->max == -INFINITY) {
        *a = b;
        return;
    }
    if (b.max > a->max) {
        a->sum = a->sum * expf(a->max - b.max) + b.sum;
        a->max = b.max;
        a->argmax = b.argmax;
    } else {
        a->sum += b.sum * expf(b.max - a->max);
        if (b.max == a->max && b.argmax < a->argmax) a->argmax = b.argmax;
    }
}

// log P(target) from the target's logit and the row's statistics.
XSA_HD float xsa_lse_logprob(float target_logit, struct xsa_lse s) {
    return (float)((double)target_logit - ((double)s.max + log((double)s.sum)));
}

#endif
