// cpu_attention.c: transposes K and V into per-kv-head planes, then runs tasks of
// (kv head, CPU_ATTN_TOKENS query tokens) through the chosen kernel and applies XSA's
// projection off the token's own value vector.
#include "kernels/cpu/cpu_attention.h"

#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu_gemm.h"

#define TRANSPOSE_TOKENS 64

int cpu_attention_pick(const char *force) {
    int avx2 = cpu_gemm_have_avx2();
    if (!force || !*force) return avx2 ? CPU_ATTN_AVX2 : CPU_ATTN_SCALAR;
    if (!strcmp(force, "scalar")) return CPU_ATTN_SCALAR;
    if (!strcmp(force, "avx2") && avx2) return CPU_ATTN_AVX2;
    return -1;
}

const char *cpu_attention_kind_name(enum cpu_attn_kind kind) {
    return kind == CPU_ATTN_AVX2 ? "AVX2 attention" : "C attention";
}

// kt[kvh*hd + d][t] = k[t][kvh*hd + d] for a run of tokens (same for v).
static void transpose_task(void *ctx, int i, int w) {
    (void)w;
    const struct cpu_attention_args *a = ctx;
    int KV = a->Hkv * a->hd, t0 = i * TRANSPOSE_TOKENS;
    int t1 = t0 + TRANSPOSE_TOKENS < a->T ? t0 + TRANSPOSE_TOKENS : a->T;
    for (int c = 0; c < KV; c++) {
        float *kt = a->kt + c * a->ldt, *vt = a->vt + c * a->ldt;
        for (int t = t0; t < t1; t++) {
            kt[t] = a->k[(long)t * KV + c];
            vt[t] = a->v[(long)t * KV + c];
        }
    }
}

// z = y - (y.v / |v|^2) v for one head's output y and the token's own value vector v.
static void xsa_project(float *y, const float *vo, int hd) {
    double yv = 0, vv = 0;
    for (int d = 0; d < hd; d++) {
        yv += (double)y[d] * vo[d];
        vv += (double)vo[d] * vo[d];
    }
    if (vv == 0) return;
    float c = (float)(yv / vv);
    for (int d = 0; d < hd; d++) y[d] -= c * vo[d];
}

static void attention_task(void *ctx, int i, int w) {
    const struct cpu_attention_args *a = ctx;
    int n_chunks = (a->T + CPU_ATTN_TOKENS - 1) / CPU_ATTN_TOKENS;
    // Latest tokens (longest spans) first: the pool's dynamic claiming then balances better.
    int chunk = n_chunks - 1 - i / a->Hkv, kvh = i % a->Hkv;
    int hd = a->hd, G = a->H / a->Hkv;
    long qs = (long)a->H * hd, ks = (long)a->Hkv * hd, plane = (long)kvh * hd * a->ldt;
    struct cpu_attn_token tk = {
        .kt = a->kt + plane, .vt = a->vt + plane, .ld = a->ldt,
        .k = a->k + (long)kvh * hd, .v = a->v + (long)kvh * hd, .ks = ks, .G = G, .hd = hd,
        .scale = 1.0f / sqrtf((float)hd), .p = a->scratch + (long)w * a->scratch_stride,
        .pstride = a->scratch_stride / G,
    };
    int t1 = (chunk + 1) * CPU_ATTN_TOKENS < a->T ? (chunk + 1) * CPU_ATTN_TOKENS : a->T;
    for (int t = chunk * CPU_ATTN_TOKENS; t < t1; t++) {
        tk.q = a->q + t * qs + (long)kvh * G * hd;
        tk.y = a->out + t * qs + (long)kvh * G * hd;
        tk.lo[0] = a->span0_lo[t], tk.hi[0] = a->span0_hi[t];
        tk.lo[1] = a->span1_lo[t], tk.hi[1] = a->span1_hi[t];
        if (a->kind == CPU_ATTN_AVX2)
            cpu_attn_token_avx2(&tk);
        else
            cpu_attn_token_scalar(&tk);
        if (a->xsa)
            for (int g = 0; g < G; g++) xsa_project(tk.y + (long)g * hd, a->v + t * ks + (long)kvh * hd, hd);
    }
}

void cpu_attention(struct cpu_pool *pool, const struct cpu_attention_args *a) {
    if (a->kind == CPU_ATTN_AVX2)
        cpu_pool_run(pool, (a->T + TRANSPOSE_TOKENS - 1) / TRANSPOSE_TOKENS, transpose_task, (void *)a);
    cpu_pool_run(pool, (a->T + CPU_ATTN_TOKENS - 1) / CPU_ATTN_TOKENS * a->Hkv, attention_task, (void *)a);
}
