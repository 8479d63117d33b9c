// cpu_attention_ref.c: the reference attention kernel, plain C: one query token's heads of one
// kv head, three passes over its keys (scores and max, exp and sum, weights @ V), reading the
// K/V rows in place. The fast kernels (cpu_attention_avx2.c) compute the same sums in the same
// order from transposed planes and differ from this one only in FMA rounding; the tests hold
// them to it (tests/test_cpu_attention.c).
//
// Per key block (lane i = key position 8b + i, see cpu_attention.h): score = ((q0 k0 + q1 k1) + q2 k2) ... in d order, times
// scale; lane sums of exp and of p * v run over blocks in order; 8 lanes reduce as
// (l0 + l4, l1 + l5, l2 + l6, l3 + l7) -> (a0 + a2, a1 + a3) -> b0 + b1.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_attention_exp.h"

static float exp_one(float x) {
    if (x != x) return x;
    if (x < EXP_LO) return 0.0f;
    if (x > EXP_HI) x = EXP_HI;
    float n = (x * EXP_LOG2E + EXP_ROUND) - EXP_ROUND;
    float r = x - n * EXP_LN2_HI;
    r = r - n * EXP_LN2_LO;
    float y = EXP_C7;
    y = y * r + EXP_C6;
    y = y * r + EXP_C5;
    y = y * r + EXP_C4;
    y = y * r + EXP_C3;
    y = y * r + EXP_C2;
    y = y * r + 1.0f;
    y = y * r + 1.0f;
    uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float s;
    memcpy(&s, &bits, sizeof s);
    return y * s;
}

void cpu_attn_exp_scalar(const float *x, float *y, int n) {
    for (int i = 0; i < n; i++) y[i] = exp_one(x[i]);
}

static float sum8(const float *l) {
    float a0 = l[0] + l[4], a1 = l[1] + l[5], a2 = l[2] + l[6], a3 = l[3] + l[7];
    return (a0 + a2) + (a1 + a3);
}

// ---- scalar kernel -------------------------------------------------------------------------
// Reads K and V rows in place (contiguous head dims) rather than the transposed planes.

#define SCALAR_DIMS 64  // head dims per pass over the keys (lane accumulators on the stack)

// Key position i of a token (0 <= i < n) is key index i < n0 ? a0 + i : a1 + i.
static void head_scalar(const struct cpu_attn_token *t, int g, int n0, int n, long a0, long a1) {
    int hd = t->hd;
    long ks = t->ks;
    const float *restrict q = t->q + (long)g * hd;
    float *restrict p = t->p + (long)g * t->pstride;  // (n rounded up to 8)
    float *restrict y = t->y + (long)g * hd;
    float mx = -INFINITY;
    for (int i = 0; i < n; i++) {
        const float *kj = t->k + (i < n0 ? a0 + i : a1 + i) * ks;
        float acc = q[0] * kj[0];
        for (int d = 1; d < hd; d++) acc = acc + q[d] * kj[d];
        p[i] = acc * t->scale;
        if (p[i] > mx) mx = p[i];
    }
    if (t->softcap > 0) mx = cpu_attn_softcap(p, n, t->softcap);
    float lane[8] = {0};
    for (int i = 0; i < n; i++) {
        p[i] = exp_one(p[i] - mx);
        lane[i % 8] += p[i];
    }
    float sum = sum8(lane);
    if (t->sum) t->sum[g * t->sum_stride] = sum;
    for (int d0 = 0; d0 < hd; d0 += SCALAR_DIMS) {
        int nd = hd - d0 < SCALAR_DIMS ? hd - d0 : SCALAR_DIMS;
        float acc[8][SCALAR_DIMS] = {{0}};
        for (int i = 0; i < n; i++) {
            const float *vj = t->v + (i < n0 ? a0 + i : a1 + i) * ks + d0;
            float *a = acc[i % 8], pi = p[i];
            for (int d = 0; d < nd; d++) a[d] += pi * vj[d];
        }
        for (int d = 0; d < nd; d++) {
            float l[8];
            for (int u = 0; u < 8; u++) l[u] = acc[u][d];
            y[d0 + d] = sum8(l) / sum;
        }
    }
}

void cpu_attn_token_scalar(const struct cpu_attn_token *t) {
    int n0 = t->hi[0] - t->lo[0], n1 = t->hi[1] - t->lo[1];
    long a1 = (n1 ? t->lo[1] : t->hi[0]) - (long)n0;
    for (int g = 0; g < t->G; g++) head_scalar(t, g, n0, n0 + n1, t->lo[0], a1);
}
