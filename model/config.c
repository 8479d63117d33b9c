// config.c: config.json -> struct model_config, with every field range-checked. gpt2 has its
// own keys; llama, mistral, qwen2, qwen3, olmo, olmo2, phi3, gemma, gemma2 and gemma3_text share llama's
// and differ in fixed choices (biases, q/k norms, norm kind and placement, sliding windows, fused
// projections; olmo's clip_qkv; the Gemma families' own keys, parse_gemma); gpt_neox
// has its own keys over the same RoPE decoder, and so has stablelm (parse_stablelm).
#include "model/config.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"

#define REQUIRED INT32_MIN  // "no default" for get_int


static int get_int(const cJSON *root, const char *key, int def, int lo, int hi, int *out,
                   const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(root, key);
    if (!j || cJSON_IsNull(j)) {
        if (def == REQUIRED) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" is missing", path, key);
        *out = def;
        return 0;
    }
    double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
    if (!(d >= lo && d <= hi) || floor(d) != d)
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be an integer in [%d, %d]", path, key, lo, hi);
    *out = (int)d;
    return 0;
}

static int get_double(const cJSON *root, const char *key, double def, double lo, double hi,
                      double *out, const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(root, key);
    if (!j || cJSON_IsNull(j)) { *out = def; return 0; }
    double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
    if (!(d >= lo && d <= hi)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be a number in [%g, %g]", path, key, lo, hi);
    *out = d;
    return 0;
}

static int get_float(const cJSON *root, const char *key, double def, double lo, double hi,
                     float *out, const char *path, xsa_error *err) {
    double d = def;
    int rc = get_double(root, key, def, lo, hi, &d, path, err);
    if (!rc) *out = (float)d;
    return rc;
}

static int get_bool(const cJSON *root, const char *key, int def, int *out, const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(root, key);
    if (!j || cJSON_IsNull(j)) { *out = def; return 0; }
    if (!cJSON_IsBool(j)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be true or false", path, key);
    *out = cJSON_IsTrue(j);
    return 0;
}

// bos/eos: an id, a list of ids (the first is taken, as for Llama 3's eos list), or absent (-1).
static int get_token_id(const cJSON *root, const char *key, int *out, const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(root, key);
    if (cJSON_IsArray(j)) j = cJSON_GetArrayItem(j, 0);
    if (!j || cJSON_IsNull(j)) { *out = -1; return 0; }
    if (!cJSON_IsNumber(j) || j->valuedouble < 0 || j->valuedouble > (1 << 24) || floor(j->valuedouble) != j->valuedouble)
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be a token id, a list of ids or null", path, key);
    *out = (int)j->valuedouble;
    return 0;
}

static int get_string(const cJSON *root, const char *key, const char *def, const char **out,
                      const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(root, key);
    if (!j || cJSON_IsNull(j)) { *out = def; return 0; }
    if (!cJSON_IsString(j)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be a string", path, key);
    *out = j->valuestring;
    return 0;
}

// "xsa_layers": "all" | "none" | [i, j, ...]; absent means standard attention everywhere.
static int parse_xsa_layers(struct hf_config *hc, const cJSON *root, const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(root, "xsa_layers");
    memset(hc->cfg.xsa, 0, sizeof hc->cfg.xsa);
    if (!j || cJSON_IsNull(j)) return 0;
    hc->has_xsa = 1;
    int L = hc->cfg.n_layer;
    if (cJSON_IsString(j) && (!strcmp(j->valuestring, "all") || !strcmp(j->valuestring, "none"))) {
        if (!strcmp(j->valuestring, "all")) memset(hc->cfg.xsa, 1, (size_t)L);
        return 0;
    }
    if (!cJSON_IsArray(j))
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"xsa_layers\" must be \"all\", \"none\" or a list of layer indices", path);
    const cJSON *e;
    cJSON_ArrayForEach(e, j) {
        double d = cJSON_IsNumber(e) ? e->valuedouble : NAN;
        if (!(d >= 0 && d < L) || floor(d) != d) {
            if (cJSON_IsNumber(e) && floor(d) == d)
                return xsa_fail(err, XSA_EBADINPUT, "%s: \"xsa_layers\" names layer %g but the model has %d layers (0..%d)", path, d, L, L - 1);
            return xsa_fail(err, XSA_EBADINPUT, "%s: \"xsa_layers\" entries must be integer layer indices", path);
        }
        hc->cfg.xsa[(int)d] = 1;
    }
    return 0;
}

static int parse_gpt2(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    c->arch = MODEL_ARCH_GPT2;
    c->rope = ROPE_NONE;
    const char *act = NULL;
    int rc = get_int(r, "vocab_size", REQUIRED, 1, 1 << 22, &c->vocab_size, path, err);
    if (!rc) rc = get_int(r, "n_positions", 1024, 1, 1 << 22, &c->max_seq_len, path, err);
    if (!rc) rc = get_int(r, "n_embd", REQUIRED, 1, 1 << 16, &c->d_model, path, err);
    if (!rc) rc = get_int(r, "n_layer", REQUIRED, 1, MODEL_MAX_LAYERS, &c->n_layer, path, err);
    if (!rc) rc = get_int(r, "n_head", REQUIRED, 1, 4096, &c->n_head, path, err);
    if (!rc) rc = get_int(r, "n_inner", 0, 1, 1 << 20, &c->d_ff, path, err);
    if (!rc) rc = get_float(r, "layer_norm_epsilon", 1e-5, 0, 1, &c->norm_eps, path, err);
    if (!rc) rc = get_string(r, "activation_function", "gelu_new", &act, path, err);
    if (!rc) rc = get_bool(r, "tie_word_embeddings", 1, &c->tied_head, path, err);
    if (!rc) rc = get_token_id(r, "bos_token_id", &c->bos_id, path, err);
    if (!rc) rc = get_token_id(r, "eos_token_id", &c->eos_id, path, err);
    if (rc) return rc;
    c->gelu_exact = !strcmp(act, "gelu");
    if (!c->gelu_exact && strcmp(act, "gelu_new") && strcmp(act, "gelu_pytorch_tanh"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: activation_function \"%.64s\" is not supported (xsa-eval implements gelu_new / gelu_pytorch_tanh and gelu)", path, act);
    int scale_by_idx = 0, reorder = 0, scale_w = 1;
    rc = get_bool(r, "scale_attn_by_inverse_layer_idx", 0, &scale_by_idx, path, err);
    if (!rc) rc = get_bool(r, "reorder_and_upcast_attn", 0, &reorder, path, err);
    if (!rc) rc = get_bool(r, "scale_attn_weights", 1, &scale_w, path, err);
    if (rc) return rc;
    if (scale_by_idx || !scale_w)
        return xsa_fail(err, XSA_EBADINPUT, "%s: scale_attn_by_inverse_layer_idx / scale_attn_weights=false are not supported", path);
    if (c->d_ff == 0) c->d_ff = 4 * c->d_model;  // n_inner null
    if (c->d_model % c->n_head)
        return xsa_fail(err, XSA_EBADINPUT, "%s: n_embd %d is not a multiple of n_head %d", path, c->d_model, c->n_head);
    c->n_kv_head = c->n_head;
    c->head_dim = c->d_model / c->n_head;
    c->rope_theta = 0;
    hc->ws = (struct weight_spec){.norm_bias = 1, .qkv_bias = 1, .o_bias = 1, .mlp_bias = 1};
    return 0;
}

static int parse_yarn(struct model_config *c, const cJSON *j, const cJSON *r, const char *path, const char *key, xsa_error *err);

// llama3 / yarn's original_max_position_embeddings as transformers 5's standardize_rope_params
// resolves it: a top-level one wins over the rope object's (phi3's config class always has one,
// 4096 by default), else the object's, else max_position_embeddings (already in c->max_seq_len).
static int rope_orig_ctx(struct model_config *c, const cJSON *j, const cJSON *r, const char *path, xsa_error *err) {
    int phi3 = !strcmp(c->family, "phi3");
    if (json_last_item(r, "original_max_position_embeddings") || phi3)
        return get_float(r, "original_max_position_embeddings", phi3 ? 4096 : -1, 1, 1 << 24, &c->rope_orig_ctx, path, err);
    return get_float(j, "original_max_position_embeddings", c->max_seq_len, 1, 1 << 24, &c->rope_orig_ctx, path, err);
}

// rope_scaling (transformers 4) / rope_parameters (transformers 5): default, linear, llama3,
// dynamic, yarn; partial_rotary_factor (top level or in the object; `partial_def` when absent).
static int parse_rope(struct hf_config *hc, const cJSON *r, double partial_def, const char *path, xsa_error *err) {
    static const char *keys[] = {"rope_parameters", "rope_scaling"};
    struct model_config *c = &hc->cfg;
    double theta = !strcmp(c->family, "smollm3") ? 2e6 : 10000.0;  // (SmolLM3Config.default_theta)
    int rc = get_float(r, "rope_theta", theta, 1.0, 1e12, &c->rope_theta, path, err);
    if (!rc) rc = get_double(r, "partial_rotary_factor", partial_def, 1e-6, 1, &hc->partial_rotary, path, err);
    for (int k = 0; k < 2 && !rc; k++) {
        const cJSON *j = json_last_item(r, keys[k]);
        if (!j || cJSON_IsNull(j)) continue;
        if (!cJSON_IsObject(j)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be an object or null", path, keys[k]);
        const char *type = NULL;
        rc = get_string(j, "rope_type", NULL, &type, path, err);
        if (!rc && !type) rc = get_string(j, "type", "default", &type, path, err);
        if (!rc && json_last_item(j, "partial_rotary_factor"))
            rc = get_double(j, "partial_rotary_factor", 1.0, 1e-6, 1, &hc->partial_rotary, path, err);
        if (rc) return rc;
        if (!strcmp(type, "linear") || !strcmp(type, "dynamic")) {
            c->rope_scaling = !strcmp(type, "linear") ? ROPE_SCALE_LINEAR : ROPE_SCALE_DYNAMIC;
            rc = get_float(j, "factor", -1, 1e-6, 1e6, &c->rope_factor, path, err);
        } else if (!strcmp(type, "llama3")) {
            c->rope_scaling = ROPE_SCALE_LLAMA3;
            rc = get_float(j, "factor", -1, 1e-6, 1e6, &c->rope_factor, path, err);
            if (!rc) rc = get_float(j, "low_freq_factor", -1, 1e-6, 1e6, &c->rope_low_freq, path, err);
            if (!rc) rc = get_float(j, "high_freq_factor", -1, 1e-6, 1e6, &c->rope_high_freq, path, err);
            if (!rc) rc = rope_orig_ctx(c, j, r, path, err);
            if (!rc && (c->rope_low_freq < 0 || c->rope_high_freq < 0))
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s of type llama3 needs low_freq_factor and high_freq_factor",
                              path, keys[k]);
            if (!rc && !(c->rope_high_freq > c->rope_low_freq))
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s: high_freq_factor must be above low_freq_factor", path, keys[k]);
        } else if (!strcmp(type, "yarn")) {
            c->rope_scaling = ROPE_SCALE_YARN;
            rc = parse_yarn(c, j, r, path, keys[k], err);
        } else if (strcmp(type, "default")) {
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s type \"%.32s\" is not supported (xsa-eval implements "
                            "default, linear, dynamic, llama3 and yarn)", path, keys[k], type);
        }
        if (!rc && c->rope_scaling && c->rope_factor < 0)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s of type %s needs a \"factor\"", path, keys[k], type);
        if (!rc && json_last_item(j, "rope_theta"))
            rc = get_float(j, "rope_theta", theta, 1.0, 1e12, &c->rope_theta, path, err);
    }
    return rc;
}

// yarn's mscale as transformers' get_mscale: 0.1 m ln(s) + 1 for s > 1.
static double yarn_mscale(double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * log(scale) + 1.0; }

// rope_scaling of type yarn (_compute_yarn_parameters): factor (null: max_position_embeddings /
// original), attention_factor (else from mscale, mscale_all_dim), beta_fast, beta_slow, truncate.
static int parse_yarn(struct model_config *c, const cJSON *j, const cJSON *r, const char *path, const char *key, xsa_error *err) {
    (void)key;
    float af, ms, msa;
    int rc = rope_orig_ctx(c, j, r, path, err);
    if (!rc) rc = get_float(j, "factor", (double)c->max_seq_len / c->rope_orig_ctx, 1e-6, 1e6, &c->rope_factor, path, err);
    if (!rc) rc = get_float(j, "attention_factor", -1, 0, 1e6, &af, path, err);
    if (!rc) rc = get_float(j, "mscale", 0, 0, 1e6, &ms, path, err);
    if (!rc) rc = get_float(j, "mscale_all_dim", 0, 0, 1e6, &msa, path, err);
    if (!rc) rc = get_float(j, "beta_fast", 32, 0, 1e6, &c->rope_beta_fast, path, err);
    if (!rc) rc = get_float(j, "beta_slow", 1, 0, 1e6, &c->rope_beta_slow, path, err);
    if (!rc) rc = get_bool(j, "truncate", 1, &c->rope_truncate, path, err);
    if (rc) return rc;
    // `or 32` / `or 1`: a zero beta takes the default, as in transformers.
    if (c->rope_beta_fast == 0) c->rope_beta_fast = 32;
    if (c->rope_beta_slow == 0) c->rope_beta_slow = 1;
    double f = c->rope_factor;
    if (af < 0) af = (float)(ms != 0 && msa != 0 ? yarn_mscale(f, ms) / yarn_mscale(f, msa) : yarn_mscale(f, 1));
    c->rope_attn_factor = af;
    return 0;
}

// What a llama-like family fixes and which of llama's keys it reads.
struct family {
    const char *name;
    int bias_keys;      // reads attention_bias (q/k/v/o) and mlp_bias (llama); 2: attention_bias only
    int qkv_bias;       // q/k/v biases always (qwen2)
    enum qk_norm qk_norm;
    int post_norm;      // olmo2: norms after attention and MLP, none before
    int window;         // 1: sliding_window on every layer (phi3); 2: qwen's use_sliding_window;
                        // 3: every layer, or per layer_types (mistral: transformers reads that as Ministral);
                        // 4: the Gemma families' patterns; 5: use_sliding_window on the NoPE layers (smollm3)
    int fused;          // phi3: qkv_proj and gate_up_proj
    float eps;          // rms_norm_eps default
    int maxpos;         // max_position_embeddings default (the config class's)
    int window_def;     // sliding_window when the key is absent (null: none)
    int layer_norm;     // olmo: LayerNorm without weight or bias, eps 1e-5 fixed (OlmoLayerNorm reads no
                        // eps key); reads clip_qkv
    int gemma;          // 1: gemma's fixed choices ((1 + w) norms, scaled embedding, GeGLU MLP, head_dim
                        // 256 by default); 2: gemma2's, 3: gemma3_text's besides (parse_gemma)
};

static const struct family families[] = {
    {"llama", 1, 0, QK_NORM_NONE, 0, 0, 0, 1e-6f, 2048, 0, 0, 0},
    {"mistral", 0, 0, QK_NORM_NONE, 0, 3, 0, 1e-6f, 4096 * 32, 4096, 0, 0},
    // MinistralConfig: MistralConfig's defaults, every layer windowed unless layer_types says
    // otherwise (transformers 5 saves a mistral config with layer_types under this name)
    {"ministral", 0, 0, QK_NORM_NONE, 0, 3, 0, 1e-6f, 4096 * 32, 4096, 0, 0},
    {"qwen2", 0, 1, QK_NORM_NONE, 0, 2, 0, 1e-6f, 32768, 4096, 0, 0},
    {"qwen3", 2, 0, QK_NORM_HEAD, 0, 2, 0, 1e-6f, 32768, 4096, 0, 0},
    {"olmo", 2, 0, QK_NORM_NONE, 0, 0, 0, 1e-5f, 2048, 0, 1, 0},
    {"olmo2", 2, 0, QK_NORM_FULL, 1, 0, 0, 1e-5f, 2048, 0, 0, 0},
    {"phi3", 0, 0, QK_NORM_NONE, 0, 1, 1, 1e-5f, 4096, 0, 0, 0},
    {"gemma", 2, 0, QK_NORM_NONE, 0, 0, 0, 1e-6f, 8192, 0, 0, 1},
    // Gemma2Config: layers alternate sliding and full unless layer_types says otherwise
    {"gemma2", 2, 0, QK_NORM_NONE, 0, 4, 0, 1e-6f, 8192, 4096, 0, 2},
    // Gemma3TextConfig: every sixth layer full attention unless layer_types says otherwise
    {"gemma3_text", 2, 0, QK_NORM_HEAD, 0, 4, 0, 1e-6f, 131072, 4096, 0, 3},
    // SmolLM3Config: qwen's use_sliding_window, on the NoPE layers only unless layer_types says otherwise
    {"smollm3", 1, 0, QK_NORM_NONE, 0, 5, 0, 1e-6f, 32768, 0, 0, 0},
    // GraniteConfig: llama's, and its multipliers (parse_granite)
    {"granite", 1, 0, QK_NORM_NONE, 0, 0, 0, 1e-6f, 2048, 0, 0, 0},
};

// sliding_window of every layer (window 1), or qwen's use_sliding_window + max_window_layers /
// layer_types, as the families' configuration classes resolve them.
static int parse_window(struct hf_config *hc, const cJSON *r, const struct family *fm, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    int kind = fm->window, use = kind == 1 || kind == 3 || kind == 4, maxwin = 0, rc = 0, pattern = 6;
    if (kind == 2 || kind == 5) rc = get_bool(r, "use_sliding_window", 0, &use, path, err);
    if (!rc && kind == 2)  // (Qwen2Config / Qwen3Config: max_window_layers 28)
        rc = get_int(r, "max_window_layers", 28, 0, MODEL_MAX_LAYERS, &maxwin, path, err);
    // An absent sliding_window is the config class's default (4096 for mistral and qwen); null is none.
    int def = json_last_item(r, "sliding_window") ? 0 : fm->window_def;
    if (!rc && use) rc = get_int(r, "sliding_window", def, 1, 1 << 24, &c->sliding_window, path, err);
    // (gemma3_text without layer_types: sliding_window_pattern, as Gemma3TextConfig reads it)
    if (!rc && kind == 4 && fm->gemma == 2) pattern = 2;  // (Gemma2Config's, fixed)
    else if (!rc && kind == 4) rc = get_int(r, "sliding_window_pattern", 6, 1, MODEL_MAX_LAYERS, &pattern, path, err);
    if (rc) return rc;
    if (!use) c->sliding_window = 0;
    const cJSON *lt = kind >= 2 ? json_last_item(r, "layer_types") : NULL;
    if (lt && !cJSON_IsNull(lt)) {
        if (!cJSON_IsArray(lt) || cJSON_GetArraySize(lt) != c->n_layer)
            return xsa_fail(err, XSA_EBADINPUT, "%s: \"layer_types\" must list one type per layer (%d)", path, c->n_layer);
        int l = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, lt) {
            int sw = cJSON_IsString(e) && !strcmp(e->valuestring, "sliding_attention");
            if (!sw && !(cJSON_IsString(e) && !strcmp(e->valuestring, "full_attention")))
                return xsa_fail(err, XSA_EBADINPUT, "%s: layer_types[%d] must be \"full_attention\" or \"sliding_attention\"", path, l);
            if (sw && !c->sliding_window)
                return xsa_fail(err, XSA_EBADINPUT, "%s: layer_types[%d] is sliding_attention but no sliding window is set (use_sliding_window, sliding_window)", path, l);
            c->swa[l++] = (unsigned char)sw;
        }
        return 0;
    }
    // (Gemma2Config / Gemma3TextConfig: their default layer_types name sliding layers whatever
    // sliding_window is, and transformers cannot run one without a window)
    for (int l = 0; l < c->n_layer && kind == 4 && !c->sliding_window; l++)
        if ((l + 1) % pattern)
            return xsa_fail(err, XSA_EBADINPUT, "%s: layer %d is sliding_attention by %s's default layer_types but \"sliding_window\" is null; set sliding_window, or layer_types", path, l, fm->name);
    // (SmolLM3Config's default layer_types: sliding_attention on the NoPE layers)
    for (int l = 0; l < c->n_layer && c->sliding_window; l++)
        c->swa[l] = kind == 4 ? (l + 1) % pattern != 0 : kind == 5 ? c->no_rope[l] : kind != 2 || l >= maxwin;
    return 0;
}

// head_dim, rotated dims and the shape checks every RoPE decoder shares.
static int finish_rope_decoder(struct hf_config *hc, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    if (c->head_dim == 0) {
        if (c->d_model % c->n_head)
            return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_size %d is not a multiple of num_attention_heads %d; set head_dim", path, c->d_model, c->n_head);
        c->head_dim = c->d_model / c->n_head;
    }
    if (c->head_dim % 2) return xsa_fail(err, XSA_EBADINPUT, "%s: head_dim %d must be even for RoPE", path, c->head_dim);
    if (c->n_head % c->n_kv_head)
        return xsa_fail(err, XSA_EBADINPUT, "%s: num_attention_heads %d is not a multiple of num_key_value_heads %d", path, c->n_head, c->n_kv_head);
    if ((long long)c->n_head * c->head_dim > (1 << 16))
        return xsa_fail(err, XSA_EBADINPUT, "%s: num_attention_heads x head_dim is too large", path);
    // int(head_dim * factor) in double precision, as transformers computes it (in float32,
    // 10 x 0.7 would give 6 where transformers has 7).
    int rd = (int)(c->head_dim * hc->partial_rotary);
    if (rd < 2 || rd % 2)
        return xsa_fail(err, XSA_EBADINPUT, "%s: partial rotary factor %g of head_dim %d gives %d rotated dims (int(%d x %g)); "
                        "xsa-eval needs an even number >= 2 (with an odd one transformers rotates one dim more than its "
                        "frequencies were built for)", path, hc->partial_rotary, c->head_dim, rd, c->head_dim, hc->partial_rotary);
    c->rope_dims = rd == c->head_dim ? 0 : rd;
    return 0;
}

// olmo's clip_qkv: q, k and v clamped to [-clip, clip] after their projections (null or absent:
// none). transformers takes any number; a bound of 0 or below would zero or invert the clamp, so
// it is refused.
static int parse_clip_qkv(struct model_config *c, const cJSON *r, const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(r, "clip_qkv");
    if (!j || cJSON_IsNull(j)) return 0;
    double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
    if (!(d > 0 && d <= 3.4e38))
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"clip_qkv\" must be a positive number (the bound q, k and v are clamped to) "
                        "or null (no clamp)", path);
    c->clip_qkv = (float)d;
    return 0;
}

// gemma3_text's two rotaries (Gemma3TextConfig.convert_rope_params_to_dict): full-attention layers
// rope_parameters["full_attention"] (rope_theta 1e6 unless set; any scaling parse_rope takes),
// sliding-window layers rope_parameters["sliding_attention"] (default RoPE, rope_theta
// rope_local_base_freq or 1e4 unless set). A config written by transformers 4 has rope_theta and
// rope_scaling (the full layers') and rope_local_base_freq (the sliding layers') at the top level instead.
static int parse_gemma3_rope(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    const cJSON *rp = json_last_item(r, "rope_parameters");
    if (rp && !cJSON_IsNull(rp) && !cJSON_IsObject(rp))
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"rope_parameters\" must be an object or null", path);
    const cJSON *full = cJSON_IsObject(rp) ? json_last_item(rp, "full_attention") : NULL;
    const cJSON *local = cJSON_IsObject(rp) ? json_last_item(rp, "sliding_attention") : NULL;
    if (cJSON_IsObject(rp) && !full && !local)
        return xsa_fail(err, XSA_EBADINPUT, "%s: gemma3_text's \"rope_parameters\" must name \"full_attention\" and "
                        "\"sliding_attention\" (one rotary per layer type)", path);
    if ((full && !cJSON_IsNull(full) && !cJSON_IsObject(full)) || (local && !cJSON_IsNull(local) && !cJSON_IsObject(local)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"rope_parameters\" entries must be objects or null", path);
    // The full layers' rotary through parse_rope, on a copy of the config whose rope object is theirs.
    cJSON *dup = cJSON_Duplicate(r, 1);
    if (!dup) return xsa_fail(err, XSA_ERUNTIME, "%s: out of memory", path);
    if (cJSON_IsObject(rp)) {
        cJSON_DeleteItemFromObjectCaseSensitive(dup, "rope_scaling");
        cJSON_DeleteItemFromObjectCaseSensitive(dup, "rope_parameters");
        if (cJSON_IsObject(full)) cJSON_AddItemToObject(dup, "rope_parameters", cJSON_Duplicate(full, 1));
    }
    const cJSON *theta = json_last_item(dup, "rope_theta");  // (the rope object's own, read after it, wins)
    if (!theta || cJSON_IsNull(theta)) {
        cJSON_DeleteItemFromObjectCaseSensitive(dup, "rope_theta");
        cJSON_AddNumberToObject(dup, "rope_theta", 1e6);
    }
    int rc = parse_rope(hc, dup, 1.0, path, err);
    cJSON_Delete(dup);
    if (rc) return rc;
    // The top-level rope_local_base_freq is the sliding layers' theta whenever their entry names none
    // (convert_rope_params_to_dict's setdefault), with rope_parameters or without.
    const char *type = "default";
    rc = get_float(r, "rope_local_base_freq", 10000.0, 1.0, 1e12, &c->rope_local_theta, path, err);
    if (!rc && cJSON_IsObject(local)) {
        rc = get_string(local, "rope_type", NULL, &type, path, err);
        if (!rc && !type) rc = get_string(local, "type", "default", &type, path, err);
        if (!rc) rc = get_float(local, "rope_theta", c->rope_local_theta, 1.0, 1e12, &c->rope_local_theta, path, err);
    }
    if (!rc && strcmp(type, "default"))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: rope_parameters[\"sliding_attention\"] type \"%.32s\" is not supported "
                      "(xsa-eval implements default RoPE on the sliding-window layers)", path, type);
    return rc;
}

// A soft-cap key: absent, the config class's default `def`; null, none (0); else a positive number.
static int get_softcap(const cJSON *r, const char *key, double def, double *out, const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(r, key);
    *out = !j ? def : 0;
    if (!j || cJSON_IsNull(j)) return 0;
    return get_double(r, key, 0, 1e-6, 1e12, out, path, err);
}

// The Gemma families' fixed choices and own keys: (1 + w) RMSNorms, the embedding times
// sqrt(hidden_size), a GeGLU MLP; gemma2 and gemma3_text: norms after attention and MLP too, the
// attention scaled by query_pre_attn_scalar^-1/2, attn_logit_softcapping on the scores and
// final_logit_softcapping on the logits (gemma2's default 50 and 30, gemma3_text's none).
// Bidirectional attention (an encoder) is refused.
static int parse_gemma(struct hf_config *hc, const cJSON *r, const struct family *fm, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    int bidir = 0;
    double qpas = 256, cap = 0, attn_cap = 0;
    int rc = get_bool(r, "use_bidirectional_attention", 0, &bidir, path, err);
    if (!rc && bidir)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: \"use_bidirectional_attention\" true (an encoder, not a causal LM) is not "
                      "supported", path);
    if (rc) return rc;
    // transformers multiplies the embedding by this float32 tensor (in the weights' dtype: xsa-eval
    // computes in float32 as transformers does at dtype float32)
    c->embed_scale = (float)sqrt((double)c->d_model);
    c->mlp_gelu_gate = 1;
    hc->ws.norm_plus_one = c->norm_plus_one = 1;
    if (fm->gemma == 1) return 0;
    rc = get_double(r, "query_pre_attn_scalar", 256, 1e-6, 1e12, &qpas, path, err);
    if (!rc) rc = get_softcap(r, "final_logit_softcapping", fm->gemma == 2 ? 30 : 0, &cap, path, err);
    if (!rc) rc = get_softcap(r, "attn_logit_softcapping", fm->gemma == 2 ? 50 : 0, &attn_cap, path, err);
    if (!rc && c->d_model % c->n_head)  // (Gemma2Config's and Gemma3TextConfig's validate_architecture)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: hidden_size %d is not a multiple of num_attention_heads %d (transformers "
                      "refuses this %s config)", path, c->d_model, c->n_head, fm->name);
    if (rc) return rc;
    c->attn_scale = (float)pow(qpas, -0.5);
    c->logit_softcap = (float)cap;
    c->attn_softcap = (float)attn_cap;
    hc->ws.post_norm = 1;
    return 0;
}

// smollm3's NoPE layers (SmolLM3Config): no_rope_layers, one entry per layer (more are ignored),
// 1 a layer with RoPE and 0 one without; absent or null, every no_rope_layer_interval-th layer
// (4 by default) is NoPE.
static int parse_nope(struct model_config *c, const cJSON *r, const char *path, xsa_error *err) {
    const cJSON *j = json_last_item(r, "no_rope_layers");
    int interval = 4;
    if (!j || cJSON_IsNull(j)) {
        int rc = get_int(r, "no_rope_layer_interval", 4, 1, MODEL_MAX_LAYERS, &interval, path, err);
        for (int l = 0; !rc && l < c->n_layer; l++) c->no_rope[l] = (l + 1) % interval == 0;
        return rc;
    }
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < c->n_layer)
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"no_rope_layers\" must list 1 (RoPE) or 0 (NoPE) for each of the %d "
                        "layers", path, c->n_layer);
    for (int l = 0; l < c->n_layer; l++) {
        const cJSON *e = cJSON_GetArrayItem(j, l);
        if (!cJSON_IsNumber(e) || (e->valuedouble != 0 && e->valuedouble != 1))
            return xsa_fail(err, XSA_EBADINPUT, "%s: no_rope_layers[%d] must be 1 (RoPE) or 0 (NoPE)", path, l);
        c->no_rope[l] = e->valuedouble == 0;
    }
    return 0;
}

// granite's multipliers (GraniteConfig, each 1.0 by default): embedding_multiplier on the
// embedding, attention_multiplier as the score scale in place of head_dim^-1/2,
// residual_multiplier on each sublayer's output before its residual add, the logits divided by
// logits_scaling.
static int parse_granite(struct model_config *c, const cJSON *r, const char *path, xsa_error *err) {
    double em = 1, am = 1, rm = 1, ls = 1;
    int rc = get_double(r, "embedding_multiplier", 1.0, 1e-12, 1e12, &em, path, err);
    if (!rc) rc = get_double(r, "attention_multiplier", 1.0, 1e-12, 1e12, &am, path, err);
    if (!rc) rc = get_double(r, "residual_multiplier", 1.0, 1e-12, 1e12, &rm, path, err);
    if (!rc) rc = get_double(r, "logits_scaling", 1.0, 1e-12, 1e12, &ls, path, err);
    if (rc) return rc;
    c->embed_scale = (float)em;
    c->attn_scale = (float)am;
    c->residual_scale = (float)rm;
    c->logit_divisor = (float)ls;
    return 0;
}

// One of the llama-like families: llama's keys, the family's fixed choices.
static int parse_llama(struct hf_config *hc, const cJSON *r, const struct family *fm, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_HALF;  // transformers' rotate_half layout
    if (strcmp(fm->name, "llama")) snprintf(c->family, sizeof c->family, "%s", fm->name);
    const char *act = NULL;
    int ab = 0, mb = 0;
    int rc = get_int(r, "vocab_size", REQUIRED, 1, 1 << 22, &c->vocab_size, path, err);
    if (!rc) rc = get_int(r, "hidden_size", REQUIRED, 1, 1 << 16, &c->d_model, path, err);
    if (!rc) rc = get_int(r, "intermediate_size", REQUIRED, 1, 1 << 20, &c->d_ff, path, err);
    if (!rc) rc = get_int(r, "num_hidden_layers", REQUIRED, 1, MODEL_MAX_LAYERS, &c->n_layer, path, err);
    if (!rc) rc = get_int(r, "num_attention_heads", REQUIRED, 1, 4096, &c->n_head, path, err);
    // SmolLM3Config's num_key_value_heads defaults to 4 where the key is absent; null, as the
    // others' absent or null, means num_attention_heads.
    const cJSON *kv_key = json_last_item(r, "num_key_value_heads");
    int kv_def = !strcmp(fm->name, "smollm3") && !kv_key ? 4 : c->n_head;
    if (!rc) rc = get_int(r, "num_key_value_heads", kv_def, 1, 4096, &c->n_kv_head, path, err);
    // Qwen3Config's head_dim defaults to 128 (the others' to hidden_size / heads): a file without
    // one is read as transformers reads it, and refused by the shape check where that misfits.
    // GemmaConfig's and Gemma3TextConfig's to 256.
    int hd_def = !strcmp(fm->name, "qwen3") ? 128 : fm->gemma ? 256 : 0;
    const cJSON *hd_key = json_last_item(r, "head_dim");
    hc->head_dim_default = hd_def && (!hd_key || cJSON_IsNull(hd_key));
    if (!rc) rc = get_int(r, "head_dim", hd_def, 2, 1 << 12, &c->head_dim, path, err);
    if (!rc) rc = get_int(r, "max_position_embeddings", fm->maxpos, 1, 1 << 22, &c->max_seq_len, path, err);
    if (!rc && fm->layer_norm) c->norm_eps = fm->eps;
    else if (!rc) rc = get_float(r, "rms_norm_eps", fm->eps, 0, 1, &c->norm_eps, path, err);
    if (!rc && fm->layer_norm) rc = parse_clip_qkv(c, r, path, err);
    int smollm3 = !strcmp(fm->name, "smollm3"), granite = !strcmp(fm->name, "granite");
    if (!rc) rc = get_bool(r, "tie_word_embeddings", fm->gemma != 0 || smollm3, &c->tied_head, path, err);
    if (!rc && fm->bias_keys) rc = get_bool(r, "attention_bias", 0, &ab, path, err);
    if (!rc && fm->bias_keys == 1) rc = get_bool(r, "mlp_bias", 0, &mb, path, err);
    // (Gemma3TextConfig names it hidden_activation)
    const char *act_key = fm->gemma >= 2 ? "hidden_activation" : "hidden_act";
    if (!rc) rc = get_string(r, act_key, fm->gemma ? "gelu_pytorch_tanh" : "silu", &act, path, err);
    if (!rc) rc = get_token_id(r, "bos_token_id", &c->bos_id, path, err);
    if (!rc) rc = get_token_id(r, "eos_token_id", &c->eos_id, path, err);
    if (!rc) rc = fm->gemma == 3 ? parse_gemma3_rope(hc, r, path, err) : parse_rope(hc, r, 1.0f, path, err);
    if (!rc && smollm3) rc = parse_nope(c, r, path, err);
    if (!rc && granite) rc = parse_granite(c, r, path, err);
    if (!rc) rc = parse_window(hc, r, fm, path, err);
    if (rc) return rc;
    // GemmaConfig reads "gelu" as the tanh approximation its releases meant (its __post_init__).
    if (fm->gemma && strcmp(act, "gelu_pytorch_tanh") && (fm->gemma >= 2 || strcmp(act, "gelu")))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s \"%.64s\" is not supported for %s (xsa-eval implements gelu_pytorch_tanh%s)",
                        path, act_key, act, fm->name, fm->gemma >= 2 ? "" : ", and gelu read as it");
    if (!fm->gemma && strcmp(act, "silu"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_act \"%.64s\" is not supported (xsa-eval implements silu)", path, act);
    // Only phi3's rotary reads partial_rotary_factor: the others' rotate whole heads under default
    // RoPE and fail on the shapes (frequencies for part of a head) under a scaling.
    if (strcmp(fm->name, "phi3") && hc->partial_rotary != 1) {
        if (c->rope_scaling)
            return xsa_fail(err, XSA_EBADINPUT, "%s: partial_rotary_factor %g with scaled RoPE is not supported for %s "
                            "(transformers' %s fails on it); remove the factor or the scaling", path, hc->partial_rotary,
                            fm->name, fm->name);
        hc->partial_rotary = 1;
    }
    if (!strcmp(fm->name, "phi3") && c->rope_scaling)  // (Phi3Config reads yarn as longrope, refuses the others)
        return xsa_fail(err, XSA_EBADINPUT, "%s: phi3 with scaled RoPE is not supported: transformers 5 takes a phi3 "
                        "rope only as default or longrope, and xsa-eval implements default", path);
    hc->ws = (struct weight_spec){.qkv_bias = ab || fm->qkv_bias, .o_bias = ab, .mlp_bias = mb,
                                  .no_pre_norm = fm->post_norm, .post_norm = fm->post_norm,
                                  .norm_bias = fm->layer_norm, .norm_unit = fm->layer_norm};
    c->norm_unit = fm->layer_norm;
    c->qk_norm = fm->qk_norm;
    if (fm->fused) c->fused = MODEL_FUSED_QKV | MODEL_FUSED_GATE_UP;
    if (fm->gemma && (rc = parse_gemma(hc, r, fm, path, err))) return rc;
    return finish_rope_decoder(hc, path, err);
}

// gpt_neox (Pythia): LayerNorm, GELU MLP with biases, fused per-head q|k|v, partial rotary,
// parallel residual, untied embed_out.
static int parse_gpt_neox(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_HALF;
    c->mlp_plain = 1;
    c->fused = MODEL_FUSED_QKV_HEADS;
    snprintf(c->family, sizeof c->family, "gpt_neox");
    const char *act = NULL;
    int ab = 1;
    int rc = get_int(r, "vocab_size", REQUIRED, 1, 1 << 22, &c->vocab_size, path, err);
    if (!rc) rc = get_int(r, "hidden_size", REQUIRED, 1, 1 << 16, &c->d_model, path, err);
    if (!rc) rc = get_int(r, "intermediate_size", REQUIRED, 1, 1 << 20, &c->d_ff, path, err);
    if (!rc) rc = get_int(r, "num_hidden_layers", REQUIRED, 1, MODEL_MAX_LAYERS, &c->n_layer, path, err);
    if (!rc) rc = get_int(r, "num_attention_heads", REQUIRED, 1, 4096, &c->n_head, path, err);
    if (!rc) rc = get_int(r, "max_position_embeddings", 2048, 1, 1 << 22, &c->max_seq_len, path, err);
    if (!rc) rc = get_float(r, "layer_norm_eps", 1e-5, 0, 1, &c->norm_eps, path, err);
    if (!rc) rc = get_bool(r, "tie_word_embeddings", 0, &c->tied_head, path, err);
    if (!rc) rc = get_bool(r, "use_parallel_residual", 1, &c->parallel_residual, path, err);
    if (!rc) rc = get_bool(r, "attention_bias", 1, &ab, path, err);
    if (!rc) rc = get_string(r, "hidden_act", "gelu", &act, path, err);
    if (!rc) rc = get_token_id(r, "bos_token_id", &c->bos_id, path, err);
    if (!rc) rc = get_token_id(r, "eos_token_id", &c->eos_id, path, err);
    double pct = 0.25;  // GPTNeoXConfig's rotary_pct and rotary_emb_base defaults
    float base = 10000;
    if (!rc) rc = get_double(r, "rotary_pct", 0.25, 1e-6, 1, &pct, path, err);
    if (!rc) rc = get_float(r, "rotary_emb_base", 10000.0, 1.0, 1e12, &base, path, err);
    if (!rc) rc = parse_rope(hc, r, pct, path, err);
    if (rc) return rc;
    // GPTNeoXConfig (transformers 5) fills the rope object from rotary_emb_base and rotary_pct
    // (defaults 10000 and 0.25): a top-level rope_theta or partial_rotary_factor is not read.
    const cJSON *rp = json_last_item(r, "rope_parameters"), *rs = json_last_item(r, "rope_scaling");
    if (!(cJSON_IsObject(rp) && json_last_item(rp, "rope_theta")) && !(cJSON_IsObject(rs) && json_last_item(rs, "rope_theta")))
        c->rope_theta = base;
    if (!(cJSON_IsObject(rp) && json_last_item(rp, "partial_rotary_factor")) && !(cJSON_IsObject(rs) && json_last_item(rs, "partial_rotary_factor")))
        hc->partial_rotary = pct;
    c->gelu_exact = !strcmp(act, "gelu");
    if (!c->gelu_exact && strcmp(act, "gelu_new") && strcmp(act, "gelu_pytorch_tanh"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_act \"%.64s\" is not supported (xsa-eval implements gelu, gelu_new and gelu_pytorch_tanh)", path, act);
    // transformers' gpt_neox sizes only its rotary frequencies by a head_dim key, not the heads.
    int hd = 0;
    rc = get_int(r, "head_dim", 0, 1, 1 << 12, &hd, path, err);
    if (rc) return rc;
    if (hd && (long long)hd * c->n_head != c->d_model)
        return xsa_fail(err, XSA_EBADINPUT, "%s: gpt_neox head_dim %d is not hidden_size / num_attention_heads (%d / %d): "
                        "transformers would rotate by it but split heads by the width; not supported (remove head_dim)",
                        path, hd, c->d_model, c->n_head);
    c->n_kv_head = c->n_head;
    hc->ws = (struct weight_spec){.norm_bias = 1, .qkv_bias = ab, .o_bias = ab, .mlp_bias = 1};
    return finish_rope_decoder(hc, path, err);
}

// phi (microsoft/phi-1, phi-1_5, phi-2; transformers' PhiForCausalLM): LayerNorm with biases, one
// norm per layer feeding attention and MLP side by side (x + attn(n(x)) + mlp(n(x))), q/k/v/dense
// and fc1/fc2 biases, partial rotary (partial_rotary_factor, 0.5 by default), optional per-head
// q/k LayerNorms (qk_layernorm), a head with a bias, untied by default.
static int parse_phi(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_HALF;
    c->mlp_plain = 1;
    c->parallel_residual = 1;
    c->norm_shared = 1;
    snprintf(c->family, sizeof c->family, "phi");
    const char *act = NULL;
    int qk_ln = 0;
    int rc = get_int(r, "vocab_size", REQUIRED, 1, 1 << 22, &c->vocab_size, path, err);
    if (!rc) rc = get_int(r, "hidden_size", REQUIRED, 1, 1 << 16, &c->d_model, path, err);
    if (!rc) rc = get_int(r, "intermediate_size", REQUIRED, 1, 1 << 20, &c->d_ff, path, err);
    if (!rc) rc = get_int(r, "num_hidden_layers", REQUIRED, 1, MODEL_MAX_LAYERS, &c->n_layer, path, err);
    if (!rc) rc = get_int(r, "num_attention_heads", REQUIRED, 1, 4096, &c->n_head, path, err);
    if (!rc) rc = get_int(r, "num_key_value_heads", c->n_head, 1, 4096, &c->n_kv_head, path, err);
    if (!rc) rc = get_int(r, "max_position_embeddings", 2048, 1, 1 << 22, &c->max_seq_len, path, err);
    if (!rc) rc = get_float(r, "layer_norm_eps", 1e-5, 0, 1, &c->norm_eps, path, err);
    if (!rc) rc = get_bool(r, "tie_word_embeddings", 0, &c->tied_head, path, err);
    if (!rc) rc = get_bool(r, "qk_layernorm", 0, &qk_ln, path, err);
    if (!rc) rc = get_string(r, "hidden_act", "gelu_new", &act, path, err);
    if (!rc) rc = get_token_id(r, "bos_token_id", &c->bos_id, path, err);
    if (!rc) rc = get_token_id(r, "eos_token_id", &c->eos_id, path, err);
    if (!rc) rc = parse_rope(hc, r, 0.5, path, err);
    if (rc) return rc;
    c->gelu_exact = !strcmp(act, "gelu");
    if (!c->gelu_exact && strcmp(act, "gelu_new") && strcmp(act, "gelu_pytorch_tanh"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_act \"%.64s\" is not supported for phi (xsa-eval implements gelu_new, "
                        "gelu_pytorch_tanh and gelu)", path, act);
    if (c->rope_scaling)
        return xsa_fail(err, XSA_EBADINPUT, "%s: phi with scaled RoPE (rope_scaling / rope_parameters of another type than "
                        "default) is not supported; xsa-eval implements phi's default RoPE", path);
    // PhiAttention sizes its heads by a head_dim key when there is one, its q/k LayerNorms by
    // hidden_size / num_attention_heads always.
    if (!rc) rc = get_int(r, "head_dim", 0, 2, 1 << 12, &c->head_dim, path, err);
    if (rc) return rc;
    if (qk_ln && (c->d_model % c->n_head || (c->head_dim && c->head_dim != c->d_model / c->n_head)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: qk_layernorm with head_dim %d other than hidden_size / num_attention_heads "
                        "(%d / %d): transformers' PhiAttention sizes its q/k LayerNorms by the latter; not supported", path,
                        c->head_dim, c->d_model, c->n_head);
    c->qk_norm = qk_ln ? QK_NORM_HEAD : QK_NORM_NONE;
    hc->ws = (struct weight_spec){.norm_bias = 1, .qkv_bias = 1, .o_bias = 1, .mlp_bias = 1, .shared_norm = 1,
                                  .qk_norm_bias = qk_ln, .head_bias = 1};
    return finish_rope_decoder(hc, path, err);
}

// opt (facebook/opt-125m ... ; transformers' OPTForCausalLM): learned positions (a table with 2
// offset rows first), LayerNorms (eps 1e-5, nn.LayerNorm's; without weight or bias when
// layer_norm_elementwise_affine is false), ReLU MLP (activation_function), biases (enable_bias),
// norms before each sublayer or, with do_layer_norm_before false (opt-350m), after each residual
// add; a final norm only before the head of a pre-LN model without _remove_final_layer_norm;
// word_embed_proj_dim other than hidden_size: project_in / project_out around the decoder. Tied
// head by default.
static int parse_opt(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_NONE;
    c->mlp_plain = 1;
    c->learned_pos = 1;
    snprintf(c->family, sizeof c->family, "opt");
    const char *act = NULL;
    int pre = 1, remove_final = 0, bias = 1, affine = 1, E = 0;
    int rc = get_int(r, "vocab_size", REQUIRED, 1, 1 << 22, &c->vocab_size, path, err);
    if (!rc) rc = get_int(r, "hidden_size", REQUIRED, 1, 1 << 16, &c->d_model, path, err);
    if (!rc) rc = get_int(r, "ffn_dim", REQUIRED, 1, 1 << 20, &c->d_ff, path, err);
    if (!rc) rc = get_int(r, "num_hidden_layers", REQUIRED, 1, MODEL_MAX_LAYERS, &c->n_layer, path, err);
    if (!rc) rc = get_int(r, "num_attention_heads", REQUIRED, 1, 4096, &c->n_head, path, err);
    if (!rc) rc = get_int(r, "max_position_embeddings", 2048, 1, 1 << 22, &c->max_seq_len, path, err);
    if (!rc) rc = get_int(r, "word_embed_proj_dim", c->d_model, 1, 1 << 16, &E, path, err);
    if (!rc) rc = get_bool(r, "do_layer_norm_before", 1, &pre, path, err);
    if (!rc) rc = get_bool(r, "_remove_final_layer_norm", 0, &remove_final, path, err);
    if (!rc) rc = get_bool(r, "enable_bias", 1, &bias, path, err);
    if (!rc) rc = get_bool(r, "layer_norm_elementwise_affine", 1, &affine, path, err);
    if (!rc) rc = get_bool(r, "tie_word_embeddings", 1, &c->tied_head, path, err);
    if (!rc) rc = get_string(r, "activation_function", "relu", &act, path, err);
    if (!rc) rc = get_token_id(r, "bos_token_id", &c->bos_id, path, err);
    if (!rc) rc = get_token_id(r, "eos_token_id", &c->eos_id, path, err);
    if (rc) return rc;
    c->mlp_relu = !strcmp(act, "relu");
    c->gelu_exact = !strcmp(act, "gelu");
    if (!c->mlp_relu && !c->gelu_exact && strcmp(act, "gelu_new") && strcmp(act, "gelu_pytorch_tanh"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: activation_function \"%.64s\" is not supported for opt (xsa-eval implements "
                        "relu, gelu, gelu_new and gelu_pytorch_tanh)", path, act);
    if (c->d_model % c->n_head)  // (OPTAttention refuses it)
        return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_size %d is not a multiple of num_attention_heads %d", path, c->d_model,
                        c->n_head);
    c->n_kv_head = c->n_head;
    c->head_dim = c->d_model / c->n_head;
    c->norm_eps = 1e-5f;
    c->post_ln = !pre;
    c->no_final_norm = !pre || remove_final;  // (OPTDecoder's final_layer_norm: pre-LN and not removed)
    c->embed_dim = E != c->d_model ? E : 0;
    c->norm_unit = !affine;
    hc->ws = (struct weight_spec){.norm_bias = 1, .qkv_bias = bias, .o_bias = bias, .mlp_bias = bias,
                                  .norm_unit = !affine, .no_final_norm = c->no_final_norm};
    return 0;
}

// stablelm (StableLmConfig): llama's shapes and SwiGLU MLP under its own keys: LayerNorms with
// bias (layer_norm_eps), partial rotary (partial_rotary_factor, 0.25 by default), use_qkv_bias,
// qk_layernorm (a LayerNorm without bias per head, each head its own gain), use_parallel_residual
// (x + attn(n(x)) + mlp(n(x)) with the one input_layernorm), an untied head by default. head_dim
// is hidden_size / num_attention_heads (StableLmAttention reads no head_dim key).
static int parse_stablelm(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_HALF;
    snprintf(c->family, sizeof c->family, "stablelm");
    const char *act = NULL;
    int qkv_bias = 0, qk_ln = 0, par = 0;
    int rc = get_int(r, "vocab_size", REQUIRED, 1, 1 << 22, &c->vocab_size, path, err);
    if (!rc) rc = get_int(r, "hidden_size", REQUIRED, 1, 1 << 16, &c->d_model, path, err);
    if (!rc) rc = get_int(r, "intermediate_size", REQUIRED, 1, 1 << 20, &c->d_ff, path, err);
    if (!rc) rc = get_int(r, "num_hidden_layers", REQUIRED, 1, MODEL_MAX_LAYERS, &c->n_layer, path, err);
    if (!rc) rc = get_int(r, "num_attention_heads", REQUIRED, 1, 4096, &c->n_head, path, err);
    // StableLmConfig's num_key_value_heads is 32 where the file leaves it out, whatever the heads.
    if (!rc) rc = get_int(r, "num_key_value_heads", 32, 1, 4096, &c->n_kv_head, path, err);
    if (!rc && c->n_head % c->n_kv_head && !json_last_item(r, "num_key_value_heads"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"num_key_value_heads\" is missing and StableLmConfig's default 32 does "
                        "not divide num_attention_heads %d (transformers fails on this config); add num_key_value_heads",
                        path, c->n_head);
    if (!rc) rc = get_int(r, "max_position_embeddings", 4096, 1, 1 << 22, &c->max_seq_len, path, err);
    if (!rc) rc = get_float(r, "layer_norm_eps", 1e-5, 0, 1, &c->norm_eps, path, err);
    if (!rc) rc = get_bool(r, "tie_word_embeddings", 0, &c->tied_head, path, err);
    if (!rc) rc = get_bool(r, "use_qkv_bias", 0, &qkv_bias, path, err);
    if (!rc) rc = get_bool(r, "qk_layernorm", 0, &qk_ln, path, err);
    if (!rc) rc = get_bool(r, "use_parallel_residual", 0, &par, path, err);
    if (!rc) rc = get_string(r, "hidden_act", "silu", &act, path, err);
    if (!rc) rc = get_token_id(r, "bos_token_id", &c->bos_id, path, err);
    if (!rc) rc = get_token_id(r, "eos_token_id", &c->eos_id, path, err);
    if (!rc) rc = parse_rope(hc, r, 0.25, path, err);
    if (rc) return rc;
    if (strcmp(act, "silu"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_act \"%.64s\" is not supported for stablelm (xsa-eval implements silu)", path, act);
    if (c->rope_scaling)
        return xsa_fail(err, XSA_EBADINPUT, "%s: stablelm with scaled RoPE (rope_scaling / rope_parameters type) is not "
                        "supported; xsa-eval implements stablelm's default partial rotary", path);
    if (c->d_model % c->n_head)  // (StableLmAttention raises on it)
        return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_size %d is not a multiple of num_attention_heads %d (transformers "
                        "refuses this stablelm config)", path, c->d_model, c->n_head);
    int hd = 0;  // (StableLmRotaryEmbedding sizes its frequencies by a head_dim key, the attention splits by the width)
    rc = get_int(r, "head_dim", 0, 1, 1 << 12, &hd, path, err);
    if (rc) return rc;
    if (hd && (long long)hd * c->n_head != c->d_model)
        return xsa_fail(err, XSA_EBADINPUT, "%s: stablelm head_dim %d is not hidden_size / num_attention_heads (%d / %d): "
                        "transformers would rotate by it but split heads by the width; not supported (remove head_dim)",
                        path, hd, c->d_model, c->n_head);
    c->qk_norm = qk_ln ? QK_NORM_HEAD_LN : QK_NORM_NONE;
    c->parallel_residual = par ? 2 : 0;
    hc->ws = (struct weight_spec){.norm_bias = 1, .qkv_bias = qkv_bias, .shared_norm = par};
    return finish_rope_decoder(hc, path, err);
}

#define SUPPORTED_TYPES "gpt2, llama, mistral, ministral, qwen2, qwen3, olmo, olmo2, gpt_neox, phi, phi3, gemma, gemma2, gemma3_text, opt" \
    ", stablelm, smollm3, granite"

int hf_config_parse_text(struct hf_config *hc, const char *text, const char *path, xsa_error *err) {
    memset(hc, 0, sizeof *hc);
    hc->cfg.bos_id = hc->cfg.eos_id = -1;
    hc->partial_rotary = 1;
    cJSON *r = json_read_whole(text, strlen(text), JSON_KEYS_LAST_WINS, path, err);
    if (!r) return XSA_EBADINPUT;
    if (!cJSON_IsObject(r)) {
        cJSON_Delete(r);
        return xsa_fail(err, XSA_EBADINPUT, "%s: not a JSON object", path);
    }
    const char *type = NULL;
    int rc = get_string(r, "model_type", NULL, &type, path, err);
    if (!rc && !type) rc = xsa_fail(err, XSA_EBADINPUT, "%s: \"model_type\" is missing (supported: " SUPPORTED_TYPES ")", path);
    const struct family *fm = NULL;
    for (size_t i = 0; !rc && i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(type, families[i].name)) fm = &families[i];
    if (!rc) {
        if (!strcmp(type, "gpt2")) rc = parse_gpt2(hc, r, path, err);
        else if (!strcmp(type, "gpt_neox")) rc = parse_gpt_neox(hc, r, path, err);
        else if (!strcmp(type, "phi")) rc = parse_phi(hc, r, path, err);
        else if (!strcmp(type, "opt")) rc = parse_opt(hc, r, path, err);
        else if (!strcmp(type, "stablelm")) rc = parse_stablelm(hc, r, path, err);
        else if (fm) rc = parse_llama(hc, r, fm, path, err);
        else if (!strcmp(type, "hf_olmo"))  // (the ai2-olmo package's own format: allenai/OLMo-1B, OLMo-7B)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: model_type \"hf_olmo\" (the ai2-olmo package's format) is not supported; "
                          "use the transformers twin of the repo (model_type olmo: allenai/OLMo-1B-hf for allenai/OLMo-1B)", path);
        else rc = xsa_fail(err, XSA_EBADINPUT, "%s: model_type \"%.64s\" is not supported (supported: " SUPPORTED_TYPES ")", path, type);
    }
    if (!rc) rc = parse_xsa_layers(hc, r, path, err);
    cJSON_Delete(r);
    return rc;
}

int hf_config_parse_file(struct hf_config *hc, const char *path, xsa_error *err) {
    char *text = NULL;
    int rc = file_read_regular(path, HF_CONFIG_MAX_BYTES, &text, NULL, err);
    if (!rc) rc = hf_config_parse_text(hc, text, path, err);
    free(text);
    return rc;
}
