// model.c: checkpoint dispatch, the weight arena, XSA layer specs, release.
#include "common/xalloc.h"
#include "model/model.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/llama2c.h"
#include "model/llmc.h"
#include "model/model_internal.h"
#include "model/pgolf.h"

#define ARENA_ALIGN 64  // bytes; every tensor starts on a cache line

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

// torch.save's format: a zip archive, or the legacy one of torch < 1.6 (refused by name by the
// torch reader), which opens with the pickled magic number 0x1950a86a20f9469cfc6c, or is a tar
// archive. (A llama2.c .bin starts with its header's dim instead.)
static int is_torch_file(const char *path) {
    static const unsigned char legacy[14] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
    unsigned char head[262] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return (n >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4) ||
           (n >= sizeof legacy && !memcmp(head, legacy, sizeof legacy)) || (n == sizeof head && !memcmp(head + 257, "ustar", 5));
}

int model_load(struct model *m, const char *path, xsa_error *err) { return model_load_config(m, path, NULL, err); }

int model_load_config(struct model *m, const char *path, const char *config, xsa_error *err) {
    memset(m, 0, sizeof *m);
    struct stat st;
    if (stat(path, &st) != 0) return xsa_fail(err, XSA_EBADINPUT, "%s: cannot open: %s", path, strerror(errno));
    if (strlen(path) >= sizeof m->path) return xsa_fail(err, XSA_EBADINPUT, "%s: path too long", path);
    // An llm.c file is one whatever its name (its magic is no torch.save file's first bytes).
    int rc, llmc = S_ISREG(st.st_mode) && !is_torch_file(path) && llmc_sniff(path) != LLMC_NONE;
    int torch = S_ISREG(st.st_mode) && !llmc && (is_torch_file(path) || ends_with(path, ".pt") || ends_with(path, ".pth") || ends_with(path, ".ckpt"));
    if (config && !torch && !S_ISDIR(st.st_mode))  // (a folder: only one without config.json takes it)
        return xsa_fail(err, XSA_EBADINPUT, "%s: --config %s applies to a bare state-dict .pt (torch.save) only (or a folder of weights without config.json); this checkpoint has its own config", path, config);
    if (S_ISDIR(st.st_mode)) {
        rc = hf_checkpoint_load(m, path, config, err);
    } else if (ends_with(path, ".safetensors") || ends_with(path, ".json")) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: pass the checkpoint directory (with config.json), not one of its files", path);
    } else if (S_ISREG(st.st_mode) && pgolf_claims(path)) {
        rc = config ? xsa_fail(err, XSA_EBADINPUT, "%s: a parameter-golf artifact: --config %s applies to a bare state-dict .pt only (use --arch)", path, config)
                    : pgolf_load(m, path, err);
    } else if (torch) {
        rc = torch_model_load(m, path, config, err);  // a legacy (non-zip) .pt is refused there, by name
    } else if (llmc) {
        rc = llmc_load(m, path, err);  // llm.c's GPT-2 (its other binary files refused by name)
    } else if (S_ISREG(st.st_mode)) {
        rc = llama2c_load(m, path, err);
    } else {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: not a checkpoint directory, a torch.save file, an llm.c or a llama2.c .bin file", path);
    }
    if (rc) {
        model_free(m);
        return rc;
    }
    snprintf(m->path, sizeof m->path, "%s", path);
    return 0;
}

void model_print_notes(const struct model *m) {
    if (m->weights_prefix[0])  // the file's names are not the family's
        fprintf(stderr, "xsa-eval: note: %s: every tensor name starts with '%s' (the attribute that held the model, as in a Lightning checkpoint); read without it\n",
                m->path, m->weights_prefix);
    if (m->train_step_unread[0])  // else a run would take a step from the name, or none, silently
        fprintf(stderr, "xsa-eval: note: %s: its saved '%s' is not a whole number from 0 to 2147483647; no step is read from "
                        "it (run --step N records one)\n", m->path, m->train_step_unread);
}

// Bump allocation over the arena: pass 1 (base NULL) measures, pass 2 assigns.
struct arena_cursor {
    char *base;
    size_t off;
    long long n_params;
};

static float *take(struct arena_cursor *a, size_t n) {
    float *p = a->base ? (float *)(a->base + a->off) : NULL;
    size_t padded = (n * sizeof(float) + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (p) memset((char *)p + n * sizeof(float), 0, padded - n * sizeof(float));  // arenas compare bytewise
    a->off += padded;
    a->n_params += (long long)n;
    return p;
}

// n floats all `value`, made here rather than read (olmo's weightless LayerNorm as ones and
// zeros): not parameters of the file.
static float *take_const(struct arena_cursor *a, size_t n, float value) {
    float *p = take(a, n);
    a->n_params -= (long long)n;
    for (size_t i = 0; p && i < n; i++) p[i] = value;
    return p;
}

// A norm's gain (bias: 0) or bias (1): read from the file, or a constant (ws->norm_unit).
static float *take_norm(struct arena_cursor *a, size_t C, const struct weight_spec *ws, int bias) {
    return ws->norm_unit ? take_const(a, C, bias ? 0.0f : 1.0f) : take(a, C);
}

static void layout(struct model *m, struct arena_cursor *a, const struct weight_spec *ws) {
    const struct model_config *c = &m->cfg;
    size_t C = (size_t)c->d_model, V = (size_t)c->vocab_size, F = (size_t)c->d_ff, hd = (size_t)c->head_dim;
    size_t Q = (size_t)c->n_head * c->head_dim, KV = (size_t)c->n_kv_head * c->head_dim;
    int gpt2 = c->arch == MODEL_ARCH_GPT2, gated = model_mlp_gated(c), nb = gpt2 || ws->norm_bias;
    int qkvb = gpt2 || ws->qkv_bias, ob = gpt2 || ws->o_bias, mb = gpt2 || ws->mlp_bias, pre = !ws->no_pre_norm;
    size_t E = c->embed_dim ? (size_t)c->embed_dim : C;  // (opt's word_embed_proj_dim)
    m->tok_emb = take(a, V * E);
    // (opt's table has OPTLearnedPositionalEmbedding's 2 offset rows first: the loader points past them)
    m->pos_emb = gpt2 ? take(a, (size_t)c->max_seq_len * C) : c->learned_pos ? take(a, ((size_t)c->max_seq_len + 2) * C) : NULL;
    m->proj_in = c->embed_dim ? take(a, C * E) : NULL;
    m->proj_out = c->embed_dim ? take(a, E * C) : NULL;
    for (int l = 0; l < c->n_layer; l++) {
        struct layer_weights *w = &m->layers[l];
        w->attn_norm_w = pre ? take_norm(a, C, ws, 0) : NULL;
        w->attn_norm_b = pre && nb ? take_norm(a, C, ws, 1) : NULL;
        w->wq = take(a, Q * C);
        w->bq = qkvb ? take(a, Q) : NULL;
        w->wk = take(a, KV * C);
        w->bk = qkvb ? take(a, KV) : NULL;
        w->wv = take(a, KV * C);
        w->bv = qkvb ? take(a, KV) : NULL;
        w->q_norm_w = c->qk_norm ? take(a, c->qk_norm == QK_NORM_HEAD ? hd : Q) : NULL;
        w->q_norm_b = c->qk_norm && ws->qk_norm_bias ? take(a, c->qk_norm == QK_NORM_HEAD ? hd : Q) : NULL;
        w->k_norm_w = c->qk_norm ? take(a, c->qk_norm == QK_NORM_HEAD ? hd : KV) : NULL;
        w->k_norm_b = c->qk_norm && ws->qk_norm_bias ? take(a, c->qk_norm == QK_NORM_HEAD ? hd : KV) : NULL;
        w->wo = take(a, C * Q);
        w->bo = ob ? take(a, C) : NULL;
        w->post_attn_norm_w = ws->post_norm ? take(a, C) : NULL;
        w->mlp_norm_w = !pre ? NULL : ws->shared_norm ? w->attn_norm_w : take_norm(a, C, ws, 0);  // (phi: the same norm)
        w->mlp_norm_b = !pre || !nb ? NULL : ws->shared_norm ? w->attn_norm_b : take_norm(a, C, ws, 1);
        w->w_gate = gated ? take(a, F * C) : NULL;
        w->b_gate = gated && mb ? take(a, F) : NULL;
        w->w_up = take(a, F * C);
        w->b_up = mb ? take(a, F) : NULL;
        w->w_down = take(a, C * F);
        w->b_down = mb ? take(a, C) : NULL;
        w->post_mlp_norm_w = ws->post_norm ? take(a, C) : NULL;
    }
    m->final_norm_w = ws->no_final_norm ? NULL : take_norm(a, C, ws, 0);
    m->final_norm_b = nb && !ws->no_final_norm ? take_norm(a, C, ws, 1) : NULL;
    m->lm_head = c->tied_head ? m->tok_emb : take(a, V * E);
    m->lm_head_b = ws->head_bias ? take(a, V) : NULL;
}

int model_alloc_weights(struct model *m, const struct weight_spec *ws, xsa_error *err) {
    if (m->cfg.n_layer < 1 || m->cfg.n_layer > MODEL_MAX_LAYERS)
        return xsa_fail(err, XSA_EBADINPUT, "%d layers is outside [1, %d]", m->cfg.n_layer, MODEL_MAX_LAYERS);
    m->layers = xsa_calloc((size_t)m->cfg.n_layer, sizeof *m->layers);
    struct arena_cursor a = {0};
    layout(m, &a, ws);
    m->arena = aligned_alloc(ARENA_ALIGN, a.off);
    if (!m->arena)
        return xsa_fail(err, XSA_ERUNTIME, "out of memory allocating %zu bytes of weights", a.off);
    m->arena_bytes = a.off;
    struct arena_cursor b = {.base = m->arena};
    layout(m, &b, ws);
    m->n_params = b.n_params;
    return 0;
}

// A float is NaN or +-Inf exactly when its exponent bits are all ones. Bits, not isfinite():
// -ffast-math cannot fold them away, and the test vectorises with plain SSE2.
#define F32_EXP_BITS 0x7f800000u
#define FINITE_BLOCK 1024  // a fixed trip count, so the compiler vectorises the scan

static int f32_nonfinite(const float *x) {
    uint32_t u;
    memcpy(&u, x, sizeof u);
    return (u & F32_EXP_BITS) == F32_EXP_BITS;
}

size_t model_first_nonfinite(const float *x, size_t n) {
    size_t i = 0;
    for (; i + FINITE_BLOCK <= n; i += FINITE_BLOCK) {
        int bad = 0;
        for (size_t k = 0; k < FINITE_BLOCK; k++) bad |= f32_nonfinite(x + i + k);
        if (bad) break;  // in this block: located below
    }
    for (; i < n; i++)
        if (f32_nonfinite(x + i)) return i;
    return n;
}

void model_fmt_shape(char *out, size_t n, int ndim, const int64_t *shape) {
    size_t used = (size_t)snprintf(out, n, "[");
    for (int d = 0; d < ndim && used < n; d++)
        used += (size_t)snprintf(out + used, n - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used < n) snprintf(out + used, n - used, "]");
}

int model_check_finite(const float *x, size_t n, const char *path, const char *tensor, xsa_error *err) {
    size_t first = model_first_nonfinite(x, n);
    if (first == n) return 0;
    size_t bad = 0;
    for (size_t i = first; i < n; i++) bad += (size_t)f32_nonfinite(x + i);
    uint32_t u;
    memcpy(&u, x + first, sizeof u);
    const char *what = (u & 0x7fffffu) ? "NaN" : u >> 31 ? "-Inf" : "+Inf";  // a mantissa: NaN
    char count[64] = "";
    if (bad > 1) snprintf(count, sizeof count, "; %zu values are NaN or Inf", bad);
    return xsa_fail(err, XSA_EBADINPUT, "%s: tensor '%s' holds %s at element %zu (of %zu%s): the checkpoint is damaged; re-export it",
                    path, tensor, what, first, n, count);
}

// Parses a non-negative decimal integer that fills all of [s, end).
static int parse_index(const char *s, const char *end, long *out) {
    if (s == end || end - s > 9) return -1;
    long v = 0;
    for (const char *p = s; p < end; p++) {
        if (!isdigit((unsigned char)*p)) return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

int model_apply_xsa_spec(struct model_config *cfg, const char *spec, xsa_error *err) {
    int L = cfg->n_layer;
    unsigned char xsa[MODEL_MAX_LAYERS] = {0};
    if (!spec || !*spec)
        return xsa_fail(err, XSA_EBADINPUT, "--xsa: empty spec; use all, none, last:N or a list such as 0,2");
    if (!strcmp(spec, "all")) {
        memset(xsa, 1, (size_t)L);
    } else if (!strcmp(spec, "none")) {
        // nothing
    } else if (!strncmp(spec, "last:", 5)) {
        long n;
        if (parse_index(spec + 5, spec + strlen(spec), &n))
            return xsa_fail(err, XSA_EBADINPUT, "--xsa '%s': expected last:N with N a layer count", spec);
        if (n > L)
            return xsa_fail(err, XSA_EBADINPUT, "--xsa '%s': the model has only %d layers", spec, L);
        memset(xsa + (L - n), 1, (size_t)n);  // last:0 selects no layer, like none
    } else {
        const char *p = spec;
        for (;;) {
            const char *comma = strchr(p, ',');
            const char *end = comma ? comma : p + strlen(p);
            long i;
            if (parse_index(p, end, &i))
                return xsa_fail(err, XSA_EBADINPUT, "--xsa '%s': expected all, none, last:N or comma-separated layer indices", spec);
            if (i >= L)
                return xsa_fail(err, XSA_EBADINPUT, "--xsa '%s': layer %ld is out of range; the model has %d layers (0..%d)", spec, i, L, L - 1);
            xsa[i] = 1;
            if (!comma) break;
            p = comma + 1;
        }
    }
    // modded-nanogpt's XSA is gated by its trained alphas (or gates): a layer without them has none to turn on.
    char gated[64] = "";
    for (int l = 0; l < L; l++)
        if (cfg->xsa[l]) snprintf(gated + strlen(gated), sizeof gated - strlen(gated), "%s%d", gated[0] ? "," : "", l);
    for (int l = 0; l < L && !strcmp(cfg->family, "mnanogpt"); l++)
        if (xsa[l] && !cfg->xsa[l])
            return model_xsa_count(cfg)
                       ? xsa_fail(err, XSA_EBADINPUT, "--xsa '%s': layer %d of modded-nanogpt's GPT has no XSA gate (its gated layers are %s); --xsa can only turn gated layers off", spec, l, gated)
                       : xsa_fail(err, XSA_EBADINPUT, "--xsa '%s': this modded-nanogpt checkpoint has no xsa_alphas (an SA model, as the record's master baseline), so no layer has an XSA gate to turn on", spec);
    memcpy(cfg->xsa, xsa, sizeof xsa);
    cfg->xsa_unknown = 0;
    return 0;
}

int model_check_xsa_known(const struct model *m, xsa_error *err) {
    if (!m->cfg.xsa_unknown) return 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: gated XSA gates (attn.xsa_alpha) but no XSA_LAST_N: the family runs XSA in the "
                    "last XSA_LAST_N layers, which the file does not record; set XSA_LAST_N in its xsa_eval.json or --arch "
                    "FILE (0: no XSA), or give --xsa last:N", m->path);
}

int model_set_window(struct model *m, int ctx) {
    struct model_config *c = &m->cfg;
    if (!c->rope_ntk_from) return 0;
    int rd = model_rope_dims(c);
    double base = c->rope_ntk_base;
    float theta = ctx > c->rope_ntk_from ? (float)(base * pow((double)ctx / c->rope_ntk_from, (double)rd / (rd - 2))) : (float)base;
    int changed = theta != c->rope_theta;
    c->rope_theta = theta;
    return changed;
}

int model_xsa_count(const struct model_config *cfg) {
    int n = 0;
    for (int l = 0; l < cfg->n_layer; l++) n += cfg->xsa[l] != 0;
    return n;
}

void model_xsa_describe(const struct model_config *cfg, char *out, size_t n) {
    if (!n) return;
    int k = model_xsa_count(cfg);
    if (k == 0 || k == cfg->n_layer) {
        snprintf(out, n, "%s", k ? "all" : "none");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int l = 0; l < cfg->n_layer; l++) {
        if (!cfg->xsa[l]) continue;
        char item[16];
        int len = snprintf(item, sizeof item, "%s%d", used ? "," : "", l);
        if (used + (size_t)len + 4 > n) {  // keep room for "..." and NUL
            if (used + 4 <= n) memcpy(out + used, "...", 4);
            return;
        }
        memcpy(out + used, item, (size_t)len + 1);
        used += (size_t)len;
    }
}

void model_free(struct model *m) {
    if (!m) return;
    if (m->mapping_release) m->mapping_release(m->mapping);
    free(m->arena);
    free(m->layers);
    free(m->mng);
    memset(m, 0, sizeof *m);
}

int model_has_family_features(const struct model *m) {
    const struct model_config *c = &m->cfg;
    if (m->mng) return 1;
    // Partial rotary and q/k norms (gain or none) are decoder features both backends have.
    if (c->norm_weightless || c->rope == ROPE_HALF_NEG || c->mlp_relu2 ||
        c->embed_norm || c->unet_skips || (c->logit_softcap > 0 && !c->family[0]) || c->bigram_vocab || c->smear || m->smear_gate || c->ln_scale ||
        c->mlp_leaky_slope != 0 || c->ve_dim || m->ve_emb || c->trigram || c->value_residual || c->lanes_from || c->n_physical || m->skip_gates || m->smear_fwd_w)
        return 1;
    for (int l = 0; l < c->n_layer; l++) {
        const struct layer_weights *w = &m->layers[l];
        if (c->attn_off[l] || c->mlp_reads_input[l] || w->lane_post) return 1;
        if (w->q_gain || w->xsa_gate || w->resid_mix || w->attn_scale || w->mlp_scale || w->out_scale || w->ve_scale || w->attn_gate_w ||
            w->dtg_w || w->vrl_alpha || w->vr_lambda || w->lora_q_down)
            return 1;
    }
    return 0;
}

const char *model_cuda_lacks(const struct model *m) {
    const struct model_config *c = &m->cfg;
    if (m->lm_head_b) return "phi's head bias (lm_head.bias)";
    if (c->norm_shared) return "phi's one LayerNorm shared by attention and MLP";
    for (int l = 0; l < c->n_layer && m->layers; l++)
        if (m->layers[l].q_norm_b) return "phi's LayerNorms on q and k (qk_layernorm)";
    if (c->learned_pos) return "opt's learned positions with their offset";
    if (c->mlp_relu) return "opt's ReLU MLP";
    if (c->post_ln) return "opt's post-LN block (do_layer_norm_before false)";
    if (c->embed_dim) return "opt's project_in / project_out (word_embed_proj_dim)";
    if (c->residual_scale != 0 || c->logit_divisor != 0)
        return "granite's multipliers (embedding_multiplier, attention_multiplier, residual_multiplier, logits_scaling)";
    if (memchr(c->no_rope, 1, (size_t)c->n_layer)) return "smollm3's NoPE layers (no_rope_layers: layers that do not rotate q and k)";
    if (c->qk_norm == QK_NORM_HEAD_LN) return "stablelm's qk_layernorm (a LayerNorm per head on q and k)";
    return NULL;
}

const char *model_arch_name(const struct model *m) {
    if (m->mng) return "mnanogpt";
    if (model_has_family_features(m)) return "pgolf";
    return model_family(&m->cfg);
}

void model_describe_features(const struct model *m, char *out, size_t n) {
    const struct model_config *c = &m->cfg;
    const struct layer_weights *w = &m->layers[0];
    int gated = 0, n_swa = 0, n_ve = 0, n_off = 0, n_gptj = 0;
    char ve_layers[64] = "";
    for (int l = 0; l < c->n_layer; l++) {
        gated |= m->layers[l].xsa_gate != NULL, n_swa += c->swa[l], n_off += c->attn_off[l], n_gptj += c->mlp_reads_input[l];
        size_t k = strlen(ve_layers);
        if (m->layers[l].ve_scale && k + 8 < sizeof ve_layers) snprintf(ve_layers + k, sizeof ve_layers - k, "%s%d", n_ve++ ? "," : "", l);
    }
    size_t used = 0;
    out[0] = '\0';
#define FEAT(cond, ...)                                                                     \
    do {                                                                                  \
        if ((cond) && used < n) {                                                         \
            used += (size_t)snprintf(out + used, n - used, "%s", used ? ", " : "");      \
            if (used < n) used += (size_t)snprintf(out + used, n - used, __VA_ARGS__);   \
        }                                                                                 \
    } while (0)
    char paired[64] = "";
    for (int l = 0; m->mng && l < c->n_layer; l++)
        if (m->mng->layer[l].paired) snprintf(paired + strlen(paired), sizeof paired - strlen(paired), "%s%d", paired[0] ? "," : "", l);
    int mng_gated = m->mng && m->mng->gate_w1;
    FEAT(m->mng, "modded-nanogpt GPT (paired heads in layers %s, value embeddings, %s, key offset, YaRN, windows %d/%d, "
                 "x0/bigram %s%s, skip, %s%s, 23*sigmoid((x+5)/7.5) soft-cap)",
         paired[0] ? paired : "none", mng_gated ? "per-token MUDD gates (XSA, attention in layers 3 and 10, x0, bigram, skip)" : "attention gates",
         m->mng ? m->mng->ws_short : 0, m->mng ? m->mng->ws_long : 0, mng_gated ? "gates" : "lambdas",
         m->mng && m->mng->bigram_sign ? ", the bigram sign trick" : "",
         m->mng && m->mng->mudd_dense ? "MUDD connections at the last layer and after it (2026-04-22's dense_w1/w2/bs)"
         : m->mng && m->mng->mudd_w1  ? "MUDD connections at the last layer and after it"
                                      : "backout",
         mng_gated ? ", the layer-10 DC correction" : "");
    FEAT(w->attn_norm_w, "%s %s", c->norm_unit ? "LayerNorm (no weight or bias)" : w->attn_norm_b ? "LayerNorm"
                                       : c->norm_plus_one ? "RMSNorm (1 + w)" : "RMSNorm",
         c->post_ln ? "after each residual add (post-LN)" : "pre-norms");
    FEAT(c->embed_scale != 0 && c->norm_plus_one, "embedding times sqrt(%d)", c->d_model);
    FEAT(c->embed_scale != 0 && !c->norm_plus_one, "embedding times %g", (double)c->embed_scale);
    FEAT(c->clip_qkv > 0, "q/k/v clipped to +-%g", (double)c->clip_qkv);
    FEAT(w->post_attn_norm_w, "RMSNorm on the attention and MLP outputs (post-norms)");
    FEAT(w->bq && !m->zero_biases, "q/k/v biases");
    FEAT(w->bo && !m->zero_biases, "output projection bias");
    FEAT(w->b_up && !m->zero_biases, "MLP biases");
    FEAT(m->zero_biases, "no biases (bias=False)");
    FEAT(c->norm_weightless, "weightless RMSNorm");
    FEAT(c->embed_norm, "normed embedding");
    FEAT(c->qk_norm == QK_NORM_HEAD_LN, "per-head q/k LayerNorm (a gain per head, no bias)");
    FEAT(c->qk_norm && c->qk_norm != QK_NORM_HEAD_LN, "%s q/k %s%s", c->qk_norm == QK_NORM_HEAD ? "per-head" : "full-width",
         w->q_norm_b ? "LayerNorm" : "RMSNorm", w->q_norm_w ? "" : " (no gain)");
    FEAT(c->norm_shared, "one LayerNorm for attention and MLP");
    FEAT(c->learned_pos, "learned positions (offset 2)");
    FEAT(c->mlp_relu, "ReLU MLP");
    FEAT(c->no_final_norm, "no final norm");
    FEAT(c->embed_dim, "project_in / project_out (embedding width %d)", c->embed_dim);
    FEAT(m->lm_head_b, "head bias");
    FEAT(c->rope_dims, "partial rotary (%d of %d dims)", c->rope_dims, c->head_dim);
    FEAT(c->sliding_window && n_swa, "sliding window %d (%d of %d layers)", c->sliding_window, n_swa, c->n_layer);
    FEAT(c->parallel_residual, "parallel attention + MLP residual%s", c->parallel_residual == 2 ? " (one norm)" : "");
    FEAT(c->mlp_gelu_gate, "GeGLU MLP (gelu_pytorch_tanh gate)");
    FEAT(c->attn_scale != 0, "attention scale %g (%s)", (double)c->attn_scale, c->norm_plus_one ? "query_pre_attn_scalar" : "attention_multiplier");
    FEAT(c->attn_softcap != 0, "attention-logit soft-cap %g", (double)c->attn_softcap);
    FEAT(c->rope_local_theta != 0, "sliding-window layers' RoPE theta %g (unscaled)", (double)c->rope_local_theta);
    int n_nope = 0;
    for (int l = 0; l < c->n_layer; l++) n_nope += c->no_rope[l];
    FEAT(n_nope, "NoPE (no RoPE) in %d of %d layers", n_nope, c->n_layer);
    FEAT(c->residual_scale != 0, "residual multiplier %g", (double)c->residual_scale);
    FEAT(c->logit_divisor != 0, "logits divided by %g", (double)c->logit_divisor);
    FEAT(c->fused & MODEL_FUSED_QKV, "fused qkv_proj (split at load)");
    FEAT(c->fused & MODEL_FUSED_QKV_HEADS, "fused per-head query_key_value (split at load)");
    FEAT(c->fused & MODEL_FUSED_GATE_UP, "fused gate_up_proj (split at load)");
    FEAT(w->q_gain, "q_gain");
    FEAT(w->resid_mix, "resid_mix");
    FEAT(w->attn_scale, "attn/mlp scales");
    FEAT(c->unet_skips, "U-Net skips (%s the block)", c->skip_after ? "after" : "before");
    FEAT(c->n_blocks && c->n_blocks < c->n_layer && !c->n_physical, "%d shared blocks", c->n_blocks);
    FEAT(w->out_scale, "pass gates");
    FEAT(c->n_physical, "depth recurrence (layers %s run %d times: %d layers over %d of weights)", c->recur_layers, c->recur_runs, c->n_layer,
         c->n_physical);
    FEAT(n_off, "no attention in %s", n_off == 1 && c->attn_off[0] ? "layer 0" : "some layers");
    FEAT(c->lanes_from, "two residual lanes from layer %d%s", c->lanes_from,
         c->lanes_split ? " (attention and MLP apart, merged by lane_merge)" : c->lanes_together ? " (attention and MLP side by side)" : "");
    FEAT(n_gptj, "GPT-J blocks (attention and MLP read the same input) in %d of %d layers", n_gptj, c->n_layer);
    FEAT(m->skip_gates, "gated U-Net skips");
    FEAT(gated, "gated XSA");
    FEAT(c->smear, "SmearGate");
    FEAT(c->ln_scale, "LN scale 1/sqrt(layer + 1)");
    FEAT(c->mlp_leaky_slope != 0, "leaky relu^2 (slope %g)", (double)c->mlp_leaky_slope);
    FEAT(c->ve_dim, "value embedding %d%s in layers %s", c->ve_dim, m->ve_proj ? " (projected)" : "", ve_layers);
    FEAT(c->bigram_vocab, "bigram hash %dx%d%s%s", c->bigram_vocab, c->bigram_dim, c->trigram ? " (and trigram)" : "",
         c->bigram_mul_hash ? " ((1000003 t_prev + t) mod rows)" : "");
    FEAT(c->depth_lora_rank, "rank-%d LoRA on q and v per layer", c->depth_lora_rank);
    FEAT(w->attn_gate_w && c->attn_gate_mult == 2, "attention output gate (2 sigmoid of the first %d inputs)", c->attn_gate_window);
    FEAT(w->attn_gate_w && c->attn_gate_mult != 2 && c->attn_gate_window < c->d_model, "sparse attention gate (sigmoid of %g x the first %d inputs)",
         (double)c->attn_gate_scale, c->attn_gate_window);
    FEAT(w->attn_gate_w && c->attn_gate_mult != 2 && c->attn_gate_window >= c->d_model, "gated attention");
    FEAT(m->smear_fwd_w, "SmearGate on the raw embedding (%d inputs%s)", c->smear_fwd_window, c->smear_fwd_bos_fix ? ", none at BOS" : "");
    FEAT(w->dtg_w, "DTG gate");
    FEAT(c->value_residual, "value residual (%s)", m->layers[c->n_layer > 1].vr_lambda ? "lambda0 v0 + lambda1 v" : "v + sigmoid(alpha) v0");
    FEAT(c->logit_softcap > 0, "logit soft-cap %g", (double)c->logit_softcap);
    FEAT(c->n_kv_head != c->n_head, "grouped-query attention");
    FEAT(!c->tied_head, "untied head");
#undef FEAT
}
