// cpu_attention.h: causal attention over each token's two key spans, with the XSA epilogue.
//
// Keys and values are first transposed per kv head into (hd, ldt) planes so a kernel scores
// 8 consecutive keys with one vector op per head dimension. A task is one kv head and a run
// of CPU_ATTN_TOKENS query tokens; each token computes all query heads of that kv head
// (GQA: the K/V planes are read once for H/Hkv heads).
//
// Determinism: a token's keys are one sequence, span 0 then span 1 (positions 0..n-1), and
// every reduction runs in an order fixed by position alone: block b holds positions 8b..8b+7
// (lane i = position 8b + i; the block across the span boundary gathers from both), lane
// partials reduce in a fixed tree. So a branch token (prefix span + branch span) computes
// exactly what the same keys in one plain row do, and which task, thread or batch position a
// token lands in never changes its arithmetic. A token's weighted sum of values reads only its
// own keys; grouped scores (cpu_attn_tokens_avx2) also read group mates' later keys in the last
// blocks and set those lanes to -inf, so nothing of them reaches the token.
#ifndef XSA_KERNELS_CPU_ATTENTION_H
#define XSA_KERNELS_CPU_ATTENTION_H

#include <math.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_pool.h"

#define CPU_ATTN_TOKENS 16  // query tokens per task
#define CPU_ATTN_PAD 8      // extra floats per head of score scratch (the last short block)
#define CPU_ATTN_GROUP 4    // tokens whose scores are computed together (AVX2 kernel)
#define CPU_ATTN_GROUP_QUERIES 64  // tasks group at most this many (token, head) queries (a scheduling choice)
// Score scratch per thread for G query heads per kv head and spans of up to n keys.
#define CPU_ATTN_SCRATCH(G, n) ((long)CPU_ATTN_GROUP * (G) * ((n) + CPU_ATTN_PAD))
// Extra floats per row of the transposed K/V planes: with t_cap a multiple of 64, rows a
// multiple of 4 KiB apart would all fall in one L1 set, and a key block's hd loads would
// evict each other.
#define CPU_ATTN_LD_PAD 16

enum cpu_attn_kind {
    CPU_ATTN_AVX2 = 1,    // AVX2 + FMA kernel
    CPU_ATTN_SCALAR = 2,  // portable C, same blocking; agrees with AVX2 to float rounding
};

struct cpu_attention_args {
    const float *q;        // (T, H*hd) after RoPE
    const float *k;        // (T, Hkv*hd) after RoPE
    const float *v;        // (T, Hkv*hd)
    float *out;            // (T, H*hd) per-head outputs, z (XSA) or y (SA)
    const int32_t *span0_lo, *span0_hi, *span1_lo, *span1_hi;  // (T)
    int T, H, Hkv, hd;
    int xsa;               // 1: z = y - (y.v / |v|^2) v with v the token's own value vector
    enum cpu_attn_kind kind;
    float *kt, *vt;        // (Hkv*hd, ldt) scratch: K and V transposed, row kvh*hd + d (AVX2)
    long ldt;              // >= T
    const int32_t *rows;   // NULL: queries are tokens 0..T-1. Else n_rows queries, query i is
    int n_rows;            //   token rows[i] (q and out are then (n_rows, H*hd); k, v, spans by token)
    float *scratch;        // (n_threads, scratch_stride) attention weights
    long scratch_stride;   // >= CPU_ATTN_SCRATCH(H/Hkv, longest span0 + span1)
    const float *xsa_gate; // (H) gated XSA: z = y - g_h (y.v / max(|v|^2, 1e-8)) v; NULL: plain
    int window;            // sliding window: a token reads only its last `window` keys (0: all),
                           //   its spans cut by xsa_window_spans before any kernel sees them
    // Attention statistics (backend.h's probe), or NULL: token t with probe_row[t] = r >= 0
    // writes probe[r * probe_stride + h * BACKEND_PROBE_STATS + k] for its query heads h.
    float *probe;
    long probe_stride;
    const int32_t *probe_row;  // (T)
    float scale;           // the scores' scale (gemma3_text's query_pre_attn_scalar^-1/2); 0: hd^-1/2
    float softcap;         // scores c tanh(s / c) after the scale (gemma2's attn_logit_softcapping); 0: none
};

// One query token's heads that share a kv head (the kernel's unit of work).
struct cpu_attn_token {
    const float *q;        // (G, hd)
    const float *kt, *vt;  // (hd, ld) the kv head's transposed planes (AVX2 kernel)
    long ld;
    const float *k, *v;    // (keys, ks) the kv head's rows in place (scalar kernel)
    long ks;
    int lo[2], hi[2];      // key spans, visited span 0 then span 1
    int G, hd;
    float scale;           // hd^-1/2
    float softcap;         // c tanh(s / c) on the scaled scores (cpu_attn_softcap); 0: none
    float *p;              // (G, pstride) scratch
    long pstride;          // >= span lengths + CPU_ATTN_PAD
    float *y;              // (G, hd) out: softmax(q.k * scale) @ v
    float *sum;            // out when not NULL: head g's softmax denominator at sum[g * sum_stride]
    long sum_stride;       // (probe's a_ii divides by the kernel's own sum instead of adding again)
};

// Picks AVX2 on CPUs with AVX2 + FMA, else scalar; force ("avx2" | "scalar", from
// XSA_CPU_ATTN; NULL or "" = pick) overrides. Returns the kind, or -1 when force names
// something unknown or that this CPU cannot run.
int cpu_attention_pick(const char *force);
const char *cpu_attention_kind_name(enum cpu_attn_kind kind);

void cpu_attention(struct cpu_pool *pool, const struct cpu_attention_args *a);

// Scores p[0..n) soft-capped in place, c tanh(p / c) in float32 as transformers' eager attention
// computes it (divide, tanh, multiply), element by element so every kernel gets the same bits
// from the same scores; returns their max. The lanes past n (-inf) are left as they are.
static inline float cpu_attn_softcap(float *p, int n, float c) {
    float mx = -INFINITY;
    for (int i = 0; i < n; i++) {
        p[i] = c * tanhf(p[i] / c);
        if (p[i] > mx) mx = p[i];
    }
    return mx;
}

// Kernels (cpu_attention_ref.c: the plain reference; cpu_attention_avx2.c); exposed for tests
// and benchmarks.
void cpu_attn_token_avx2(const struct cpu_attn_token *t);
// n_tok <= CPU_ATTN_GROUP tokens of one kv head whose keys map alike (same span0 start, and no
// span 1 for all or the same span 0 end and span 1 start for all): the same results as
// cpu_attn_token_avx2 on each, bit for bit.
void cpu_attn_tokens_avx2(const struct cpu_attn_token *t, int n_tok);
void cpu_attn_token_scalar(const struct cpu_attn_token *t);
// y[i] = e^x[i] for x[i] <= 88 (softmax arguments are <= 0); 0 below ln(FLT_MIN), NaN stays
// NaN. Max error 1.2 ulp (scalar) / 0.9 ulp (AVX2) against the exact value.
void cpu_attn_exp_avx2(const float *x, float *y, int n);
void cpu_attn_exp_scalar(const float *x, float *y, int n);

#endif
