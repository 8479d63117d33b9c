// cpu_attention.h: causal attention over each token's two key spans, with the XSA epilogue.
#ifndef XSA_KERNELS_CPU_ATTENTION_H
#define XSA_KERNELS_CPU_ATTENTION_H

#include <stdint.h>

#include "kernels/cpu/cpu_pool.h"

struct cpu_attention_args {
    const float *q;        // (T, H*hd) after RoPE
    const float *k;        // (T, Hkv*hd) after RoPE
    const float *v;        // (T, Hkv*hd)
    float *out;            // (T, H*hd) per-head outputs, z (XSA) or y (SA)
    const int32_t *span0_lo, *span0_hi, *span1_lo, *span1_hi;  // (T)
    int T, H, Hkv, hd;
    int xsa;               // 1: z = y - (y.v / |v|^2) v with v the token's own value vector
    float *scratch;        // (n_threads, scratch_stride) attention weights
    long scratch_stride;   // >= longest span0 + span1
};

// One task per (token, head); keys visited span0 then span1 in increasing index.
void cpu_attention(struct cpu_pool *pool, const struct cpu_attention_args *a);

#endif
