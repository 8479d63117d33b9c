// tokenizer_config.c: the BOS and EOS that transformers 5 gives a tokenizer.json from the
// tokenizer_config.json beside it, which lm-eval's prefix_token_id and its add_bos_token=True
// (`--add-bos`) use (docs/lm-eval-semantics.md §1.5). transformers' order: the config's
// bos_token / eos_token (a string, an AddedToken object {"content": ...} or null); a
// special_tokens_map.json beside it overrides them when the config has no added_tokens_decoder;
// a key named by neither takes the tokenizer_class's default.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "model/tokenizer_impl.h"

#define CONFIG_MAX_BYTES ((size_t)64 << 20)

// The defaults of the tokenizer classes transformers 5 names most (their __init__ signatures);
// a class not listed here has none that xsa-eval knows of (bos_token unknown).
static const struct {
    const char *cls, *bos, *eos;
} class_defaults[] = {
    {"GPT2Tokenizer", "<|endoftext|>", "<|endoftext|>"},    {"GPT2TokenizerFast", "<|endoftext|>", "<|endoftext|>"},
    {"GPTNeoXTokenizer", "<|endoftext|>", "<|endoftext|>"}, {"GPTNeoXTokenizerFast", "<|endoftext|>", "<|endoftext|>"},
    {"LlamaTokenizer", "<s>", "</s>"},                      {"LlamaTokenizerFast", "<s>", "</s>"},
    {"Qwen2Tokenizer", NULL, "<|endoftext|>"},              {"Qwen2TokenizerFast", NULL, "<|endoftext|>"},
    {"PreTrainedTokenizerFast", NULL, NULL},                {"TokenizersBackend", NULL, NULL},
};

// What a special-token value says: 1 a token (*out), 2 null; -1 with err when it is neither a
// string, an object with a string "content", nor null.
static int token_value(const cJSON *v, const char *key, const char **out, const char *path, xsa_error *err) {
    if (cJSON_IsNull(v)) return 2;
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItemCaseSensitive(v, "content");
    if (!cJSON_IsString(v)) {
        xsa_fail(err, XSA_EBADINPUT, "%s: \"%s\" is neither a token string, an AddedToken object with a \"content\" "
                 "string, nor null", path, key);
        return -1;
    }
    *out = v->valuestring;
    return 1;
}

static cJSON *read_json(const char *path, xsa_error *err) {
    char *data = NULL;
    size_t len = 0;
    if (file_read_regular(path, CONFIG_MAX_BYTES, &data, &len, err)) return NULL;
    // Python's json.load: a repeated key keeps its last value.
    cJSON *root = json_read_whole(data, len, JSON_KEYS_LAST_WINS, path, err);
    free(data);
    if (root && !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        xsa_fail(err, XSA_EBADINPUT, "%s: not a JSON object", path);
        return NULL;
    }
    return root;
}

// cJSON finds the first of a repeated key; json.load keeps the last.
static const cJSON *last_item(const cJSON *o, const char *key) {
    const cJSON *found = NULL;
    for (const cJSON *c = o ? o->child : NULL; c; c = c->next)
        if (c->string && !strcmp(c->string, key)) found = c;
    return found;
}

// The token `key` names: special_tokens_map.json's (when read) over the config's, else the
// class default (when known); *name NULL for none or null.
static int resolve(const cJSON *cfg, const cJSON *map, const char *key, const char *dflt, int has_dflt,
                   const char **name, const char *cfg_path, const char *map_path, xsa_error *err) {
    *name = NULL;
    const cJSON *v = map ? last_item(map, key) : NULL;
    if (v) return token_value(v, key, name, map_path, err) < 0 ? -1 : 0;
    if ((v = last_item(cfg, key))) return token_value(v, key, name, cfg_path, err) < 0 ? -1 : 0;
    if (has_dflt) *name = dflt;
    return 0;
}

int tokenizer_config_read(struct tokenizer *t, xsa_error *err) {
    t->has_config = 0, t->cfg_bos_id = t->cfg_eos_id = -1, t->cfg_bos_name[0] = 0;
    char cfg_path[4200], map_path[4200];
    const char *slash = strrchr(t->path, '/');
    int dirlen = slash ? (int)(slash - t->path) : 1;
    snprintf(cfg_path, sizeof cfg_path, "%.*s/tokenizer_config.json", dirlen, slash ? t->path : ".");
    snprintf(map_path, sizeof map_path, "%.*s/special_tokens_map.json", dirlen, slash ? t->path : ".");
    if (access(cfg_path, F_OK) != 0) return 0;  // without one, transformers names no BOS or EOS
    cJSON *cfg = read_json(cfg_path, err), *map = NULL;
    if (!cfg) return XSA_EBADINPUT;
    int rc = 0;
    if (!last_item(cfg, "added_tokens_decoder") && access(map_path, F_OK) == 0 && !(map = read_json(map_path, err)))
        rc = XSA_EBADINPUT;
    const char *bos = NULL, *eos = NULL, *bos_d = NULL, *eos_d = NULL;
    int has_dflt = 0;
    const cJSON *cls = last_item(cfg, "tokenizer_class");
    if (cJSON_IsString(cls)) {
        for (size_t i = 0; i < sizeof class_defaults / sizeof *class_defaults; i++)
            if (!strcmp(cls->valuestring, class_defaults[i].cls))
                has_dflt = 1, bos_d = class_defaults[i].bos, eos_d = class_defaults[i].eos;
    } else {
        has_dflt = 1;  // no class: TokenizersBackend, which names none
    }
    if (!rc && (resolve(cfg, map, "bos_token", bos_d, has_dflt, &bos, cfg_path, map_path, err) ||
                resolve(cfg, map, "eos_token", eos_d, has_dflt, &eos, cfg_path, map_path, err)))
        rc = XSA_EBADINPUT;
    if (!rc) {
        t->has_config = 1;
        if (bos) {
            t->cfg_bos_id = tokenizer_hf_token_id(t, bos, strlen(bos));
            if (t->cfg_bos_id < 0) snprintf(t->cfg_bos_name, sizeof t->cfg_bos_name, "%s", bos);
        } else if (!has_dflt) {
            snprintf(t->cfg_bos_name, sizeof t->cfg_bos_name, "(the default of %s)", cls->valuestring);
        }
        if (eos) t->cfg_eos_id = tokenizer_hf_token_id(t, eos, strlen(eos));
    }
    cJSON_Delete(cfg);
    cJSON_Delete(map);
    return rc;
}
