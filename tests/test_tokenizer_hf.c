// test_tokenizer_hf.c: tokenizer.json tokenizers against ids and decodings that the Python
// `tokenizers` library produced (tools/fixtures/make_tokenizer_fixtures.py), plus error paths.
#include <cJSON.h>
#include <stdint.h>
#include <unistd.h>

#include "common/fileio.h"
#include "model/tokenizer.h"
#include "tests/check.h"

#define FIX "tests/fixtures/tokenizers/"


// Reads a whole fixture file (NULL when absent).
static char *slurp(const char *path, size_t *len) {
    char *data = NULL;
    xsa_error err = {0};
    if (file_read_all(path, (size_t)64 << 20, &data, len, &err)) return NULL;
    return data;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Decodes a hex string into buf (caller frees); returns length or -1.
static long unhex(const char *h, size_t n, char **buf) {
    *buf = malloc(n / 2 + 1);
    if (!*buf || n % 2) return -1;
    for (size_t i = 0; i < n; i += 2) {
        int a = hexval(h[i]), b = hexval(h[i + 1]);
        if (a < 0 || b < 0) return -1;
        (*buf)[i / 2] = (char)(a * 16 + b);
    }
    return (long)(n / 2);
}

struct cases {
    char **text;  // (n,) texts
    size_t *len;  // (n,)
    size_t n;
};

static int load_cases(struct cases *c) {
    size_t len;
    char *data = slurp(FIX "cases.hex", &len);
    if (!data) return -1;
    c->n = 0;
    for (size_t i = 0; i < len; i++) c->n += data[i] == '\n';
    c->text = calloc(c->n, sizeof *c->text);
    c->len = calloc(c->n, sizeof *c->len);
    char *p = data;
    for (size_t k = 0; k < c->n; k++) {
        char *nl = strchr(p, '\n');
        long l = unhex(p, (size_t)(nl - p), &c->text[k]);
        if (l < 0) return -1;
        c->len[k] = (size_t)l;
        p = nl + 1;
    }
    free(data);
    return 0;
}

static void free_cases(struct cases *c) {
    for (size_t k = 0; k < c->n; k++) free(c->text[k]);
    free(c->text);
    free(c->len);
}

static int ids_equal(const struct ivec *got, const cJSON *want) {
    if (!cJSON_IsArray(want) || (size_t)cJSON_GetArraySize(want) != got->n) return 0;
    size_t k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, want) if (!cJSON_IsNumber(x) || (int32_t)x->valuedouble != got->v[k++]) return 0;
    return 1;
}

static void print_ids(const char *what, const struct ivec *v) {
    fprintf(stderr, "    %s:", what);
    for (size_t k = 0; k < v->n && k < 40; k++) fprintf(stderr, " %d", v->v[k]);
    fprintf(stderr, "%s\n", v->n > 40 ? " ..." : "");
}

// Compares every case of one tokenizer (its file `file`): ids, ids with special tokens, both decodings.
static void check_tokenizer_file(const char *name, const char *file, const struct cases *c) {
    char path[256], epath[256];
    snprintf(path, sizeof path, FIX "%s/%s", name, file);
    snprintf(epath, sizeof epath, FIX "%s/expected.jsonl", name);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    int rc = tokenizer_load(&t, path, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    size_t elen;
    char *exp = slurp(epath, &elen);
    CHECK(exp != NULL);
    char *line = exp;
    size_t row = 0, bad = 0;
    while (exp && line < exp + elen && row < c->n) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        cJSON *j = cJSON_Parse(line);
        CHECK(j != NULL);
        if (!j) break;
        for (int special = 0; special < 2; special++) {
            struct ivec ids = {0};
            struct sbuf dec = {0};
            xsa_error e = {0};
            int r = tokenizer_encode(t, c->text[row], c->len[row], special, &ids, &e);
            const cJSON *want = cJSON_GetObjectItem(j, special ? "ids_special" : "ids");
            int ok = r == 0 && ids_equal(&ids, want);
            r = r ? r : tokenizer_decode(t, ids.v, ids.n, &dec, &e);
            const char *wh = cJSON_GetStringValue(cJSON_GetObjectItem(j, special ? "decoded_special_hex" : "decoded_hex"));
            char *wd = NULL;
            long wl = wh ? unhex(wh, strlen(wh), &wd) : -1;
            int dok = r == 0 && wl >= 0 && (size_t)wl == dec.n && !memcmp(dec.s ? dec.s : "", wd, (size_t)wl);
            if ((!ok || !dok) && bad++ < 5) {
                fprintf(stderr, "  %s line %zu (special=%d): %s%s %s\n", name, row, special, ok ? "" : "ids differ",
                        dok ? "" : " decode differs", e.msg);
                fprintf(stderr, "    text: %.*s\n", (int)(c->len[row] > 120 ? 120 : c->len[row]), c->text[row]);
                print_ids("got ", &ids);
                char *ws = cJSON_PrintUnformatted(want);
                fprintf(stderr, "    want: %.300s\n", ws ? ws : "?");
                free(ws);
                if (!dok) fprintf(stderr, "    got decoded: %.200s\n    want decoded: %.*s\n", dec.s ? dec.s : "",
                                  (int)(wl > 200 ? 200 : wl), wd ? wd : "");
            }
            CHECK(ok);
            CHECK(dok);
            free(wd);
            ivec_free(&ids);
            sbuf_free(&dec);
        }
        cJSON_Delete(j);
        row++;
        line = nl ? nl + 1 : exp + elen;
    }
    CHECK_EQ_INT(row, c->n);
    if (bad) fprintf(stderr, "  %s: %zu mismatches\n", name, bad);
    free(exp);
    tokenizer_free(t);
}

static void check_tokenizer(const char *name, const struct cases *c) { check_tokenizer_file(name, "tokenizer.json", c); }

#define TOKENIZER_TEST(name)                 \
    TEST(test_##name) {                      \
        struct cases cs = {0};               \
        CHECK(load_cases(&cs) == 0);         \
        if (cs.n) check_tokenizer(#name, &cs); \
        free_cases(&cs);                     \
    }
TOKENIZER_TEST(gpt2)
TOKENIZER_TEST(llama3)
TOKENIZER_TEST(hf_sp)
TOKENIZER_TEST(hf_metaspace)
TOKENIZER_TEST(norm_mix)
TOKENIZER_TEST(split_mix)

// tokenizer.json under the family class transformers 5 picks (model_type, tokenizer_class):
// its normalizer, pre-tokenizer, decoder and named special tokens (tools/fixtures/make_tokenizer_class_fixtures.py).
TEST(test_transformers_class) {
    static const char *const cases[] = {"class/qwen2_llama3", "class/qwen2_backend_class", "class/qwen3_backend_class",
                                        "class/qwen3_gpt2_im_end", "class/neox_llama3", "class/olmo_llama3", "class/llama_gpt2_class_sp",
                                        "class/llama2_layout", "class/llama2_layout_legacy", "class/llama_metaspace_split",
                                        "class/llama3_llama_class", "class/gpt2_extra_specials", "class/gpt2_map_only",
                                        "class/gemma_layout", "class/gemma3_by_type", "class/gemma_class_llama2_file",
                                        "class/gemma2_class_llama2_file", "class/phi_codegen_llama3", "class/phi_by_type",
                                        "class/opt_add_bos",
                                        "class/stablelm2_gpt2_class", "class/stablelm3b_neox_class", "class/stablelm_by_type",
                                        "class/smollm3_backend_class", "class/granite_gpt2_class"};
    struct cases cs = {0};
    CHECK(load_cases(&cs) == 0);
    for (size_t i = 0; cs.n && i < sizeof cases / sizeof *cases; i++) check_tokenizer(cases[i], &cs);
    free_cases(&cs);
}

// A GPT-2-style folder without tokenizer.json (vocab.json + merges.txt, as facebook/opt-* ship) as
// transformers 5 builds it: OPT's </s> BOS, GPT-2's layout, added_tokens_decoder, add_prefix_space
// and add_eos_token (tools/fixtures/make_vocab_files_fixtures.py).
TEST(test_vocab_files) {
    static const char *const cases[] = {"vocab_files/opt", "vocab_files/opt_tiny", "vocab_files/gpt2", "vocab_files/gpt2_added"};
    struct cases cs = {0};
    CHECK(load_cases(&cs) == 0);
    for (size_t i = 0; cs.n && i < sizeof cases / sizeof *cases; i++) check_tokenizer_file(cases[i], "vocab.json", &cs);
    free_cases(&cs);
    // The folder is found by tokenizer_find; OPT's BOS </s> (id 2) is what encode prepends.
    char found[512];
    xsa_error err = {0};
    CHECK_EQ_INT(tokenizer_find(FIX "vocab_files/opt", found, sizeof found, &err), 0);
    CHECK_STR(found, FIX "vocab_files/opt/vocab.json");
    struct tokenizer *t = NULL;
    CHECK_EQ_INT(tokenizer_load(&t, found, &err), 0);
    if (!t) return;
    CHECK_EQ_INT(tokenizer_adds_bos(t), 1);
    CHECK_EQ_INT(tokenizer_bos_id(t), 2);
    CHECK_EQ_INT(tokenizer_config_bos_id(t), 2);
    CHECK_EQ_INT(tokenizer_config_eos_id(t), 2);
    CHECK_EQ_INT(tokenizer_vocab_size(t), 400);
    CHECK(tokenizer_class_note(t) == NULL);
    tokenizer_free(t);
}

static struct tokenizer *load(const char *name) {
    char path[256];
    snprintf(path, sizeof path, FIX "%s/tokenizer.json", name);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    if (tokenizer_load(&t, path, &err)) fprintf(stderr, "  %s\n", err.msg);
    return t;
}

TEST(test_special_ids) {
    struct tokenizer *g = load("gpt2"), *l = load("llama3"), *s = load("hf_sp");
    CHECK(g && l && s);
    if (!g || !l || !s) return;
    CHECK_EQ_INT(tokenizer_kind(g), TOKENIZER_HF_JSON);
    CHECK_EQ_INT(tokenizer_adds_bos(g), 0);
    CHECK_EQ_INT(tokenizer_eos_id(g), 0);  // <|endoftext|>
    CHECK_EQ_INT(tokenizer_adds_bos(l), 1);
    CHECK_EQ_INT(tokenizer_bos_id(l), 0);  // <|begin_of_text|>
    CHECK_EQ_INT(tokenizer_eos_id(l), 1);  // <|end_of_text|>
    CHECK_EQ_INT(tokenizer_adds_bos(s), 1);
    CHECK_EQ_INT(tokenizer_bos_id(s), 1);  // <s>
    CHECK_EQ_INT(tokenizer_eos_id(s), 2);  // </s>
    CHECK_EQ_INT(tokenizer_vocab_size(g), 703);
    // Out-of-range ids are refused, not decoded.
    int32_t bad[] = {5, 100000};
    struct sbuf out = {0};
    xsa_error err = {0};
    CHECK(tokenizer_decode(g, bad, 2, &out, &err) == XSA_EBADINPUT);
    CHECK(strstr(err.msg, "out of range") != NULL);
    int32_t neg[] = {-1};
    xsa_error_clear(&err);
    CHECK(tokenizer_decode(g, neg, 1, &out, &err) == XSA_EBADINPUT);
    sbuf_free(&out);
    tokenizer_free(g);
    tokenizer_free(l);
    tokenizer_free(s);
}

// Writes `body` to a temporary tokenizer.json, loads it and expects an error mentioning `want`.
static void expect_load_error(const char *body, const char *want) {
    char path[] = "/tmp/xsa_tok_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, body, strlen(body)) == (ssize_t)strlen(body));
    close(fd);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    int rc = tokenizer_load(&t, path, &err);
    CHECK_EQ_INT(rc, XSA_EBADINPUT);
    CHECK(t == NULL);
    CHECK_MSG(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    CHECK_MSG(strstr(err.msg, path) != NULL, "message '%s' does not name the file", err.msg);
    tokenizer_free(t);
    unlink(path);
}

#define MODEL_OK "\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\"]}"

TEST(test_errors) {
    expect_load_error("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", "WordPiece");
    expect_load_error("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "Unigram");
    expect_load_error("{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}}", "WordLevel");
    expect_load_error("{" MODEL_OK ", \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}}", "BertPreTokenizer");
    expect_load_error("{" MODEL_OK ", \"normalizer\": {\"type\": \"Precompiled\", \"precompiled_charsmap\": \"\"}}",
                      "Precompiled");
    expect_load_error("{" MODEL_OK ", \"decoder\": {\"type\": \"WordPiece\"}}", "decoder 'WordPiece'");
    expect_load_error("{" MODEL_OK ", \"post_processor\": {\"type\": \"Frobnicate\"}}", "Frobnicate");
    expect_load_error("{" MODEL_OK ", \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"}, "
                      "{\"type\": \"BertNormalizer\"}]}}",
                      "BertNormalizer");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a q\"]}}",
                      "not in the vocabulary");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a a\"]}}",
                      "makes token 'aa'");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a\"]}}",
                      "two tokens");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -3}, \"merges\": []}}", "valid id");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {}, \"merges\": []}}", "dropout");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a b\"", "not valid JSON (near byte");
    expect_load_error("{\"version\": \"1.0\"}", "no \"model\"");
    expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"a\": 1}, \"merges\": []}}",
                      "key \"a\" stands twice in one object");
    expect_load_error("{" MODEL_OK "} {}", "text after the JSON object");
    expect_load_error("{" MODEL_OK ", \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(\"}, "
                      "\"behavior\": \"Isolated\"}}",
                      "does not compile");
    expect_load_error("{" MODEL_OK ", \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \"x\"}, "
                      "\"behavior\": \"Sideways\"}}",
                      "behavior");
    expect_load_error("{" MODEL_OK ", \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": "
                      "[{\"SpecialToken\": {\"id\": \"<s>\"}}], \"special_tokens\": {}}}",
                      "special_tokens");
}

// Numbers that do not fit the C types they become are refused, not converted (undefined
// behaviour before): post-processor ids, Strip decoder counts.
TEST(test_out_of_range_numbers) {
    expect_load_error("{" MODEL_OK ", \"post_processor\": {\"type\": \"RobertaProcessing\", \"cls\": [\"<s>\", 1e300], "
                      "\"sep\": [\"</s>\", 2]}}",
                      "\"cls\" and \"sep\"");
    expect_load_error("{" MODEL_OK ", \"post_processor\": {\"type\": \"BertProcessing\", \"cls\": [\"<s>\", 0], "
                      "\"sep\": [\"</s>\", 4294967296]}}",
                      "\"cls\" and \"sep\"");
    expect_load_error("{" MODEL_OK ", \"decoder\": {\"type\": \"Strip\", \"content\": \" \", \"start\": 1e300, \"stop\": 0}}",
                      "decoder Strip");
}

// Many added tokens (looked up by hash while loading), some given twice: the later properties
// win and the id stays; encode finds them; an empty text and an empty id list decode to "".
TEST(test_many_added_tokens) {
    struct sbuf b = {0};
    sbuf_append(&b, "{\"added_tokens\": [", 19);
    for (int i = 0; i < 20000; i++)
        sbuf_printf(&b, "%s{\"content\": \"<a%d>\", \"special\": true, \"normalized\": false}", i ? "," : "", i);
    for (int i = 0; i < 10; i++)
        sbuf_printf(&b, ",{\"content\": \"<a%d>\", \"special\": false, \"normalized\": false}", i);
    sbuf_printf(&b, "], %s}", MODEL_OK);
    char path[] = "/tmp/xsa_tok_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, b.s, b.n) == (ssize_t)b.n);
    close(fd);
    sbuf_free(&b);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, path, &err) == 0, "%s", err.msg);
    unlink(path);
    if (!t) return;
    CHECK_EQ_INT(tokenizer_vocab_size(t), 3 + 20000);
    struct ivec ids = {0};
    CHECK(tokenizer_encode(t, "ab<a5>a<a19999>", 15, 0, &ids, &err) == 0);
    int32_t want[] = {2, 3 + 5, 0, 3 + 19999};
    CHECK_EQ_INT(ids.n, 4);
    for (size_t k = 0; k < 4 && k < ids.n; k++) CHECK_EQ_INT(ids.v[k], want[k]);
    struct sbuf out = {0};
    CHECK(tokenizer_decode(t, ids.v, 0, &out, &err) == 0);
    CHECK_STR(out.s, "");
    ids.n = 0;
    CHECK(tokenizer_encode(t, "", 0, 1, &ids, &err) == 0);
    CHECK(tokenizer_decode(t, ids.v, ids.n, &out, &err) == 0);
    ivec_free(&ids);
    sbuf_free(&out);
    tokenizer_free(t);
}

TEST(test_small_model) {
    // A hand-made model: merges as pairs, an unknown character, a byte fallback.
    const char *body =
        "{\"added_tokens\": [{\"id\": 5, \"content\": \"<x>\", \"special\": true, \"normalized\": false}],"
        "\"model\": {\"type\": \"BPE\", \"unk_token\": \"?\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"?\": 3, "
        "\"abab\": 4}, \"merges\": [[\"a\", \"b\"], [\"ab\", \"ab\"]]}}";
    char path[] = "/tmp/xsa_tok_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, body, strlen(body)) == (ssize_t)strlen(body));
    close(fd);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, path, &err) == 0, "%s", err.msg);
    unlink(path);
    if (!t) return;
    struct ivec ids = {0};
    CHECK(tokenizer_encode(t, "ababzab<x>a", 11, 1, &ids, &err) == 0);
    int32_t want[] = {4, 3, 2, 5, 0};
    CHECK_EQ_INT(ids.n, 5);
    for (size_t k = 0; k < 5 && k < ids.n; k++) CHECK_EQ_INT(ids.v[k], want[k]);
    struct sbuf out = {0};
    CHECK(tokenizer_decode(t, ids.v, ids.n, &out, &err) == 0);
    CHECK_STR(out.s, "abab ? ab <x> a");  // no decoder: tokens joined by spaces
    ivec_free(&ids);
    sbuf_free(&out);
    tokenizer_free(t);
}

// Real benchmark texts (../shared/benchdata) against ids the Python library produced.
static void check_shared(const char *name) {
    char epath[256];
    snprintf(epath, sizeof epath, FIX "%s/shared_expected.jsonl", name);
    size_t elen;
    char *exp = slurp(epath, &elen);
    CHECK(exp != NULL);
    struct tokenizer *t = load(name);
    CHECK(t != NULL);
    size_t rows = 0, bad = 0;
    for (char *line = exp; exp && t && line < exp + elen;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        cJSON *j = cJSON_Parse(line);
        line = nl ? nl + 1 : exp + elen;
        if (!j) continue;
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(j, "file"));
        int row = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "row"));
        const char *data_path = file ? shared_benchdata(file) : NULL;
        size_t dlen;
        char *data = data_path ? slurp(data_path, &dlen) : NULL;
        CHECK(data != NULL);
        char *p = data;
        for (int r = 0; p && r < row; r++) {
            p = strchr(p, '\n');
            if (p) p++;
        }
        char *end = p ? strchr(p, '\n') : NULL;
        if (end) *end = '\0';
        cJSON *d = p ? cJSON_Parse(p) : NULL;
        const cJSON *txt = cJSON_GetObjectItem(d, "text");
        if (!txt) txt = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "question"), "stem");
        CHECK(cJSON_IsString(txt));
        if (cJSON_IsString(txt)) {
            for (int special = 0; special < 2; special++) {
                struct ivec ids = {0};
                xsa_error err = {0};
                CHECK(tokenizer_encode(t, txt->valuestring, strlen(txt->valuestring), special, &ids, &err) == 0);
                int ok = ids_equal(&ids, cJSON_GetObjectItem(j, special ? "ids_special" : "ids"));
                if (!ok && bad++ < 3) fprintf(stderr, "  %s: %s row %d differs\n", name, file, row);
                CHECK(ok);
                ivec_free(&ids);
            }
        }
        rows++;
        cJSON_Delete(d);
        free(data);
        cJSON_Delete(j);
    }
    CHECK(rows >= 50);
    free(exp);
    tokenizer_free(t);
}

TEST(test_shared_benchdata) {
    if (!shared_benchdata("arc_easy/ARC-Easy-Test.jsonl")) SKIP("../shared/benchdata absent");
    check_shared("gpt2");
    check_shared("llama3");
    check_shared("hf_sp");
}

// Loads a tokenizer.json body (NULL on an error, reported).
static struct tokenizer *load_body(const char *body) {
    char path[] = "/tmp/xsa_tok_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd < 0) return NULL;
    CHECK(write(fd, body, strlen(body)) == (ssize_t)strlen(body));
    close(fd);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, path, &err) == 0, "%s", err.msg);
    unlink(path);
    return t;
}

#define DEC_VOCAB                                                                                                       \
    "\"added_tokens\": [{\"id\": 0, \"content\": \"<s>\", \"special\": true, \"normalized\": false}], \"model\": "      \
    "{\"type\": \"BPE\", \"vocab\": {\"<s>\": 0, \"\xe2\x96\x81\": 1, \"\xe2\x96\x81\xe2\x96\x81" "a\": 2, \"a\": 3, " \
    "\"<0x20>\": 4, \"<0xC3>\": 5, \"<0xA9>\": 6, \"\xe2\x96\x81" "b\": 7}, \"merges\": []}"
#define LLAMA_DEC                                                                                                       \
    "{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"\xe2\x96\x81\"}, "    \
    "\"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", " \
    "\"start\": 1, \"stop\": 0}]}"
#define META_DEC "{\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\", \"prepend_scheme\": \"first\", \"split\": true}"

// DEC_VOCAB's tokenizer with `decoder` (JSON) as its decoder.
static struct tokenizer *load_with_decoder(const char *decoder) {
    char body[2048];
    snprintf(body, sizeof body, "{" DEC_VOCAB ", \"decoder\": %s}", decoder);
    return load_body(body);
}

// Bits per byte of a tokenizer.json that is not byte-level: each token's bytes as the first
// token of a decoded text (base) and after another (base + leading). The counts are those of
// `tokenizers` 0.23.3's decoders (decode(["<0x20>"]) == "" under Llama's Strip; Metaspace drops
// every U+2581 of the first token: decode(["\u2581\u2581a"]) == "a", decode(["a", "\u2581\u2581a"])
// == "a  a"; without ByteFallback "<0x20>" stays 6 bytes). Decoders that cannot be counted
// token by token are refused, naming why.
TEST(test_decoded_byte_counts) {
    static const struct {
        const char *decoder;
        int16_t first[8];
        uint8_t after[8];
    } ok[] = {
        {LLAMA_DEC, {0, 0, 2, 1, 0, 1, 1, 1}, {0, 1, 1, 0, 1, 0, 0, 1}},
        {META_DEC, {0, 0, 1, 1, 6, 6, 6, 1}, {0, 1, 2, 0, 0, 0, 0, 1}},
    };
    for (size_t c = 0; c < sizeof ok / sizeof *ok; c++) {
        struct tokenizer *t = load_with_decoder(ok[c].decoder);
        if (!t) continue;
        int16_t base[9];
        uint8_t lead[9], boundary[9];
        xsa_error err = {0};
        CHECK_MSG(tokenizer_hf_byte_luts(t, 9, base, lead, boundary, &err) == 0, "%s", err.msg);
        CHECK(!tokenizer_hf_decoder_byte_level(t));
        for (int i = 0; i < 8; i++)
            CHECK_MSG(base[i] == ok[c].first[i] && lead[i] == ok[c].after[i] && boundary[i] == (i == 0),
                      "decoder %zu id %d: %d + %d, boundary %d", c, i, base[i], lead[i], boundary[i]);
        CHECK(boundary[8] && !base[8] && !lead[8]);  // past the vocabulary
        tokenizer_free(t);
    }
    static const struct {
        const char *decoder, *why;
    } bad[] = {
        {"{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", "
         "\"start\": 0, \"stop\": 1}]}", "Strip of trailing characters after Fuse"},
        {"{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", "
         "\"start\": 2, \"stop\": 0}]}", "more than one leading character after Fuse"},
        {"{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Fuse\"}, {\"type\": \"Replace\", \"pattern\": "
         "{\"String\": \"a\"}, \"content\": \"b\"}]}", "Replace after Fuse"},
        {"{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"ByteFallback\"}, {\"type\": \"Replace\", \"pattern\": "
         "{\"String\": \"a\"}, \"content\": \"b\"}]}", "Replace after ByteFallback"},
        {"{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Fuse\"}, " META_DEC "]}", "Metaspace after Fuse"},
        {"{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"ByteFallback\"}, {\"type\": \"Strip\", \"content\": "
         "\" \", \"start\": 1, \"stop\": 0}]}", "Strip between ByteFallback and Fuse"},
        {"{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"ByteLevel\"}, {\"type\": \"Fuse\"}]}",
         "ByteLevel among other decoders"},
        {"null", "no decoder"},
        // the first token "\u2581" leaves nothing, and Strip would take the next token's space
        {"{\"type\": \"Sequence\", \"decoders\": [" META_DEC ", {\"type\": \"Fuse\"}, {\"type\": \"Strip\", "
         "\"content\": \" \", \"start\": 1, \"stop\": 0}]}", "token 1 (\xe2\x96\x81) decodes to nothing at the start of a text"},
    };
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        struct tokenizer *t = load_with_decoder(bad[c].decoder);
        if (!t) continue;
        int16_t base[8];
        uint8_t lead[8], boundary[8];
        xsa_error err = {0};
        CHECK_EQ_INT(tokenizer_hf_byte_luts(t, 8, base, lead, boundary, &err), XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, bad[c].why) && strstr(err.msg, "cannot be counted token by token"), "%zu: %s", c, err.msg);
        tokenizer_free(t);
    }
}

RUN_TESTS(T(test_decoded_byte_counts), T(test_out_of_range_numbers), T(test_many_added_tokens), T(test_gpt2), T(test_llama3), T(test_hf_sp), T(test_hf_metaspace), T(test_norm_mix), T(test_split_mix), T(test_transformers_class), T(test_vocab_files),
          T(test_special_ids), T(test_errors), T(test_small_model), T(test_shared_benchdata))
