// tokenizer_config.c: a tokenizer.json as transformers 5's AutoTokenizer (and so lm-eval 0.4.13)
// builds it from its folder (docs/lm-eval-semantics.md §1.5): the tokenizer class it picks from
// tokenizer_config.json's tokenizer_class and config.json's model_type, whose own normalizer,
// pre-tokenizer and decoder replace the file's for the family classes; the special tokens the
// class and the configs name; and the BOS and EOS that lm-eval's prefix_token_id and its
// add_bos_token=True (`--add-bos`) use. transformers' order for a special token: the config's
// (a string, an AddedToken object {"content": ...} or null), a special_tokens_map.json beside it
// overriding it when the config has no added_tokens_decoder, else the class's default.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "model/tokenizer_impl.h"

#define CONFIG_MAX_BYTES ((size_t)64 << 20)

// The defaults of the tokenizer classes transformers 5 names most (their __init__ signatures; the
// class as effective_class finds it); a class not listed here has none that xsa-eval knows of.
static const struct {
    const char *cls, *bos, *eos, *unk, *pad, *mask;
} class_defaults[] = {
    {"GPT2Tokenizer", "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", NULL, NULL},
    {"CodeGenTokenizer", "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", NULL, NULL},
    {"GPTNeoXTokenizer", "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", "<|padding|>", NULL},
    {"LlamaTokenizer", "<s>", "</s>", "<unk>", NULL, NULL},
    {"Qwen2Tokenizer", NULL, "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", NULL},
    {"GemmaTokenizer", "<bos>", "<eos>", "<unk>", "<pad>", "<mask>"},
    {"TokenizersBackend", NULL, NULL, NULL, NULL, NULL},
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

// The token `key` names: special_tokens_map.json's (when read) over the config's, else the
// class default (when known); *name NULL for none or null.
static int resolve(const cJSON *cfg, const cJSON *map, const char *key, const char *dflt, int has_dflt,
                   const char **name, const char *cfg_path, const char *map_path, xsa_error *err) {
    *name = NULL;
    const cJSON *v = map ? json_last_item(map, key) : NULL;
    if (v) return token_value(v, key, name, map_path, err) < 0 ? -1 : 0;
    if ((v = json_last_item(cfg, key))) return token_value(v, key, name, cfg_path, err) < 0 ? -1 : 0;
    if (has_dflt) *name = dflt;
    return 0;
}

// The class transformers 5.25's AutoTokenizer gives a local folder's tokenizer.json (its
// tokenization_auto.py, for the model types xsa-eval loads): `hub` is tokenizer_config.json's
// tokenizer_class (else config.json's), `model_type` config.json's, `byte_level` whether the
// tokenizer.json's text holds "ByteLevel". "TokenizersBackend" reads tokenizer.json as written; a
// family class rebuilds parts of it (tokenizer_class_rebuild).
static const char *effective_class(const char *hub, const char *model_type, int byte_level, char *buf, size_t n) {
    static const struct {
        const char *type, *cls;
    } registered[] = {{"qwen2", "Qwen2Tokenizer"}, {"qwen3", "Qwen2Tokenizer"}, {"gpt2", "GPT2Tokenizer"},
                      {"gpt_neox", "GPTNeoXTokenizer"}, {"olmo", "GPTNeoXTokenizer"}, {"mistral", "TokenizersBackend"}, {"ministral", "TokenizersBackend"}, {"olmo2", "TokenizersBackend"},
                      {"phi3", "TokenizersBackend"}, {"gemma", "GemmaTokenizer"}, {"gemma2", "GemmaTokenizer"},
                      {"gemma3_text", "GemmaTokenizer"}, {"phi", "GPT2Tokenizer"}, {"opt", "GPT2Tokenizer"},
                      {"stablelm", "TokenizersBackend"}, {"granite", "TokenizersBackend"}};
    const char *reg = NULL;
    for (size_t i = 0; model_type && i < sizeof registered / sizeof *registered; i++)
        if (!strcmp(model_type, registered[i].type)) reg = registered[i].cls;
    int incorrect_hub = model_type && (!strcmp(model_type, "qwen2") || !strcmp(model_type, "phi3"));
    if (hub) {  // the name without "Fast", as transformers compares them
        size_t k = strlen(hub);
        snprintf(buf, n, "%.*s", (int)(k > 4 && !strcmp(hub + k - 4, "Fast") ? k - 4 : k), hub);
        if (!strcmp(buf, "PreTrainedTokenizer") || !strcmp(buf, "PythonBackend")) snprintf(buf, n, "TokenizersBackend");
    }
    // A LlamaTokenizer named over a byte-level tokenizer.json (Llama 3 style) is read as written:
    // that class would impose SentencePiece's Metaspace.
    if (hub && !strcmp(buf, "LlamaTokenizer") && !incorrect_hub && byte_level) return "TokenizersBackend";
    if (hub && reg && strcmp(reg, buf))
        return strcmp(reg, "TokenizersBackend") && incorrect_hub ? reg : strcmp(reg, "TokenizersBackend") ? buf : reg;
    return hub ? buf : reg ? reg : "TokenizersBackend";
}

// cJSON of a constant text (the pipelines below).
static cJSON *json_const(const char *text) {
    cJSON *j = cJSON_Parse(text);
    if (!j) abort();  // a constant of this file
    return j;
}

static void replace_item(cJSON *o, const char *key, cJSON *with, int *changed) {
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!(old ? cJSON_Compare(old, with, 1) : cJSON_IsNull(with))) *changed = 1;
    if (old) cJSON_ReplaceItemInObjectCaseSensitive(o, key, with);
    else cJSON_AddItemToObject(o, key, with);
}

// The effective class (effective_class) of the tokenizer.json at `path`, given its folder's
// tokenizer_config.json (cfg, or NULL) and the config.json there; *by_type: chosen by model_type.
static const char *class_of(const char *path, const cJSON *cfg, int byte_level, char *buf, size_t n, int *by_type) {
    char model_path[4200];
    const char *slash = strrchr(path, '/');
    snprintf(model_path, sizeof model_path, "%.*s/config.json", slash ? (int)(slash - path) : 1, slash ? path : ".");
    // config.json is the checkpoint's: one transformers cannot read names no model type (AutoConfig
    // fails, and the class comes from tokenizer_config.json alone); its errors are the loader's.
    xsa_error ignored = {0};
    cJSON *mc = access(model_path, F_OK) == 0 ? read_json(model_path, &ignored) : NULL;
    const cJSON *hub = json_last_item(cfg, "tokenizer_class"), *mt = json_last_item(mc, "model_type");
    *by_type = !cJSON_IsString(hub);
    if (!cJSON_IsString(hub)) hub = json_last_item(mc, "tokenizer_class");
    const char *cls = effective_class(cJSON_IsString(hub) ? hub->valuestring : NULL,
                                      cJSON_IsString(mt) && mt->valuestring[0] ? mt->valuestring : NULL, byte_level, buf, n);
    if (cls != buf) snprintf(buf, n, "%s", cls);
    cJSON_Delete(mc);
    return buf;
}

// The id of `tok` in a tokenizer.json's added tokens or model vocabulary, else -1; *max_id the
// largest id either holds.
static int64_t json_token_id(const cJSON *root, const char *tok, int64_t *max_id) {
    int64_t found = -1;
    *max_id = -1;
    const cJSON *a, *vocab = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "model"), "vocab");
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(root, "added_tokens")) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(a, "content"), *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        if (!cJSON_IsNumber(id)) continue;
        if ((int64_t)id->valuedouble > *max_id) *max_id = (int64_t)id->valuedouble;
        if (found < 0 && cJSON_IsString(c) && !strcmp(c->valuestring, tok)) found = (int64_t)id->valuedouble;
    }
    const cJSON *vocab_obj = cJSON_IsObject(vocab) ? vocab : NULL;
    cJSON_ArrayForEach(a, vocab_obj) {
        if (!cJSON_IsNumber(a)) continue;
        if ((int64_t)a->valuedouble > *max_id) *max_id = (int64_t)a->valuedouble;
        if (found < 0 && !strcmp(a->string, tok)) found = (int64_t)a->valuedouble;
    }
    return found;
}

// tokenizer_config.json (*cfg) and special_tokens_map.json (*map) beside `path`, NULL where
// absent; as transformers, the map only when the config has no added_tokens_decoder.
static int read_configs(const char *path, cJSON **cfg, cJSON **map, char *cfg_path, char *map_path, size_t n,
                        xsa_error *err) {
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) : 1;
    snprintf(cfg_path, n, "%.*s/tokenizer_config.json", dirlen, slash ? path : ".");
    snprintf(map_path, n, "%.*s/special_tokens_map.json", dirlen, slash ? path : ".");
    *cfg = *map = NULL;
    if (access(cfg_path, F_OK) == 0 && !(*cfg = read_json(cfg_path, err))) return XSA_EBADINPUT;
    if (!json_last_item(*cfg, "added_tokens_decoder") && access(map_path, F_OK) == 0 && !(*map = read_json(map_path, err))) {
        cJSON_Delete(*cfg);
        *cfg = NULL;
        return XSA_EBADINPUT;
    }
    return 0;
}

// Appends `name` to the added tokens unless it is one: with its vocabulary id, else the next free
// id (*fresh = 1).
static void add_special(cJSON *root, const char *name, int *fresh) {
    cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    const cJSON *a, *list = cJSON_IsArray(added) ? added : NULL;
    cJSON_ArrayForEach(a, list) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(a, "content");
        if (cJSON_IsString(c) && !strcmp(c->valuestring, name)) return;
    }
    if (!cJSON_IsArray(added)) {
        cJSON_DeleteItemFromObjectCaseSensitive(root, "added_tokens");
        added = cJSON_AddArrayToObject(root, "added_tokens");
    }
    int64_t max_id, id = json_token_id(root, name, &max_id);
    *fresh = id < 0;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "id", (double)(id >= 0 ? id : max_id + 1));
    cJSON_AddStringToObject(t, "content", name);
    cJSON_AddFalseToObject(t, "single_word");
    cJSON_AddFalseToObject(t, "lstrip");
    cJSON_AddFalseToObject(t, "rstrip");
    cJSON_AddFalseToObject(t, "normalized");
    cJSON_AddTrueToObject(t, "special");
    cJSON_AddItemToArray(added, t);
}

// Each token of an extra_special_tokens / additional_special_tokens value (a list, or a dict of
// named ones; items strings or AddedToken objects), added.
static void add_extras(cJSON *root, const cJSON *v) {
    const cJSON *it, *items = cJSON_IsArray(v) || cJSON_IsObject(v) ? v : NULL;
    int fresh;
    cJSON_ArrayForEach(it, items) {
        const cJSON *c = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "content") : it;
        if (cJSON_IsString(c) && c->valuestring[0]) add_special(root, c->valuestring, &fresh);
    }
}

// TokenizersBackend._post_init: the special tokens the class and the configs name (bos, eos, unk,
// sep, pad, cls, mask, then the extra ones) become added special tokens: a token of the
// vocabulary keeps its id, another takes the next free one (an id the model has no row for: text
// holding it is refused later). *bos_new: the BOS took a new id.
static int add_named_specials(struct tokenizer *t, cJSON *root, const cJSON *cfg, const cJSON *map, const char *cfg_path,
                              const char *map_path, xsa_error *err) {
    static const char *const keys[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};
    const char *dflt[7] = {0};
    int has_dflt = 0;
    for (size_t i = 0; i < sizeof class_defaults / sizeof *class_defaults; i++)
        if (!strcmp(t->tf_class, class_defaults[i].cls))
            has_dflt = 1, dflt[0] = class_defaults[i].bos, dflt[1] = class_defaults[i].eos, dflt[2] = class_defaults[i].unk,
            dflt[4] = class_defaults[i].pad, dflt[6] = class_defaults[i].mask;
    for (size_t k = 0; k < 7; k++) {
        const char *name = NULL;
        int fresh = 0;
        if (resolve(cfg, map, keys[k], dflt[k], has_dflt, &name, cfg_path, map_path, err)) return XSA_EBADINPUT;
        if (name && name[0]) add_special(root, name, &fresh);
        if (k == 0) t->cfg_bos_new = fresh;
        if (k < 2) snprintf(k ? t->cfg_eos_tok : t->cfg_bos_tok, sizeof t->cfg_bos_tok, "%s", name ? name : "");
    }
    // The config's list (additional_special_tokens is its old name), then the map's.
    const cJSON *extra = json_last_item(cfg, "extra_special_tokens");
    add_extras(root, extra ? extra : json_last_item(cfg, "additional_special_tokens"));
    add_extras(root, json_last_item(map, "extra_special_tokens"));
    if (!extra && !json_last_item(map, "extra_special_tokens")) add_extras(root, json_last_item(map, "additional_special_tokens"));
    return 0;
}

// What a class's __init__ sets, as a note when it changes the file's pipeline.
static void class_note(char *note, size_t note_n, int changed, const char *cls, int by_type) {
    if (changed)
        snprintf(note, note_n, "transformers 5 (and so lm-eval) loads this tokenizer.json as %s (%s), which replaces its "
                 "pre-tokenizer and normalizer with its own; xsa-eval tokenizes as that class does", cls,
                 by_type ? "for config.json's model_type" : "as tokenizer_config.json's tokenizer_class says");
}

// GemmaTokenizer's __init__ (transformers 5.25): a BPE of the file's vocabulary and merges (byte
// fallback, unk the config's unk_token or <unk>), spaces normalized to U+2581 and nothing
// prepended, a Split on " " (which then finds none), the SentencePiece decoder without a strip.
static void rebuild_gemma(cJSON *root, cJSON *model, const cJSON *cfg, char *note, size_t note_n, int by_type) {
    const cJSON *unk = json_last_item(cfg, "unk_token");
    if (cJSON_IsObject(unk)) unk = cJSON_GetObjectItemCaseSensitive(unk, "content");  // (an AddedToken)
    int changed = 0;
    replace_item(root, "normalizer", json_const("{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}"),
                 &changed);
    // (the Split finds no space after the normalizer: a file without a pre-tokenizer tokenizes alike, so
    // that is no change to report)
    int split_new = 0, had_none = cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer")) ||
                                  !cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    replace_item(root, "pre_tokenizer", json_const("{\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, \"behavior\": "
                                                   "\"MergedWithPrevious\", \"invert\": false}"), &split_new);
    changed |= split_new && !had_none;
    replace_item(root, "decoder", json_const("{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": "
                                             "{\"String\": \"\\u2581\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}]}"),
                 &changed);
    replace_item(model, "dropout", cJSON_CreateNull(), &changed);
    replace_item(model, "unk_token", cJSON_CreateString(cJSON_IsString(unk) ? unk->valuestring : "<unk>"), &changed);
    replace_item(model, "continuing_subword_prefix", cJSON_CreateNull(), &changed);
    replace_item(model, "end_of_word_suffix", cJSON_CreateNull(), &changed);
    replace_item(model, "fuse_unk", cJSON_CreateTrue(), &changed);
    replace_item(model, "byte_fallback", cJSON_CreateTrue(), &changed);
    replace_item(model, "ignore_merges", cJSON_CreateFalse(), &changed);
    class_note(note, note_n, changed, "GemmaTokenizer", by_type);
}

int tokenizer_class_rebuild(struct tokenizer *t, cJSON *root, const char *path, int byte_level, xsa_error *err) {
    char *note = t->class_note;
    size_t note_n = sizeof t->class_note;
    note[0] = t->cfg_bos_tok[0] = t->cfg_eos_tok[0] = '\0';
    t->cfg_bos_new = t->has_config = 0;
    char cfg_path[4200], map_path[4200];
    cJSON *cfg, *map;
    if (read_configs(path, &cfg, &map, cfg_path, map_path, sizeof cfg_path, err)) return XSA_EBADINPUT;
    int by_type = 0;
    const char *cls = class_of(path, cfg, byte_level, t->tf_class, sizeof t->tf_class, &by_type);
    // (CodeGenTokenizer, which phi's tokenizer_config.json names, builds GPT-2's pipeline; its ByteLevel
    // post-processor adds no token)
    int qwen2 = !strcmp(cls, "Qwen2Tokenizer"), gpt2 = !strcmp(cls, "GPT2Tokenizer") || !strcmp(cls, "CodeGenTokenizer"),
        neox = !strcmp(cls, "GPTNeoXTokenizer"),
        llama = !strcmp(cls, "LlamaTokenizer"), gemma = !strcmp(cls, "GemmaTokenizer");
    cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (gemma && cJSON_IsObject(model) && cJSON_IsString(type) && !strcmp(type->valuestring, "BPE")) {
        rebuild_gemma(root, model, cfg, note, note_n, by_type);
    } else if ((qwen2 || gpt2 || neox || llama) && cJSON_IsObject(model) && cJSON_IsString(type) && !strcmp(type->valuestring, "BPE")) {
        // The class's __init__: a BPE of the file's vocabulary and merges under its own normalizer,
        // pre-tokenizer and decoder (and, for GPT-NeoX, a post-processor adding nothing by default).
        const cJSON *aps = json_last_item(cfg, "add_prefix_space");
        int prefix = llama ? !cJSON_IsFalse(aps) : cJSON_IsTrue(aps);  // LlamaTokenizer: None means True
        const char *sp = prefix ? "true" : "false";
        char pre[600], dec[400];
        snprintf(dec, sizeof dec, "{\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true}");
        if (qwen2)
            snprintf(pre, sizeof pre, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": "
                     "\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|"
                     "\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
                     "\"add_prefix_space\": %s, \"trim_offsets\": true, \"use_regex\": false}]}", sp);
        else if (llama) {  // Metaspace: "first" unless the config says legacy ("always"); "never" without a prefix space
            snprintf(pre, sizeof pre, "{\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"%s\", \"split\": false}",
                     !prefix ? "never" : cJSON_IsTrue(json_last_item(cfg, "legacy")) ? "always" : "first");
            snprintf(dec, sizeof dec, "{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"\\u2581\"}, "
                     "\"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}%s]}",
                     prefix ? ", {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}" : "");
        } else
            snprintf(pre, sizeof pre, "{\"type\": \"ByteLevel\", \"add_prefix_space\": %s, \"trim_offsets\": true, \"use_regex\": true}", sp);
        int changed = 0;
        replace_item(root, "normalizer", gpt2 || llama ? cJSON_CreateNull() : json_const("{\"type\": \"NFC\"}"), &changed);
        replace_item(root, "pre_tokenizer", json_const(pre), &changed);
        replace_item(root, "decoder", json_const(dec), &changed);
        if (neox) replace_item(root, "post_processor", cJSON_CreateNull(), &changed);
        replace_item(model, "dropout", cJSON_CreateNull(), &changed);
        replace_item(model, "unk_token", cJSON_CreateNull(), &changed);
        if (!llama) {
            replace_item(model, "continuing_subword_prefix", cJSON_CreateString(""), &changed);
            replace_item(model, "end_of_word_suffix", cJSON_CreateString(""), &changed);
        }
        replace_item(model, "fuse_unk", llama ? cJSON_CreateTrue() : cJSON_CreateFalse(), &changed);
        replace_item(model, "byte_fallback", llama ? cJSON_CreateTrue() : cJSON_CreateFalse(), &changed);
        replace_item(model, "ignore_merges", cJSON_CreateFalse(), &changed);
        class_note(note, note_n, changed, cls, by_type);
    } else if (strcmp(cls, "TokenizersBackend") && !qwen2 && !gpt2 && !neox && !llama && !gemma) {
        snprintf(note, note_n, "transformers 5 (and so lm-eval) loads this tokenizer.json as %s, which rebuilds it from "
                 "its own code; xsa-eval reads the file as written, so lm-eval's token ids may differ", cls);
    }
    // Without a tokenizer_config.json, a class chosen by model_type still names its defaults;
    // with neither file and no such class, transformers names no special token at all.
    t->has_config = cfg || map || strcmp(cls, "TokenizersBackend");
    int rc = t->has_config ? add_named_specials(t, root, cfg, map, cfg_path, map_path, err) : 0;
    cJSON_Delete(cfg);
    cJSON_Delete(map);
    return rc;
}

void tokenizer_config_ids(struct tokenizer *t) {
    t->cfg_bos_id = t->cfg_eos_id = -1, t->cfg_bos_name[0] = 0;
    if (!t->has_config) return;
    int has_dflt = 0;
    for (size_t i = 0; i < sizeof class_defaults / sizeof *class_defaults; i++) has_dflt |= !strcmp(t->tf_class, class_defaults[i].cls);
    if (t->cfg_bos_tok[0]) {  // one transformers adds past the vocabulary (cfg_bos_new) has no row in the model
        t->cfg_bos_id = t->cfg_bos_new ? -1 : tokenizer_hf_token_id(t, t->cfg_bos_tok, strlen(t->cfg_bos_tok));
        if (t->cfg_bos_id < 0) snprintf(t->cfg_bos_name, sizeof t->cfg_bos_name, "%s", t->cfg_bos_tok);
    } else if (!has_dflt) {
        snprintf(t->cfg_bos_name, sizeof t->cfg_bos_name, "(the default of %.100s)", t->tf_class);
    }
    if (t->cfg_eos_tok[0]) t->cfg_eos_id = tokenizer_hf_token_id(t, t->cfg_eos_tok, strlen(t->cfg_eos_tok));
}
