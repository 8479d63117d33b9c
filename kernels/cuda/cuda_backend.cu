// cuda_backend.cu: the CUDA backend (libxsa_cuda.so, opened by kernels/backend.c with dlopen):
// device checks, weights on the device (bf16, or fp32 for parity runs), activation buffers
// sized from free memory, and the forward of a packed batch in sub-batches of whole rows.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_internal.cuh"

#define CU_MAX_TOKENS BACKEND_MAX_TOKENS
#define CU_VOCAB_CHUNK 16384               // vocabulary ids per logits GEMM
#define CU_MEM_MARGIN ((size_t)512 << 20)  // left free for cuBLAS workspaces and the driver
#define CU_DEFAULT_BATCH_TOKENS 65536      // without --batch-tokens: packed batches large enough
                                           // that launches and syncs stop mattering (docs/cuda.md)

// ---- weights ----------------------------------------------------------------------------
// The next 256-byte aligned block of `bytes` after *off, as an address from base.
static void *carve(uintptr_t base, size_t *off, size_t bytes) {
    size_t at = (*off + 255) / 256 * 256;
    *off = at + bytes;
    return (void *)(base + at);
}

// Assigns every weight pointer an offset from `base` (0 on the sizing pass); returns bytes.
static size_t layout_weights(struct cu_state *st, uintptr_t base) {
    const struct model *m = st->m;
    const struct model_config *c = &m->cfg;
    size_t esz = st->fp32 ? 4 : 2, off = 0;
    size_t C = c->d_model, Q = (size_t)c->n_head * c->head_dim, KV = (size_t)c->n_kv_head * c->head_dim,
           F = c->d_ff, V = c->vocab_size, GU = model_mlp_gated(c) ? 2 * F : F, hd = c->head_dim;
#define CARVE(bytes) carve(base, &off, (bytes))
    for (int l = 0; l < c->n_layer; l++) {
        const struct layer_weights *w = &m->layers[l];
        struct cu_layer *d = &st->layers[l];
        d->wqkv = CARVE((Q + 2 * KV) * C * esz);
        d->wo = CARVE(C * Q * esz);
        d->wgu = CARVE(GU * C * esz);
        d->wdown = CARVE(C * F * esz);
        d->bqkv = w->bq || w->bk || w->bv ? (float *)CARVE((Q + 2 * KV) * 4) : NULL;
        d->bo = w->bo ? (float *)CARVE(C * 4) : NULL;
        d->bgu = w->b_up || w->b_gate ? (float *)CARVE(GU * 4) : NULL;
        d->bdown = w->b_down ? (float *)CARVE(C * 4) : NULL;
        d->n1w = w->attn_norm_w ? (float *)CARVE(C * 4) : NULL;
        d->n1b = w->attn_norm_b ? (float *)CARVE(C * 4) : NULL;
        d->n2w = w->mlp_norm_w ? (float *)CARVE(C * 4) : NULL;
        d->n2b = w->mlp_norm_b ? (float *)CARVE(C * 4) : NULL;
        d->qn = w->q_norm_w ? (float *)CARVE((c->qk_norm == QK_NORM_HEAD ? hd : Q) * 4) : NULL;
        d->kn = w->k_norm_w ? (float *)CARVE((c->qk_norm == QK_NORM_HEAD ? hd : KV) * 4) : NULL;
        d->pn1w = w->post_attn_norm_w ? (float *)CARVE(C * 4) : NULL;
        d->pn2w = w->post_mlp_norm_w ? (float *)CARVE(C * 4) : NULL;
    }
    st->tok_emb = CARVE(V * C * esz);
    st->lm_head = m->lm_head == m->tok_emb ? st->tok_emb : CARVE(V * C * esz);
    st->pos_emb = m->pos_emb ? (float *)CARVE((size_t)c->max_seq_len * C * 4) : NULL;
    st->fnw = (float *)CARVE(C * 4);
    st->fnb = m->final_norm_b ? (float *)CARVE(C * 4) : NULL;
    st->rope_inv = c->rope != ROPE_NONE ? (float *)CARVE((size_t)(model_rope_dims(c) / 2) * 4) : NULL;
#undef CARVE
    return off;
}

// Copies n floats to dst, converted to the compute dtype (to_act) or kept fp32.
static int upload(struct cu_state *st, void *dst, const float *src, size_t n, int to_act, xsa_error *err) {
    if (!src) return 0;  // an absent bias stays zero
    if (!to_act || st->fp32) {
        CU_CHECK(cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyHostToDevice));
        return 0;
    }
    size_t step = (size_t)1 << 24;  // converts in 32 MiB pieces
    uint16_t *h = (uint16_t *)malloc((n < step ? n : step) * sizeof *h);
    if (!h) return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of host memory converting weights to bf16");
    for (size_t i = 0; i < n; i += step) {
        size_t k = n - i < step ? n - i : step;
        for (size_t j = 0; j < k; j++) h[j] = xsa_f32_to_bf16(src[i + j]);
        cudaError_t e = cudaMemcpy((uint16_t *)dst + i, h, k * sizeof *h, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            free(h);
            return cu_fail(err, XSA_ERUNTIME, "cuda backend: %s:%d: copying weights failed: %s", __FILE__, __LINE__,
                           cudaGetErrorString(e));
        }
    }
    free(h);
    return 0;
}

static int upload_weights(struct cu_state *st, void *base, size_t bytes, xsa_error *err) {
    const struct model *m = st->m;
    const struct model_config *c = &m->cfg;
    size_t esz = st->fp32 ? 4 : 2;
    size_t C = c->d_model, Q = (size_t)c->n_head * c->head_dim, KV = (size_t)c->n_kv_head * c->head_dim,
           F = c->d_ff, V = c->vocab_size;
    int gated = model_mlp_gated(c), rc = 0;
    size_t hd = c->head_dim;
    CU_CHECK(cudaMemset(base, 0, bytes));
    for (int l = 0; l < c->n_layer && !rc; l++) {
        const struct layer_weights *w = &m->layers[l];
        struct cu_layer *d = &st->layers[l];
        char *qkv = (char *)d->wqkv, *gu = (char *)d->wgu;
        if (!rc) rc = upload(st, qkv, w->wq, Q * C, 1, err);
        if (!rc) rc = upload(st, qkv + Q * C * esz, w->wk, KV * C, 1, err);
        if (!rc) rc = upload(st, qkv + (Q + KV) * C * esz, w->wv, KV * C, 1, err);
        if (!rc) rc = upload(st, d->wo, w->wo, C * Q, 1, err);
        if (!rc) rc = upload(st, gu, gated ? w->w_gate : w->w_up, F * C, 1, err);
        if (!rc && gated) rc = upload(st, gu + F * C * esz, w->w_up, F * C, 1, err);
        if (!rc) rc = upload(st, d->wdown, w->w_down, C * F, 1, err);
        if (d->bqkv) {
            if (!rc) rc = upload(st, d->bqkv, w->bq, Q, 0, err);
            if (!rc) rc = upload(st, d->bqkv + Q, w->bk, KV, 0, err);
            if (!rc) rc = upload(st, d->bqkv + Q + KV, w->bv, KV, 0, err);
        }
        if (!rc && d->bo) rc = upload(st, d->bo, w->bo, C, 0, err);
        if (!rc && d->bgu) {
            rc = upload(st, d->bgu, gated ? w->b_gate : w->b_up, F, 0, err);
            if (!rc && gated) rc = upload(st, d->bgu + F, w->b_up, F, 0, err);
        }
        if (!rc && d->bdown) rc = upload(st, d->bdown, w->b_down, C, 0, err);
        if (!rc && d->n1w) rc = upload(st, d->n1w, w->attn_norm_w, C, 0, err);
        if (!rc && d->n1b) rc = upload(st, d->n1b, w->attn_norm_b, C, 0, err);
        if (!rc && d->n2w) rc = upload(st, d->n2w, w->mlp_norm_w, C, 0, err);
        if (!rc && d->n2b) rc = upload(st, d->n2b, w->mlp_norm_b, C, 0, err);
        if (!rc && d->qn) rc = upload(st, d->qn, w->q_norm_w, c->qk_norm == QK_NORM_HEAD ? hd : Q, 0, err);
        if (!rc && d->kn) rc = upload(st, d->kn, w->k_norm_w, c->qk_norm == QK_NORM_HEAD ? hd : KV, 0, err);
        if (!rc && d->pn1w) rc = upload(st, d->pn1w, w->post_attn_norm_w, C, 0, err);
        if (!rc && d->pn2w) rc = upload(st, d->pn2w, w->post_mlp_norm_w, C, 0, err);
    }
    if (!rc) rc = upload(st, st->tok_emb, m->tok_emb, V * C, 1, err);
    if (!rc && st->lm_head != st->tok_emb) rc = upload(st, st->lm_head, m->lm_head, V * C, 1, err);
    if (!rc && st->pos_emb) rc = upload(st, st->pos_emb, m->pos_emb, (size_t)c->max_seq_len * C, 0, err);
    if (!rc) rc = upload(st, st->fnw, m->final_norm_w, C, 0, err);
    if (!rc && st->fnb) rc = upload(st, st->fnb, m->final_norm_b, C, 0, err);
    if (!rc && st->rope_inv) {
        int h2 = model_rope_dims(c) / 2;
        float *inv = (float *)malloc((size_t)h2 * sizeof *inv);
        if (!inv) return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of host memory");
        for (int i = 0; i < h2; i++) inv[i] = xsa_rope_inv_freq_cfg(c, i);
        rc = upload(st, st->rope_inv, inv, (size_t)h2, 0, err);
        free(inv);
    }
    if (rc) return rc;
    CU_CHECK(cudaDeviceSynchronize());  // copies from pageable memory may still be in flight
    return 0;
}

// ---- activations ------------------------------------------------------------------------
static void free_acts(struct cu_state *st) {
    void *p[] = {st->x, st->xn, st->qkv, st->ff, st->ffa, st->tmp, st->d_tok, st->d_pos, st->d_span, st->hrows,
                 st->lg, st->row_stat, st->d_row_tok};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) cudaFree(p[i]);
    st->x = st->qkv = st->ff = st->lg = st->tmp = NULL;
    st->xn = st->ffa = st->hrows = NULL;
    st->d_tok = st->d_pos = st->d_span = st->d_row_tok = NULL;
    st->row_stat = NULL;
    st->t_cap = st->r_cap = 0;
}

static void free_entries(struct cu_state *st) {
    void *p[] = {st->d_entry_row, st->d_entry_tgt, st->d_entry_logit, st->d_entry_lp, st->d_entry_greedy};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) cudaFree(p[i]);
    st->d_entry_row = st->d_entry_tgt = NULL;
    st->d_entry_logit = st->d_entry_lp = NULL;
    st->d_entry_greedy = NULL;
    st->s_cap = 0;
}

// A buffer for a sublayer's output before its post-norm or the parallel residual add.
static int needs_tmp(const struct model *m) {
    for (int l = 0; l < m->cfg.n_layer; l++)
        if (m->layers[l].post_attn_norm_w || m->layers[l].post_mlp_norm_w) return 1;
    return m->cfg.parallel_residual;
}

static size_t act_bytes_per_token(const struct cu_state *st) {
    const struct model_config *c = &st->m->cfg;
    size_t esz = st->fp32 ? 4 : 2, C = c->d_model, Q = (size_t)c->n_head * c->head_dim,
           KV = (size_t)c->n_kv_head * c->head_dim, F = c->d_ff;
    size_t GU = model_mlp_gated(c) ? 2 * F : F;
    return 4 * C + esz * (C > Q ? C : Q) + 4 * (Q + 2 * KV) + 4 * GU + esz * F + 4 * 6 + esz * C +
           4 * (size_t)st->vchunk + sizeof(struct xsa_lse) + 4 + (needs_tmp(st->m) ? 4 * C : 0);
}

// Allocates the buffers for n tokens; 0 or -1 (a partial allocation is freed).
static int alloc_acts(struct cu_state *st, int n) {
    const struct model_config *c = &st->m->cfg;
    size_t N = (size_t)n, esz = st->fp32 ? 4 : 2, C = c->d_model, Q = (size_t)c->n_head * c->head_dim,
           KV = (size_t)c->n_kv_head * c->head_dim, F = c->d_ff;
    size_t GU = model_mlp_gated(c) ? 2 * F : F;
    int bad = cudaMalloc((void **)&st->x, N * C * 4) != cudaSuccess ||
              (needs_tmp(st->m) && cudaMalloc((void **)&st->tmp, N * C * 4) != cudaSuccess) ||
              cudaMalloc(&st->xn, N * (C > Q ? C : Q) * esz) != cudaSuccess ||
              cudaMalloc((void **)&st->qkv, N * (Q + 2 * KV) * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->ff, N * GU * 4) != cudaSuccess ||
              cudaMalloc(&st->ffa, N * F * esz) != cudaSuccess ||
              cudaMalloc((void **)&st->d_tok, N * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->d_pos, N * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->d_span, 4 * N * 4) != cudaSuccess ||
              cudaMalloc(&st->hrows, N * C * esz) != cudaSuccess ||
              cudaMalloc((void **)&st->lg, N * (size_t)st->vchunk * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->row_stat, N * sizeof(struct xsa_lse)) != cudaSuccess ||
              cudaMalloc((void **)&st->d_row_tok, N * 4) != cudaSuccess;
    if (bad) {
        free_acts(st);
        (void)cudaGetLastError();  // an allocation failure is not sticky; clear it
        return -1;
    }
    st->t_cap = st->r_cap = n;
    return 0;
}

// Buffers for `want` tokens, or as many as fit: halves the count on every allocation failure.
static int reserve_tokens(struct cu_state *st, int want, xsa_error *err) {
    int old = st->t_cap;  // what fitted before: a failed growth falls back to it, not below
    free_acts(st);
    for (int n = want; n >= 1; n /= 2) {
        if (n < old) n = old, old = 0;
        if (alloc_acts(st, n) == 0) return 0;
    }
    return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of GPU memory: not even one token of activations "
                   "(%zu bytes) fits next to the weights; use a GPU with more memory or --device cpu",
                   st->act_bytes_per_token);
}

// Tokens whose activations fit in free memory plus what the current buffers hold.
static int tokens_that_fit(struct cu_state *st) {
    size_t fr = 0, total = 0;
    if (cudaMemGetInfo(&fr, &total) != cudaSuccess) return st->t_cap > 64 ? st->t_cap : 64;
    fr += (size_t)st->t_cap * st->act_bytes_per_token;
    fr = fr > CU_MEM_MARGIN ? fr - CU_MEM_MARGIN : 0;
    size_t n = fr / st->act_bytes_per_token;
    // XSA_CUDA_MAX_TOKENS caps the activation buffers, so checks can exercise the sub-batch split.
    if (st->max_tokens > 0 && (size_t)st->max_tokens < n) n = (size_t)st->max_tokens;
    return n > CU_MAX_TOKENS ? CU_MAX_TOKENS : (int)n;
}

static int reserve_entries(struct cu_state *st, int S, xsa_error *err) {
    if (S <= st->s_cap) return 0;
    free_entries(st);
    size_t n = 1024;
    while (n < (size_t)S) n *= 2;
    int bad = cudaMalloc((void **)&st->d_entry_row, n * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->d_entry_tgt, n * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->d_entry_logit, n * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->d_entry_lp, n * 4) != cudaSuccess ||
              cudaMalloc((void **)&st->d_entry_greedy, n) != cudaSuccess;
    if (bad) {
        free_entries(st);
        (void)cudaGetLastError();
        return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of GPU memory for %d scoring entries", S);
    }
    st->s_cap = (int)n;
    return 0;
}

// The probe's buffers for t_cap tokens (only a probing batch asks for them).
static int reserve_probe(struct cu_state *st, xsa_error *err) {
    if (st->probe_cap >= st->t_cap) return 0;
    cudaFree(st->d_probe);
    cudaFreeHost(st->h_probe);
    st->d_probe = st->h_probe = NULL;
    st->probe_cap = 0;
    size_t bytes = (size_t)st->t_cap * st->m->cfg.n_head * BACKEND_PROBE_STATS * 4;
    if (cudaMalloc((void **)&st->d_probe, bytes) != cudaSuccess || cudaMallocHost((void **)&st->h_probe, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of memory for the attention statistics of %d tokens (%zu bytes)",
                       st->t_cap, bytes);
    }
    st->probe_cap = st->t_cap;
    return 0;
}

// ---- scoring ----------------------------------------------------------------------------
// The same checks as the CPU backend: every index is bounded before anything reads through it.
struct probe_ctx;
static int probe_gather(struct cu_state *st, const struct probe_ctx *pc, int layer, int n, xsa_error *err);

// The forward of tokens [0, n) already on the device; pc: gather the probe's statistics of each
// layer (NULL: none).
static int forward(struct cu_state *st, int n, const struct probe_ctx *pc, xsa_error *err) {
    const struct model_config *c = &st->m->cfg;
    int C = c->d_model, Q = c->n_head * c->head_dim, KV = c->n_kv_head * c->head_dim, F = c->d_ff;
    int GU = model_mlp_gated(c) ? 2 * F : F, rc = cu_embed(st, n, err);
    for (int l = 0; l < c->n_layer && !rc; l++) {
        const struct cu_layer *w = &st->layers[l];
        if (!rc) rc = w->n1w ? cu_norm(st, st->x, NULL, st->xn, n, w->n1w, w->n1b, err) : cu_copy_act(st, n, err);
        if (!rc) rc = cu_gemm(st, st->xn, w->wqkv, st->qkv, n, C, Q + 2 * KV, Q + 2 * KV, 0.0f, err);
        if (!rc) rc = cu_qkv_bias_rope(st, w, n, err);
        if (!rc) rc = cu_attention(st, l, n, err);
        if (!rc && pc) rc = probe_gather(st, pc, l, n, err);
        // The attention output: into x, or held in tmp for its post-norm or the parallel residual.
        float *ao = w->pn1w || c->parallel_residual ? st->tmp : st->x;
        if (!rc) rc = cu_gemm(st, st->xn, w->wo, ao, n, Q, C, C, ao == st->x ? 1.0f : 0.0f, err);  // x += attn @ wo^T
        if (!rc) rc = cu_add_bias(st, ao, w->bo, n, err);
        if (!rc && w->pn1w) rc = cu_norm_add(st, st->tmp, w->pn1w, n, err);
        if (!rc) rc = w->n2w ? cu_norm(st, st->x, NULL, st->xn, n, w->n2w, w->n2b, err) : cu_copy_act(st, n, err);
        if (!rc) rc = cu_gemm(st, st->xn, w->wgu, st->ff, n, C, GU, GU, 0.0f, err);
        if (!rc) rc = cu_mlp_act(st, w->bgu, n, err);
        float *mo = w->pn2w ? st->tmp : st->x;
        if (!rc) rc = cu_gemm(st, st->ffa, w->wdown, mo, n, F, C, C, mo == st->x ? 1.0f : 0.0f, err);  // x += mlp
        if (!rc) rc = cu_add_bias(st, mo, w->bdown, n, err);
        if (!rc && w->pn2w) rc = cu_norm_add(st, st->tmp, w->pn2w, n, err);
        if (!rc && c->parallel_residual) rc = cu_add_rows(st, st->tmp, n, err);
    }
    return rc;
}

// Host staging of one score call; (T) arrays except the entry ones (S).
struct stage {
    int32_t *cut_min;   // (T + 1) smallest key index any token at or after t reads
    int32_t *span;      // (4, T) spans rebased to the sub-batch
    int32_t *row_of;    // (T) scored row of a token of the sub-batch, or -1
    int32_t *row_tok;   // (T)
    int32_t *ent_id, *ent_row, *ent_tgt;  // (S)
    float *lp;          // (S)
    uint8_t *gr;        // (S)
};

// A probing sub-batch: where its entries' statistics go.
struct probe_ctx {
    const struct score_batch *b;
    const struct stage *sg;
    int S;  // entries of the sub-batch (sg->ent_*)
};

// Layer `layer`'s statistics of the n tokens (the attention kernel's (n, H, 3)) to the host, then
// into b->probe at each entry of the sub-batch: (S, n_layer, n_head, BACKEND_PROBE_STATS).
static int probe_gather(struct cu_state *st, const struct probe_ctx *pc, int layer, int n, xsa_error *err) {
    const struct model_config *c = &st->m->cfg;
    size_t row = (size_t)c->n_head * BACKEND_PROBE_STATS;
    CU_CHECK(cudaMemcpyAsync(st->h_probe, st->d_probe, (size_t)n * row * 4, cudaMemcpyDeviceToHost, st->stream));
    CU_CHECK(cudaStreamSynchronize(st->stream));
    const struct stage *sg = pc->sg;
    for (int e = 0; e < pc->S; e++) {
        long t = sg->row_tok[sg->ent_row[e]];
        memcpy(pc->b->probe + ((long)sg->ent_id[e] * c->n_layer + layer) * row, st->h_probe + t * row, row * 4);
    }
    return 0;
}

// Scores tokens [t0, t1) (whole rows) and the entries that read them.
static int score_part(struct cu_state *st, const struct score_batch *b, int t0, int t1, struct stage *sg,
                      float *logprob, uint8_t *greedy, xsa_error *err) {
    int n = t1 - t0, cap = st->t_cap;
    const int32_t *src[4] = {b->span0_lo, b->span0_hi, b->span1_lo, b->span1_hi};
    for (int t = t0; t < t1; t++) {
        int e0 = b->span0_lo[t] == b->span0_hi[t], e1 = b->span1_lo[t] == b->span1_hi[t];
        for (int k = 0; k < 4; k++) sg->span[(long)k * n + (t - t0)] = (k < 2 ? e0 : e1) ? 0 : src[k][t] - t0;
        sg->row_of[t - t0] = -1;
    }
    int R = 0, S = 0;
    for (int s = 0; s < b->n_entries; s++) {
        int t = b->entry_index[s];
        if (t < t0 || t >= t1) continue;
        if (sg->row_of[t - t0] < 0) {
            sg->row_of[t - t0] = R;
            sg->row_tok[R++] = t - t0;
        }
        sg->ent_id[S] = s;
        sg->ent_row[S] = sg->row_of[t - t0];
        sg->ent_tgt[S++] = b->entry_target[s];
    }
    int rc = reserve_entries(st, S, err);
    if (rc) return rc;
    cudaStream_t s = st->stream;
    CU_CHECK(cudaMemcpyAsync(st->d_tok, b->token + t0, (size_t)n * 4, cudaMemcpyHostToDevice, s));
    CU_CHECK(cudaMemcpyAsync(st->d_pos, b->pos + t0, (size_t)n * 4, cudaMemcpyHostToDevice, s));
    for (int k = 0; k < 4; k++)
        CU_CHECK(cudaMemcpyAsync(st->d_span + (long)k * cap, sg->span + (long)k * n, (size_t)n * 4,
                                 cudaMemcpyHostToDevice, s));
    if (S > 0) {
        CU_CHECK(cudaMemcpyAsync(st->d_row_tok, sg->row_tok, (size_t)R * 4, cudaMemcpyHostToDevice, s));
        CU_CHECK(cudaMemcpyAsync(st->d_entry_row, sg->ent_row, (size_t)S * 4, cudaMemcpyHostToDevice, s));
        CU_CHECK(cudaMemcpyAsync(st->d_entry_tgt, sg->ent_tgt, (size_t)S * 4, cudaMemcpyHostToDevice, s));
    }
    struct probe_ctx pc = {b, sg, S};
    if ((rc = forward(st, n, st->probing ? &pc : NULL, err))) return rc;
    if ((rc = cu_logits(st, R, S, err))) return rc;
    if (S > 0) {
        CU_CHECK(cudaMemcpyAsync(sg->lp, st->d_entry_lp, (size_t)S * 4, cudaMemcpyDeviceToHost, s));
        CU_CHECK(cudaMemcpyAsync(sg->gr, st->d_entry_greedy, (size_t)S, cudaMemcpyDeviceToHost, s));
    }
    CU_CHECK(cudaStreamSynchronize(s));
    if (b->dist && (rc = cu_logits_dist(st, R, S, sg->ent_row, sg->ent_id, b->dist, err))) return rc;
    for (int e = 0; e < S; e++) {
        logprob[sg->ent_id[e]] = sg->lp[e];
        greedy[sg->ent_id[e]] = sg->gr[e];
    }
    return 0;
}

static int cu_score(struct backend *be, const struct score_batch *b, float *logprob, uint8_t *greedy,
                    xsa_error *err) {
    struct cu_state *st = (struct cu_state *)be->impl;
    int rc = 0;  // backend_score checked the batch (kernels/backend.h)
    if (b->n_tokens == 0) return 0;
    CU_CHECK(cudaSetDevice(st->device));
    int T = b->n_tokens, S = b->n_entries;
    if (T > st->t_cap) {
        int fit = tokens_that_fit(st), want = T < fit ? T : fit;
        if (want > st->t_cap && (rc = reserve_tokens(st, want, err))) return rc;
    }
    if (b->probe && (rc = reserve_probe(st, err))) return rc;
    st->probing = b->probe != NULL;
    struct stage sg;
    memset(&sg, 0, sizeof sg);
    size_t nt = (size_t)T, ns = (size_t)(S > 0 ? S : 1);
    sg.cut_min = (int32_t *)malloc((nt + 1) * 4);
    sg.span = (int32_t *)malloc(4 * nt * 4);
    sg.row_of = (int32_t *)malloc(nt * 4);
    sg.row_tok = (int32_t *)malloc(nt * 4);
    sg.ent_id = (int32_t *)malloc(ns * 4);
    sg.ent_row = (int32_t *)malloc(ns * 4);
    sg.ent_tgt = (int32_t *)malloc(ns * 4);
    sg.lp = (float *)malloc(ns * 4);
    sg.gr = (uint8_t *)malloc(ns);
    if (!sg.cut_min || !sg.span || !sg.row_of || !sg.row_tok || !sg.ent_id || !sg.ent_row || !sg.ent_tgt || !sg.lp ||
        !sg.gr)
        rc = cu_fail(err, XSA_ERUNTIME, "cuda backend: out of host memory for a batch of %d tokens", T);
    if (!rc) xsa_cut_min_fill(b->span0_lo, b->span0_hi, b->span1_lo, T, sg.cut_min);
    for (int t0 = 0; !rc && t0 < T;) {
        int t1 = xsa_cut_end(sg.cut_min, t0, T, st->t_cap);
        if (t1 == t0)
            rc = cu_fail(err, XSA_ERUNTIME, "cuda backend: a row starting at token %d is longer than the %d tokens whose "
                         "activations fit in GPU memory; send shorter rows or use --device cpu", t0, st->t_cap);
        else
            rc = score_part(st, b, t0, t1, &sg, logprob, greedy, err);
        t0 = t1;
    }
    free(sg.cut_min);
    free(sg.span);
    free(sg.row_of);
    free(sg.row_tok);
    free(sg.ent_id);
    free(sg.ent_row);
    free(sg.ent_tgt);
    free(sg.lp);
    free(sg.gr);
    st->probing = 0;
    return rc;
}

// ---- open / close -----------------------------------------------------------------------
static void cu_destroy(struct backend *be) {
    struct cu_state *st = (struct cu_state *)be->impl;
    if (!st) return;
    cudaSetDevice(st->device);
    if (st->stream) cudaStreamSynchronize(st->stream);
    free_acts(st);
    free_entries(st);
    cudaFree(st->d_probe);
    cudaFreeHost(st->h_probe);
    if (st->layers) cudaFree(st->layers[0].wqkv);  // the first carve of the one weight block
    if (st->blas) cublasDestroy(st->blas);
    if (st->stream) cudaStreamDestroy(st->stream);
    free(st->layers);
    free(st);
    be->impl = NULL;
}

// What this backend adds to backend_check_model: its attention kernel holds a head in shared
// memory.
static int check_model(const struct model *m, xsa_error *err) {
    if (m->cfg.head_dim > 256)
        return cu_fail(err, XSA_EBADINPUT, "%s: head_dim %d is not supported by the cuda backend (<= 256)", m->path,
                       m->cfg.head_dim);
    return 0;
}

// Finds device `index` or says what is missing: the driver, a GPU, a recent enough GPU.
static int probe_device(int index, cudaDeviceProp *prop, xsa_error *err) {
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!drv) {
        const char *e = dlerror();
        return cu_fail(err, XSA_ERUNTIME, "the CUDA backend is not available: no NVIDIA driver (%.300s)",
                       e ? e : "libcuda.so.1 not found");
    }
    dlclose(drv);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return cu_fail(err, XSA_ERUNTIME, "the CUDA backend is not available: no usable GPU (%s)", cudaGetErrorString(e));
    if (n == 0) return cu_fail(err, XSA_ERUNTIME, "the CUDA backend is not available: no GPU found");
    if (index >= n)
        return cu_fail(err, XSA_ERUNTIME, "the CUDA backend is not available: GPU %d requested but %d found (cuda:0..%d)",
                       index, n, n - 1);
    e = cudaGetDeviceProperties(prop, index);
    if (e != cudaSuccess)
        return cu_fail(err, XSA_ERUNTIME, "cuda backend: GPU %d: %s", index, cudaGetErrorString(e));
    if (prop->major < 8)
        return cu_fail(err, XSA_ERUNTIME, "the CUDA backend is not available: GPU %d (%s) has compute capability %d.%d; "
                       "8.0 or newer is needed", index, prop->name, prop->major, prop->minor);
    return 0;
}

static int open_state(struct cu_state *st, int index, const struct backend_options *opt, xsa_error *err) {
    const struct model_config *c = &st->m->cfg;
    CU_CHECK(cudaSetDevice(index));
    CU_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&st->blas));
    CUBLAS_CHECK(cublasSetStream(st->blas, st->stream));
    // float32 is the parity mode: pedantic math keeps every GEMM in plain fp32 (no TF32, no
    // reduced-precision reductions) whatever the defaults or NVIDIA_TF32_OVERRIDE say.
    if (st->fp32) CUBLAS_CHECK(cublasSetMathMode(st->blas, CUBLAS_PEDANTIC_MATH));
    st->layers = (struct cu_layer *)calloc((size_t)c->n_layer, sizeof *st->layers);
    if (!st->layers) return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of host memory");
    size_t bytes = layout_weights(st, 0), fr = 0, total = 0;
    st->weight_bytes = bytes;
    CU_CHECK(cudaMemGetInfo(&fr, &total));
    if (bytes + CU_MEM_MARGIN > fr)
        return cu_fail(err, XSA_ERUNTIME, "cuda backend: the weights need %.2f GiB in %s but GPU %d has %.2f GiB free "
                       "(of %.2f GiB)%s; use --device cpu", bytes / 1073741824.0, st->fp32 ? "float32" : "bfloat16",
                       index, fr / 1073741824.0, total / 1073741824.0, st->fp32 ? " or --dtype bfloat16" : "");
    void *base = NULL;
    cudaError_t e = cudaMalloc(&base, bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return cu_fail(err, XSA_ERUNTIME, "cuda backend: cannot allocate %.2f GiB for the weights on GPU %d: %s; use "
                       "--device cpu", bytes / 1073741824.0, index, cudaGetErrorString(e));
    }
    layout_weights(st, (uintptr_t)base);  // the first carve (layer 0's wqkv) is `base`, freed in destroy
    int rc = upload_weights(st, base, bytes, err);
    if (rc) return rc;
    st->act_bytes_per_token = act_bytes_per_token(st);
    int want = opt && opt->max_batch_tokens > 0 ? opt->max_batch_tokens : CU_DEFAULT_BATCH_TOKENS;
    int fit = tokens_that_fit(st);
    if (want > fit) want = fit > 0 ? fit : 1;
    return reserve_tokens(st, want, err);
}

extern "C" int xsa_cuda_backend_open(struct backend *be, int index, int fp32, const struct model *m,
                                     const struct backend_options *opt, xsa_error *err) {
    memset(be, 0, sizeof *be);
    int rc = check_model(m, err);
    if (rc) return rc;
    cudaDeviceProp prop;
    if ((rc = probe_device(index, &prop, err))) return rc;
    struct cu_state *st = (struct cu_state *)calloc(1, sizeof *st);
    if (!st) return cu_fail(err, XSA_ERUNTIME, "cuda backend: out of host memory");
    st->m = m;
    st->device = index;
    st->fp32 = fp32;
    st->max_tokens = opt ? opt->cuda_max_tokens : 0;
    st->vchunk = m->cfg.vocab_size < CU_VOCAB_CHUNK ? m->cfg.vocab_size : CU_VOCAB_CHUNK;
    be->impl = st;
    be->name = "cuda";
    be->score = cu_score;
    be->destroy = cu_destroy;
    if ((rc = open_state(st, index, opt, err))) {
        cu_destroy(be);
        memset(be, 0, sizeof *be);
        return rc;
    }
    be->batch_tokens = st->t_cap;  // the requested or default budget, cut to what fits
    snprintf(be->device_desc, sizeof be->device_desc,
             "%.96s (cuda:%d, sm_%d%d, %.0f GiB), cuBLAS, %s weights, fp32 accumulation, %d-token batches",
             prop.name, index, prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0,
             fp32 ? "float32" : "bfloat16", st->t_cap);
    // cuBLAS may pick other algorithms on another GPU model or library version.
    snprintf(be->numerics, sizeof be->numerics, "cuda %s weights, %.64s sm_%d%d, cuBLAS %d", fp32 ? "float32" : "bfloat16",
             prop.name, prop.major, prop.minor, CUBLAS_VERSION);
    return 0;
}
