// torch_hf_config.c: the config.json text of a transformers model saved whole (torch.save(model)):
// its `config` attribute, a PretrainedConfig object, written out from its pickled attributes.
#include <stdio.h>
#include <string.h>

#include "common/jsonw.h"
#include "model/torch_checkpoint.h"

#define CONFIG_MAX_DEPTH 8          // nested dicts, lists and sub-configs
#define CONFIG_MAX_BYTES (1 << 20)  // the text: a memo-shared dict could repeat exponentially

// model_type from the class: "transformers.models.<type>.configuration_<type>.<Name>".
static int model_type(const struct pv *config, char *out, size_t n) {
    static const char head[] = "transformers.models.";
    const char *name = config && config->kind == PV_OBJECT && config->cls ? config->cls->s : "";
    if (strncmp(name, head, sizeof head - 1)) return 0;
    const char *type = name + sizeof head - 1, *dot = strchr(type, '.');
    size_t k = dot ? (size_t)(dot - type) : 0;
    if (!k || k >= n || strncmp(dot + 1, "configuration_", 14) || strncmp(dot + 15, type, k) || dot[15 + k] != '.') return 0;
    snprintf(out, n, "%.*s", (int)k, type);
    return 1;
}

static void value(struct jsonw *w, const char *key, const struct pv *v, int depth);

// A dict's JSON-able pairs: string keys (integer ones as their digits, as config.json holds
// id2label), private ones ("_name_or_path", "_attn_implementation_internal") left out.
static void members(struct jsonw *w, const struct pv *d, int depth) {
    for (size_t i = 0; d && d->kind == PV_DICT && i < d->n; i++) {
        const struct pv *k = d->v[2 * i];
        char num[32];
        const char *name = k->kind == PV_STR ? k->s : k->kind == PV_INT ? (snprintf(num, sizeof num, "%lld", (long long)k->i), num) : NULL;
        if (name && name[0] != '_' && strcmp(name, "model_type")) value(w, name, d->v[2 * i + 1], depth);
    }
}

// One value; what JSON cannot hold (tensors, foreign objects) is left out (null in a list).
static void value(struct jsonw *w, const char *key, const struct pv *v, int depth) {
    if (depth > CONFIG_MAX_DEPTH || w->out.n > CONFIG_MAX_BYTES) {
        w->failed = 1;
        return;
    }
    switch (v->kind) {
    case PV_NONE: jsonw_null(w, key); break;
    case PV_BOOL: jsonw_bool(w, key, (int)v->i); break;
    case PV_INT: jsonw_int(w, key, (long long)v->i); break;
    case PV_FLOAT: jsonw_num(w, key, v->f); break;
    case PV_STR: jsonw_str(w, key, v->s); break;
    case PV_GLOBAL:  // a torch dtype (config.dtype): its name, as to_json_string writes it
        if (!strncmp(v->s, "torch.", 6) && v->i == UPG_INERT) jsonw_str(w, key, v->s + 6);
        else if (!key) jsonw_null(w, key);
        break;
    case PV_LIST:
    case PV_TUPLE:
        jsonw_array(w, key);
        for (size_t i = 0; i < v->n && !w->failed; i++) value(w, NULL, v->v[i], depth + 1);
        jsonw_end(w);
        break;
    case PV_DICT:
        jsonw_object(w, key);
        members(w, v, depth + 1);
        jsonw_end(w);
        break;
    case PV_OBJECT:  // a sub-config (a multimodal model's text_config): its attributes
        if (v->state && v->state->kind == PV_DICT) {
            jsonw_object(w, key);
            char type[64];
            if (model_type(v, type, sizeof type)) jsonw_str(w, "model_type", type);
            members(w, v->state, depth + 1);
            jsonw_end(w);
            break;
        }
        /* fall through */
    default:
        if (!key) jsonw_null(w, key);
    }
}

int torch_hf_config_text(const struct pv *config, struct sbuf *out) {
    char type[64];
    if (!model_type(config, type, sizeof type) || !config->state || config->state->kind != PV_DICT) return 0;
    struct jsonw w = {0};
    jsonw_object(&w, NULL);
    jsonw_str(&w, "model_type", type);
    members(&w, config->state, 1);
    jsonw_end(&w);
    int ok = !w.failed && w.out.s;
    if (ok) sbuf_puts(out, w.out.s);
    jsonw_free(&w);
    return ok;
}
