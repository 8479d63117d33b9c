// hf_checkpoint.c: a Hugging Face checkpoint directory (config.json + safetensors or
// pytorch_model.bin) -> struct model, each family's tensor names mapped onto the one decoder's
// weights (fused projections split here). Every tensor the config implies must be present with that exact
// shape; any tensor left over (other than known non-weight buffers) is an error, so a
// checkpoint with parts xsa-eval would silently ignore is refused.
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "model/config.h"
#include "model/model_internal.h"
#include "model/safetensors.h"
#include "model/torch_checkpoint.h"
#include "model/weights_prefix.h"

struct hf_loader {
    struct safetensors st;
    const char *dir;
    const char *prefix;  // gpt2: "" (Hub files) or "transformer." (transformers >= 5, nanoGPT)
    float *scratch;      // Conv1D weights before transposition, fused tensors before their split
    size_t scratch_n;    // floats in scratch
    char dtype[8];       // "" until the first tensor; "mixed" when they differ
    int bare_model;      // opt: the file names its decoder "decoder." (OPTModel's state dict, as the Hub's
                         // facebook/opt-* files), the names here "model.decoder."
    int dry;             // 1: only check that each tensor is there with its shape; copy nothing
    int aliased;         // some weight points into the file mapping (the model then keeps it)
};

// A missing `full` ("<module>.weight") saved reparametrized, as the module's state_dict() names
// it: torch.nn.utils.parametrizations' weight_norm, spectral_norm or register_parametrization
// (<module>.parametrizations.weight.original, original0, ...), the old weight_norm (weight_g,
// weight_v) or spectral_norm (weight_orig): the weight is what code computes from them, never
// run here, so the file is refused saying so.
static int refuse_reparametrized(struct hf_loader *ld, const char *full, xsa_error *err) {
    static const char *const forms[] = {".parametrizations.weight.original", ".parametrizations.weight.original0", ".weight_g",
                                        ".weight_orig"};
    size_t n = strlen(full);
    if (n < 7 || strcmp(full + n - 7, ".weight")) return 0;
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char alt[320];
        snprintf(alt, sizeof alt, "%.*s%s", (int)(n - 7), full, forms[i]);
        if (safetensors_find(&ld->st, alt))
            return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is saved reparametrized (as '%s': torch.nn.utils.parametrizations, "
                            "weight_norm or spectral_norm), a weight computed by code xsa-eval never runs; save the plain weight "
                            "(torch.nn.utils.parametrize.remove_parametrizations(module, 'weight'), or remove_weight_norm / "
                            "remove_spectral_norm, before saving) and pass that", ld->dir, full, alt);
    }
    return 0;
}

// Finds `name` (with the loader prefix) and checks its shape is (d0) or (d0, d1); d1 == 0
// means a 1-D tensor.
static int find_tensor(struct hf_loader *ld, const char *name, int64_t d0, int64_t d1, struct st_tensor **out,
                       xsa_error *err) {
    char full[256];
    snprintf(full, sizeof full, "%s%s", ld->prefix, name);
    struct st_tensor *t = safetensors_find(&ld->st, full);
    if (!t && ld->bare_model && !strncmp(full, "model.", 6)) t = safetensors_find(&ld->st, full + 6);
    int rc = t ? 0 : refuse_reparametrized(ld, full, err);
    if (rc) return rc;
    if (!t) return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' is missing from the checkpoint", ld->dir, full);
    int ndim = d1 ? 2 : 1;
    int64_t want[2] = {d0, d1};
    if (t->ndim != ndim || t->shape[0] != d0 || (ndim == 2 && t->shape[1] != d1)) {
        char got_s[96], want_s[64];
        model_fmt_shape(got_s, sizeof got_s, t->ndim, t->shape);
        model_fmt_shape(want_s, sizeof want_s, ndim, want);
        return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' has shape %s but config.json implies %s",
                        ld->st.files[t->file].path, full, got_s, want_s);
    }
    *out = t;
    return 0;
}

// Marks t consumed and folds its dtype into the checkpoint's.
static void note_used(struct hf_loader *ld, struct st_tensor *t) {
    t->used = 1;
    if (!ld->dtype[0]) snprintf(ld->dtype, sizeof ld->dtype, "%.7s", t->dtype_name);
    else if (strcmp(ld->dtype, t->dtype_name)) snprintf(ld->dtype, sizeof ld->dtype, "mixed");
}

// Checks `name` (find_tensor) and converts it to float32 into dst.
static int load(struct hf_loader *ld, const char *name, int64_t d0, int64_t d1, float *dst, xsa_error *err) {
    struct st_tensor *t;
    int rc = find_tensor(ld, name, d0, d1, &t, err);
    if (rc || ld->dry) return rc;
    rc = safetensors_read_f32(&ld->st, t, dst, err);
    if (!rc) note_used(ld, t);
    return rc;
}

// A weight the model keeps as it is stored: F32 data aligned for float is used in place
// (*dstp then points into the mapping; the arena slot stays untouched, so costs no memory),
// anything else is converted into *dstp.
static int load_w(struct hf_loader *ld, const char *name, int64_t d0, int64_t d1, float **dstp, xsa_error *err) {
    struct st_tensor *t;
    int rc = find_tensor(ld, name, d0, d1, &t, err);
    if (rc || ld->dry) return rc;
    if (t->dtype == ST_F32 && (uintptr_t)t->data % sizeof(float) == 0) {
        if ((rc = safetensors_check_finite(&ld->st, t, (const float *)t->data, err))) return rc;
        *dstp = (float *)(uintptr_t)t->data;  // read-only mapping: weights are never written
        ld->aliased = 1;
    } else if ((rc = safetensors_read_f32(&ld->st, t, *dstp, err))) {
        return rc;
    }
    note_used(ld, t);
    return 0;
}

// Element i of a F32/F16/BF16 tensor as float32 (NaN for another dtype: never equal).
static float tensor_value(const struct st_tensor *t, size_t i) {
    uint16_t h;
    float f;
    switch (t->dtype) {
    case ST_F32: memcpy(&f, t->data + 4 * i, 4); return f;
    case ST_F16: memcpy(&h, t->data + 2 * i, 2); return st_f16_to_f32(h);
    case ST_BF16: memcpy(&h, t->data + 2 * i, 2); return st_bf16_to_f32(h);
    default: return NAN;
    }
}

// A head saved beside the embedding config.json ties it to must be that embedding: transformers
// versions differ on which of two different ones counts (4 ties them, 5 loads the file's head).
static int check_tied_head(struct hf_loader *ld, const struct st_tensor *head, const char *emb_name, xsa_error *err) {
    const struct st_tensor *emb = safetensors_find(&ld->st, emb_name);
    if (!emb || head == emb) return 0;
    int same = head->ndim == emb->ndim && head->ndim == 2 && head->shape[0] == emb->shape[0] &&
               head->shape[1] == emb->shape[1];
    if (same && head->dtype == emb->dtype) {
        same = head->nbytes == emb->nbytes && (head->data == emb->data || !memcmp(head->data, emb->data, head->nbytes));
    } else if (same) {  // the same values saved in two dtypes: compared value by value, nothing allocated
        size_t n = (size_t)(head->shape[0] * head->shape[1]);
        for (size_t i = 0; same && i < n; i++) same = tensor_value(head, i) == tensor_value(emb, i);
    }
    if (same) return 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: config.json ties the head to the embedding (tie_word_embeddings), but the "
                    "checkpoint's %s differs from %s, and transformers versions differ on which counts: set "
                    "\"tie_word_embeddings\": false to score with %s, or remove it", ld->dir, head->name, emb_name,
                    head->name);
}

// dst (ncols, rows) = columns [col0, col0 + ncols) of src (rows, src_cols), transposed:
// a Conv1D (IN, OUT) weight to nn.Linear (OUT, IN).
static void transpose_cols(const float *src, size_t rows, size_t src_cols, size_t col0, size_t ncols, float *dst) {
    for (size_t i = 0; i < rows; i++)
        for (size_t o = 0; o < ncols; o++) dst[o * rows + i] = src[i * src_cols + col0 + o];
}

// A GPT-2 Conv1D weight `name`, (in, out), into n_out row-major (out / n_out, in) matrices dst[]:
// column blocks transposed, or, for a tensor stored as nn.Linear (out, in) (st_tensor.linear:
// llm.c's and nanoGPT's files), row blocks copied as they are.
static int load_conv1d(struct hf_loader *ld, const char *name, int64_t in, int64_t out, float *const *dst, int n_out,
                       xsa_error *err) {
    char full[256];
    snprintf(full, sizeof full, "%s%s", ld->prefix, name);
    const struct st_tensor *t = safetensors_find(&ld->st, full);
    int linear = t && t->linear;
    int rc = linear ? load(ld, name, out, in, ld->scratch, err) : load(ld, name, in, out, ld->scratch, err);
    if (rc || ld->dry) return rc;
    size_t part = (size_t)(out / n_out);
    for (int k = 0; k < n_out; k++)
        if (linear) memcpy(dst[k], ld->scratch + (size_t)k * part * (size_t)in, part * (size_t)in * sizeof(float));
        else transpose_cols(ld->scratch, (size_t)in, (size_t)out, (size_t)k * part, part, dst[k]);
    return 0;
}

static int load_gpt2_layer(struct hf_loader *ld, struct model *m, int l, xsa_error *err) {
    const struct model_config *c = &m->cfg;
    struct layer_weights *w = &m->layers[l];
    int64_t C = c->d_model, F = c->d_ff;
    char n[128];
    int rc = 0;
#define LOAD(suffix, d0, d1, dst)                                  \
    do {                                                           \
        if (rc) break;                                             \
        snprintf(n, sizeof n, "h.%d.%s", l, suffix);               \
        rc = load(ld, n, d0, d1, dst, err);                        \
    } while (0)
#define LOADW(suffix, d0, d1, dst)                                 \
    do {                                                           \
        if (rc) break;                                             \
        snprintf(n, sizeof n, "h.%d.%s", l, suffix);               \
        rc = load_w(ld, n, d0, d1, &(dst), err);                   \
    } while (0)
#define CONV1D(suffix, in, out, n_out, ...)                                             \
    do {                                                                                \
        if (rc) break;                                                                  \
        snprintf(n, sizeof n, "h.%d.%s", l, suffix);                                    \
        rc = load_conv1d(ld, n, in, out, (float *const[]){__VA_ARGS__}, n_out, err);   \
    } while (0)
    LOADW("ln_1.weight", C, 0, w->attn_norm_w);
    LOADW("ln_1.bias", C, 0, w->attn_norm_b);
    CONV1D("attn.c_attn.weight", C, 3 * C, 3, w->wq, w->wk, w->wv);  // (C, 3C): q | k | v columns
    LOAD("attn.c_attn.bias", 3 * C, 0, ld->scratch);  // (3C)
    if (!rc && !ld->dry) {
        memcpy(w->bq, ld->scratch, (size_t)C * sizeof(float));
        memcpy(w->bk, ld->scratch + C, (size_t)C * sizeof(float));
        memcpy(w->bv, ld->scratch + 2 * C, (size_t)C * sizeof(float));
    }
    CONV1D("attn.c_proj.weight", C, C, 1, w->wo);
    LOADW("attn.c_proj.bias", C, 0, w->bo);
    LOADW("ln_2.weight", C, 0, w->mlp_norm_w);
    LOADW("ln_2.bias", C, 0, w->mlp_norm_b);
    CONV1D("mlp.c_fc.weight", C, F, 1, w->w_up);  // (C, F)
    LOADW("mlp.c_fc.bias", F, 0, w->b_up);
    CONV1D("mlp.c_proj.weight", F, C, 1, w->w_down);  // (F, C)
    LOADW("mlp.c_proj.bias", C, 0, w->b_down);
#undef LOAD
#undef LOADW
#undef CONV1D
    return rc;
}

static int load_gpt2(struct hf_loader *ld, struct model *m, xsa_error *err) {
    const struct model_config *c = &m->cfg;
    int64_t C = c->d_model;
    ld->prefix = safetensors_find(&ld->st, "transformer.wte.weight") ? "transformer." : "";
    size_t wide = (size_t)(3 * C > c->d_ff ? 3 * C : c->d_ff);
    if (!ld->dry && !ld->scratch) ld->scratch = xsa_malloc((size_t)C * wide * sizeof(float));
    ld->scratch_n = (size_t)C * wide;
    int rc = load_w(ld, "wte.weight", c->vocab_size, C, &m->tok_emb, err);
    if (!rc) rc = load_w(ld, "wpe.weight", c->max_seq_len, C, &m->pos_emb, err);
    for (int l = 0; l < c->n_layer && !rc; l++) rc = load_gpt2_layer(ld, m, l, err);
    if (!rc) rc = load_w(ld, "ln_f.weight", C, 0, &m->final_norm_w, err);
    if (!rc) rc = load_w(ld, "ln_f.bias", C, 0, &m->final_norm_b, err);
    if (rc) return rc;
    ld->prefix = "";  // lm_head sits outside `transformer.`
    struct st_tensor *head = safetensors_find(&ld->st, "lm_head.weight");
    if (!c->tied_head) return load_w(ld, "lm_head.weight", c->vocab_size, C, &m->lm_head, err);
    if (head) head->used = 1;  // a tied head saved anyway, the embedding again (checked)
    m->lm_head = m->tok_emb;
    char emb[64];
    snprintf(emb, sizeof emb, "%swte.weight", safetensors_find(&ld->st, "transformer.wte.weight") ? "transformer." : "");
    return head && ld->dry ? check_tied_head(ld, head, emb, err) : 0;  // once, before anything is allocated
}

// A fused tensor of (sum of rows[p], cols) (cols 0: 1-D) split by rows into n parts *dst[p]:
// part after part (per = 0), or per head, `per` rows of each part in turn (gpt_neox's
// query_key_value: q, k, v of head 0, then of head 1, ...). Part after part, aligned F32 data is
// used in place, as load_w does.
static int load_split(struct hf_loader *ld, const char *name, int n, const int64_t *rows, int64_t cols, int64_t per,
                      float **dst[], xsa_error *err) {
    int64_t total = 0, w = cols ? cols : 1;
    for (int p = 0; p < n; p++) total += rows[p];
    struct st_tensor *t;
    int rc = find_tensor(ld, name, total, cols, &t, err);
    if (rc || ld->dry) return rc;
    if (!per && t->dtype == ST_F32 && (uintptr_t)t->data % sizeof(float) == 0) {
        if ((rc = safetensors_check_finite(&ld->st, t, (const float *)t->data, err))) return rc;
        const float *base = (const float *)(uintptr_t)t->data;
        for (int p = 0, off = 0; p < n; off += (int)rows[p], p++) *dst[p] = (float *)(uintptr_t)(base + (int64_t)off * w);
        ld->aliased = 1;
        note_used(ld, t);
        return 0;
    }
    if ((size_t)(total * w) > ld->scratch_n) {
        free(ld->scratch);
        ld->scratch_n = 0;
        ld->scratch = xsa_malloc((size_t)(total * w) * sizeof(float));
        ld->scratch_n = (size_t)(total * w);
    }
    if ((rc = safetensors_read_f32(&ld->st, t, ld->scratch, err))) return rc;
    const float *src = ld->scratch;
    if (!per) {
        for (int p = 0; p < n; src += rows[p] * w, p++) memcpy(*dst[p], src, (size_t)(rows[p] * w) * sizeof(float));
    } else {
        for (int64_t h = 0; h < rows[0] / per; h++)
            for (int p = 0; p < n; p++, src += per * w) memcpy(*dst[p] + h * per * w, src, (size_t)(per * w) * sizeof(float));
    }
    note_used(ld, t);
    return 0;
}

// Tensor names of a RoPE decoder family (llama's unless said otherwise).
struct family_names {
    const char *embed, *layer, *final_norm, *head;
    const char *attn_norm, *mlp_norm;    // pre-norms
    const char *post_attn, *post_mlp;    // post-norms (olmo2, gemma3_text)
    const char *q, *k, *v, *qkv, *o;     // qkv: fused (phi3, gpt_neox) instead of q, k, v
    const char *gate, *up, *gate_up, *down;
};

static const struct family_names llama_names = {
    "model.embed_tokens", "model.layers.%d.", "model.norm", "lm_head",
    "input_layernorm", "post_attention_layernorm", NULL, NULL,
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL, "self_attn.o_proj",
    "mlp.gate_proj", "mlp.up_proj", NULL, "mlp.down_proj",
};
static const struct family_names olmo2_names = {
    "model.embed_tokens", "model.layers.%d.", "model.norm", "lm_head",
    NULL, NULL, "post_attention_layernorm", "post_feedforward_layernorm",
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL, "self_attn.o_proj",
    "mlp.gate_proj", "mlp.up_proj", NULL, "mlp.down_proj",
};
static const struct family_names gemma_post_names = {  // (gemma2, gemma3_text)
    "model.embed_tokens", "model.layers.%d.", "model.norm", "lm_head",
    "input_layernorm", "pre_feedforward_layernorm", "post_attention_layernorm", "post_feedforward_layernorm",
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL, "self_attn.o_proj",
    "mlp.gate_proj", "mlp.up_proj", NULL, "mlp.down_proj",
};
static const struct family_names phi3_names = {
    "model.embed_tokens", "model.layers.%d.", "model.norm", "lm_head",
    "input_layernorm", "post_attention_layernorm", NULL, NULL,
    NULL, NULL, NULL, "self_attn.qkv_proj", "self_attn.o_proj",
    NULL, NULL, "mlp.gate_up_proj", "mlp.down_proj",
};
static const struct family_names neox_names = {
    "gpt_neox.embed_in", "gpt_neox.layers.%d.", "gpt_neox.final_layer_norm", "embed_out",
    "input_layernorm", "post_attention_layernorm", NULL, NULL,
    NULL, NULL, NULL, "attention.query_key_value", "attention.dense",
    NULL, "mlp.dense_h_to_4h", NULL, "mlp.dense_4h_to_h",
};

static const struct family_names phi_names = {  // (one input_layernorm feeds attention and MLP)
    "model.embed_tokens", "model.layers.%d.", "model.final_layernorm", "lm_head",
    "input_layernorm", NULL, NULL, NULL,
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL, "self_attn.dense",
    NULL, "mlp.fc1", NULL, "mlp.fc2",
};

static const struct family_names opt_names = {  // (self_attn_layer_norm, final_layer_norm: before or after, do_layer_norm_before)
    "model.decoder.embed_tokens", "model.decoder.layers.%d.", "model.decoder.final_layer_norm", "lm_head",
    "self_attn_layer_norm", "final_layer_norm", NULL, NULL,
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", NULL, "self_attn.out_proj",
    NULL, "fc1", NULL, "fc2",
};

static const struct family_names *names_of(const struct model_config *c) {
    const char *f = model_family(c);
    return !strcmp(f, "opt") ? &opt_names : !strcmp(f, "phi") ? &phi_names : !strcmp(f, "olmo2") ? &olmo2_names : !strcmp(f, "phi3") ? &phi3_names : !strcmp(f, "gpt_neox") ? &neox_names
         : !strcmp(f, "gemma3_text") || !strcmp(f, "gemma2") ? &gemma_post_names : &llama_names;
}

// An RMSNorm gain (load_w), or with plus_one (gemma's (1 + w)) read into its arena slot and 1 added
// there, in float32 as transformers adds it.
static int load_norm(struct hf_loader *ld, const char *name, int64_t d0, float **dstp, int plus_one, xsa_error *err) {
    if (!plus_one) return load_w(ld, name, d0, 0, dstp, err);
    int rc = load(ld, name, d0, 0, *dstp, err);
    for (int64_t i = 0; !rc && !ld->dry && i < d0; i++) (*dstp)[i] += 1.0f;
    return rc;
}

static int load_llama(struct hf_loader *ld, struct model *m, const struct weight_spec *ws, xsa_error *err) {
    const struct model_config *c = &m->cfg;
    const struct family_names *fn = names_of(c);
    int64_t C = c->d_model, F = c->d_ff, Q = (int64_t)c->n_head * c->head_dim, KV = (int64_t)c->n_kv_head * c->head_dim;
    int64_t hd = c->head_dim, per = c->fused & MODEL_FUSED_QKV_HEADS ? hd : 0, nq = c->qk_norm == QK_NORM_HEAD ? hd : Q;
    int64_t nk = c->qk_norm == QK_NORM_HEAD ? hd : KV, qkv_rows[3] = {Q, KV, KV}, gu_rows[2] = {F, F};
    int64_t E = c->embed_dim ? c->embed_dim : C;  // (opt's word_embed_proj_dim: the embedding's and head's width)
    ld->prefix = "";
    char n[192], pre[64];
    snprintf(n, sizeof n, "%s.weight", fn->embed);
    int rc = load_w(ld, n, c->vocab_size, E, &m->tok_emb, err);
    if (!rc && c->learned_pos) {  // (opt: OPTLearnedPositionalEmbedding's table, position p at row p + 2)
        rc = load_w(ld, "model.decoder.embed_positions.weight", c->max_seq_len + 2, C, &m->pos_emb, err);
        if (!rc && !ld->dry) m->pos_emb += 2 * C;
    }
    if (!rc && c->embed_dim) rc = load_w(ld, "model.decoder.project_in.weight", C, E, &m->proj_in, err);
    if (!rc && c->embed_dim) rc = load_w(ld, "model.decoder.project_out.weight", E, C, &m->proj_out, err);
    for (int l = 0; l < c->n_layer && !rc; l++) {
        struct layer_weights *w = &m->layers[l];
        snprintf(pre, sizeof pre, fn->layer, l);
#define NAME(part, suffix) snprintf(n, sizeof n, "%s%s.%s", pre, part, suffix)
#define LOAD(part, suffix, d0, d1, dst)                            \
    do {                                                           \
        if (rc) break;                                             \
        NAME(part, suffix);                                        \
        rc = load_w(ld, n, d0, d1, &(dst), err);                   \
    } while (0)
#define NORM(part, d0, dst)                                        \
    do {                                                           \
        if (rc) break;                                             \
        NAME(part, "weight");                                      \
        rc = load_norm(ld, n, d0, &(dst), ws->norm_plus_one, err); \
    } while (0)
#define SPLIT(part, suffix, np, rows, d1, per_, ...)               \
    do {                                                           \
        if (rc) break;                                             \
        float **dst_[] = {__VA_ARGS__};                            \
        NAME(part, suffix);                                        \
        rc = load_split(ld, n, np, rows, d1, per_, dst_, err);     \
    } while (0)
        int read_pre = !ws->no_pre_norm && !ws->norm_unit;  // (olmo's norms have no tensors)
        if (read_pre) NORM(fn->attn_norm, C, w->attn_norm_w);
        if (read_pre && ws->norm_bias) LOAD(fn->attn_norm, "bias", C, 0, w->attn_norm_b);
        if (ws->shared_norm) w->mlp_norm_w = w->attn_norm_w, w->mlp_norm_b = w->attn_norm_b;  // (wherever they now live)
        if (fn->qkv) {
            SPLIT(fn->qkv, "weight", 3, qkv_rows, C, per, &w->wq, &w->wk, &w->wv);
            if (ws->qkv_bias) SPLIT(fn->qkv, "bias", 3, qkv_rows, 0, per, &w->bq, &w->bk, &w->bv);
        } else {
            LOAD(fn->q, "weight", Q, C, w->wq);
            LOAD(fn->k, "weight", KV, C, w->wk);
            LOAD(fn->v, "weight", KV, C, w->wv);
            if (ws->qkv_bias) {
                LOAD(fn->q, "bias", Q, 0, w->bq);
                LOAD(fn->k, "bias", KV, 0, w->bk);
                LOAD(fn->v, "bias", KV, 0, w->bv);
            }
        }
        if (c->qk_norm == QK_NORM_HEAD_LN) {  // (stablelm: one nn.LayerNorm per head, no bias)
            for (int h = 0; h < c->n_head && !rc; h++) {
                snprintf(n, sizeof n, "%sself_attn.q_layernorm.norms.%d.weight", pre, h);
                rc = load(ld, n, hd, 0, ld->dry ? NULL : w->q_norm_w + h * hd, err);
            }
            for (int h = 0; h < c->n_kv_head && !rc; h++) {
                snprintf(n, sizeof n, "%sself_attn.k_layernorm.norms.%d.weight", pre, h);
                rc = load(ld, n, hd, 0, ld->dry ? NULL : w->k_norm_w + h * hd, err);
            }
        } else if (c->qk_norm && ws->qk_norm_bias) {  // (phi's qk_layernorm: LayerNorms)
            LOAD("self_attn.q_layernorm", "weight", nq, 0, w->q_norm_w);
            LOAD("self_attn.q_layernorm", "bias", nq, 0, w->q_norm_b);
            LOAD("self_attn.k_layernorm", "weight", nk, 0, w->k_norm_w);
            LOAD("self_attn.k_layernorm", "bias", nk, 0, w->k_norm_b);
        } else if (c->qk_norm) {
            NORM("self_attn.q_norm", nq, w->q_norm_w);
            NORM("self_attn.k_norm", nk, w->k_norm_w);
        }
        LOAD(fn->o, "weight", C, Q, w->wo);
        if (ws->o_bias) LOAD(fn->o, "bias", C, 0, w->bo);
        if (ws->post_norm) NORM(fn->post_attn, C, w->post_attn_norm_w);
        if (read_pre && !ws->shared_norm) NORM(fn->mlp_norm, C, w->mlp_norm_w);
        if (read_pre && !ws->shared_norm && ws->norm_bias) LOAD(fn->mlp_norm, "bias", C, 0, w->mlp_norm_b);
        if (fn->gate_up) {
            SPLIT(fn->gate_up, "weight", 2, gu_rows, C, 0, &w->w_gate, &w->w_up);
        } else {
            if (fn->gate) LOAD(fn->gate, "weight", F, C, w->w_gate);
            LOAD(fn->up, "weight", F, C, w->w_up);
        }
        LOAD(fn->down, "weight", C, F, w->w_down);
        if (ws->mlp_bias) {
            if (fn->gate) LOAD(fn->gate, "bias", F, 0, w->b_gate);
            LOAD(fn->up, "bias", F, 0, w->b_up);
            LOAD(fn->down, "bias", C, 0, w->b_down);
        }
        if (ws->post_norm) NORM(fn->post_mlp, C, w->post_mlp_norm_w);
#undef NORM
#undef SPLIT
#undef LOAD
#undef NAME
    }
    snprintf(n, sizeof n, "%s.weight", fn->final_norm);
    int final = !ws->norm_unit && !ws->no_final_norm;
    if (!rc && final) rc = load_norm(ld, n, C, &m->final_norm_w, ws->norm_plus_one, err);
    snprintf(n, sizeof n, "%s.bias", fn->final_norm);
    if (!rc && final && ws->norm_bias) rc = load_w(ld, n, C, 0, &m->final_norm_b, err);
    if (rc) return rc;
    snprintf(n, sizeof n, "%s.weight", fn->head);
    // transformers 5 names gpt_neox's head lm_head (its state_dict(), a model saved whole) and
    // save_pretrained writes embed_out: either, and both is refused as an unexpected tensor
    if (fn == &neox_names && !safetensors_find(&ld->st, n) && safetensors_find(&ld->st, "lm_head.weight"))
        snprintf(n, sizeof n, "lm_head.weight");
    struct st_tensor *head = safetensors_find(&ld->st, n);
    if (ws->head_bias) {  // (phi's lm_head.bias, tied head or not)
        char nb[192];
        snprintf(nb, sizeof nb, "%s.bias", fn->head);
        if ((rc = load_w(ld, nb, c->vocab_size, 0, &m->lm_head_b, err))) return rc;
    }
    if (!c->tied_head) return load_w(ld, n, c->vocab_size, E, &m->lm_head, err);
    if (head) head->used = 1;
    m->lm_head = m->tok_emb;  // tied: the embedding, wherever it now lives
    snprintf(n, sizeof n, "%s.weight", fn->embed + (ld->bare_model ? 6 : 0));  // (the name in the file)
    return head && ld->dry ? check_tied_head(ld, head, n, err) : 0;  // once, before anything is allocated
}

// Buffers some exporters save that are not weights: causal masks, RoPE frequencies.
static int ignorable(const char *name) {
    static const char *suffixes[] = {".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq", ".attention.bias",
                                     ".attention.masked_bias"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t k = strlen(suffixes[i]);
        if (n >= k && !strcmp(name + n - k, suffixes[i])) return 1;
    }
    return 0;
}

// A config.json without head_dim whose family's default (qwen3 128, gemma 256: their config
// classes', as transformers reads them) misfits the query projection: refused naming the key,
// rather than a tensor's shape.
static int check_default_head_dim(struct hf_loader *ld, const struct hf_config *hc, xsa_error *err) {
    const struct model_config *c = &hc->cfg;
    const struct st_tensor *q = safetensors_find(&ld->st, "model.layers.0.self_attn.q_proj.weight");
    if (!hc->head_dim_default || !q || q->ndim != 2 || q->shape[0] == (int64_t)c->n_head * c->head_dim) return 0;
    long long rows = (long long)q->shape[0];
    return xsa_fail(err, XSA_EBADINPUT, "%s: config.json has no \"head_dim\", so %s's default %d applies (as transformers "
                    "reads it), but q_proj has %lld rows for %d heads; set \"head_dim\" in config.json", ld->dir,
                    model_family(c), c->head_dim, rows, c->n_head);
}

static void release_mapping(void *p) {
    safetensors_close(p);
    free(p);
}

int hf_checkpoint_build(struct model *m, const char *where, const struct hf_config *hc, struct safetensors *st, xsa_error *err) {
    m->cfg = hc->cfg;
    struct hf_loader ld = {.dir = where, .st = *st};
    memset(st, 0, sizeof *st);  // ld owns the files now
    // A dry pass first: every tensor the config implies is present with its shape, so nothing
    // is allocated for a config that does not match the weights (the weights bound the size).
    ld.dry = 1;
    // The family's embedding: found under a wrapper's name (a Lightning module's self.model), that
    // name is dropped; loading then checks every tensor is used with its shape, as for any file.
    char emb[96];
    const char *gpt2[] = {"transformer.wte.weight", "wte.weight"}, *own[] = {emb};
    snprintf(emb, sizeof emb, "%s.weight", names_of(&m->cfg)->embed);
    int gpt = m->cfg.arch == MODEL_ARCH_GPT2;
    int rc = weights_drop_prefix(&ld.st, gpt ? gpt2 : own, gpt ? 2 : 1, where, model_family(&m->cfg), m->weights_prefix,
                                 sizeof m->weights_prefix, err);
    m->layers = xsa_calloc((size_t)m->cfg.n_layer, sizeof *m->layers);
    if (!rc) rc = check_default_head_dim(&ld, hc, err);
    ld.bare_model = !strcmp(model_family(&m->cfg), "opt") && !safetensors_find(&ld.st, emb) &&
                    safetensors_find(&ld.st, emb + 6);  // (opt: "decoder.embed_tokens.weight")
    if (!rc) rc = m->cfg.arch == MODEL_ARCH_GPT2 ? load_gpt2(&ld, m, err) : load_llama(&ld, m, &hc->ws, err);
    free(m->layers);
    m->layers = NULL;
    ld.dry = 0;
    if (!rc) rc = model_alloc_weights(m, &hc->ws, err);
    if (!rc) rc = m->cfg.arch == MODEL_ARCH_GPT2 ? load_gpt2(&ld, m, err) : load_llama(&ld, m, &hc->ws, err);
    for (int i = 0; i < ld.st.n_tensors && !rc; i++) {
        const struct st_tensor *t = &ld.st.tensors[i];
        if (!t->used && !ignorable(t->name))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: unexpected tensor '%s' for a %s checkpoint; xsa-eval would ignore it, so it refuses the file",
                          ld.st.files[t->file].path, t->name, model_family(&m->cfg));
    }
    if (!rc) rc = safetensors_sha256(&ld.st, m->weights_sha256, err);
    if (!rc) {
        snprintf(m->format, sizeof m->format, "%s", ld.st.format);
        snprintf(m->dtype, sizeof m->dtype, "%s", ld.dtype);
        snprintf(m->xsa_source, sizeof m->xsa_source, "%s", hc->has_xsa ? "config" : "none");
    }
    free(ld.scratch);
    if (!rc && ld.aliased) {  // the model keeps the mapping its weights point into
        struct safetensors *keep = xsa_malloc(sizeof *keep);
        *keep = ld.st;
        m->mapping = keep;
        m->mapping_release = release_mapping;
        return 0;
    }
    safetensors_close(&ld.st);
    return rc;
}

// A folder with model weights but no config.json (accelerate's save_state and save_model write
// them so): refused with how to add the config; 0 when it holds no weights file either.
static int refuse_weights_alone(const char *dir, xsa_error *err) {
    static const char *const files[] = {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"};
    char path[4200];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (access(path, F_OK) == 0)
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s but no config.json (accelerate's save_state and save_model save the weights alone); save the model's config into the folder (model.config.save_pretrained('%s'), or copy the config.json of the model it was trained from) or pass it with --config FILE",
                            dir, files[i], dir);
    }
    return 0;
}

int hf_checkpoint_load(struct model *m, const char *dir, const char *config, xsa_error *err) {
    // Checked first: otherwise the first file opened (config.json) takes the blame.
    if (access(dir, X_OK) != 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: cannot search the checkpoint directory (%s); make it readable and searchable (chmod u+rx %s) or run as a user who may",
                        dir, strerror(errno), dir);
    int rc = torch_refuse_dcp(dir, err);
    if (rc) return rc;
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    int own = !(access(path, F_OK) != 0 && errno == ENOENT);  // (unreadable: its parser says why)
    if (config && own)
        return xsa_fail(err, XSA_EBADINPUT, "%s: --config %s applies to a bare state-dict .pt (torch.save) only (or a folder of weights without config.json); this checkpoint has its own config", dir, config);
    if (!config && !own && (rc = refuse_weights_alone(dir, err))) return rc;
    if (!config && !own)  // a run folder or a parent, not "cannot open config.json"
        return xsa_fail(err, XSA_EBADINPUT, "%s: no config.json in this folder, so it is not a checkpoint; pass the "
                        "checkpoint's own folder (config.json + model.safetensors or pytorch_model.bin) or a checkpoint file", dir);
    if (config && !file_exists(config))
        return xsa_fail(err, XSA_EBADINPUT, "%s: --config %s: %s", dir, config,
                        access(config, F_OK) ? "no such file" : "not a regular file (name the config.json itself)");
    struct hf_config hc;
    if ((rc = hf_config_parse_file(&hc, config ? config : path, err))) return rc;
    struct safetensors st;
    if ((rc = safetensors_open_dir(&st, dir, err))) return rc;
    return hf_checkpoint_build(m, dir, &hc, &st, err);
}
