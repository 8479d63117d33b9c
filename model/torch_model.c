// torch_model.c: a single torch.save file given as --model: nanoGPT's ckpt.pt (its model_args
// are the config; the same mapping as tools/convert/convert_nanogpt.py, done in place), nanoGPT's
// GPT saved whole (torch.save(model): its GPTConfig is the config), or a state dict or whole
// module (bare, or under a training loop's "state_dict" / "model_state_dict" / "model" / "module"
// key) whose Hugging Face config.json sits beside it (a transformers model saved whole: else its
// config object, written out as config.json).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "common/xalloc.h"
#include "model/config.h"
#include "model/model_internal.h"
#include "model/mnanogpt.h"
#include "model/torch_checkpoint.h"

// A field of nanoGPT's model_args dict or of its GPTConfig object (a whole module's config).
static const struct pv *arg(const struct pv *args, const char *key) {
    return args->kind == PV_OBJECT ? up_attr(args, key) : up_dict_get(args, key);
}

static int arg_int(const struct pv *args, const char *key, const char *path, int *out, xsa_error *err) {
    const struct pv *v = arg(args, key);
    if (!v || v->kind != PV_INT || v->i <= 0 || v->i > (1 << 22))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s%s%s is missing or not a positive integer; not a checkpoint of nanoGPT's train.py", path,
                        args->kind == PV_OBJECT ? "the model's config." : "model_args['", key, args->kind == PV_OBJECT ? "" : "']");
    *out = (int)v->i;
    return 0;
}

// config.json text of the GPT-2 that nanoGPT's GPT is (what tools/convert/convert_nanogpt.py writes).
// args: ckpt.pt's model_args, or the GPTConfig of a GPT saved whole.
static int nanogpt_config(const struct pv *args, const char *path, struct hf_config *hc, int *bias, xsa_error *err) {
    int L = 0, H = 0, C = 0, T = 0, V = 0, rc;  // (set on success; zeros for GCC 12 at -O3)
    if ((rc = arg_int(args, "n_layer", path, &L, err)) || (rc = arg_int(args, "n_head", path, &H, err)) ||
        (rc = arg_int(args, "n_embd", path, &C, err)) || (rc = arg_int(args, "block_size", path, &T, err)) ||
        (rc = arg_int(args, "vocab_size", path, &V, err)))
        return rc;
    const struct pv *b = arg(args, "bias");
    if (b && b->kind != PV_BOOL) return xsa_fail(err, XSA_EBADINPUT, "%s: the model's bias setting is not True or False", path);
    *bias = !b || b->i;
    char text[1024], eos[16] = "null";
    if (V > 50256) snprintf(eos, sizeof eos, "50256");  // GPT-2's <|endoftext|>, as the converter
    snprintf(text, sizeof text,
             "{\"model_type\": \"gpt2\", \"vocab_size\": %d, \"n_positions\": %d, \"n_embd\": %d, \"n_layer\": %d, "
             "\"n_head\": %d, \"n_inner\": null, \"activation_function\": \"gelu\", \"layer_norm_epsilon\": 1e-5, "
             "\"tie_word_embeddings\": true, \"bos_token_id\": %s, \"eos_token_id\": %s}",
             V, T, C, L, H, eos, eos);
    return hf_config_parse_text(hc, text, path, err);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

// nanoGPT's nn.Linear weights are (out, in); GPT-2's Conv1D, which the loader reads, (in, out):
// they are marked linear, and the loader takes them as they are.
static int is_linear(const char *name) {
    static const char *s[] = {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"};
    for (size_t i = 0; i < 4; i++)
        if (ends_with(name, s[i])) return 1;
    return 0;
}

// bias=False: LayerNorm and Linear without biases are the same function with zero biases.
static int add_zero_bias(struct torch_file *tf, struct safetensors *st, const char *name, int64_t n, long long *added,
                         xsa_error *err) {
    if (safetensors_find(st, name)) return 0;
    *added += n;
    float *z = xsa_calloc((size_t)n, sizeof *z);
    safetensors_keep(st, tf->fi, z);
    return safetensors_add_tensor(st, tf->fi, name, "F32", 1, &n, (const unsigned char *)z, (size_t)n * sizeof *z, err);
}

// whole: the GPT saved whole (its GPTConfig the config), else ckpt.pt's "model" entry.
static int nanogpt_tensors(struct torch_file *tf, struct safetensors *st, const struct pv *sd, const struct hf_config *hc,
                           int bias, int whole, long long *zeros, const char *path, xsa_error *err) {
    if (!sd || sd->kind != PV_DICT) return xsa_fail(err, XSA_EBADINPUT, "%s: the 'model' entry is not a state dict", path);
    int rc = 0;
    for (size_t i = 0; i < sd->n && !rc; i++) {
        const struct pv *k = sd->v[2 * i], *v = sd->v[2 * i + 1];
        if (k->kind != PV_STR) return xsa_fail(err, XSA_EBADINPUT, "%s: model entry %zu has a key that is not a name; not a state dict", path, i);
        if (v->kind != PV_TENSOR) {
            char what[160];
            up_describe(v, what, sizeof what);
            return xsa_fail(err, XSA_EBADINPUT, "%s: model entry %zu is %s, not a tensor; not a state dict", path, i, what);
        }
        const char *name = torch_unwrap_name(k->s);  // torch.compile's and DDP's wrappers
        rc = torch_add_tensor(tf, st, name, v, err);
        if (!rc && is_linear(name) && v->ndim == 2) st->tensors[st->n_tensors - 1].linear = 1;  // read untransposed
    }
    // a fork's GPT with nanoGPT's config fields but its own modules: say so, not "'wte.weight' is missing"
    if (!rc && !safetensors_find(st, "transformer.wte.weight"))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s nanoGPT's (n_layer, n_head, n_embd, block_size, vocab_size) but not its GPT's weights "
                      "(no transformer.wte.weight, as %s names them); xsa-eval reads nanoGPT's GPT and the Hugging Face families: "
                      "save a model of one of them", path, whole ? "a module saved whole whose config has" : "model_args like",
                      whole ? "state_dict()" : "its 'model' entry");
    int64_t C = hc->cfg.d_model;
    char n[160];
    for (int l = 0; l < hc->cfg.n_layer && !rc && !bias; l++) {
        static const char *names[] = {"ln_1", "ln_2", "attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"};
        const int64_t width[] = {C, C, 3 * C, C, 4 * C, C};
        for (int j = 0; j < 6 && !rc; j++) {
            snprintf(n, sizeof n, "transformer.h.%d.%s.bias", l, names[j]);
            rc = add_zero_bias(tf, st, n, width[j], zeros, err);
        }
    }
    if (!rc && !bias) rc = add_zero_bias(tf, st, "transformer.ln_f.bias", C, zeros, err);
    const struct st_tensor *head = safetensors_find(st, "lm_head.weight"), *emb = safetensors_find(st, "transformer.wte.weight");
    if (!rc && head && emb && (head->nbytes != emb->nbytes || strcmp(head->dtype_name, emb->dtype_name) || memcmp(head->data, emb->data, head->nbytes)))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: lm_head.weight differs from transformer.wte.weight; nanoGPT ties them, this model does not", path);
    return rc;
}

// 1 when sd cannot be a state dict (not a dict, or an object among its values): that, rather
// than a missing config.json, is what the message must say.
static int not_weights(const struct pv *sd) {
    for (size_t i = 0; sd->kind == PV_DICT && i < sd->n; i++)
        if (sd->v[2 * i + 1]->kind == PV_OBJECT || sd->v[2 * i + 1]->kind == PV_GLOBAL) return 1;
    return sd->kind != PV_DICT;
}

// A state dict (sd) whose config.json is beside the file or given by --config, else (a
// transformers model saved whole) written from the model's config object.
static int bare_state_dict(struct torch_file *tf, struct safetensors *st, const struct pv *sd, const struct pv *module, const char *path,
                           const char *config, struct hf_config *hc, xsa_error *err) {
    if (not_weights(sd)) return torch_add_state_dict(tf, st, sd, NULL, err);  // refused, naming what it holds
    if (!sd->n)  // (else: the family's first tensor "is missing")
        return xsa_fail(err, XSA_EBADINPUT, "%s: the saved state dict is empty (no tensors); save the trained model's state_dict()", path);
    char cfg[4200];
    const char *slash = strrchr(path, '/');
    if (config) snprintf(cfg, sizeof cfg, "%s", config);
    else snprintf(cfg, sizeof cfg, "%.*s/config.json", slash ? (int)(slash - path) : 1, slash ? path : ".");
    FILE *f = fopen(cfg, "r");
    if (!f && config) return xsa_fail(err, XSA_EBADINPUT, "%s: --config %s: cannot open: %s", path, config, strerror(errno));
    struct sbuf text = {0};
    if (!f && torch_hf_config_text(up_attr(module, "config"), &text)) {
        int rc = hf_config_parse_text(hc, text.s, path, err);
        sbuf_free(&text);
        return rc ? rc : torch_add_state_dict(tf, st, sd, NULL, err);
    }
    if (!f)
        return xsa_fail(err, XSA_EBADINPUT, "%s: a state dict without model_args, and no config.json beside it (%s); put the model's Hugging Face config.json there or pass --config FILE (a parameter-golf final_model.pt: its xsa_eval.json, or --arch FILE)",
                        path, cfg);
    fclose(f);
    int rc = hf_config_parse_file(hc, cfg, err);
    return rc ? rc : torch_add_state_dict(tf, st, sd, NULL, err);
}

// modded-nanogpt's state_step*.pt: dict(step, code, model, optimizer), the model's weights in
// banks (qk_bank, vo_bank, mlp_bank), with "_orig_mod." prefixes when saved compiled.
// 1 when the dict holds `name` under a compiled ("_orig_mod.") or DDP ("module.") model's prefixes.
static int has_wrapped(const struct pv *d, const char *name) {
    size_t k = strlen(name);
    for (size_t i = 0; i < d->n; i++) {
        const struct pv *key = d->v[2 * i];
        if (key->kind != PV_STR || key->len < k || strcmp(key->s + key->len - k, name)) continue;
        const char *p = key->s, *end = key->s + key->len - k;
        while (p < end) p = !strncmp(p, "_orig_mod.", 10) ? p + 10 : !strncmp(p, "module.", 7) ? p + 7 : end + 1;
        if (p == end) return 1;
    }
    return 0;
}

// modded-nanogpt's weight banks, in {"model": state dict, ...} as its training loop saves them
// or in the state dict itself.
static int is_modded_nanogpt(const struct pv *root) {
    if (root->kind != PV_DICT) return 0;
    const struct pv *sd = up_dict_get(root, "model");
    if (!sd || sd->kind != PV_DICT) sd = root;
    return has_wrapped(sd, "qk_bank") && has_wrapped(sd, "mlp_bank");
}

// nanoGPT's GPT saved whole: its `config` attribute, a GPTConfig (n_layer, n_head, n_embd,
// block_size, vocab_size, bias); NULL for any other module.
static const struct pv *nanogpt_module_config(const struct pv *module) {
    static const char *const fields[] = {"n_layer", "n_head", "n_embd", "block_size", "vocab_size"};
    const struct pv *c = up_attr(module, "config");
    for (size_t i = 0; c && i < sizeof fields / sizeof *fields; i++)
        if (!up_attr(c, fields[i])) return NULL;
    return c;
}

// Not nanoGPT's ckpt.pt nor modded-nanogpt's: a state dict or whole module, with a config.json,
// or nanoGPT's GPT saved whole.
static int weights_load(struct torch_file *tf, struct safetensors *st, const char *path, const char *config, struct hf_config *hc,
                        int *bias, long long *zeros, xsa_error *err) {
    const struct pv *sd = NULL, *module = NULL, *gpt = NULL;
    int rc = torch_find_weights(tf, &sd, &module, err);
    if (!rc && module) gpt = nanogpt_module_config(module);
    if (rc || !gpt) return rc ? rc : bare_state_dict(tf, st, sd, module, path, config, hc, err);
    if (config) return xsa_fail(err, XSA_EBADINPUT, "%s: nanoGPT's GPT saved whole: its config attribute is the config; drop --config %s", path, config);
    if ((rc = nanogpt_config(gpt, path, hc, bias, err))) return rc;
    return nanogpt_tensors(tf, st, sd, hc, *bias, 1, zeros, path, err);
}

int torch_model_load(struct model *m, const char *path, const char *config, xsa_error *err) {
    struct safetensors st;
    memset(&st, 0, sizeof st);
    snprintf(st.format, sizeof st.format, "pytorch");
    struct torch_file tf;
    struct hf_config hc;
    int rc = torch_file_open(&tf, &st, path, err), bias = 1, mng = 0;
    if (!rc) rc = torch_refuse_train_state(tf.root, path, err);
    long long zeros = 0;  // bias=False: the zero biases added
    const struct pv *args = rc ? NULL : up_dict_get(tf.root, "model_args");
    if (!rc && args && config)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: a nanoGPT checkpoint: its model_args are the config; drop --config %s", path, config);
    if (!rc && args) {
        if (args->kind != PV_DICT) rc = xsa_fail(err, XSA_EBADINPUT, "%s: model_args is not a dict; not a checkpoint of nanoGPT's train.py", path);
        if (!rc) rc = nanogpt_config(args, path, &hc, &bias, err);
        if (!rc) rc = nanogpt_tensors(&tf, &st, up_dict_get(tf.root, "model"), &hc, bias, 0, &zeros, path, err);
    } else if (!rc && is_modded_nanogpt(tf.root)) {
        mng = 1;
        if (config) rc = xsa_fail(err, XSA_EBADINPUT, "%s: a modded-nanogpt state_step file: its architecture is the record's GPT; drop --config %s (settings: xsa_eval.json or --arch)", path, config);
    } else if (!rc) {
        rc = weights_load(&tf, &st, path, config, &hc, &bias, &zeros, err);
    }
    long long step = 0;
    const char *unread = NULL;
    int has_step = !rc && torch_saved_step(tf.root, &step, &unread);
    torch_file_close(&tf, &st);
    if (rc || mng) {
        safetensors_close(&st);
        rc = rc ? rc : mnanogpt_load(m, path, NULL, err);
    } else {
        rc = hf_checkpoint_build(m, path, &hc, &st, err);
        if (!rc && zeros) m->n_params -= zeros, m->zero_biases = 1;
    }
    if (!rc) m->has_train_step = has_step, m->train_step = step;
    if (!rc && unread && !mng) snprintf(m->train_step_unread, sizeof m->train_step_unread, "%s", unread);
    return rc;
}
