// tokenizer_vocab_files.c: a folder's GPT-2-style vocab.json + merges.txt (the Hub's facebook/opt-*
// and other GPT-2-family repos ship no tokenizer.json) as transformers 5.25's AutoTokenizer builds
// it: GPT2Tokenizer.__init__ passes both files to the `tokenizers` library (BPE::read_file: a JSON
// object of token -> id, entries that are not numbers skipped; merges one "a b" per line, a
// "#version" line skipped), TokenizersBackend adds tokenizer_config.json's added_tokens_decoder
// (by ascending key; the key's id itself is not used) then the named special tokens, and, with no
// post-processor, update_post_processor's template: the BOS when add_bos_token, the EOS when
// add_eos_token. The result is laid out as a tokenizer.json and built by tokenizer_hf.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "model/tokenizer_hf_priv.h"
#include "model/tokenizer_impl.h"

#define VOCAB_FILES_MAX_BYTES ((size_t)512 << 20)

int tokenizer_merges_txt_parse(const char *data, size_t len, cJSON **out, const char *path, xsa_error *err) {
    *out = NULL;
    if (!hft_utf8_valid(data, len))
        return xsa_fail(err, XSA_EBADINPUT, "%s: not valid UTF-8; merges.txt is UTF-8 text, one merge \"a b\" a line", path);
    cJSON *arr = cJSON_CreateArray();
    size_t line = 0;
    for (size_t i = 0; i < len;) {
        // Rust's BufRead::lines: up to '\n', which is dropped with a '\r' just before it.
        const char *s = data + i, *nl = memchr(s, '\n', len - i);
        size_t n = nl ? (size_t)(nl - s) : len - i;
        i += n + (nl != NULL);
        line++;
        if (nl && n && s[n - 1] == '\r') n--;
        if (n >= 8 && !memcmp(s, "#version", 8)) continue;
        const char *sp = memchr(s, ' ', n);
        if (!sp || memchr(sp + 1, ' ', n - (size_t)(sp + 1 - s)) || memchr(s, '\0', n)) {
            cJSON_Delete(arr);
            return xsa_fail(err, XSA_EBADINPUT, "%s: line %zu '%.*s' is not two tokens separated by one space", path, line,
                            (int)(n > 100 ? 100 : n), s);
        }
        cJSON *pair = cJSON_CreateArray();
        char *a = strndup(s, (size_t)(sp - s)), *b = strndup(sp + 1, n - (size_t)(sp + 1 - s));
        if (!pair || !a || !b) abort();
        cJSON_AddItemToArray(pair, cJSON_CreateString(a));
        cJSON_AddItemToArray(pair, cJSON_CreateString(b));
        cJSON_AddItemToArray(arr, pair);
        free(a);
        free(b);
    }
    *out = arr;
    return 0;
}

static cJSON *read_json_file(const char *path, int required, xsa_error *err) {
    char *data = NULL;
    size_t len = 0;
    if (!required && access(path, F_OK) != 0) return cJSON_CreateNull();
    if (file_read_regular(path, VOCAB_FILES_MAX_BYTES, &data, &len, err)) return NULL;
    cJSON *j = NULL;
    if (!hft_utf8_valid(data, len))
        xsa_fail(err, XSA_EBADINPUT, "%s: not valid UTF-8", path);
    else
        j = json_read_whole(data, len, JSON_KEYS_LAST_WINS, path, err);  // Python's json.load, serde_json
    free(data);
    if (j && !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        xsa_fail(err, XSA_EBADINPUT, "%s: not a JSON object (a vocab.json maps each token to its id)", path);
        return NULL;
    }
    return j;
}

static cJSON *added_token(const char *content, int64_t id, const cJSON *props) {
    cJSON *a = cJSON_CreateObject();
    cJSON_AddNumberToObject(a, "id", (double)id);
    cJSON_AddStringToObject(a, "content", content);
    static const char *const keys[] = {"single_word", "lstrip", "rstrip", "normalized", "special"};
    for (int k = 0; k < 5; k++) {
        const cJSON *v = json_last_item(props, keys[k]);
        // AddedToken's defaults: normalized is `not special`
        int on = cJSON_IsBool(v) ? cJSON_IsTrue(v) : k == 3 ? !cJSON_IsTrue(json_last_item(props, "special")) : 0;
        cJSON_AddBoolToObject(a, keys[k], on);
    }
    return a;
}

static int key_cmp(const void *x, const void *y) {
    const cJSON *a = *(const cJSON *const *)x, *b = *(const cJSON *const *)y;
    long long ka = atoll(a->string), kb = atoll(b->string);
    return (ka > kb) - (ka < kb);
}

// tokenizer_config.json's added_tokens_decoder, in the order transformers adds them (ascending
// key), as tokenizer.json's added_tokens: a vocabulary token keeps its id, others the next ones.
static int add_decoder_tokens(cJSON *root, const cJSON *cfg, const struct hft_strmap *vocab, const char *cfg_path,
                              xsa_error *err) {
    const cJSON *dec = json_last_item(cfg, "added_tokens_decoder"), *e;
    cJSON *added = cJSON_AddArrayToObject(root, "added_tokens");
    if (!dec || cJSON_IsNull(dec)) return 0;
    if (!cJSON_IsObject(dec))
        return xsa_fail(err, XSA_EBADINPUT, "%s: \"added_tokens_decoder\" is not an object of id -> token", cfg_path);
    size_t n = 0;
    cJSON_ArrayForEach(e, dec) n++;
    const cJSON **v = calloc(n + 1, sizeof *v);
    if (!v) abort();
    n = 0;
    cJSON_ArrayForEach(e, dec) {
        char *end;
        strtoll(e->string, &end, 10);
        const cJSON *c = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "content") : NULL;
        if (!e->string[0] || *end || !cJSON_IsString(c)) {
            free(v);
            return xsa_fail(err, XSA_EBADINPUT, "%s: added_tokens_decoder[\"%.40s\"] is not an id naming an AddedToken "
                            "object with a \"content\" string", cfg_path, e->string);
        }
        v[n++] = e;
    }
    qsort(v, n, sizeof *v, key_cmp);
    int64_t next = (int64_t)vocab->n;
    for (size_t k = 0; k < n; k++) {
        const char *c = cJSON_GetObjectItemCaseSensitive(v[k], "content")->valuestring;
        const cJSON *a;
        int dup = 0;
        cJSON_ArrayForEach(a, added) dup |= !strcmp(cJSON_GetObjectItemCaseSensitive(a, "content")->valuestring, c);
        if (!c[0] || dup) continue;
        int32_t id = hft_strmap_get(vocab, c, strlen(c));
        cJSON_AddItemToArray(added, added_token(c, id >= 0 ? id : next++, v[k]));
    }
    free(v);
    return 0;
}

// Python's truth of a config value (add_bos_token may be any JSON).
static int truthy(const cJSON *v) {
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v)) return 0;
    if (cJSON_IsNumber(v)) return v->valuedouble != 0;
    if (cJSON_IsString(v)) return v->valuestring[0] != 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) return v->child != NULL;
    return 1;
}

// TokenizersBackend.update_post_processor: "BOS $A EOS" with each part only when asked for and named.
static void add_template(cJSON *root, const struct tokenizer *t, const cJSON *cfg) {
    const char *names[2] = {truthy(json_last_item(cfg, "add_bos_token")) ? t->cfg_bos_tok : "",
                            truthy(json_last_item(cfg, "add_eos_token")) ? t->cfg_eos_tok : ""};
    cJSON *single = cJSON_CreateArray(), *specials = cJSON_CreateObject();
    for (int k = 0; k < 3; k++) {
        cJSON *item = cJSON_CreateObject(), *x = cJSON_CreateObject();
        const char *name = k == 1 ? "A" : names[k / 2];
        if (!name[0]) {
            cJSON_Delete(item), cJSON_Delete(x);
            continue;
        }
        cJSON_AddStringToObject(x, "id", name);
        cJSON_AddItemToObject(item, k == 1 ? "Sequence" : "SpecialToken", x);
        cJSON_AddItemToArray(single, item);
        if (k == 1) continue;
        int64_t id = -1;
        const cJSON *a;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"))
            if (!strcmp(cJSON_GetObjectItemCaseSensitive(a, "content")->valuestring, name))
                id = (int64_t)cJSON_GetObjectItemCaseSensitive(a, "id")->valuedouble;
        cJSON *sp = cJSON_CreateObject(), *ids = cJSON_CreateArray(), *toks = cJSON_CreateArray();
        cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)id));
        cJSON_AddItemToArray(toks, cJSON_CreateString(name));
        cJSON_AddStringToObject(sp, "id", name);
        cJSON_AddItemToObject(sp, "ids", ids);
        cJSON_AddItemToObject(sp, "tokens", toks);
        if (!cJSON_GetObjectItemCaseSensitive(specials, name)) cJSON_AddItemToObject(specials, name, sp);
        else cJSON_Delete(sp);
    }
    cJSON *pp = cJSON_CreateObject();
    cJSON_AddStringToObject(pp, "type", "TemplateProcessing");
    cJSON_AddItemToObject(pp, "single", single);
    cJSON_AddItemToObject(pp, "special_tokens", specials);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "post_processor");
    cJSON_AddItemToObject(root, "post_processor", pp);
}

int tokenizer_vocab_files_load(struct tokenizer *t, const char *vocab_path, xsa_error *err) {
    char dir[4200], merges_path[4300], cfg_path[4300];
    const char *slash = strrchr(vocab_path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - vocab_path) : 1, slash ? vocab_path : ".");
    snprintf(merges_path, sizeof merges_path, "%s/merges.txt", dir);
    snprintf(cfg_path, sizeof cfg_path, "%s/tokenizer_config.json", dir);
    if (access(merges_path, F_OK) != 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: no merges.txt beside vocab.json (%s); a GPT-2-style tokenizer needs both, "
                        "or pass a tokenizer.json with --tokenizer", vocab_path, merges_path);
    cJSON *vocab = read_json_file(vocab_path, 1, err), *cfg = NULL, *merges = NULL, *root = NULL;
    char *mdata = NULL;
    size_t mlen = 0;
    struct hft_strmap map = {0};
    int rc = vocab ? 0 : XSA_EBADINPUT;
    // serde_json's Value: entries that are not numbers are skipped; an id that is no u64 is refused.
    for (cJSON *e = vocab ? vocab->child : NULL, *next; !rc && e; e = next) {
        next = e->next;
        if (!cJSON_IsNumber(e)) {
            cJSON_Delete(cJSON_DetachItemViaPointer(vocab, e));
            continue;
        }
        double d = e->valuedouble;
        if (!(d >= 0 && d < (1 << 24) && d == (double)(int32_t)d))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: token '%.100s' has id %g, not an integer in [0, 2^24)", vocab_path,
                          e->string, d);
        else
            hft_strmap_put(&map, e->string, strlen(e->string), (int32_t)d);
    }
    if (!rc) rc = file_read_regular(merges_path, VOCAB_FILES_MAX_BYTES, &mdata, &mlen, err);
    if (!rc) rc = tokenizer_merges_txt_parse(mdata, mlen, &merges, merges_path, err);
    // Each merge's tokens and the token they make must be in the vocabulary (BPE's builder).
    size_t k = 0;
    for (const cJSON *m = merges ? merges->child : NULL; !rc && m; m = m->next, k++) {
        const char *a = m->child->valuestring, *b = m->child->next->valuestring, *bad = NULL;
        char *ab = malloc(strlen(a) + strlen(b) + 1);
        if (!ab) abort();
        strcat(strcpy(ab, a), b);
        bad = hft_strmap_get(&map, a, strlen(a)) < 0 ? a : hft_strmap_get(&map, b, strlen(b)) < 0 ? b
              : hft_strmap_get(&map, ab, strlen(ab)) < 0 ? ab : NULL;
        if (bad)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: merge %zu ('%.60s %.60s') %s '%.100s', which %s has no id for", merges_path,
                          k + 1, a, b, bad == ab ? "makes" : "names", bad, vocab_path);
        free(ab);
    }
    if (!rc && !(cfg = read_json_file(cfg_path, 0, err))) rc = XSA_EBADINPUT;
    if (!rc) {
        root = cJSON_CreateObject();
        cJSON *model = cJSON_AddObjectToObject(root, "model");
        cJSON_AddStringToObject(model, "type", "BPE");
        cJSON_AddItemToObject(model, "vocab", vocab);
        vocab = NULL;
        cJSON_AddItemToObject(model, "merges", merges);
        merges = NULL;
        rc = add_decoder_tokens(root, cfg, &map, cfg_path, err);
    }
    // The class's pipeline and named special tokens (GPT2Tokenizer's __init__, _post_init).
    if (!rc) rc = tokenizer_class_rebuild(t, root, vocab_path, 0, err);  // (no tokenizer.json to hold "ByteLevel")
    if (!rc && strcmp(t->tf_class, "GPT2Tokenizer"))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: transformers 5 builds this folder's tokenizer as %s, and xsa-eval reads "
                      "vocab.json + merges.txt for GPT2Tokenizer only (OPT, GPT-2); save a tokenizer.json into the folder: "
                      "AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR)", vocab_path, t->tf_class);
    if (!rc) {
        t->class_note[0] = '\0';  // (the note is about a tokenizer.json whose pipeline the class replaced)
        add_template(root, t, cfg);
        rc = tokenizer_hf_load_root(t, root, vocab_path, err);
    }
    cJSON_Delete(vocab);
    cJSON_Delete(merges);
    cJSON_Delete(cfg);
    cJSON_Delete(root);
    free(mdata);
    hft_strmap_free(&map);
    return rc;
}
