// cpu_state.h: the CPU backend's private state and the debug probe (kernels/cpu and tests).
#ifndef XSA_KERNELS_CPU_STATE_H
#define XSA_KERNELS_CPU_STATE_H

#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_logits.h"
#include "kernels/cpu/cpu_pool.h"

// A layer's weights packed for the AVX-512 kernel (cpu_gemm_pack).
struct cpu_packed_layer {
    const float *wq, *wk, *wv, *wo, *w_gate, *w_up, *w_down;  // w_gate NULL without a gate
};

struct cpu_state {
    const struct model *m;
    // Weights packed once at open when the AVX-512 kernel runs; NULL otherwise, or when there
    // is no memory for them (the kernel then packs each tile as it goes: same bits, slower).
    float *pk_mem;                // one allocation holding every packed matrix
    struct cpu_packed_layer *pk;  // (n_layer)
    const float *pk_head;         // lm_head packed
    struct cpu_pool *pool;
    int n_threads;
    enum cpu_gemm_kind gemm;  // chosen once at open (cpu_gemm_pick)
    enum cpu_attn_kind attn;  // chosen once at open (cpu_attention_pick)
    // Activations, sized for t_cap tokens (a multiple of CPU_GEMM_ROWS); grown, never per token.
    int t_cap;
    float *x;          // (t_cap, C) residual stream
    float *xn;         // (t_cap, C) normed input of a block
    float *q;          // (t_cap, H*hd)
    float *k, *v;      // (t_cap, Hkv*hd)
    float *att;        // (t_cap, H*hd) attention output per head (after XSA)
    float *o;          // (t_cap, C) block output before the residual add
    float *o2;         // (t_cap, C) attention output waiting for the MLP's (parallel residual)
    float *ff, *ff2;   // (t_cap, F) MLP hidden (ff2: llama's up projection)
    float *rope_cos, *rope_sin;  // (t_cap, rope_dims/2)
    float *rope_cos_local, *rope_sin_local;  // the same for sliding-window layers with their own base (rope_local_theta), or NULL
    float *x0;         // (t_cap, C) the embedding the blocks mix back in (resid_mix), else NULL
    float *skip;       // (n_layer/2, t_cap, C) U-Net encoder outputs (unet_skips), else NULL
    float *v0;         // (t_cap, Hkv*hd) layer 0's v (value_residual), else NULL
    float *dtg_in;     // (t_cap, C + 1) a DTG block's input row and its gate, else NULL
    float *lane1;      // (t_cap, C) the second residual lane (lanes_from; st->x is the first), else NULL
    float *att_p;      // (n_threads, att_stride) attention weights
    long att_stride;   // CPU_ATTN_SCRATCH(H/Hkv, t_cap)
    float *kt, *vt;    // (Hkv*hd, t_ld) K and V transposed for attention
    long t_ld;         // t_cap + CPU_ATTN_LD_PAD
    // Logits at scored rows.
    float *hrows;      // (t_cap, C) final-normed hidden rows of distinct scored tokens
    float *erows;      // (t_cap, E) opt's word_embed_proj_dim rows: the embeddings before project_in, the
                       //   hidden rows after project_out (model_config.embed_dim; else NULL)
    int32_t *row_of;   // (t_cap) row of a token index, -1 when not scored
    int32_t *row_tok;  // (t_cap) token index of a row
    int32_t *row_first;  // (t_cap + 1)
    double *row_lse;       // (t_cap) per scored row, when a batch asks for distributions
    // During a forward with batch.probe: scored row of each token (-1: none) and each row's
    // statistics (R, n_layer, n_head, BACKEND_PROBE_STATS); NULL otherwise.
    int32_t *probe_row;
    float *probe_rows;
    struct cpu_chunk_stat *stats;  // (t_cap, n_chunks)
    float *lg;         // (n_threads, CPU_GEMM_ROWS * CPU_VOCAB_CHUNK)
    int s_cap;
    int32_t *row_entries;  // (s_cap)
    float *entry_logit;    // (s_cap)
};

// Debug probe: copies of one layer's activations taken during a forward.
struct cpu_probe {
    int layer;
    float *attn;  // (T, H*hd) per-head attention outputs after XSA (before the output projection)
    float *v;     // (T, Hkv*hd) value vectors
};

// modded-nanogpt's GPT on a validated batch (cpu_mnanogpt.c).
void cpu_forward_mnanogpt(struct cpu_state *st, const struct score_batch *b, float *logprob, uint8_t *greedy);

// The records' bigram/trigram row: their hash h (36313 t xor 27191 t_prev ...) is computed in
// int32, which wraps once the products pass 2^31 (token ids past 59,000; modded-nanogpt's
// 27191 (V_b - 1) past 78,978 rows), and torch's % takes the divisor's sign (Python's): a row in
// [0, mod) for every h, never C's negative remainder.
static inline int32_t cpu_hash_row(uint32_t h, int32_t mod) {
    int64_t v = h >= UINT32_C(0x80000000) ? (int64_t)h - (INT64_C(1) << 32) : (int64_t)h;
    return (int32_t)((v % mod + mod) % mod);
}

// Packed index of the token before t in its sequence (a branch's first token follows the
// prefix's last; a row after a cut, batch.before's), or -1 at position 0 (cpu_forward.c).
int cpu_prev_token(const struct score_batch *b, int t);

// The forward pass of a validated batch (cpu_forward.c).
void cpu_forward(struct cpu_state *st, const struct score_batch *b, float *logprob,
                 uint8_t *greedy, const struct cpu_probe *probe);

// be->score with a probe (probe may be NULL). For tests; be must be a CPU backend.
int cpu_backend_score_probe(struct backend *be, const struct score_batch *b, float *logprob,
                            uint8_t *greedy, const struct cpu_probe *probe, xsa_error *err);

#endif
