// cpu_attention.c: transposes K and V into per-kv-head planes, then runs tasks of
// (kv head, CPU_ATTN_TOKENS queries: every token, or the tokens a->rows lists) through the
// chosen kernel, in groups of consecutive tokens whose keys map alike (AVX2), and applies
// XSA's projection off the token's own value vector.
#include "kernels/cpu/cpu_attention.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cuda/cuda_math.h"

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

// dst[c][t] = src[t][c] for 8 tokens x 8 columns (src row stride ss, dst row stride ds).
__attribute__((target("avx2"))) static void transpose8x8(const float *src, long ss, float *dst, long ds) {
    __m256 r[8], u[8];
    for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_ps(src + j * ss);
    for (int j = 0; j < 8; j += 2) {
        u[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
        u[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
    }
    for (int j = 0; j < 8; j += 4) {  // pairs of pairs: (0 1 4 5 | ...) lanes of four rows
        r[j] = _mm256_shuffle_ps(u[j], u[j + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[j + 1] = _mm256_shuffle_ps(u[j], u[j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[j + 2] = _mm256_shuffle_ps(u[j + 1], u[j + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[j + 3] = _mm256_shuffle_ps(u[j + 1], u[j + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; j++) {  // halves of rows 0-3 and 4-7 meet
        _mm256_storeu_ps(dst + j * ds, _mm256_permute2f128_ps(r[j], r[j + 4], 0x20));
        _mm256_storeu_ps(dst + (j + 4) * ds, _mm256_permute2f128_ps(r[j], r[j + 4], 0x31));
    }
}

// kt[kvh*hd + d][t] = k[t][kvh*hd + d] for a run of tokens (same for v): 8 x 8 blocks,
// then the edges one float at a time. Only the AVX2 kernel reads the planes, so only it
// runs this.
static void transpose_task(void *ctx, int i, int w) {
    (void)w;
    const struct cpu_attention_args *a = ctx;
    int KV = a->Hkv * a->hd, t0 = i * TRANSPOSE_TOKENS;
    int t1 = t0 + TRANSPOSE_TOKENS < a->T ? t0 + TRANSPOSE_TOKENS : a->T;
    int tv = t0 + (t1 - t0) / 8 * 8, cv = KV / 8 * 8;  // [t0, tv) x [0, cv) in blocks
    for (int t = t0; t < tv; t += 8)
        for (int c = 0; c < cv; c += 8) {
            transpose8x8(a->k + (long)t * KV + c, KV, a->kt + (long)c * a->ldt + t, a->ldt);
            transpose8x8(a->v + (long)t * KV + c, KV, a->vt + (long)c * a->ldt + t, a->ldt);
        }
    for (int c = 0; c < KV; c++) {
        float *kt = a->kt + c * a->ldt, *vt = a->vt + c * a->ldt;
        for (int t = c < cv ? tv : t0; t < t1; t++) {
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

// The token's statistics (cpu_attention_args.probe) for its heads of one kv head: a_ii from
// the kernel's softmax numerators left in p (the token itself is its last key, n - 1) over the
// denominator the kernel left in the a_ii slot, cos(y, v) now, cos(z, v) after the projection.
static void probe_before(const struct cpu_attn_token *tk, const float *vo, float *out) {
    int n = tk->hi[0] - tk->lo[0] + tk->hi[1] - tk->lo[1];
    for (int g = 0; g < tk->G; g++) {
        const float *p = tk->p + (long)g * tk->pstride;
        float *o = out + (long)g * BACKEND_PROBE_STATS;
        o[BACKEND_PROBE_AII] = p[n - 1] / o[BACKEND_PROBE_AII];
        o[BACKEND_PROBE_COS_Y] = o[BACKEND_PROBE_COS_Z] = (float)cpu_cosine(tk->y + (long)g * tk->hd, vo, tk->hd);
    }
}

// Gated XSA (modded-nanogpt): z = y - g (y.v / max(|v|^2, 1e-8)) v, g = tanh(alpha).
static void xsa_project_gated(float *y, const float *vo, int hd, float g) {
    double yv = 0, vv = 0;
    for (int d = 0; d < hd; d++) {
        yv += (double)y[d] * vo[d];
        vv += (double)vo[d] * vo[d];
    }
    float c = g * (float)(yv / (vv > 1e-8 ? vv : 1e-8));
    for (int d = 0; d < hd; d++) y[d] -= c * vo[d];
}

// The token that query i attends from.
static inline int query_token(const struct cpu_attention_args *a, int i) { return a->rows ? a->rows[i] : i; }

// Token t's key spans as the kernels read them: the batch's, cut to the sliding window.
static void token_spans(const struct cpu_attention_args *a, int t, int lo[2], int hi[2]) {
    lo[0] = a->span0_lo[t], hi[0] = a->span0_hi[t], lo[1] = a->span1_lo[t], hi[1] = a->span1_hi[t];
    xsa_window_spans(lo, hi, a->window);
}

// Do tokens s and t read their keys the same way (cpu_attn_tokens_avx2's condition)?
static int same_key_map(const struct cpu_attention_args *a, int s, int t) {
    int ls[2], hs[2], lt[2], ht[2];
    token_spans(a, s, ls, hs);
    token_spans(a, t, lt, ht);
    if (ls[0] != lt[0]) return 0;
    int b1s = hs[1] > ls[1], b1t = ht[1] > lt[1];
    if (!b1s && !b1t) return 1;
    return b1s && b1t && hs[0] == ht[0] && ls[1] == lt[1];
}

static void attention_task(void *ctx, int i, int w) {
    const struct cpu_attention_args *a = ctx;
    int nq = a->rows ? a->n_rows : a->T;  // queries
    int n_chunks = (nq + CPU_ATTN_TOKENS - 1) / CPU_ATTN_TOKENS;
    // Latest tokens (longest spans) first: the pool's dynamic claiming then balances better.
    int chunk = n_chunks - 1 - i / a->Hkv, kvh = i % a->Hkv;
    int hd = a->hd, G = a->H / a->Hkv;
    int group = a->kind == CPU_ATTN_AVX2 ? CPU_ATTN_GROUP_QUERIES / G : 1;
    if (group > CPU_ATTN_GROUP) group = CPU_ATTN_GROUP;
    if (group < 1) group = 1;
    long qs = (long)a->H * hd, ks = (long)a->Hkv * hd, plane = (long)kvh * hd * a->ldt;
    long pstride = a->scratch_stride / ((long)CPU_ATTN_GROUP * G);
    struct cpu_attn_token tk[CPU_ATTN_GROUP];
    for (int j = 0; j < group; j++)
        tk[j] = (struct cpu_attn_token){
            .kt = a->kt + plane, .vt = a->vt + plane, .ld = a->ldt,
            .k = a->k + (long)kvh * hd, .v = a->v + (long)kvh * hd, .ks = ks, .G = G, .hd = hd,
            .scale = a->scale != 0 ? a->scale : 1.0f / sqrtf((float)hd), .softcap = a->softcap, .p = a->scratch + (long)w * a->scratch_stride + j * G * pstride,
            .pstride = pstride, .sum_stride = BACKEND_PROBE_STATS,
        };
    int i1 = (chunk + 1) * CPU_ATTN_TOKENS < nq ? (chunk + 1) * CPU_ATTN_TOKENS : nq;
    for (int i0 = chunk * CPU_ATTN_TOKENS, n; i0 < i1; i0 += n) {
        n = 1;
        while (n < group && i0 + n < i1 && same_key_map(a, query_token(a, i0), query_token(a, i0 + n))) n++;
        for (int j = 0; j < n; j++) {
            int t = query_token(a, i0 + j), r = a->probe ? a->probe_row[t] : -1;
            tk[j].q = a->q + (i0 + j) * qs + (long)kvh * G * hd;
            tk[j].y = a->out + (i0 + j) * qs + (long)kvh * G * hd;
            // a scored token's statistics: the kernel leaves each head's denominator in its a_ii slot
            tk[j].sum = r >= 0 ? a->probe + r * a->probe_stride + (long)kvh * G * BACKEND_PROBE_STATS + BACKEND_PROBE_AII : NULL;
            token_spans(a, t, tk[j].lo, tk[j].hi);
        }
        if (a->kind == CPU_ATTN_AVX2)
            cpu_attn_tokens_avx2(tk, n);
        else
            cpu_attn_token_scalar(&tk[0]);
        for (int j = 0; j < n; j++) {
            int t = query_token(a, i0 + j);
            const float *vo = a->v + (long)t * ks + (long)kvh * hd;
            float *po = tk[j].sum ? tk[j].sum - BACKEND_PROBE_AII : NULL;
            if (po) probe_before(&tk[j], vo, po);
            for (int g = 0; a->xsa && g < G; g++) {
                if (a->xsa_gate) xsa_project_gated(tk[j].y + (long)g * hd, vo, hd, a->xsa_gate[kvh * G + g]);
                else xsa_project(tk[j].y + (long)g * hd, vo, hd);
                if (po) po[g * BACKEND_PROBE_STATS + BACKEND_PROBE_COS_Z] = (float)cpu_cosine(tk[j].y + (long)g * hd, vo, hd);
            }
        }
    }
}

void cpu_attention(struct cpu_pool *pool, const struct cpu_attention_args *a) {
    if (a->kind == CPU_ATTN_AVX2)
        cpu_pool_run(pool, (a->T + TRANSPOSE_TOKENS - 1) / TRANSPOSE_TOKENS, transpose_task, (void *)a);
    int nq = a->rows ? a->n_rows : a->T;
    cpu_pool_run(pool, (nq + CPU_ATTN_TOKENS - 1) / CPU_ATTN_TOKENS * a->Hkv, attention_task, (void *)a);
}
