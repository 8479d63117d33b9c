// pgolf.c: a parameter-golf artifact + its architecture (xsa_eval.json / --arch) -> struct
// model, as train_gpt.py's GPT computes: weightless RMSNorms (eps: float32's machine epsilon,
// what F.rms_norm takes for eps=None), q/k RMSNorm, RoPE by -angle on split halves, q_gain,
// relu^2 (or SwiGLU) MLP, resid_mix, attn/mlp scales, U-Net skips, tied head with a soft-cap;
// the record extras (SmearGate, BigramHashEmbedding, XSA in the last XSA_LAST_N layers) and
// the forks' block sharing (SHARED_CYCLE_LEN, NUM_RECURRENCE_PASSES with pass gates), and the
// 2026-03-22..29 records' weight banks, LN_SCALE, shared value embedding and leaky relu^2 (and
// the options they leave off: gated attention, DTG, value residual, trigram), the 2026-03-31
// record's depth recurrence, two residual lanes and layer without attention, and the looped
// records from 2026-04-05 (NUM_LOOPS, GPT-J blocks). The settings come from model/pgolf_arch.c.
#include "model/mnanogpt.h"
#include "model/pgolf.h"
#include "model/pgolf_arch.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "model/safetensors.h"
#include "model/model_internal.h"
#include "model/torch_checkpoint.h"

// What configure reads off the tensors beyond model_config: where the blocks' weights are and
// how the virtual layers (recurrence) map onto them.
struct pg_layout {
    const char *bprefix;  // "blocks." or "shared_blocks."
    int swiglu, fused, banked, passes;
    int n_phys;                    // layers of matrices (banks, or blocks.N.* matrices): NUM_LAYERS
    int mat[MODEL_MAX_LAYERS];     // block k's matrices are physical layer mat[k]'s (2026-03-31: a block per virtual layer)
    int blk[MODEL_MAX_LAYERS];     // layer l runs block blk[l] (shared blocks: l % n_blocks; NUM_LOOPS: its schedule)
    int repeat[MODEL_MAX_LAYERS];  // block k runs repeat_mlp.{repeat[k]}'s MLP where that has weights, or -1
    int loops;                     // NUM_LOOPS: blocks are physical layers, run by the schedule
    int phys_blocks;               // the blocks are the physical layers (NUM_LOOPS, or 2026-04-03's RECUR_LAYERS): XSA,
                                   // LN_SCALE, value embeddings and layer 0's attention go by block
    int no_attn0;                  // physical layer 0's attention matrices are not in the file (DISABLE_LAYER0_ATTN)
};

struct pg_build {
    struct pg_tensors *pt;
    const struct pg_arch *a;
    const struct pg_layout *L;
    struct model *m;
    const char *path;
    char *arena;
    size_t off;
    int dry;  // 1: only count floats
};

static float *take(struct pg_build *b, size_t n) {
    float *p = b->dry ? NULL : (float *)(b->arena + b->off);
    b->off += (n * sizeof(float) + 63) / 64 * 64;
    b->m->n_params += (long long)n;
    return p;
}

// Tensor `name` of the nd dimensions `dims` -> a new array.
static int get_dims(struct pg_build *b, const char *name, int nd, const int64_t *dims, float **dst, xsa_error *err) {
    struct pg_entry *e = pgolf_find(b->pt, name);
    if (!e) return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is missing; the architecture implies it", b->path, name);
    int same = e->t->ndim == nd;
    size_t n = 1;
    for (int d = 0; d < nd; d++) same &= e->t->shape[d] == dims[d], n *= (size_t)dims[d];
    if (!same) {
        char got[96], want[96];
        model_fmt_shape(got, sizeof got, e->t->ndim, e->t->shape);
        model_fmt_shape(want, sizeof want, nd, dims);
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has shape %s but the architecture implies %s", b->path, name, got, want);
    }
    float *p = take(b, n);
    e->used = 1;
    if (b->dry) return 0;
    *dst = p;
    int rc = pgolf_dequantize(b->pt, e, p, err);
    return rc ? rc : model_check_finite(p, n, b->path, name, err);
}

// Tensor `name` of shape (d0) or (d0, d1) (d1 = 0: 1-D; d0 = 0: a scalar) -> a new array.
static int get(struct pg_build *b, const char *name, int64_t d0, int64_t d1, float **dst, xsa_error *err) {
    const int64_t dims[2] = {d0, d1};
    return get_dims(b, name, d0 == 0 ? 0 : d1 ? 2 : 1, dims, dst, err);
}

static const struct pv *shape_of(struct pg_tensors *pt, const char *name) {
    struct pg_entry *e = pgolf_find(pt, name);
    return e ? e->t : NULL;
}

// Physical layer weights: `pre` is "blocks.N." or "shared_blocks.N."; attn 0: its attention
// matrices are not in the file (a layer without attention). Banked files: build_banks.
static int build_block_matrices(struct pg_build *b, const char *pre, struct layer_weights *w, int attn, xsa_error *err) {
    const struct model_config *c = &b->m->cfg;
    int64_t C = c->d_model, Q = (int64_t)c->n_head * c->head_dim, KV = (int64_t)c->n_kv_head * c->head_dim, F = c->d_ff;
    char n[300];
    int rc = 0;
#define GET(suffix, d0, d1, dst)                          \
    do {                                                  \
        if (rc) break;                                    \
        snprintf(n, sizeof n, "%s%s", pre, suffix);       \
        rc = get(b, n, d0, d1, &(dst), err);              \
    } while (0)
    if (attn) {
        GET("attn.c_q.weight", Q, C, w->wq);
        GET("attn.c_k.weight", KV, C, w->wk);
        GET("attn.c_v.weight", KV, C, w->wv);
        GET("attn.proj.weight", C, Q, w->wo);
    }
    if (b->L->fused) {  // [gate; up] rows of one matrix: two arrays side by side in the arena
        float *gu = NULL;
        GET("mlp.gate_up.weight", 2 * F, C, gu);
        if (!rc && !b->dry) w->w_gate = gu, w->w_up = gu + F * C;
    } else {
        if (b->L->swiglu) GET("mlp.gate.weight", F, C, w->w_gate);
        GET("mlp.fc.weight", F, C, w->w_up);
    }
    GET("mlp.proj.weight", C, F, w->w_down);
    return rc;
}

// A block's own weights (every virtual layer has its block): gains, scales, the options.
static int build_block_scalars(struct pg_build *b, const char *pre, struct layer_weights *w, xsa_error *err) {
    const struct model_config *c = &b->m->cfg;
    int64_t C = c->d_model;
    char n[300];
    int rc = 0;
    GET("attn.q_gain", c->n_head, 0, w->q_gain);
    GET("attn_scale", C, 0, w->attn_scale);
    GET("mlp_scale", C, 0, w->mlp_scale);
    GET("resid_mix", 2, C, w->resid_mix);
    // The records' options, each where its tensor is: gated attention, DTG, value residual.
    snprintf(n, sizeof n, "%sattn.attn_gate.weight", pre);
    if (!rc && pgolf_find(b->pt, n)) {
        GET("attn.attn_gate.weight", c->n_head, C, w->attn_gate_w);
        GET("attn.attn_gate.bias", c->n_head, 0, w->attn_gate_b);
    }
    snprintf(n, sizeof n, "%sattn.attn_gate_proj.weight", pre);  // 2026-04-16's output gate
    if (!rc && pgolf_find(b->pt, n)) GET("attn.attn_gate_proj.weight", c->n_head, c->attn_gate_window, w->attn_gate_w);
    snprintf(n, sizeof n, "%sattn.attn_gate_w", pre);  // 2026-04-19's dense, 2026-04-23's sparse gate
    if (!rc && pgolf_find(b->pt, n)) GET("attn.attn_gate_w", c->n_head, c->attn_gate_window, w->attn_gate_w);
    snprintf(n, sizeof n, "%sdtg_gate.weight", pre);
    if (!rc && pgolf_find(b->pt, n)) {
        GET("dtg_gate.weight", 1, C, w->dtg_w);
        GET("dtg_gate.bias", 1, 0, w->dtg_b);
    }
    snprintf(n, sizeof n, "%sattn.vrl_alpha", pre);
    if (!rc && pgolf_find(b->pt, n)) GET("attn.vrl_alpha", 1, 0, w->vrl_alpha);
    snprintf(n, sizeof n, "%sattn.vr_lambda", pre);
    if (!rc && pgolf_find(b->pt, n)) GET("attn.vr_lambda", 2, 0, w->vr_lambda);
#undef GET
    snprintf(n, sizeof n, "%sattn.xsa_alpha", pre);  // gated XSA: tanh(alpha) per head
    if (!rc && pgolf_find(b->pt, n)) {
        rc = get(b, n, c->n_head, 0, &w->xsa_gate, err);
        for (int h = 0; h < c->n_head && !rc && !b->dry; h++) w->xsa_gate[h] = tanhf(w->xsa_gate[h]);
    }
    return rc;
}

// Counts block indices under `prefix` ("blocks." / "shared_blocks."): the largest + 1.
static int count_blocks(struct pg_tensors *pt, const char *prefix) {
    int n = 0;
    size_t k = strlen(prefix);
    for (int i = 0; i < pt->n; i++) {
        const char *s = pt->e[i].name;
        if (strncmp(s, prefix, k)) continue;
        int idx = atoi(s + k);
        if (idx >= 0 && idx < MODEL_MAX_LAYERS && idx + 1 > n) n = idx + 1;
    }
    return n;
}

// The banks of the records from 2026-03-23 (final_model.pt keeps them; _unbank_state_dict
// names their slices blocks.N.* in the int6 dict): layer k's q is qo_bank[k], its output
// projection qo_bank[n + k], k and v kv_bank[k] and kv_bank[n + k], the MLP's the MLP banks' k.
static int build_banks(struct pg_build *b, struct layer_weights *phys, xsa_error *err) {
    const struct model_config *c = &b->m->cfg;
    int64_t n = b->L->n_phys, C = c->d_model, KV = (int64_t)c->n_kv_head * c->head_dim, F = c->d_ff;
    const int64_t qo_d[3] = {2 * n, C, C}, kv_d[3] = {2 * n, KV, C}, up_d[3] = {n, F, C}, down_d[3] = {n, C, F};
    float *qo = NULL, *kv = NULL, *up = NULL, *down = NULL;
    int rc = get_dims(b, "qo_bank", 3, qo_d, &qo, err);
    if (!rc) rc = get_dims(b, "kv_bank", 3, kv_d, &kv, err);
    if (!rc) rc = get_dims(b, "mlp_up_bank", 3, up_d, &up, err);
    if (!rc) rc = get_dims(b, "mlp_down_bank", 3, down_d, &down, err);
    for (int64_t k = 0; k < n && !rc && !b->dry; k++) {
        struct layer_weights *w = &phys[k];
        w->wq = qo + k * C * C, w->wo = qo + (n + k) * C * C;
        w->wk = kv + k * KV * C, w->wv = kv + (n + k) * KV * C;
        w->w_up = up + k * F * C, w->w_down = down + k * C * F;
    }
    return rc;
}

// The shared value embedding (ValueEmbedding: embed, proj to the kv width unless it is that
// wide, scale) and the scale of each layer of VE_LAYERS (ve_layer_scales.i: the i-th named).
static int build_value_embedding(struct pg_build *b, xsa_error *err) {
    struct model *m = b->m;
    const struct model_config *c = &m->cfg;
    int64_t KV = (int64_t)c->n_kv_head * c->head_dim;
    float *scale = NULL;
    int rc = get(b, "ve_shared.embed.weight", c->vocab_size, c->ve_dim, &m->ve_emb, err);
    if (!rc && c->ve_dim != KV) rc = get(b, "ve_shared.proj.weight", KV, c->ve_dim, &m->ve_proj, err);
    if (!rc) rc = get(b, "ve_shared.scale", 0, 0, &scale, err);
    if (!rc && !b->dry) m->ve_scale = *scale;
    char n[64];
    for (int i = 0; i < b->a->ve.n && !rc; i++) {  // (physical blocks: every layer that runs the block)
        float *ls = NULL;
        snprintf(n, sizeof n, "ve_layer_scales.%d", i);
        rc = get(b, n, 1, 0, &ls, err);
        for (int l = 0; l < c->n_layer && !rc && !b->dry; l++)
            if ((b->L->phys_blocks ? b->L->blk[l] : l) == b->a->ve.v[i]) m->layers[l].ve_scale = ls;
    }
    return rc;
}

// The layers' weights: the physical layers' matrices (banks, or blocks.N.*); each block's own
// tensors with its layer's matrices (mat), or the MLP a recurrent block runs instead
// (repeat_mlp.i, where it has weights); each layer its block's (blk), with the two-lane
// lambdas of its physical layer.
static int build_layers(struct pg_build *b, xsa_error *err) {
    struct model *m = b->m;
    const struct model_config *c = &m->cfg;
    const struct pg_layout *L = b->L;
    int64_t C = c->d_model, F = c->d_ff;
    struct layer_weights *phys = xsa_calloc((size_t)L->n_phys, sizeof *phys), *blocks = xsa_calloc((size_t)c->n_blocks, sizeof *blocks);
    char n[96];
    int rc = L->banked ? build_banks(b, phys, err) : 0;
    m->pgolf_banks = L->banked;
    for (int p = 0; p < L->n_phys && !rc && !L->banked; p++) {
        snprintf(n, sizeof n, "%s%d.", L->bprefix, p);
        rc = build_block_matrices(b, n, &phys[p], !(p == 0 && L->no_attn0), err);
    }
    for (int k = 0; k < c->n_blocks && !rc; k++) {
        struct layer_weights *w = &blocks[k];
        const struct layer_weights *src = &phys[L->mat[k]];
        w->wq = src->wq, w->wk = src->wk, w->wv = src->wv, w->wo = src->wo;
        w->w_gate = src->w_gate, w->w_up = src->w_up, w->w_down = src->w_down;
        snprintf(n, sizeof n, "%s%d.", L->bprefix, k);
        rc = build_block_scalars(b, n, w, err);
        if (rc || L->repeat[k] < 0) continue;
        snprintf(n, sizeof n, "repeat_mlp.%d.fc.weight", L->repeat[k]);
        if (pgolf_find(b->pt, n)) rc = get(b, n, F, C, &w->w_up, err);
        snprintf(n, sizeof n, "repeat_mlp.%d.proj.weight", L->repeat[k]);
        if (!rc && pgolf_find(b->pt, n)) rc = get(b, n, C, F, &w->w_down, err);
    }
    for (int l = 0; l < c->n_layer; l++) m->layers[l] = blocks[L->blk[l]];
    free(phys);
    free(blocks);
    int64_t r = c->depth_lora_rank, Q = (int64_t)c->n_head * c->head_dim, KV = (int64_t)c->n_kv_head * c->head_dim;
    for (int l = 0; l < c->n_layer && r && !rc; l++) {  // RecurrentGPT's depth_adapters.l: q and v LoRA of layer l's normed input
        struct layer_weights *w = &m->layers[l];
        static const char *const part[4] = {"q_down", "q_up", "v_down", "v_up"};
        float **dst[4] = {&w->lora_q_down, &w->lora_q_up, &w->lora_v_down, &w->lora_v_up};
        const int64_t rows[4] = {r, Q, r, KV}, cols[4] = {C, r, C, r};
        for (int k = 0; k < 4 && !rc; k++) {
            snprintf(n, sizeof n, "depth_adapters.%d.%s.weight", l, part[k]);
            rc = get(b, n, rows[k], cols[k], dst[k], err);
        }
    }
    if (!rc && shape_of(b->pt, "parallel_post_lambdas")) {
        const int64_t post_d[3] = {L->n_phys, 2, 2};
        float *post = NULL, *resid = NULL;
        rc = get_dims(b, "parallel_post_lambdas", 3, post_d, &post, err);
        if (!rc) rc = get(b, "parallel_resid_lambdas", L->n_phys, 2, &resid, err);
        m->lane_post_all = post, m->lane_resid_all = resid, m->lane_rows = L->n_phys;
        for (int k = c->lanes_from; c->lanes_from && k < c->n_layer && !rc && !b->dry; k++)
            m->layers[k].lane_post = post + 4 * L->mat[L->blk[k]], m->layers[k].lane_resid = resid + 2 * L->mat[L->blk[k]];
    }
    return rc;
}

// The weights into one arena: run dry (count), allocate, run again (fill).
static int build_weights(struct pg_build *b, xsa_error *err) {
    struct model *m = b->m;
    struct model_config *c = &m->cfg;
    int64_t C = c->d_model;
    int passes = b->L->passes;
    m->n_params = 0;
    int rc = get(b, "tok_emb.weight", c->vocab_size, C, &m->tok_emb, err);
    if (!rc) rc = build_layers(b, err);
    if (!rc && c->ve_dim) rc = build_value_embedding(b, err);
    int n_skip = c->skip_rows ? c->skip_rows : c->n_layer / 2;
    if (!rc && c->unet_skips && c->n_layer >= 2) rc = get(b, "skip_weights", n_skip, C, &m->skip_weights, err);
    if (!rc && c->unet_skips && shape_of(b->pt, "skip_gates")) rc = get(b, "skip_gates", n_skip, C, &m->skip_gates, err);
    float *gates = NULL;
    if (!rc && passes > 1) rc = get(b, "pass_gate", passes, C, &gates, err);
    if (!rc && c->smear) rc = get(b, "smear.gate", C, 0, &m->smear_gate, err);
    if (!rc && c->lanes_split) {
        float *lm = NULL;
        rc = get(b, "lane_merge", 0, 0, &lm, err);
        if (!rc && !b->dry) m->lane_merge = *lm;
    }
    if (!rc && c->smear_fwd_window) {
        float *lam = NULL;
        rc = get(b, "smear_gate.weight", 1, c->smear_fwd_window, &m->smear_fwd_w, err);
        if (!rc) rc = get(b, "smear_lambda", 1, 0, &lam, err);
        if (!rc && !b->dry) m->smear_fwd_lambda = *lam;
    }
    if (!rc && c->bigram_mul_hash) {  // RecurrentGPT: bigram_proj(bigram_emb[hash]), no scale
        rc = get(b, "bigram_emb.weight", c->bigram_vocab, c->bigram_dim, &m->bigram_emb, err);
        if (!rc) rc = get(b, "bigram_proj.weight", C, c->bigram_dim, &m->bigram_proj, err);
        if (!b->dry) m->bigram_scale = 1.0f;
    } else if (!rc && c->bigram_vocab) {
        float *scale = NULL;
        rc = get(b, "bigram.embed.weight", c->bigram_vocab, c->bigram_dim, &m->bigram_emb, err);
        if (!rc && c->bigram_dim != c->d_model) rc = get(b, "bigram.proj.weight", C, c->bigram_dim, &m->bigram_proj, err);
        if (!rc) rc = get(b, "bigram.scale", 0, 0, &scale, err);
        if (!rc && !b->dry) m->bigram_scale = *scale;
    }
    if (!rc && !c->tied_head) rc = get(b, "lm_head.weight", c->vocab_size, C, &m->lm_head, err);
    if (rc || b->dry) return rc;
    if (c->tied_head) m->lm_head = m->tok_emb;
    if (gates)
        for (int l = 0; l < c->n_layer; l++) m->layers[l].out_scale = gates + (long)(l / c->n_blocks) * C;
    return 0;
}

// The context is the length the family evaluates at (eval_val: EVAL_SEQ_LEN, 0 = TRAIN_SEQ_LEN).
// The records whose Rotary is NTK-aware (built with train_seq_len=1024 while training at 2048)
// raise the base for a T-token window past it: base (T / R)^(rd / (rd - 2)). Every window of
// their eval_val has T = the context, so the model trained and is scored with that base; a
// shorter request is scored as the prefix of such a window (causal: the same numbers), and
// the base stays one per model, whatever the batch holds (model_set_window: `ppl --context`'s
// windows, as eval_val at that EVAL_SEQ_LEN builds them). Past 1024 positions the file cannot
// tell which Rotary trained it, so the sidecar must say (ROTARY_TRAIN_SEQ_LEN 0: no NTK).
// TRAIN_SEQ_LEN defaults to the root train_gpt.py's 1024, but to 2048 for a file with a
// SmearGate or gated skips: every record that has one (2026-03-20 on) trains at 2048, those up
// to 2026-03-31 with that Rotary, the later ones with Rotary(train_seq_len=2048).
static int context_and_ntk(struct model_config *c, const struct pg_arch *a, const char *model_path, int trains_2048, xsa_error *err) {
    const char *where = a->path[0] ? a->path : model_path;  // the sidecar, or the file when there is none
    double train = pg_arch_or(a, A_TRAIN_SEQ_LEN, trains_2048 ? 2048 : 1024), ev = pg_arch_or(a, A_EVAL_SEQ_LEN, 0);
    double ctx = ev > 0 ? ev : train;
    const char *which = ev > 0                      ? "EVAL_SEQ_LEN"
                        : a->set[A_TRAIN_SEQ_LEN] ? "TRAIN_SEQ_LEN"
                                                  : "TRAIN_SEQ_LEN (not given: the records with a SmearGate, as this file has, train at)";
    if (ctx < 2 || ctx > 1 << 20)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the context (%s) is %g; it must be in [2, %d]", where, which, ctx, 1 << 20);
    c->max_seq_len = (int)ctx;
    if (!a->set[A_ROTARY_TRAIN_SEQ_LEN] && ctx > 1024)
        return xsa_fail(err, XSA_EBADINPUT,
                        "%s: %s %g is past 1024, where the records whose Rotary is built with train_seq_len=1024 scale RoPE (NTK); "
                        "say which Rotary trained this checkpoint: \"ROTARY_TRAIN_SEQ_LEN\": 1024 for those records, 0 for a Rotary without scaling",
                        where, which, ctx);
    double r = pg_arch_or(a, A_ROTARY_TRAIN_SEQ_LEN, 0);
    int rd = model_rope_dims(c);
    if (r == 0) return 0;
    if (rd > 2) c->rope_ntk_from = (int)r, c->rope_ntk_base = c->rope_theta;  // (model_set_window: other windows)
    if (ctx <= r) return 0;
    if (rd <= 2) return xsa_fail(err, XSA_EBADINPUT, "%s: NTK scaling needs more than 2 rotated dimensions, not %d; check ROPE_DIMS", where, rd);
    c->rope_theta = (float)((double)c->rope_theta * pow(ctx / r, (double)rd / (rd - 2)));
    return 0;
}

// The attention gate and the smear of the records from 2026-04-16, from their tensors: the
// output gate attn.attn_gate_proj (H, W): y_h *= 2 sigmoid(w_h . x[:W]); attn.attn_gate_w (H, C):
// sigmoid(w_h . x), or (H, W < C), the sparse gate: sigmoid(s w_h . x[:W]), s SPARSE_ATTN_GATE_SCALE
// (the file does not record it); smear_gate.weight (1, W) with smear_lambda: the SmearGate on the
// raw embedding, at a BOS token too unless SMEAR_GATE_BOS_FIX (2026-04-27 on; the file cannot tell).
static int configure_gates(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path, const char *bprefix, xsa_error *err) {
    const char *src = a->path[0] ? a->path : path;
    char n[3][96];
    snprintf(n[0], sizeof n[0], "%s0.attn.attn_gate.weight", bprefix);
    snprintf(n[1], sizeof n[1], "%s0.attn.attn_gate_proj.weight", bprefix);
    snprintf(n[2], sizeof n[2], "%s0.attn.attn_gate_w", bprefix);
    const struct pv *g[3] = {shape_of(pt, n[0]), shape_of(pt, n[1]), shape_of(pt, n[2])};
    c->attn_gate_window = c->d_model, c->attn_gate_scale = 1, c->attn_gate_mult = 1;
    if (!!g[0] + !!g[1] + !!g[2] > 1) return xsa_fail(err, XSA_EBADINPUT, "%s: more than one kind of attention gate (%s, %s, %s); the records have one", path, n[0], n[1], n[2]);
    const struct pv *gw = g[1] ? g[1] : g[2];
    if (gw && (gw->ndim != 2 || gw->shape[0] != c->n_head || gw->shape[1] < 1 || gw->shape[1] > c->d_model))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s is not (%d heads, at most %d); not a parameter-golf attention gate", path, g[1] ? n[1] : n[2], c->n_head, c->d_model);
    if (gw) c->attn_gate_window = (int)gw->shape[1];
    if (g[1]) c->attn_gate_mult = 2;
    int sparse = g[2] && c->attn_gate_window < c->d_model;
    if (sparse && !a->set[A_SPARSE_ATTN_GATE_SCALE])
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s has the sparse attention gate (attn_gate_w of %d columns), whose SPARSE_ATTN_GATE_SCALE the file does not record (2026-04-23: 1.0, 2026-04-27 LQER: 0.5); give it in xsa_eval.json or --arch",
                        src, path, c->attn_gate_window);
    if (!sparse && a->set[A_SPARSE_ATTN_GATE_SCALE])
        return xsa_fail(err, XSA_EBADINPUT, "%s: SPARSE_ATTN_GATE_SCALE is the sparse attention gate's, which %s has not; fix the architecture file", a->path, path);
    if (sparse) c->attn_gate_scale = (float)a->v[A_SPARSE_ATTN_GATE_SCALE];
    const struct pv *sm = shape_of(pt, "smear_gate.weight");
    if (sm && (sm->ndim != 2 || sm->shape[0] != 1 || sm->shape[1] < 1 || sm->shape[1] > c->d_model))
        return xsa_fail(err, XSA_EBADINPUT, "%s: smear_gate.weight is not (1, at most %d); not the records' SmearGate", path, c->d_model);
    if (sm && !a->set[A_SMEAR_GATE_BOS_FIX])
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s has the SmearGate of the records from 2026-04-16 (smear_gate.weight), which smears into a BOS token in 2026-04-16 and not from 2026-04-27; the file cannot tell: give SMEAR_GATE_BOS_FIX (0 or 1) in xsa_eval.json or --arch",
                        src, path);
    if (!sm && a->set[A_SMEAR_GATE_BOS_FIX])
        return xsa_fail(err, XSA_EBADINPUT, "%s: SMEAR_GATE_BOS_FIX is the SmearGate's, which %s has not (no smear_gate.weight); fix the architecture file", a->path, path);
    c->smear_fwd_window = sm ? (int)sm->shape[1] : 0;
    c->smear_fwd_bos_fix = sm && a->v[A_SMEAR_GATE_BOS_FIX] != 0;
    return 0;
}

// The records' options their blocks show (GATED_ATTENTION, DTG_ENABLED, VALUE_RESIDUAL: all
// blocks or none), checked against the sidecar; TRIGRAM, which no tensor shows, from it.
static int configure_options(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path, const char *bprefix,
                             xsa_error *err) {
    static const struct { int key; const char *label, *suffix[2]; } opt[] = {  // (key -1: no setting, the tensors say)
        {A_GATED_ATTENTION, NULL, {"attn.attn_gate.weight", NULL}}, {A_DTG_ENABLED, NULL, {"dtg_gate.weight", NULL}},
        {A_VALUE_RESIDUAL, NULL, {"attn.vrl_alpha", "attn.vr_lambda"}}, {-1, "the attention gate", {"attn.attn_gate_proj.weight", "attn.attn_gate_w"}}};
    char n[96];
    for (size_t k = 0; k < sizeof opt / sizeof *opt; k++) {
        int has = 0, n_has = 0;
        for (int blk = 0; blk < c->n_blocks; blk++) {
            int here = 0;
            for (int s = 0; s < 2 && opt[k].suffix[s]; s++) {
                snprintf(n, sizeof n, "%s%d.%s", bprefix, blk, opt[k].suffix[s]);
                here |= shape_of(pt, n) != NULL;
            }
            n_has += here;
            if (!blk) has = here;
        }
        if (n_has && n_has != c->n_blocks)
            return xsa_fail(err, XSA_EBADINPUT, "%s: %d of %d blocks have %s's %s; the option is all blocks' or none's, so the file is damaged", path, n_has,
                            c->n_blocks, opt[k].label ? opt[k].label : pg_arch_names[opt[k].key], opt[k].suffix[0]);
        if (opt[k].key >= 0 && a->set[opt[k].key] && (a->v[opt[k].key] != 0) != has)
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s = %g disagrees with %s, which %s %s0.%s; fix the architecture file", a->path, pg_arch_names[opt[k].key],
                            a->v[opt[k].key], path, has ? "has" : "has no", bprefix, opt[k].suffix[0]);
        if (opt[k].key == A_VALUE_RESIDUAL) c->value_residual = has;
    }
    c->trigram = pg_arch_or(a, A_TRIGRAM, 0) != 0;
    if (c->trigram && !c->bigram_vocab)
        return xsa_fail(err, XSA_EBADINPUT, "%s: TRIGRAM hashes into the bigram table, but %s has no bigram.embed.weight; fix the architecture file", a->path, path);
    return configure_gates(c, pt, a, path, bprefix, err);
}

// The 2026-03-22..29 records' settings: LN_SCALE and the MLP's slope, which the file cannot
// tell (stated, when it has those records' tensors: their defaults changed between records),
// and the value embedding, which its tensors tell except for VE_LAYERS.
static int configure_record_line(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path, int swiglu,
                                 int banked, const struct pg_layout *L, xsa_error *err) {
    int rc = 0;
    const struct pv *ve = shape_of(pt, "ve_shared.embed.weight");
    const char *src = a->path[0] ? a->path : path;
    int gated_skips = shape_of(pt, "skip_gates") != NULL;  // the 2026-03-31 GPT and every later record's
    if (banked || ve || gated_skips) {
        const char *why = banked ? "weight banks" : ve ? "value embeddings" : "gated skips (skip_gates)";
        if (!a->set[A_LN_SCALE])
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s has the 2026-03-22+ records' %s but no LN_SCALE is given, which the file does not record (those records default to 1); give LN_SCALE in xsa_eval.json or --arch",
                            src, path, why);
        // (and where XSA ran and how many dimensions RoPE turns: every one of those records sets
        // both, and the defaults, no XSA and all dimensions, would score another model)
        if (!a->set[A_XSA_LAST_N])
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s has the 2026-03-22+ records' %s but no XSA_LAST_N is given, which the file does not record (every such record runs XSA in its last layers); give the XSA_LAST_N its run used (0: none) in xsa_eval.json or --arch",
                            src, path, why);
        if (!a->set[A_ROPE_DIMS])
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s has the 2026-03-22+ records' %s but no ROPE_DIMS is given, which the file does not record (those records rotate 16 dimensions; 0: all); give ROPE_DIMS in xsa_eval.json or --arch",
                            src, path, why);
        if (!swiglu && !a->set[A_NEGATIVE_SLOPE])
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s has the 2026-03-22+ records' %s but no NEGATIVE_SLOPE is given, which the file does not record (0.5 from 2026-03-23: leaky_relu(x, 0.5)^2; 0: relu^2, as 2026-03-22); give NEGATIVE_SLOPE in xsa_eval.json or --arch",
                            src, path, why);
    }
    c->ln_scale = pg_arch_or(a, A_LN_SCALE, 0) != 0;
    c->mlp_leaky_slope = (float)pg_arch_or(a, A_NEGATIVE_SLOPE, 0);
    if (swiglu && c->mlp_leaky_slope != 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: NEGATIVE_SLOPE is the relu^2 MLP's, but %s has a SwiGLU MLP; fix the architecture file", a->path, path);
    if (a->set[A_VE_ENABLED] && (a->v[A_VE_ENABLED] != 0) != (ve != NULL))
        return xsa_fail(err, XSA_EBADINPUT, "%s: VE_ENABLED = %g disagrees with %s, which %s ve_shared.embed.weight; fix the architecture file", a->path,
                        a->v[A_VE_ENABLED], path, ve ? "has" : "has no");
    if (!ve) return 0;
    if (ve->ndim != 2 || ve->shape[0] != c->vocab_size)
        return xsa_fail(err, XSA_EBADINPUT, "%s: ve_shared.embed.weight is not (%d, VE_DIM); not a parameter-golf value embedding", path, c->vocab_size);
    c->ve_dim = (int)ve->shape[1];
    if ((rc = pg_agree(a, A_VE_DIM, c->ve_dim, "ve_shared.embed.weight columns", path, err))) return rc;
    if (!a->set[A_VE_LAYERS])
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s has value embeddings, whose layers it does not record; give VE_LAYERS (the records: \"9,10\") in xsa_eval.json or --arch",
                        src, path);
    int n_scales = count_blocks(pt, "ve_layer_scales.");
    if (a->ve.n != n_scales)
        return xsa_fail(err, XSA_EBADINPUT, "%s: VE_LAYERS \"%s\" names %d layers but %s has %d ve_layer_scales; fix the architecture file", a->path, a->ve.text,
                        a->ve.n, path, n_scales);
    if (c->n_blocks != c->n_layer && !L->phys_blocks)
        return xsa_fail(err, XSA_EBADINPUT, "%s: value embeddings with shared blocks, which xsa-eval does not run together", path);
    for (int i = 0; i < a->ve.n; i++)  // (layers, or with one block per physical layer, blocks)
        if (a->ve.v[i] >= (L->phys_blocks ? L->n_phys : c->n_layer))
            return xsa_fail(err, XSA_EBADINPUT, "%s: VE_LAYERS \"%s\" names layer %d, past the %d layers of %s; fix the architecture file", a->path, a->ve.text,
                            a->ve.v[i], L->phys_blocks ? L->n_phys : c->n_layer, path);
    return 0;
}

// The largest N + 1 of the tensors `prefix`N.`suffix` (0: none).
static int count_blocks_with(struct pg_tensors *pt, const char *prefix, const char *suffix) {
    int n = 0;
    size_t k = strlen(prefix), ks = strlen(suffix);
    for (int i = 0; i < pt->n; i++) {
        const char *s = pt->e[i].name;
        size_t len = strlen(s);
        if (strncmp(s, prefix, k) || len < k + ks || strcmp(s + len - ks, suffix)) continue;
        int idx = atoi(s + k);
        if (idx >= 0 && idx < MODEL_MAX_LAYERS && idx + 1 > n) n = idx + 1;
    }
    return n;
}

// REPEAT_UNTIE_MLP (and _LAYERS), when given, against the repeat_mlp.i tensors: entry i (the
// i-th recurrent layer) has fc and proj ("full") or proj ("down") when untied, nothing else.
static int check_untie(struct pg_tensors *pt, const struct pg_arch *a, const char *path, xsa_error *err) {
    static const char *modes[] = {"none", "down", "full"};
    char n[96];
    for (int i = 0; i < a->untie.n; i++)
        if (!pg_list_has(&a->recur, a->untie.v[i]))
            return xsa_fail(err, XSA_EBADINPUT, "%s: REPEAT_UNTIE_MLP_LAYERS \"%s\" names layer %d, which RECUR_LAYERS \"%s\" does not; fix the architecture file", a->path,
                            a->untie.text, a->untie.v[i], a->recur.text);
    for (int i = 0; i < a->recur.n; i++) {
        snprintf(n, sizeof n, "repeat_mlp.%d.fc.weight", i);
        int fc = shape_of(pt, n) != NULL;
        snprintf(n, sizeof n, "repeat_mlp.%d.proj.weight", i);
        int proj = shape_of(pt, n) != NULL;
        if (fc && !proj) return xsa_fail(err, XSA_EBADINPUT, "%s: repeat_mlp.%d has fc.weight but no proj.weight; the file is damaged", path, i);
        if (!a->set[A_REPEAT_UNTIE_MLP]) continue;
        int untied = a->untie_mode != UNTIE_NONE && (!a->untie.n || pg_list_has(&a->untie, a->recur.v[i]));
        if (fc != (untied && a->untie_mode == UNTIE_FULL) || proj != untied)
            return xsa_fail(err, XSA_EBADINPUT, "%s: REPEAT_UNTIE_MLP \"%s\"%s%s%s disagrees with %s, whose repeat_mlp.%d (recurrent layer %d) has %s; fix the architecture file",
                            a->path, modes[a->untie_mode], a->untie.n ? " on layers \"" : "", a->untie.n ? a->untie.text : "", a->untie.n ? "\"" : "", path, i,
                            a->recur.v[i], fc ? "fc and proj weights" : proj ? "proj weights only" : "no weights");
    }
    return 0;
}

// Layer looping (the records from 2026-04-03 on: NUM_LOOPS, LOOP_START, LOOP_END): the blocks
// are the physical layers, and the layers run 0 .. LOOP_START - 1, then LOOP_START .. LOOP_END
// NUM_LOOPS + 1 times, then the rest, as the 2026-04-05 record's GPT builds its encoder and
// decoder indices (its eval turns looping on). The file does not record the schedule.
static int configure_loops(struct model_config *c, const struct pg_arch *a, const char *path, int n_rep, struct pg_layout *L, xsa_error *err) {
    int nl = (int)pg_arch_or(a, A_NUM_LOOPS, 0), s0 = (int)pg_arch_or(a, A_LOOP_START, -1), s1 = (int)pg_arch_or(a, A_LOOP_END, -1);
    if (nl == 0) {
        if (a->set[A_PARALLEL_RESIDUAL_START] && a->v[A_PARALLEL_RESIDUAL_START] >= 0)
            return xsa_fail(err, XSA_EBADINPUT, "%s: PARALLEL_RESIDUAL_START is the looped records' (NUM_LOOPS); xsa-eval reads it with them only", a->path);
        return 0;
    }
    if (s0 < 0 || s1 < 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: NUM_LOOPS %d runs LOOP_START .. LOOP_END again, but they are not given (the file does not record them; the 2026-04-05 record: 4 and 5, those from 2026-04-09: 3 and 5); give both",
                        a->path, nl);
    if (n_rep || a->set[A_RECUR_LAYERS] || c->n_layer != c->n_blocks)
        return xsa_fail(err, XSA_EBADINPUT, "%s: NUM_LOOPS with RECUR_LAYERS, shared blocks or passes; no parameter-golf GPT has both", a->path);
    if (s0 > s1 || s1 >= L->n_phys)
        return xsa_fail(err, XSA_EBADINPUT, "%s: LOOP_START %d .. LOOP_END %d must be layers of the %d of %s, the first at most the last", a->path, s0, s1, L->n_phys, path);
    long V = (long)L->n_phys + (long)nl * (s1 - s0 + 1);
    if (V > MODEL_MAX_LAYERS) return xsa_fail(err, XSA_EBADINPUT, "%s: NUM_LOOPS %d makes %ld layers, more than %d", a->path, nl, V, MODEL_MAX_LAYERS);
    int k = 0;
    for (int p = 0; p < s0; p++) L->blk[k++] = p;
    for (int r = 0; r <= nl; r++)
        for (int p = s0; p <= s1; p++) L->blk[k++] = p;
    for (int p = s1 + 1; p < L->n_phys; p++) L->blk[k++] = p;
    c->n_layer = k, L->loops = L->phys_blocks = 1;
    c->n_physical = L->n_phys, c->recur_runs = nl + 1, c->layer_loops = 1;
    snprintf(c->recur_layers, sizeof c->recur_layers, "%d..%d", s0, s1);
    // GPT-J blocks (PARALLEL_RESIDUAL_START: 2026-04-06 HessianSDClip, 2026-04-09): the MLP reads
    // the block's input, not its attention's output; the looped records differ, and their files
    // are alike, so it must be given.
    if (!a->set[A_PARALLEL_RESIDUAL_START])
        return xsa_fail(err, XSA_EBADINPUT, "%s: a looped record must give PARALLEL_RESIDUAL_START, which the file does not record: -1 for none (2026-04-05), 7 for the 2026-04-06 HessianSDClip and 2026-04-09 records",
                        a->path);
    int ps = (int)a->v[A_PARALLEL_RESIDUAL_START];
    for (int l = 0; l < c->n_layer; l++) c->mlp_reads_input[l] = ps >= 0 && L->blk[l] >= ps;
    return 0;
}

// The 2026-04-03 record's recurrence: one block per physical layer, RECUR_LAYERS run again after
// the last of them (0 .. cutoff - 1, RECUR_LAYERS, cutoff .. NUM_LAYERS - 1, its
// _get_virtual_layers), the repeats' MLPs repeat_mlp.i where those have weights (its
// _get_repeat_mlp: the second pass of RECUR_LAYERS[i]), the skips sized for the physical layers.
static int configure_physical_recurrence(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path,
                                         struct pg_layout *L, xsa_error *err) {
    int n = a->recur.n, cutoff = a->recur.v[n - 1] + 1, k = 0;
    if (shape_of(pt, "repeat_mlp.0.fc.weight") || shape_of(pt, "repeat_mlp.0.proj.weight"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: untied repeat MLPs (repeat_mlp) with one block per layer, which xsa-eval does not implement (the 2026-04-03 record ran without them)", path);
    if (a->set[A_NUM_LOOPS] || c->n_layer != c->n_blocks)
        return xsa_fail(err, XSA_EBADINPUT, "%s: RECUR_LAYERS with NUM_LOOPS, shared blocks or passes; no parameter-golf GPT has both", a->path);
    if (cutoff > L->n_phys)
        return xsa_fail(err, XSA_EBADINPUT, "%s: RECUR_LAYERS \"%s\" names layer %d, past the %d layers of %s; fix the architecture file", a->path, a->recur.text,
                        cutoff - 1, L->n_phys, path);
    if (L->n_phys + n > MODEL_MAX_LAYERS) return xsa_fail(err, XSA_EBADINPUT, "%s: RECUR_LAYERS makes more than %d layers", a->path, MODEL_MAX_LAYERS);
    for (int p = 0; p < cutoff; p++) L->blk[k++] = p;
    for (int i = 0; i < n; i++) L->blk[k++] = a->recur.v[i];
    for (int p = cutoff; p < L->n_phys; p++) L->blk[k++] = p;
    c->n_layer = k, L->phys_blocks = 1;
    c->n_physical = L->n_phys, c->recur_runs = 2;
    snprintf(c->recur_layers, sizeof c->recur_layers, "%s", a->recur.text);
    return 0;
}

// Depth recurrence and a layer without attention (the 2026-03-31 record). Its blocks are
// virtual layers over NUM_LAYERS physical ones (the banks' depth), RECUR_LAYERS run twice in
// the order of its _v2p_recur: 0 .. cutoff - 1, RECUR_LAYERS, cutoff .. NUM_LAYERS - 1 (cutoff:
// the last recurrent layer + 1), and, as its _get_block_weights, the blocks from the middle
// (n_blocks / 2) on, one per recurrent layer, run repeat_mlp.i's MLP where that has weights.
// DISABLE_LAYER0_ATTN: block 0 has no attention; its int6 dict drops the weights, so an
// unbanked file shows it, while banks keep them and the record's file must say.
static int configure_depth(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path, struct pg_layout *L, xsa_error *err) {
    const char *src = a->path[0] ? a->path : path;
    char n[96];
    for (int k = 0; k < MODEL_MAX_LAYERS; k++) L->mat[k] = k, L->blk[k] = k % c->n_blocks, L->repeat[k] = -1;
    L->n_phys = c->n_blocks;
    const struct pv *qo = L->banked ? shape_of(pt, "qo_bank") : NULL;
    if (qo && qo->ndim == 3 && qo->shape[0] >= 2 && qo->shape[0] % 2 == 0 && qo->shape[0] / 2 <= c->n_blocks) {
        L->n_phys = (int)(qo->shape[0] / 2);  // (any other qo_bank: build_banks names it)
    } else if (!L->banked && !strcmp(L->bprefix, "blocks.") && count_blocks_with(pt, "blocks.", ".mlp.proj.weight") > 0) {
        L->n_phys = count_blocks_with(pt, "blocks.", ".mlp.proj.weight");
    }
    int n_rep = c->n_blocks - L->n_phys;
    if (n_rep < 0 || (!a->set[A_RECUR_LAYERS] && n_rep > 0))
        return xsa_fail(err, XSA_EBADINPUT, n_rep < 0 ? "%s: %s has %d blocks but %d layers of MLP weights; the file is damaged"
                                                      : "%s: %s has %d blocks over %d layers of weights: depth recurrence, whose layers the file does not record; give RECUR_LAYERS (the 2026-03-31 record: \"4,5\") in xsa_eval.json or --arch",
                        src, path, c->n_blocks, L->n_phys);
    int rc = 0;
    if (a->recur.n && !n_rep) {  // one block per physical layer: 2026-04-03's recurrence
        if ((rc = configure_physical_recurrence(c, pt, a, path, L, err))) return rc;
    } else if (a->recur.n != n_rep)
        return xsa_fail(err, XSA_EBADINPUT, "%s: RECUR_LAYERS \"%s\" repeats %d layers but %s has %d blocks over %d layers of weights (%d repeated); fix the architecture file",
                        a->path, a->recur.text, a->recur.n, path, c->n_blocks, L->n_phys, n_rep);
    if (n_rep && c->n_layer != c->n_blocks)
        return xsa_fail(err, XSA_EBADINPUT, "%s: depth recurrence with shared blocks or passes; no parameter-golf GPT has both", path);
    for (int i = 0; i < n_rep; i++)
        if (a->recur.v[i] >= L->n_phys)
            return xsa_fail(err, XSA_EBADINPUT, "%s: RECUR_LAYERS \"%s\" names layer %d, past the %d layers of %s; fix the architecture file", a->path, a->recur.text,
                            a->recur.v[i], L->n_phys, path);
    if (a->canon.n || shape_of(pt, "canon_a") || shape_of(pt, "canon_c"))  // (CANON_AC_LAYERS: off in the record's run)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s has canon layers (CANON_AC_LAYERS, canon_a / canon_c: 4-tap causal mixes of the normed inputs), which xsa-eval does not implement; it refuses the file rather than score it without them",
                        src, path);
    rc = check_untie(pt, a, path, err);
    if (rc || (rc = configure_loops(c, a, path, L->phys_blocks ? 1 : n_rep, L, err))) return rc;
    if (n_rep) {
        int k = 0, cutoff = a->recur.v[n_rep - 1] + 1;
        for (int p = 0; p < cutoff; p++) L->mat[k++] = p;
        for (int i = 0; i < n_rep; i++) L->mat[k++] = a->recur.v[i];
        for (int p = cutoff; p < L->n_phys; p++) L->mat[k++] = p;
        for (int i = 0; i < n_rep; i++) L->repeat[c->n_blocks / 2 + i] = i;
        c->n_physical = L->n_phys, c->recur_runs = 2;
        snprintf(c->recur_layers, sizeof c->recur_layers, "%s", a->recur.text);
    }
    // Layer 0 without attention: an unbanked file lacks its matrices (while another layer has them).
    snprintf(n, sizeof n, "%s0.attn.c_q.weight", L->bprefix);
    int dropped = !L->banked && !shape_of(pt, n) && L->n_phys > 1;
    if (a->set[A_DISABLE_LAYER0_ATTN] && (a->v[A_DISABLE_LAYER0_ATTN] != 0) != dropped && !L->banked)
        return xsa_fail(err, XSA_EBADINPUT, "%s: DISABLE_LAYER0_ATTN = %g disagrees with %s, which %s %s; fix the architecture file", a->path, a->v[A_DISABLE_LAYER0_ATTN], path,
                        dropped ? "has no" : "has", n);
    if (L->banked && !L->loops && !a->set[A_DISABLE_LAYER0_ATTN] && shape_of(pt, "skip_gates"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s is the 2026-03-31 record's GPT (skip_gates), whose banks keep layer 0's attention weights whether it runs or not; give DISABLE_LAYER0_ATTN (the record: 1) in xsa_eval.json or --arch",
                        src, path);
    int off0 = a->set[A_DISABLE_LAYER0_ATTN] ? a->v[A_DISABLE_LAYER0_ATTN] != 0 : dropped;
    for (int l = 0; l < c->n_layer; l++) c->attn_off[l] = off0 && (L->phys_blocks ? L->blk[l] == 0 : l == 0);  // (block 0: each pass)
    L->no_attn0 = dropped;
    if (off0 && !L->phys_blocks && pg_list_has(&a->recur, 0))
        return xsa_fail(err, XSA_EBADINPUT, "%s: layer 0 is both without attention (DISABLE_LAYER0_ATTN) and recurrent (RECUR_LAYERS \"%s\"), whose second pass would need the attention weights the file drops",
                        a->path, a->recur.text);
    return 0;
}

// The lanes of 2026-04-04 (RECUR_LAYERS) and 2026-04-08 (NUM_LOOPS), shown by their lane_merge:
// from the first decoder layer whose block is PARALLEL_START_LAYER or later (the file does not
// record it) every layer runs attention on lane 0 (mixed with x0) and the MLP on lane 1 alone,
// and the final norm reads lane_merge m lane 0 + (1 - m) lane 1; later skips go into lane 0
// (2026-04-08) or nowhere (2026-04-04, whose skips go into its single stream, unread after the split).
static int configure_split_lanes(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path, const struct pg_layout *L,
                                 int has_lambdas, xsa_error *err) {
    const struct pv *lm = shape_of(pt, "lane_merge");
    if (has_lambdas || !L->phys_blocks || lm->ndim != 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a lane_merge %s; the 2026-04-04 and 2026-04-08 records' is a scalar in a file with RECUR_LAYERS or NUM_LOOPS and no parallel lambdas",
                        path, has_lambdas ? "beside parallel_post_lambdas" : lm->ndim ? "that is not a scalar" : "in a file without RECUR_LAYERS or NUM_LOOPS");
    if (!a->set[A_PARALLEL_START_LAYER])
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s has the two lanes of 2026-04-04/08 (lane_merge) but no PARALLEL_START_LAYER is given, which the file does not record (those records: 7); give it in xsa_eval.json or --arch",
                        a->path[0] ? a->path : path, path);
    int start = (int)a->v[A_PARALLEL_START_LAYER], n_enc = c->unet_skips ? c->n_layer / 2 : 1;
    c->lanes_split = 1, c->lanes_skip_lane0 = L->loops;
    for (int k = n_enc; k < c->n_layer && start > 0 && !c->lanes_from; k++)
        if (L->blk[k] >= start) c->lanes_from = k;
    if (c->lanes_from && (c->skip_after || shape_of(pt, "blocks.0.dtg_gate.weight")))
        return xsa_fail(err, XSA_EBADINPUT, "%s: two residual lanes with skips after the block or DTG gates; no parameter-golf GPT has both", path);
    return 0;
}

// Two residual lanes (PARALLEL_RESIDUAL, parallel_*_lambdas), from PARALLEL_START_LAYER, which
// the file does not record. The 2026-03-31 record's: the blocks whose physical layer (or, with
// PARALLEL_START_LAYER_IS_PHYSICAL 0, whose own index) is the start or later; attention, then
// the MLP on the mixed lane 1, each into both lanes. The looped records' (2026-04-10 on, the same
// tensors): the decoder layers whose block is the start or later (and the start above 0), the
// two sublayers side by side, skips into lane 0 only. The final norm reads PARALLEL_FINAL_LANE.
static int configure_lanes(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path, const struct pg_layout *L, xsa_error *err) {
    int has = shape_of(pt, "parallel_post_lambdas") != NULL;
    const char *src = a->path[0] ? a->path : path;
    if (a->set[A_PARALLEL_RESIDUAL] && (a->v[A_PARALLEL_RESIDUAL] != 0) != has)
        return xsa_fail(err, XSA_EBADINPUT, "%s: PARALLEL_RESIDUAL = %g disagrees with %s, which %s parallel_post_lambdas; fix the architecture file", a->path,
                        a->v[A_PARALLEL_RESIDUAL], path, has ? "has" : "has no");
    if (c->value_residual && c->attn_off[0])
        return xsa_fail(err, XSA_EBADINPUT, "%s: VALUE_RESIDUAL mixes in layer 0's v, but layer 0 has no attention (DISABLE_LAYER0_ATTN); fix the architecture file", src);
    if (shape_of(pt, "lane_merge")) return configure_split_lanes(c, pt, a, path, L, has, err);
    if (!has) return 0;
    if (!a->set[A_PARALLEL_START_LAYER])
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s has two residual lanes (parallel_post_lambdas) but no PARALLEL_START_LAYER is given, which the file does not record (the 2026-03-31 record: 7, the looped records from 2026-04-10: 8); give it in xsa_eval.json or --arch",
                        src, path);
    int start = (int)a->v[A_PARALLEL_START_LAYER], phys = pg_arch_or(a, A_PARALLEL_START_LAYER_IS_PHYSICAL, 1) != 0, prev = 0;
    int n_enc = c->unet_skips ? c->n_layer / 2 : 1;
    if (a->set[A_PARALLEL_FINAL_LANE] && !L->loops)
        return xsa_fail(err, XSA_EBADINPUT, "%s: PARALLEL_FINAL_LANE is the looped records' (2026-04-10 on); the 2026-03-31 record's final norm reads the lanes' mean", a->path);
    c->lanes_together = L->loops;
    c->lanes_final = a->lanes_final;
    for (int k = 0; k < c->n_layer; k++) {
        int on = L->loops ? k >= n_enc && start > 0 && L->blk[k] >= start : (phys ? L->mat[L->blk[k]] : k) >= start;
        if (prev && !on)
            return xsa_fail(err, XSA_EBADINPUT, "%s: PARALLEL_START_LAYER %d puts layer %d on one lane after layers on two (recurrence runs physical layers out of order); xsa-eval runs two lanes over the last layers only",
                            a->path, start, k);
        if (on && !prev) c->lanes_from = k;
        prev = on;
    }
    if (prev && c->lanes_from < n_enc)
        return xsa_fail(err, XSA_EBADINPUT, "%s: PARALLEL_START_LAYER %d gives layer %d two lanes; xsa-eval runs them from the decoder's first layer (%d) on, as the record does",
                        a->path, start, c->lanes_from, n_enc);
    if (prev && (c->skip_after || (c->n_blocks != c->n_layer && !L->loops) || shape_of(pt, "blocks.0.dtg_gate.weight")))
        return xsa_fail(err, XSA_EBADINPUT, "%s: two residual lanes with shared blocks, skips after the block or DTG gates; no parameter-golf GPT has both", path);
    return 0;
}

// RecurrentGPT's depth and tables (configure): n_layer from depth_adapters (or EFFECTIVE_DEPTH
// at rank 0), the LoRA rank, and the bigram table with its own hash.
static int configure_recurrent_gpt(struct model_config *c, struct pg_tensors *pt, const struct pg_arch *a, const char *path, xsa_error *err) {
    const char *src = a->path[0] ? a->path : path;
    const struct pv *be = shape_of(pt, "bigram_emb.weight"), *qd = shape_of(pt, "depth_adapters.0.q_down.weight");
    int rc = pg_agree(a, A_NUM_UNIQUE_BLOCKS, c->n_blocks, "blocks count", path, err), na = count_blocks(pt, "depth_adapters.");
    if (rc) return rc;
    if (!be || be->ndim != 2 || be->shape[0] < 1 || be->shape[1] < 1)
        return xsa_fail(err, XSA_EBADINPUT, "%s: bigram_emb.weight is not a (BIGRAM_BUCKETS, BIGRAM_DIM) table; not the 2026-03-21 RecurrentGPT", path);
    c->bigram_vocab = (int)be->shape[0], c->bigram_dim = (int)be->shape[1], c->bigram_mul_hash = 1;
    if ((rc = pg_agree(a, A_BIGRAM_BUCKETS, c->bigram_vocab, "bigram_emb.weight rows", path, err)) ||
        (rc = pg_agree(a, A_BIGRAM_DIM, c->bigram_dim, "bigram_emb.weight columns", path, err)))
        return rc;
    if (na && (!qd || qd->ndim != 2 || qd->shape[0] < 1 || qd->shape[0] > 64))
        return xsa_fail(err, XSA_EBADINPUT, "%s: depth_adapters.0.q_down.weight is missing or not (DEPTH_LORA_RANK, %d) with a rank of 1 to 64; the file is damaged or its rank too large",
                        path, c->d_model);
    c->depth_lora_rank = na ? (int)qd->shape[0] : 0;
    if ((rc = pg_agree(a, A_DEPTH_LORA_RANK, c->depth_lora_rank, na ? "depth_adapters.0.q_down.weight rows" : "depth_adapters (none)", path, err))) return rc;
    if (na) {
        c->n_layer = na;
        return pg_agree(a, A_EFFECTIVE_DEPTH, na, "depth_adapters count", path, err);
    }
    if (!a->set[A_EFFECTIVE_DEPTH])
        return xsa_fail(err, XSA_EBADINPUT, "%s: %d blocks run as EFFECTIVE_DEPTH layers, which a file without depth adapters does not record; give EFFECTIVE_DEPTH in xsa_eval.json or --arch",
                        src, c->n_blocks);
    c->n_layer = (int)a->v[A_EFFECTIVE_DEPTH];
    return 0;
}

static int configure(struct model *m, struct pg_tensors *pt, const struct pg_arch *a, const char *path, struct pg_layout *L, xsa_error *err) {
    struct model_config *c = &m->cfg;
    const struct pv *emb = shape_of(pt, "tok_emb.weight");
    if (!emb || emb->ndim != 2)
        return xsa_fail(err, XSA_EBADINPUT, "%s: no 2-D tok_emb.weight; not a parameter-golf GPT checkpoint", path);
    c->vocab_size = (int)emb->shape[0], c->d_model = (int)emb->shape[1];
    int rc = pg_agree(a, A_VOCAB_SIZE, c->vocab_size, "tok_emb.weight rows", path, err);
    if (!rc) rc = pg_agree(a, A_MODEL_DIM, c->d_model, "tok_emb.weight columns", path, err);
    if (rc) return rc;
    int nb = count_blocks(pt, "blocks."), ns = count_blocks(pt, "shared_blocks.");
    const char **bprefix = &L->bprefix;
    int *swiglu = &L->swiglu, *fused = &L->fused, *banked = &L->banked, *passes = &L->passes;
    *bprefix = ns ? "shared_blocks." : "blocks.";
    c->n_blocks = ns ? ns : nb;
    if (!c->n_blocks || (nb && ns)) return xsa_fail(err, XSA_EBADINPUT, "%s: %s; not a parameter-golf GPT checkpoint", path, nb && ns ? "both blocks.N and shared_blocks.N tensors" : "no blocks.N tensors");
    char n[96];
    snprintf(n, sizeof n, "%s0.attn.q_gain", *bprefix);
    const struct pv *qg = shape_of(pt, n);
    if (qg && qg->ndim == 1) {
        c->n_head = (int)qg->shape[0];
        if ((rc = pg_agree(a, A_NUM_HEADS, c->n_head, n, path, err))) return rc;
    } else if (a->set[A_NUM_HEADS]) {
        c->n_head = (int)a->v[A_NUM_HEADS];
    } else {
        return xsa_fail(err, XSA_EBADINPUT, "%s: no %s to count heads by; give NUM_HEADS in xsa_eval.json or --arch", path, n);
    }
    if (c->n_head < 1 || c->d_model % c->n_head || (c->d_model / c->n_head) % 2)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %d heads do not split MODEL_DIM %d into even head dimensions", path, c->n_head, c->d_model);
    c->head_dim = c->d_model / c->n_head;
    *banked = shape_of(pt, "kv_bank") != NULL;  // banks: (layers, out, in) stacks; dimension 1 is the width
    if (*banked) snprintf(n, sizeof n, "kv_bank");
    else snprintf(n, sizeof n, "%s%d.attn.c_k.weight", *bprefix, c->n_blocks > 1 && !shape_of(pt, "blocks.0.attn.c_k.weight") ? 1 : 0);  // (layer 0 may have no attention)
    const struct pv *ck = shape_of(pt, n);
    if (!ck || ck->ndim != 2 + *banked || ck->shape[*banked] % c->head_dim || ck->shape[*banked] == 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s is missing or not (%skv_heads * %d, %d)", path, n, *banked ? "2 * layers, " : "", c->head_dim, c->d_model);
    c->n_kv_head = (int)(ck->shape[*banked] / c->head_dim);
    if ((rc = pg_agree(a, A_NUM_KV_HEADS, c->n_kv_head, n, path, err))) return rc;
    snprintf(n, sizeof n, "%s0.mlp.gate_up.weight", *bprefix);
    const struct pv *mlp = *banked ? NULL : shape_of(pt, n);
    *fused = mlp != NULL;
    snprintf(n, sizeof n, "%s0.mlp.gate.weight", *bprefix);
    *swiglu = *fused || shape_of(pt, n);
    if (*banked) snprintf(n, sizeof n, "mlp_up_bank"), mlp = shape_of(pt, n);
    else if (!mlp) snprintf(n, sizeof n, "%s0.mlp.fc.weight", *bprefix), mlp = shape_of(pt, n);
    if (!mlp || mlp->ndim != 2 + *banked || mlp->shape[0] % (*fused ? 2 : 1))
        return xsa_fail(err, XSA_EBADINPUT, "%s: no %s-D %s (or gate_up); not a parameter-golf GPT checkpoint", path, *banked ? "3" : "2", n);
    c->d_ff = (int)(mlp->shape[*banked] / (*fused ? 2 : 1));
    // The records size the MLP as int(MLP_MULT * MODEL_DIM): any MULT that rounds down to d_ff agrees.
    if (!(a->set[A_MLP_MULT] && (long)(a->v[A_MLP_MULT] * c->d_model) == c->d_ff) &&
        (rc = pg_agree(a, A_MLP_MULT, (double)c->d_ff / c->d_model, n, path, err)))
        return rc;
    if (a->set[A_USE_SWIGLU] && (a->v[A_USE_SWIGLU] != 0) != *swiglu)
        return xsa_fail(err, XSA_EBADINPUT, "%s: USE_SWIGLU = %g disagrees with %s, whose MLP is %s; fix the architecture file", a->path, a->v[A_USE_SWIGLU], path,
                        *swiglu ? "SwiGLU" : "relu^2");
    const struct pv *pg = shape_of(pt, "pass_gate"), *sw = shape_of(pt, "skip_weights");
    *passes = pg && pg->ndim == 2 ? (int)pg->shape[0] : 1;
    if ((rc = pg_agree(a, A_NUM_RECURRENCE_PASSES, *passes, "pass_gate rows", path, err))) return rc;
    // The 2026-03-21 non-record's RecurrentGPT (DepthRecurrence_MixedPrecisionQuant), known by
    // its bigram table's name: NUM_UNIQUE_BLOCKS blocks cycled over EFFECTIVE_DEPTH layers, each
    // layer with its own depth_adapters.i (the count, unless the rank is 0).
    int recurrent = shape_of(pt, "bigram_emb.weight") != NULL;
    if (recurrent && (rc = configure_recurrent_gpt(c, pt, a, path, err))) return rc;
    if (ns) {  // a cycle of shared blocks: NUM_LAYERS is not in the shapes
        if ((rc = pg_agree(a, A_SHARED_CYCLE_LEN, ns, "shared_blocks count", path, err))) return rc;
        if (!a->set[A_NUM_LAYERS])
            return xsa_fail(err, XSA_EBADINPUT, "%s: %d shared blocks run as NUM_LAYERS layers, which the file does not record; give NUM_LAYERS in xsa_eval.json or --arch",
                            path, ns);
        c->n_layer = (int)a->v[A_NUM_LAYERS];
    } else if (!recurrent) {
        c->n_layer = c->n_blocks * *passes;
    }
    if ((rc = configure_depth(c, pt, a, path, L, err))) return rc;
    if (!ns && !recurrent && (rc = pg_agree(a, A_NUM_LAYERS, L->n_phys, L->banked ? "qo_bank layers" : "blocks count", path, err))) return rc;
    if (c->n_layer < 1 || c->n_layer > MODEL_MAX_LAYERS || c->n_layer < c->n_blocks)
        return xsa_fail(err, XSA_EBADINPUT, "%s: NUM_LAYERS %d is outside [%d, %d]", a->path[0] ? a->path : path, c->n_layer, c->n_blocks, MODEL_MAX_LAYERS);
    c->unet_skips = sw != NULL;
    if (L->phys_blocks && !L->loops) {  // 2026-04-03/04: sized for the physical layers, clamped (04-03) or cut (04-04)
        c->skip_rows = L->n_phys / 2;
        c->skip_stop = shape_of(pt, "lane_merge") != NULL;
    }
    if (sw && (sw->ndim != 2 || sw->shape[0] != (c->skip_rows ? c->skip_rows : c->n_layer / 2)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: skip_weights has %lld rows but %d layers have %d U-Net skips; check NUM_LAYERS (a looped record: NUM_LOOPS, LOOP_START and LOOP_END)", path,
                        sw->ndim ? (long long)sw->shape[0] : 0LL, c->n_layer, c->n_layer / 2);
    // NeoMakesGames's GPT (the one that names its blocks shared_blocks) adds a skip after its block.
    c->skip_after = (int)pg_arch_or(a, A_SKIP_AFTER_BLOCK, ns ? 1 : 0);
    const struct pv *be = shape_of(pt, "bigram.embed.weight");
    if (be && be->ndim == 2 && !recurrent) {
        c->bigram_vocab = (int)be->shape[0], c->bigram_dim = (int)be->shape[1];
        if ((rc = pg_agree(a, A_BIGRAM_VOCAB_SIZE, c->bigram_vocab, "bigram.embed.weight rows", path, err)) ||
            (rc = pg_agree(a, A_BIGRAM_DIM, c->bigram_dim, "bigram.embed.weight columns", path, err)))
            return rc;
        if (c->bigram_vocab < 2)  // the hash is taken mod (rows - 1)
            return xsa_fail(err, XSA_EBADINPUT, "%s: bigram.embed.weight has %d row%s; the bigram hash needs at least 2 "
                            "(it is taken modulo rows - 1): the file is damaged", path, c->bigram_vocab,
                            c->bigram_vocab == 1 ? "" : "s");
    } else if (!recurrent && a->set[A_BIGRAM_VOCAB_SIZE] && a->v[A_BIGRAM_VOCAB_SIZE] > 0) {
        // (BIGRAM_DIM alone is left be: the scripts default it with the bigram off)
        return xsa_fail(err, XSA_EBADINPUT, "%s: BIGRAM_VOCAB_SIZE = %g, but %s has no bigram.embed.weight; fix the "
                        "architecture file (0: no bigram)", a->path, a->v[A_BIGRAM_VOCAB_SIZE], path);
    }
    c->smear = shape_of(pt, "smear.gate") != NULL;
    c->tied_head = shape_of(pt, "lm_head.weight") == NULL;
    if (a->set[A_TIE_EMBEDDINGS] && (a->v[A_TIE_EMBEDDINGS] != 0) != c->tied_head)
        return xsa_fail(err, XSA_EBADINPUT, "%s: TIE_EMBEDDINGS = %g disagrees with %s, which %s lm_head.weight; fix the architecture file", a->path,
                        a->v[A_TIE_EMBEDDINGS], path, c->tied_head ? "has no" : "has");
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_HALF_NEG;
    c->rope_theta = (float)pg_arch_or(a, A_ROPE_BASE, 10000.0);
    if (!(c->rope_theta > 0))
        return xsa_fail(err, XSA_EBADINPUT, "%s: ROPE_BASE must be positive (the Rotary's inverse frequencies are "
                        "1 / ROPE_BASE^(2i/d))", a->path);
    c->rope_dims = (int)pg_arch_or(a, A_ROPE_DIMS, 0);
    if (c->rope_dims == c->head_dim) c->rope_dims = 0;
    if (c->rope_dims % 2 || c->rope_dims > c->head_dim)
        return xsa_fail(err, XSA_EBADINPUT, "%s: ROPE_DIMS %d must be even and at most the head dimension %d", a->path, c->rope_dims, c->head_dim);
    c->logit_softcap = (float)pg_arch_or(a, A_LOGIT_SOFTCAP, 30.0);
    if (!(c->logit_softcap > 0))  // the family's GPT raises "logit_softcap must be positive"
        return xsa_fail(err, XSA_EBADINPUT, "%s: LOGIT_SOFTCAP must be positive, as the family's GPT requires", a->path);
    if ((rc = context_and_ntk(c, a, path, c->smear || shape_of(pt, "skip_gates"), err))) return rc;
    c->norm_eps = FLT_EPSILON;  // F.rms_norm(eps=None) on float32: torch.finfo(float32).eps
    c->norm_weightless = c->qk_norm = c->embed_norm = 1;
    c->mlp_relu2 = !*swiglu;
    c->bos_id = 1, c->eos_id = 2;  // the family's SentencePiece specials (pad 0, bos 1, eos 2, unk 3)
    int xl = (int)pg_arch_or(a, A_XSA_LAST_N, 0);
    // The family's gated XSA makes attn.xsa_alpha in every block and runs it in the last
    // XSA_LAST_N only, which the file does not record: gates and no XSA_LAST_N would score SA,
    // so nothing scores it until --xsa says where (backend_check_model).
    for (int i = 0; i < pt->n && !a->set[A_XSA_LAST_N]; i++) {
        size_t k = strlen(pt->e[i].name);
        if (k >= 15 && !strcmp(pt->e[i].name + k - 15, ".attn.xsa_alpha")) c->xsa_unknown = 1;
    }
    if (xl > c->n_layer) return xsa_fail(err, XSA_EBADINPUT, "%s: XSA_LAST_N %d exceeds NUM_LAYERS %d", a->path, xl, c->n_layer);
    if (L->phys_blocks && xl > L->n_phys) return xsa_fail(err, XSA_EBADINPUT, "%s: XSA_LAST_N %d exceeds NUM_LAYERS %d", a->path, xl, L->n_phys);
    for (int l = 0; l < c->n_layer; l++) {  // a looped model's XSA and LN_SCALE are its blocks' (physical layers')
        int idx = L->phys_blocks ? L->blk[l] : l, n = L->phys_blocks ? L->n_phys : c->n_layer;
        c->xsa[l] = idx >= n - xl;
        // RecurrentGPT turns XSA on in the blocks the last XSA_LAST_N layers run: in every layer that runs them
        for (int j = c->n_layer - xl; c->bigram_mul_hash && j < c->n_layer; j++) c->xsa[l] |= L->blk[j] == L->blk[l];
        c->ln_layer[l] = (short)idx;
    }
    if ((rc = configure_options(c, pt, a, path, *bprefix, err))) return rc;
    if ((rc = configure_lanes(c, pt, a, path, L, err))) return rc;
    return configure_record_line(c, pt, a, path, *swiglu, *banked, L, err);
}

int pgolf_claims(const char *path) {
    size_t n = strlen(path);
    if (n >= 4 && !strcmp(path + n - 4, ".ptz")) return 1;
    if (!(n >= 3 && !strcmp(path + n - 3, ".pt")) && !(n >= 4 && !strcmp(path + n - 4, ".pth"))) return 0;
    char side[4200];
    pg_sidecar_path(path, side, sizeof side);
    return pg_arch_file() != NULL || access(side, F_OK) == 0;  // (a folder or FIFO there is refused by name)
}

static void release_st(void *p) {
    safetensors_close(p);
    free(p);
}

int pgolf_load(struct model *m, const char *path, xsa_error *err) {
    struct pg_arch a;
    int rc = pg_read_arch(&a, path, err);
    if (rc) return rc;
    if (a.mnanogpt) return mnanogpt_load(m, path, a.path, err);
    struct safetensors *st = xsa_calloc(1, sizeof *st);
    struct pg_tensors *pt = xsa_calloc(1, sizeof *pt);
    pt->path = path;
    int fi = 0;
    struct torch_file tf;
    memset(&tf, 0, sizeof tf);
    rc = safetensors_add_file(st, path, &fi, err);
    struct mapped_file *mf = rc ? NULL : &st->files[fi].mf;
    if (!rc) rc = file_map(path, mf, err);
    if (!rc && !mf->size) rc = xsa_fail(err, XSA_EBADINPUT, "%s: an empty file (0 bytes); re-download the artifact", path);
    const unsigned char *data = mf ? mf->data : NULL;
    size_t size = mf ? mf->size : 0;
    int pgrp = !rc && pgolf_pgrp_magic(data, size), opened = pgrp;
    const struct pv *root = NULL;
    if (pgrp) {  // the 2026-04-27 9Hp record's per-group container
        rc = pgolf_pgrp_open(&tf, st, fi, path, data, size, &root, err);
    } else {
        if (!rc && !torch_zip_magic(data, size)) {  // a .ptz: the torch.save inside
            unsigned char *raw = NULL;
            rc = pgolf_decompress(data, size, &raw, &size, path, err);
            if (!rc) safetensors_keep(st, fi, raw);
            data = raw;
        }
        opened = !rc;
        if (!rc) rc = torch_file_open_bytes(&tf, st, fi, path, data, size, err);
        root = tf.root;
    }
    // A modded-nanogpt state_step file ({"step", "code", "model": banks, ...}) beside a sidecar
    // that does not name the family would otherwise be refused as a corrupt parameter-golf file.
    const struct pv *inner = !rc && root && root->kind == PV_DICT ? up_dict_get(root, "model") : NULL;
    if (inner && inner->kind == PV_DICT && (up_dict_get(inner, "qk_bank") || up_dict_get(inner, "_orig_mod.qk_bank")))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: a modded-nanogpt state_step file (its model holds qk_bank), read as "
                      "parameter-golf's because %s does not say \"FAMILY\": \"modded-nanogpt\"; add that", path,
                      a.path[0] ? a.path : "its xsa_eval.json");
    if (!rc) rc = pgolf_read_root(pt, root, err);
    struct pg_layout *L = xsa_calloc(1, sizeof *L);
    if (!rc) rc = configure(m, pt, &a, path, L, err);
    if (!rc) m->layers = xsa_calloc((size_t)m->cfg.n_layer, sizeof *m->layers);
    struct pg_build b = {.pt = pt, .a = &a, .L = L, .m = m, .path = path, .dry = 1};
    if (!rc) rc = build_weights(&b, err);
    if (!rc && !(m->arena = aligned_alloc(64, b.off ? b.off : 64))) rc = xsa_fail(err, XSA_ERUNTIME, "out of memory for %zu bytes of weights", b.off);
    if (!rc) {
        m->arena_bytes = b.off;
        b = (struct pg_build){.pt = pt, .a = &a, .L = L, .m = m, .path = path, .arena = m->arena};
        rc = build_weights(&b, err);
    }
    for (int i = 0; i < pt->n && !rc; i++)
        if (!pt->e[i].used)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: unexpected tensor '%s' for this parameter-golf architecture; xsa-eval would ignore it, so it refuses the file",
                          path, pt->e[i].name);
    if (!rc) rc = safetensors_sha256(st, m->weights_sha256, err);
    if (!rc) {
        snprintf(m->format, sizeof m->format, "%s", !strcmp(pt->format, "state_dict") ? "pytorch" : pt->format[0] == 'i' && pt->format[3] == '6' ? (pgrp ? "pgolf-int6-pgrp" : "pgolf-int6") : "pgolf-int8");
        snprintf(m->dtype, sizeof m->dtype, "%s", !strcmp(pt->format, "state_dict") ? "mixed" : "I8");
        snprintf(m->xsa_source, sizeof m->xsa_source, "%s", model_xsa_count(&m->cfg) ? "config" : "none");
    }
    if (opened) torch_file_close(&tf, st);
    free(L);
    free(pt);
    release_st(st);  // every weight was copied into the arena
    return rc;
}
