// cpu_attention_avx2.c: the AVX2 + FMA attention kernels, one query token at a time and up to
// CPU_ATTN_GROUP tokens whose scores are computed together: vectorised over 8 consecutive keys
// of the transposed K/V planes, in the reference kernel's order (cpu_attention_ref.c), bit for
// bit the same whichever of the two runs a token.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_attention_exp.h"

// ---- AVX2 + FMA kernel ---------------------------------------------------------------------

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline

AVX2_INLINE __m256 exp8(__m256 x) {
    // NaN passes through max/min as their second operand and survives to the result.
    __m256 xc = _mm256_min_ps(_mm256_set1_ps(EXP_HI), _mm256_max_ps(_mm256_set1_ps(EXP_LO), x));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(EXP_LOG2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_HI), xc);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_LO), r);
    __m256 y = _mm256_set1_ps(EXP_C7);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(EXP_C6));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(EXP_C5));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(EXP_C4));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(EXP_C3));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(EXP_C2));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.0f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
    return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(EXP_LO), _CMP_LT_OQ), y);
}

AVX2 void cpu_attn_exp_avx2(const float *x, float *y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float bx[8] = {0}, by[8];
        memcpy(bx, x + i, sizeof(float) * (size_t)(n - i));
        _mm256_storeu_ps(by, exp8(_mm256_loadu_ps(bx)));
        memcpy(y + i, by, sizeof(float) * (size_t)(n - i));
    }
}

AVX2_INLINE float hsum8(__m256 v) {
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    a = _mm_add_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}

AVX2_INLINE float hmax8(__m256 v) {
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    a = _mm_max_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}

// Lanes i < m set (m may be <= 0 or >= 8).
AVX2_INLINE __m256i lane_mask(int m) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// A token's key positions as at most four segments: whole blocks of span 0 (one load each),
// the block holding span 0's end (gathered from both spans), whole blocks of span 1, and the
// last short block.
struct key_seg {
    int p0, p1;     // positions [p0, p1), a multiple of 8 apart
    long base;      // whole blocks: plane offset of position 0 (key index = base + position)
    int edge;       // 1: one block at p0; lanes < n0 - p0 from span 0, the rest below n - p0 from span 1
};

struct key_segs {
    int n_seg, n0, n;
    long a0, a1;    // key index of position i: i < n0 ? a0 + i : a1 + i
    struct key_seg seg[4];
};

AVX2_INLINE void key_segs_init(struct key_segs *ks, long a0, long a1, int n0, int n) {
    ks->n_seg = 0, ks->a0 = a0, ks->a1 = a1, ks->n0 = n0, ks->n = n;
    int P = n0 / 8 * 8;
    if (P > 0) ks->seg[ks->n_seg++] = (struct key_seg){0, P, a0, 0};
    if (P < n0) ks->seg[ks->n_seg++] = (struct key_seg){P, P + 8, 0, 1}, P += 8;
    if (P + 8 <= n) {
        int e = P + (n - P) / 8 * 8;
        ks->seg[ks->n_seg++] = (struct key_seg){P, e, a1, 0};
        P = e;
    }
    if (P < n) ks->seg[ks->n_seg++] = (struct key_seg){P, P + 8, 0, 1};
}

// An edge block's lanes: masked loads from both spans; masked-off lanes read nothing and are
// +0 bits, so OR merges them exactly.
AVX2_INLINE __m256 key_edge_load(const float *plane, const struct key_segs *ks, const struct key_seg *sg) {
    if (sg->p0 >= ks->n0) return _mm256_maskload_ps(plane + ks->a1 + sg->p0, lane_mask(ks->n - sg->p0));
    if (ks->n <= ks->n0) return _mm256_maskload_ps(plane + ks->a0 + sg->p0, lane_mask(ks->n - sg->p0));
    __m256i m0 = lane_mask(ks->n0 - sg->p0), m1 = _mm256_andnot_si256(m0, lane_mask(ks->n - sg->p0));
    return _mm256_or_ps(_mm256_maskload_ps(plane + ks->a0 + sg->p0, m0),
                        _mm256_maskload_ps(plane + ks->a1 + sg->p0, m1));
}

// One head's scores (scaled, -inf past n) into its p; returns their max. hd is a literal at
// the specialised call sites so loops unroll into registers.
AVX2_INLINE float head_scores_avx2(const struct cpu_attn_token *t, const struct key_segs *ks, int g,
                                   const int hd, int n) {
    long ld = t->ld;
    const float *restrict q = t->q + (long)g * hd;  // restrict: stores to p do not move q
    float *restrict p = t->p + (long)g * t->pstride;
    const __m256 scale = _mm256_set1_ps(t->scale), ninf = _mm256_set1_ps(-INFINITY);
    __m256 vmx = ninf;
    for (int si = 0; si < ks->n_seg; si++) {
        const struct key_seg *sg = &ks->seg[si];
        if (sg->edge) {
            __m256 acc = _mm256_mul_ps(_mm256_set1_ps(q[0]), key_edge_load(t->kt, ks, sg));
            for (int d = 1; d < hd; d++)
                acc = _mm256_fmadd_ps(_mm256_set1_ps(q[d]), key_edge_load(t->kt + d * ld, ks, sg), acc);
            acc = _mm256_mul_ps(acc, scale);
            acc = _mm256_blendv_ps(ninf, acc, _mm256_castsi256_ps(lane_mask(n - sg->p0)));
            _mm256_storeu_ps(p + sg->p0, acc);
            vmx = _mm256_max_ps(vmx, acc);
            continue;
        }
        const float *kp = t->kt + sg->base;
        __m256 qv[16];  // small heads: q broadcast once, kept in registers
#pragma GCC unroll 16
        for (int d = 0; d < 16; d++) qv[d] = _mm256_set1_ps(d < hd ? q[d] : 0.0f);
        int P = sg->p0;
        // Four blocks at a time: four independent FMA chains hide the FMA latency that one
        // chain over d waits on. Each lane's arithmetic is the one-block loop's below.
        for (; P + 32 <= sg->p1; P += 32) {
            __m256 q0 = hd <= 16 ? qv[0] : _mm256_set1_ps(q[0]);
            __m256 a0 = _mm256_mul_ps(q0, _mm256_loadu_ps(kp + P));
            __m256 a1 = _mm256_mul_ps(q0, _mm256_loadu_ps(kp + P + 8));
            __m256 a2 = _mm256_mul_ps(q0, _mm256_loadu_ps(kp + P + 16));
            __m256 a3 = _mm256_mul_ps(q0, _mm256_loadu_ps(kp + P + 24));
#pragma GCC unroll 16
            for (int d = 1; d < hd; d++) {
                __m256 qd = hd <= 16 ? qv[d] : _mm256_set1_ps(q[d]);
                const float *kd = kp + d * ld + P;
                a0 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kd), a0);
                a1 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kd + 8), a1);
                a2 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kd + 16), a2);
                a3 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kd + 24), a3);
            }
            a0 = _mm256_mul_ps(a0, scale), a1 = _mm256_mul_ps(a1, scale);
            a2 = _mm256_mul_ps(a2, scale), a3 = _mm256_mul_ps(a3, scale);
            _mm256_storeu_ps(p + P, a0), _mm256_storeu_ps(p + P + 8, a1);
            _mm256_storeu_ps(p + P + 16, a2), _mm256_storeu_ps(p + P + 24, a3);
            vmx = _mm256_max_ps(vmx, _mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3)));
        }
        for (; P < sg->p1; P += 8) {
            __m256 acc = _mm256_mul_ps(hd <= 16 ? qv[0] : _mm256_set1_ps(q[0]), _mm256_loadu_ps(kp + P));
#pragma GCC unroll 16
            for (int d = 1; d < hd; d++)
                acc = _mm256_fmadd_ps(hd <= 16 ? qv[d] : _mm256_set1_ps(q[d]), _mm256_loadu_ps(kp + d * ld + P), acc);
            acc = _mm256_mul_ps(acc, scale);
            _mm256_storeu_ps(p + P, acc);
            vmx = _mm256_max_ps(vmx, acc);
        }
    }
    return hmax8(vmx);
}

// One head's output from its scores (max mx): exp in place, fused into the first pass over V
// (later dim groups reread it).
AVX2_INLINE void head_values_avx2(const struct cpu_attn_token *t, const struct key_segs *ks, int g,
                                  const int hd, int n, float mx_s) {
    long ld = t->ld;
    float *restrict p = t->p + (long)g * t->pstride;
    float *restrict y = t->y + (long)g * hd;
    const __m256 mx = _mm256_set1_ps(mx_s);
    __m256 vsum = _mm256_setzero_ps();
    int d0 = 0;
    for (; d0 + 8 <= hd; d0 += 8) {  // 8 dims at a time: 8 accumulators stay in registers
        __m256 acc[8];
#pragma GCC unroll 8
        for (int dd = 0; dd < 8; dd++) acc[dd] = _mm256_setzero_ps();
        const float *vd = t->vt + d0 * ld;
        for (int si = 0; si < ks->n_seg; si++) {
            const struct key_seg *sg = &ks->seg[si];
            if (sg->edge) {
                __m256 pv = _mm256_loadu_ps(p + sg->p0);
                if (d0 == 0) {
                    pv = exp8(_mm256_sub_ps(pv, mx));
                    _mm256_storeu_ps(p + sg->p0, pv);
                    vsum = _mm256_add_ps(vsum, pv);
                }
#pragma GCC unroll 8
                for (int dd = 0; dd < 8; dd++)
                    acc[dd] = _mm256_fmadd_ps(pv, key_edge_load(vd + dd * ld, ks, sg), acc[dd]);
                continue;
            }
            const float *vp = vd + sg->base;
            for (int P = sg->p0; P < sg->p1; P += 8) {
                __m256 pv = _mm256_loadu_ps(p + P);
                if (d0 == 0) {
                    pv = exp8(_mm256_sub_ps(pv, mx));
                    _mm256_storeu_ps(p + P, pv);
                    vsum = _mm256_add_ps(vsum, pv);
                }
#pragma GCC unroll 8
                for (int dd = 0; dd < 8; dd++)
                    acc[dd] = _mm256_fmadd_ps(pv, _mm256_loadu_ps(vp + dd * ld + P), acc[dd]);
            }
        }
        float sum = hsum8(vsum);
#pragma GCC unroll 8
        for (int dd = 0; dd < 8; dd++) y[d0 + dd] = hsum8(acc[dd]) / sum;
    }
    if (d0 == 0)  // hd < 8: exp as its own pass
        for (int P = 0; P < n; P += 8) {
            __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(p + P), mx));
            _mm256_storeu_ps(p + P, e);
            vsum = _mm256_add_ps(vsum, e);
        }
    float sum = hsum8(vsum);
    for (; d0 < hd; d0++) {  // dims beyond a multiple of 8: same order, one at a time
        __m256 acc = _mm256_setzero_ps();
        const float *vd = t->vt + d0 * ld;
        for (int si = 0; si < ks->n_seg; si++) {
            const struct key_seg *sg = &ks->seg[si];
            if (sg->edge) {
                acc = _mm256_fmadd_ps(_mm256_loadu_ps(p + sg->p0), key_edge_load(vd, ks, sg), acc);
                continue;
            }
            for (int P = sg->p0; P < sg->p1; P += 8)
                acc = _mm256_fmadd_ps(_mm256_loadu_ps(p + P), _mm256_loadu_ps(vd + sg->base + P), acc);
        }
        y[d0] = hsum8(acc) / sum;
    }
    if (t->sum) t->sum[g * t->sum_stride] = sum;
}

// head_values_avx2 with hd as a literal for the common head sizes.
AVX2_INLINE void head_values_hd(const struct cpu_attn_token *t, const struct key_segs *ks, int g, int n, float mx) {
    switch (t->hd) {
    case 8: head_values_avx2(t, ks, g, 8, n, mx); break;
    case 16: head_values_avx2(t, ks, g, 16, n, mx); break;
    case 32: head_values_avx2(t, ks, g, 32, n, mx); break;
    case 64: head_values_avx2(t, ks, g, 64, n, mx); break;
    default: head_values_avx2(t, ks, g, t->hd, n, mx); break;
    }
}

// head_scores_avx2 likewise.
AVX2_INLINE float head_scores_hd(const struct cpu_attn_token *t, const struct key_segs *ks, int g, int n) {
    switch (t->hd) {
    case 8: return head_scores_avx2(t, ks, g, 8, n);
    case 16: return head_scores_avx2(t, ks, g, 16, n);
    case 32: return head_scores_avx2(t, ks, g, 32, n);
    case 64: return head_scores_avx2(t, ks, g, 64, n);
    default: return head_scores_avx2(t, ks, g, t->hd, n);
    }
}

AVX2 void cpu_attn_token_avx2(const struct cpu_attn_token *t) {
    int n0 = t->hi[0] - t->lo[0], n1 = t->hi[1] - t->lo[1], n = n0 + n1;
    struct key_segs ks;
    key_segs_init(&ks, t->lo[0], (n1 ? t->lo[1] : t->hi[0]) - (long)n0, n0, n);
    for (int g = 0; g < t->G; g++) {
        float mx = head_scores_hd(t, &ks, g, n);
        if (t->softcap > 0) mx = cpu_attn_softcap(t->p + (long)g * t->pstride, n, t->softcap);
        head_values_hd(t, &ks, g, n, mx);
    }
}

// ---- several queries at once ----------------------------------------------------------------
// Tokens whose keys map the same way (same span 0 start; no span 1, or the same span 0 end
// and span 1 start) differ only in how many keys they have, and a token's G query heads share
// its keys outright. Their work is done in sets that share loads:
//   scores  SET_Q queries x SET_NB key blocks: per head dim, SET_NB K loads and SET_Q query
//           broadcasts feed SET_Q * SET_NB independent FMA chains (one query alone: one load
//           per FMA, waiting on its chain);
//   values  up to 3 heads of one token x 4 dims: each V load feeds every head of the set.
// A query's lanes run exactly the single-token arithmetic (cpu_attn_token_avx2), in the same
// order, so the bits are the same. In the scores, lanes past a query's own keys read the
// group's later keys (real tokens) and are then set to -inf, as the single-token edge block
// does; the values read only the token's own keys.

#define SET_Q 4   // queries per set (scores)
#define SET_NB 3  // key blocks per pass (scores): 4 x 3 accumulators + 3 K + 1 broadcast = 16 ymm

// Scores of M queries over NB consecutive whole key blocks at kp + P (kp: the K plane at
// position 0 of the segment), scaled; lanes at or past ns[i] are -inf.
AVX2_INLINE void set_scores_whole(const float *kp, long ld, int hd, const int M, const int NB,
                                  const float *const *qs, float *const *ps, const int *ns, int P, __m256 scale) {
    __m256 acc[SET_Q][SET_NB];
    const float *kd = kp + P;
#pragma GCC unroll 4
    for (int i = 0; i < M; i++) {
        __m256 qb = _mm256_broadcast_ss(qs[i]);
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) acc[i][b] = _mm256_mul_ps(qb, _mm256_loadu_ps(kd + 8 * b));
    }
    for (int d = 1; d < hd; d++) {
        kd += ld;
        __m256 kv[SET_NB];
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) kv[b] = _mm256_loadu_ps(kd + 8 * b);
#pragma GCC unroll 4
        for (int i = 0; i < M; i++) {
            __m256 qb = _mm256_broadcast_ss(qs[i] + d);
#pragma GCC unroll 4
            for (int b = 0; b < NB; b++) acc[i][b] = _mm256_fmadd_ps(qb, kv[b], acc[i][b]);
        }
    }
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
#pragma GCC unroll 4
    for (int i = 0; i < M; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) {
            __m256 sc = _mm256_mul_ps(acc[i][b], scale);
            sc = _mm256_blendv_ps(ninf, sc, _mm256_castsi256_ps(lane_mask(ns[i] - P - 8 * b)));
            _mm256_storeu_ps(ps[i] + P + 8 * b, sc);
        }
}

// The same for one edge block at sg->p0 (lanes gathered from both spans).
AVX2_INLINE void set_scores_edge(const float *kt, long ld, int hd, const int M, const struct key_segs *ks,
                                 const struct key_seg *sg, const float *const *qs, float *const *ps,
                                 const int *ns, __m256 scale) {
    __m256 acc[SET_Q];
    __m256 kv = key_edge_load(kt, ks, sg);
#pragma GCC unroll 4
    for (int i = 0; i < M; i++) acc[i] = _mm256_mul_ps(_mm256_broadcast_ss(qs[i]), kv);
    for (int d = 1; d < hd; d++) {
        kv = key_edge_load(kt + d * ld, ks, sg);
#pragma GCC unroll 4
        for (int i = 0; i < M; i++) acc[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(qs[i] + d), kv, acc[i]);
    }
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
#pragma GCC unroll 4
    for (int i = 0; i < M; i++) {
        __m256 sc = _mm256_mul_ps(acc[i], scale);
        sc = _mm256_blendv_ps(ninf, sc, _mm256_castsi256_ps(lane_mask(ns[i] - sg->p0)));
        _mm256_storeu_ps(ps[i] + sg->p0, sc);
    }
}

// Scores of M <= SET_Q queries over the key blocks of ks (the group's longest token).
AVX2_INLINE void set_scores(const struct cpu_attn_token *t, const struct key_segs *ks, const int M,
                            const float *const *qs, float *const *ps, const int *ns) {
    int hd = t->hd;
    long ld = t->ld;
    const __m256 scale = _mm256_set1_ps(t->scale);
    for (int si = 0; si < ks->n_seg; si++) {
        const struct key_seg *sg = &ks->seg[si];
        if (sg->edge) {
            set_scores_edge(t->kt, ld, hd, M, ks, sg, qs, ps, ns, scale);
            continue;
        }
        const float *kp = t->kt + sg->base;
        int P = sg->p0;
        for (; P + 8 * SET_NB <= sg->p1; P += 8 * SET_NB) set_scores_whole(kp, ld, hd, M, SET_NB, qs, ps, ns, P, scale);
        for (; P < sg->p1; P += 8) set_scores_whole(kp, ld, hd, M, 1, qs, ps, ns, P, scale);
    }
}

// Softmax numerators of one query in place: e^(s - max) over its blocks [0, n rounded up to
// 8) (lanes past n hold -inf and become 0); returns their sum, lane partials over blocks in
// order.
AVX2_INLINE float softmax_exp(float *p, int n) {
    __m256 vmx = _mm256_set1_ps(-INFINITY);
    for (int P = 0; P < n; P += 8) vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(p + P));
    const __m256 mx = _mm256_set1_ps(hmax8(vmx));
    __m256 vsum = _mm256_setzero_ps();
    for (int P = 0; P < n; P += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(p + P), mx));
        _mm256_storeu_ps(p + P, e);
        vsum = _mm256_add_ps(vsum, e);
    }
    return hsum8(vsum);
}

// (hsum8(a), hsum8(b), hsum8(c), hsum8(d)) with the same additions in the same pairs: the
// four reductions side by side instead of one after another.
AVX2_INLINE __m128 hsum8x4(__m256 a, __m256 b, __m256 c, __m256 d) {
    // Lanes i and i + 4: (a | b) and (c | d) halves of four lanes each.
    __m256 ab = _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
    __m256 cd = _mm256_add_ps(_mm256_permute2f128_ps(c, d, 0x20), _mm256_permute2f128_ps(c, d, 0x31));
    // Lanes 0 + 2 and 1 + 3 of each half: (a a c c | b b d d).
    __m256 z = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
    // The two partials of each: (a c a c | b d b d), then interleaved to (a b c d).
    __m256 r = _mm256_add_ps(_mm256_shuffle_ps(z, z, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(z, z, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm_unpacklo_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
}

#define SET_D 4  // dims per pass (values): 3 heads x 4 dims + 3 weights + 1 V = 16 ymm

// Outputs of M heads of one token (weights ps[i], sums sums[i], outputs ys[i]) over the
// token's own keys ks: dims D at a time, then any tail dims one at a time.
AVX2_INLINE void set_values(const struct cpu_attn_token *t, const struct key_segs *ks, const int M, const int D,
                            float *const *ps, const float *sums, float *const *ys) {
    int hd = t->hd;
    long ld = t->ld;
    int d0 = 0;
    for (; d0 + D <= hd; d0 += D) {
        __m256 acc[3][8];
#pragma GCC unroll 3
        for (int i = 0; i < M; i++)
#pragma GCC unroll 8
            for (int dd = 0; dd < D; dd++) acc[i][dd] = _mm256_setzero_ps();
        const float *vd = t->vt + d0 * ld;
        for (int si = 0; si < ks->n_seg; si++) {
            const struct key_seg *sg = &ks->seg[si];
            if (sg->edge) {
                __m256 pv[3];
#pragma GCC unroll 3
                for (int i = 0; i < M; i++) pv[i] = _mm256_loadu_ps(ps[i] + sg->p0);
#pragma GCC unroll 8
                for (int dd = 0; dd < D; dd++) {
                    __m256 vv = key_edge_load(vd + dd * ld, ks, sg);
#pragma GCC unroll 3
                    for (int i = 0; i < M; i++) acc[i][dd] = _mm256_fmadd_ps(pv[i], vv, acc[i][dd]);
                }
                continue;
            }
            const float *vp = vd + sg->base;
            for (int P = sg->p0; P < sg->p1; P += 8) {
                __m256 pv[3];
#pragma GCC unroll 3
                for (int i = 0; i < M; i++) pv[i] = _mm256_loadu_ps(ps[i] + P);
#pragma GCC unroll 8
                for (int dd = 0; dd < D; dd++) {
                    __m256 vv = _mm256_loadu_ps(vp + dd * ld + P);
#pragma GCC unroll 3
                    for (int i = 0; i < M; i++) acc[i][dd] = _mm256_fmadd_ps(pv[i], vv, acc[i][dd]);
                }
            }
        }
#pragma GCC unroll 3
        for (int i = 0; i < M; i++)
#pragma GCC unroll 2
            for (int dd = 0; dd < D; dd += 4)
                _mm_storeu_ps(ys[i] + d0 + dd, _mm_div_ps(hsum8x4(acc[i][dd], acc[i][dd + 1], acc[i][dd + 2], acc[i][dd + 3]),
                                                          _mm_set1_ps(sums[i])));
    }
    for (; d0 < hd; d0++)  // dims beyond a multiple of D: same order, one at a time
        for (int i = 0; i < M; i++) {
            __m256 acc = _mm256_setzero_ps();
            const float *vd = t->vt + d0 * ld;
            for (int si = 0; si < ks->n_seg; si++) {
                const struct key_seg *sg = &ks->seg[si];
                if (sg->edge) {
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(ps[i] + sg->p0), key_edge_load(vd, ks, sg), acc);
                    continue;
                }
                for (int P = sg->p0; P < sg->p1; P += 8)
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(ps[i] + P), _mm256_loadu_ps(vd + sg->base + P), acc);
            }
            ys[i][d0] = hsum8(acc) / sums[i];
        }
}

AVX2 void cpu_attn_tokens_avx2(const struct cpu_attn_token *t, int n_tok) {
    int G = t->G, nq = n_tok * G, last = 0, nmax = 0;
    if (nq == 1) {  // nothing to share
        cpu_attn_token_avx2(t);
        return;
    }
    int nt[CPU_ATTN_GROUP];
    for (int i = 0; i < n_tok; i++) {
        nt[i] = t[i].hi[0] - t[i].lo[0] + t[i].hi[1] - t[i].lo[1];
        if (nt[i] > nmax) nmax = nt[i], last = i;
    }
    const struct cpu_attn_token *L = &t[last];
    int n0 = L->hi[0] - L->lo[0], n1 = L->hi[1] - L->lo[1];
    struct key_segs ks;
    key_segs_init(&ks, L->lo[0], (n1 ? L->lo[1] : L->hi[0]) - (long)n0, n0, nmax);
    for (int q0 = 0; q0 < nq; q0 += SET_Q) {
        int M = nq - q0 < SET_Q ? nq - q0 : SET_Q;
        const float *qs[SET_Q];
        float *ps[SET_Q];
        int ns[SET_Q];
        for (int i = 0; i < M; i++) {
            int tok = (q0 + i) / G, g = (q0 + i) % G;
            qs[i] = t[tok].q + (long)g * t->hd;
            ps[i] = t[tok].p + (long)g * t[tok].pstride;
            ns[i] = nt[tok];
        }
        switch (M) {  // a literal M keeps the accumulators in registers
        case 4: set_scores(t, &ks, 4, qs, ps, ns); break;
        case 3: set_scores(t, &ks, 3, qs, ps, ns); break;
        case 2: set_scores(t, &ks, 2, qs, ps, ns); break;
        default: set_scores(t, &ks, 1, qs, ps, ns); break;
        }
    }
    for (int i = 0; i < n_tok; i++) {
        const struct cpu_attn_token *ti = &t[i];
        int m0 = ti->hi[0] - ti->lo[0], m1 = ti->hi[1] - ti->lo[1];
        struct key_segs ksi;
        key_segs_init(&ksi, ti->lo[0], (m1 ? ti->lo[1] : ti->hi[0]) - (long)m0, m0, nt[i]);
        // Heads in sets of 3, then 2 (two sets of 2 rather than 3 + 1); one head alone
        // takes 8 dims per pass.
        for (int g0 = 0, M; g0 < G; g0 += M) {
            M = G - g0 == 4 ? 2 : G - g0 < 3 ? G - g0 : 3;
            float *ps[3], *ys[3], sums[3];
            for (int j = 0; j < M; j++) {
                ps[j] = ti->p + (long)(g0 + j) * ti->pstride, ys[j] = ti->y + (long)(g0 + j) * ti->hd;
                if (ti->softcap > 0) cpu_attn_softcap(ps[j], nt[i], ti->softcap);  // (softmax_exp takes the max again)
                sums[j] = softmax_exp(ps[j], nt[i]);
                if (ti->sum) ti->sum[(g0 + j) * ti->sum_stride] = sums[j];
            }
            switch (M) {
            case 3: set_values(ti, &ksi, 3, SET_D, ps, sums, ys); break;
            case 2: set_values(ti, &ksi, 2, SET_D, ps, sums, ys); break;
            default: set_values(ti, &ksi, 1, 8, ps, sums, ys); break;
            }
        }
    }
}
