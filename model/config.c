// config.c: config.json (gpt2, llama) -> struct model_config, with every field range-checked.
#include "model/config.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

#define REQUIRED INT32_MIN  // "no default" for get_int

// The value of `key` in `obj`: the last one when a key is given twice, as Python's json (and
// so transformers) reads the file; cJSON's own lookup returns the first.
static const cJSON *item(const cJSON *obj, const char *key) {
    const cJSON *found = NULL, *e;
    cJSON_ArrayForEach(e, obj) if (e->string && !strcmp(e->string, key)) found = e;
    return found;
}

static int get_int(const cJSON *root, const char *key, int def, int lo, int hi, int *out,
                   const char *path, xsa_error *err) {
    const cJSON *j = item(root, key);
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

static int get_float(const cJSON *root, const char *key, double def, double lo, double hi,
                     float *out, const char *path, xsa_error *err) {
    const cJSON *j = item(root, key);
    if (!j || cJSON_IsNull(j)) { *out = (float)def; return 0; }
    double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
    if (!(d >= lo && d <= hi)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be a number in [%g, %g]", path, key, lo, hi);
    *out = (float)d;
    return 0;
}

static int get_bool(const cJSON *root, const char *key, int def, int *out, const char *path, xsa_error *err) {
    const cJSON *j = item(root, key);
    if (!j || cJSON_IsNull(j)) { *out = def; return 0; }
    if (!cJSON_IsBool(j)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be true or false", path, key);
    *out = cJSON_IsTrue(j);
    return 0;
}

// bos/eos: an id, a list of ids (the first is taken, as for Llama 3's eos list), or absent (-1).
static int get_token_id(const cJSON *root, const char *key, int *out, const char *path, xsa_error *err) {
    const cJSON *j = item(root, key);
    if (cJSON_IsArray(j)) j = cJSON_GetArrayItem(j, 0);
    if (!j || cJSON_IsNull(j)) { *out = -1; return 0; }
    if (!cJSON_IsNumber(j) || j->valuedouble < 0 || j->valuedouble > (1 << 24) || floor(j->valuedouble) != j->valuedouble)
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be a token id, a list of ids or null", path, key);
    *out = (int)j->valuedouble;
    return 0;
}

static int get_string(const cJSON *root, const char *key, const char *def, const char **out,
                      const char *path, xsa_error *err) {
    const cJSON *j = item(root, key);
    if (!j || cJSON_IsNull(j)) { *out = def; return 0; }
    if (!cJSON_IsString(j)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be a string", path, key);
    *out = j->valuestring;
    return 0;
}

// "xsa_layers": "all" | "none" | [i, j, ...]; absent means standard attention everywhere.
static int parse_xsa_layers(struct hf_config *hc, const cJSON *root, const char *path, xsa_error *err) {
    const cJSON *j = item(root, "xsa_layers");
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
            if (cJSON_IsNumber(e))
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
    hc->attn_bias = hc->mlp_bias = 1;
    return 0;
}

// rope_scaling (transformers 4) / rope_parameters (transformers 5): default, linear, llama3.
static int parse_rope(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    static const char *keys[] = {"rope_parameters", "rope_scaling"};
    int rc = get_float(r, "rope_theta", 10000.0, 1.0, 1e12, &hc->cfg.rope_theta, path, err);
    for (int k = 0; k < 2 && !rc; k++) {
        const cJSON *j = item(r, keys[k]);
        if (!j || cJSON_IsNull(j)) continue;
        if (!cJSON_IsObject(j)) return xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" must be an object or null", path, keys[k]);
        const char *type = NULL;
        rc = get_string(j, "rope_type", NULL, &type, path, err);
        if (!rc && !type) rc = get_string(j, "type", "default", &type, path, err);
        if (rc) return rc;
        struct model_config *c = &hc->cfg;
        if (!strcmp(type, "linear")) {
            c->rope_scaling = ROPE_SCALE_LINEAR;
            rc = get_float(j, "factor", -1, 1e-6, 1e6, &c->rope_factor, path, err);
        } else if (!strcmp(type, "llama3")) {
            c->rope_scaling = ROPE_SCALE_LLAMA3;
            rc = get_float(j, "factor", -1, 1e-6, 1e6, &c->rope_factor, path, err);
            if (!rc) rc = get_float(j, "low_freq_factor", -1, 1e-6, 1e6, &c->rope_low_freq, path, err);
            if (!rc) rc = get_float(j, "high_freq_factor", -1, 1e-6, 1e6, &c->rope_high_freq, path, err);
            if (!rc) rc = get_float(j, "original_max_position_embeddings", -1, 1, 1 << 24, &c->rope_orig_ctx, path, err);
            if (!rc && (c->rope_low_freq < 0 || c->rope_high_freq < 0 || c->rope_orig_ctx < 0))
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s of type llama3 needs low_freq_factor, high_freq_factor and "
                              "original_max_position_embeddings", path, keys[k]);
            if (!rc && !(c->rope_high_freq > c->rope_low_freq))
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s: high_freq_factor must be above low_freq_factor", path, keys[k]);
        } else if (strcmp(type, "default")) {
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s type \"%.32s\" is not supported (xsa-eval implements "
                            "default, linear and llama3)", path, keys[k], type);
        }
        if (!rc && c->rope_scaling && c->rope_factor < 0)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s of type %s needs a \"factor\"", path, keys[k], type);
        if (!rc && item(j, "rope_theta"))
            rc = get_float(j, "rope_theta", 10000.0, 1.0, 1e12, &hc->cfg.rope_theta, path, err);
    }
    return rc;
}

static int parse_llama(struct hf_config *hc, const cJSON *r, const char *path, xsa_error *err) {
    struct model_config *c = &hc->cfg;
    c->arch = MODEL_ARCH_LLAMA;
    c->rope = ROPE_HALF;  // transformers' rotate_half layout
    const char *act = NULL;
    int rc = get_int(r, "vocab_size", REQUIRED, 1, 1 << 22, &c->vocab_size, path, err);
    if (!rc) rc = get_int(r, "hidden_size", REQUIRED, 1, 1 << 16, &c->d_model, path, err);
    if (!rc) rc = get_int(r, "intermediate_size", REQUIRED, 1, 1 << 20, &c->d_ff, path, err);
    if (!rc) rc = get_int(r, "num_hidden_layers", REQUIRED, 1, MODEL_MAX_LAYERS, &c->n_layer, path, err);
    if (!rc) rc = get_int(r, "num_attention_heads", REQUIRED, 1, 4096, &c->n_head, path, err);
    if (!rc) rc = get_int(r, "num_key_value_heads", c->n_head, 1, 4096, &c->n_kv_head, path, err);
    if (!rc) rc = get_int(r, "head_dim", 0, 2, 1 << 12, &c->head_dim, path, err);
    if (!rc) rc = get_int(r, "max_position_embeddings", 2048, 1, 1 << 22, &c->max_seq_len, path, err);
    if (!rc) rc = get_float(r, "rms_norm_eps", 1e-6, 0, 1, &c->norm_eps, path, err);
    if (!rc) rc = get_bool(r, "tie_word_embeddings", 0, &c->tied_head, path, err);
    if (!rc) rc = get_bool(r, "attention_bias", 0, &hc->attn_bias, path, err);
    if (!rc) rc = get_bool(r, "mlp_bias", 0, &hc->mlp_bias, path, err);
    if (!rc) rc = get_string(r, "hidden_act", "silu", &act, path, err);
    if (!rc) rc = get_token_id(r, "bos_token_id", &c->bos_id, path, err);
    if (!rc) rc = get_token_id(r, "eos_token_id", &c->eos_id, path, err);
    if (!rc) rc = parse_rope(hc, r, path, err);
    if (rc) return rc;
    if (strcmp(act, "silu"))
        return xsa_fail(err, XSA_EBADINPUT, "%s: hidden_act \"%.64s\" is not supported (xsa-eval implements silu)", path, act);
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
    return 0;
}

int hf_config_parse_text(struct hf_config *hc, const char *text, const char *path, xsa_error *err) {
    memset(hc, 0, sizeof *hc);
    hc->cfg.bos_id = hc->cfg.eos_id = -1;
    cJSON *r = cJSON_Parse(text);
    if (!cJSON_IsObject(r)) {
        cJSON_Delete(r);
        return xsa_fail(err, XSA_EBADINPUT, "%s: not a JSON object", path);
    }
    const char *type = NULL;
    int rc = get_string(r, "model_type", NULL, &type, path, err);
    if (!rc && !type) rc = xsa_fail(err, XSA_EBADINPUT, "%s: \"model_type\" is missing (supported: gpt2, llama)", path);
    if (!rc) {
        if (!strcmp(type, "gpt2")) rc = parse_gpt2(hc, r, path, err);
        else if (!strcmp(type, "llama")) rc = parse_llama(hc, r, path, err);
        else rc = xsa_fail(err, XSA_EBADINPUT, "%s: model_type \"%.64s\" is not supported (supported: gpt2, llama)", path, type);
    }
    if (!rc) rc = parse_xsa_layers(hc, r, path, err);
    cJSON_Delete(r);
    return rc;
}

int hf_config_parse_file(struct hf_config *hc, const char *path, xsa_error *err) {
    char *text = NULL;
    int rc = file_read_all(path, HF_CONFIG_MAX_BYTES, &text, NULL, err);
    if (!rc) rc = hf_config_parse_text(hc, text, path, err);
    free(text);
    return rc;
}
