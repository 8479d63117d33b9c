// random_model.h: small random-weight models built in memory, for the backend tests and the
// forward benchmark (header-only: each tests/test_*.c and bench/bench_*.c is its own program).
#ifndef XSA_TESTS_RANDOM_MODEL_H
#define XSA_TESTS_RANDOM_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "model/model.h"

struct random_model_spec {
    enum model_arch arch;
    enum rope_style rope;  // llama: ROPE_HALF or ROPE_ADJACENT
    int n_layer, n_head, n_kv_head, head_dim, d_model, d_ff, vocab_size, max_seq_len;
    int tied;              // lm_head = tok_emb
    int biases;            // llama: add q/k/v/o and MLP biases too
    uint64_t seed;
};

// splitmix64 -> uniform in [-1, 1)
static inline float random_model_uniform(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((double)(z >> 11) / 4503599627370496.0 - 1.0);
}

// Takes n floats from the arena cursor and fills them with base + scale * U[-1, 1).
static inline float *random_model_take(float **cur, long n, float base, float scale, uint64_t *s) {
    float *p = *cur;
    *cur += n;
    for (long i = 0; i < n; i++) p[i] = base + scale * random_model_uniform(s);
    return p;
}

// Fills m with random weights (scaled by fan-in so activations stay O(1)).
static inline void random_model_init(struct model *m, const struct random_model_spec *sp) {
    memset(m, 0, sizeof *m);
    struct model_config *c = &m->cfg;
    int gpt2 = sp->arch == MODEL_ARCH_GPT2;
    c->arch = sp->arch;
    c->rope = gpt2 ? ROPE_NONE : sp->rope;
    c->n_layer = sp->n_layer;
    c->n_head = sp->n_head;
    c->n_kv_head = gpt2 ? sp->n_head : sp->n_kv_head;
    c->head_dim = sp->head_dim;
    c->d_model = sp->d_model;
    c->d_ff = sp->d_ff;
    c->vocab_size = sp->vocab_size;
    c->max_seq_len = sp->max_seq_len;
    c->norm_eps = gpt2 ? 1e-5f : 1e-6f;
    c->rope_theta = 10000.0f;
    c->tied_head = sp->tied;
    c->bos_id = c->eos_id = -1;
    long C = c->d_model, Q = (long)c->n_head * c->head_dim, KV = (long)c->n_kv_head * c->head_dim,
         F = c->d_ff, V = c->vocab_size, L = c->n_layer;
    int b = gpt2 || sp->biases;
    long per_layer = 2 * C + Q * C + KV * C * 2 + C * Q + 2 * C + F * C * (gpt2 ? 1 : 2) + C * F +
                     (b ? Q + 2 * KV + C + F * (gpt2 ? 1 : 2) + C : 0) + (gpt2 ? 2 * C : 0);
    long total = V * C * (sp->tied ? 1 : 2) + (gpt2 ? (long)c->max_seq_len * C : 0) + 2 * C + L * per_layer;
    float *arena = xsa_malloc((size_t)total * sizeof(float));
    m->layers = xsa_calloc((size_t)L, sizeof *m->layers);
    m->arena = arena;
    m->arena_bytes = (size_t)total * sizeof(float);
    uint64_t s = sp->seed;
    float *cur = arena;
    m->tok_emb = random_model_take(&cur, V * C, 0, 0.5f, &s);
    if (gpt2) m->pos_emb = random_model_take(&cur, (long)c->max_seq_len * C, 0, 0.3f, &s);
    for (int l = 0; l < L; l++) {
        struct layer_weights *w = &m->layers[l];
        float gC = 1.7f / sqrtf((float)C), gQ = 1.7f / sqrtf((float)Q), gF = 1.7f / sqrtf((float)F);
        w->attn_norm_w = random_model_take(&cur, C, 1, 0.2f, &s);
        if (gpt2) w->attn_norm_b = random_model_take(&cur, C, 0, 0.1f, &s);
        w->wq = random_model_take(&cur, Q * C, 0, gC, &s);
        w->wk = random_model_take(&cur, KV * C, 0, gC, &s);
        w->wv = random_model_take(&cur, KV * C, 0, gC, &s);
        w->wo = random_model_take(&cur, C * Q, 0, gQ, &s);
        w->mlp_norm_w = random_model_take(&cur, C, 1, 0.2f, &s);
        if (gpt2) w->mlp_norm_b = random_model_take(&cur, C, 0, 0.1f, &s);
        if (!gpt2) w->w_gate = random_model_take(&cur, F * C, 0, gC, &s);
        w->w_up = random_model_take(&cur, F * C, 0, gC, &s);
        w->w_down = random_model_take(&cur, C * F, 0, gF, &s);
        if (b) {
            w->bq = random_model_take(&cur, Q, 0, 0.1f, &s);
            w->bk = random_model_take(&cur, KV, 0, 0.1f, &s);
            w->bv = random_model_take(&cur, KV, 0, 0.1f, &s);
            w->bo = random_model_take(&cur, C, 0, 0.1f, &s);
            if (!gpt2) w->b_gate = random_model_take(&cur, F, 0, 0.1f, &s);
            w->b_up = random_model_take(&cur, F, 0, 0.1f, &s);
            w->b_down = random_model_take(&cur, C, 0, 0.1f, &s);
        }
    }
    m->final_norm_w = random_model_take(&cur, C, 1, 0.2f, &s);
    if (gpt2) m->final_norm_b = random_model_take(&cur, C, 0, 0.1f, &s);
    m->lm_head = sp->tied ? m->tok_emb : random_model_take(&cur, V * C, 0, 0.5f, &s);
    if (cur - arena > total) abort();  // the size formula above must cover every take
    m->n_params = cur - arena;
    snprintf(m->path, sizeof m->path, "random-%s-seed%llu", gpt2 ? "gpt2" : "llama",
             (unsigned long long)sp->seed);
    snprintf(m->format, sizeof m->format, "random");
    snprintf(m->dtype, sizeof m->dtype, "F32");
    snprintf(m->xsa_source, sizeof m->xsa_source, "none");

}

static inline void random_model_free(struct model *m) {
    free(m->arena);
    free(m->layers);
    memset(m, 0, sizeof *m);
}

#endif
