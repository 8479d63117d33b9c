// Tests of the llama2.c tokenizer.bin tokenizer against expectations written by
// tools/fixtures/make_sp_fixtures.py with tools/references/llama2c_tokenizer_reference.py (an independent Python
// port of run.c's encode/decode): a synthetic tokenizer.bin always, ../shared's tok512.bin
// when present; plus truncated and corrupt files and out-of-range ids.
#include <unistd.h>

#include "common/fileio.h"
#include "model/tokenizer.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define FIX "tests/fixtures/tokenizers/"

// expected.tsv: hex \t ids \t ids with BOS \t decode(ids with BOS) as hex. Returns lines checked.
static int check_expected(const char *model, const char *tsv) {
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, model, &err) == 0, "%s", err.msg);
    char *data = NULL;
    size_t n = 0;
    CHECK_MSG(file_read_all(tsv, 64 << 20, &data, &n, &err) == 0, "%s", err.msg);
    if (!t || !data) {
        tokenizer_free(t);
        free(data);
        return 0;
    }
    struct sbuf text = {0}, dec = {0}, want_dec = {0};
    struct ivec got = {0}, want = {0};
    int lines = 0, bad = 0;
    for (char *line = data, *nl; line < data + n; line = nl + 1) {
        if (!(nl = strchr(line, '\n'))) break;
        *nl = '\0';
        char *f[4] = {line, NULL, NULL, NULL};
        for (int k = 1; k < 4; k++) {
            char *tab = f[k - 1] ? strchr(f[k - 1], '\t') : NULL;
            if (tab) *tab = '\0', f[k] = tab + 1;
        }
        if (!f[3]) {
            CHECK_MSG(0, "%s:%d: malformed fixture line", tsv, lines + 1);
            break;
        }
        lines++;
        fixture_hex_to_sbuf(f[0], strlen(f[0]), &text);
        for (int special = 0; special < 2; special++) {
            got.n = 0;
            fixture_parse_ids(f[1 + special], strlen(f[1 + special]), &want);
            int rc = tokenizer_encode(t, text.s, text.n, special, &got, &err);
            if (rc || !fixture_ivec_eq(&got, &want)) {
                if (bad++ < 5) fprintf(stderr, "  %s line %d (add_special=%d): ids differ\n", tsv, lines, special);
                CHECK(0);
            }
        }
        dec.n = 0;
        sbuf_append(&dec, "", 0);
        fixture_hex_to_sbuf(f[3], strlen(f[3]), &want_dec);
        CHECK(tokenizer_decode(t, want.v, want.n, &dec, &err) == 0);
        CHECK_MSG(dec.n == want_dec.n && memcmp(dec.s, want_dec.s, dec.n) == 0, "%s line %d: decoded \"%s\" want \"%s\"",
                  tsv, lines, dec.s, want_dec.s);
    }
    sbuf_free(&text);
    sbuf_free(&dec);
    sbuf_free(&want_dec);
    ivec_free(&got);
    ivec_free(&want);
    free(data);
    tokenizer_free(t);
    return lines;
}

TEST(test_llama2c_synthetic_matches_reference) {
    CHECK(check_expected(FIX "llama2c_synth/tokenizer.bin", FIX "llama2c_synth/expected.tsv") >= 100);
}

TEST(test_llama2c_tok512_matches_reference) {
    const char *p = shared_benchdata("models/stories260K/tok512.bin");
    if (!p) SKIP("../shared/benchdata absent");
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    CHECK(check_expected(path, FIX "llama2c_tok512/expected.tsv") >= 100);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK(tokenizer_load(&t, path, &err) == 0);
    if (!t) return;
    CHECK_EQ_INT(tokenizer_kind(t), TOKENIZER_LLAMA2C);
    CHECK_EQ_INT(tokenizer_vocab_size(t), 512);
    CHECK_EQ_INT(tokenizer_bos_id(t), 1);
    CHECK_EQ_INT(tokenizer_eos_id(t), 2);
    CHECK_EQ_INT(tokenizer_adds_bos(t), 1);
    // run.c: BOS, then the merged dummy-prefixed text; decoding drops the space after BOS.
    struct ivec ids = {0};
    struct sbuf s = {0};
    CHECK(tokenizer_encode(t, "Once upon a time", 16, 1, &ids, &err) == 0);
    CHECK(ids.n >= 2 && ids.v[0] == 1);
    CHECK(tokenizer_decode(t, ids.v, ids.n, &s, &err) == 0);
    CHECK_STR(s.s, "\n<s>\nOnce upon a time");
    // Out-of-range ids.
    int32_t bad[2] = {1, 512};
    xsa_error e2 = {0};
    CHECK_EQ_INT(tokenizer_decode(t, bad, 2, &s, &e2), XSA_EBADINPUT);
    CHECK(strstr(e2.msg, "512") != NULL);
    ivec_free(&ids);
    sbuf_free(&s);
    tokenizer_free(t);
}

static int load_bytes(const char *dir, const char *data, size_t n, xsa_error *err) {
    char path[512];
    snprintf(path, sizeof path, "%s/tokenizer.bin", dir);
    xsa_error werr = {0};
    if (file_write_atomic(path, data, n, &werr)) return -1;
    struct tokenizer *t = NULL;
    xsa_error_clear(err);
    int rc = tokenizer_load(&t, path, err);
    if (rc == 0) {
        struct ivec ids = {0};
        xsa_error e2 = {0};
        int erc = tokenizer_encode(t, "hello \xff world", 13, 1, &ids, &e2);
        CHECK(erc == 0 || erc == XSA_EBADINPUT);
        ivec_free(&ids);
    }
    tokenizer_free(t);
    unlink(path);
    return rc;
}

TEST(test_llama2c_bad_files) {
    char dir[] = "/tmp/xsa_l2c_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *data = NULL;
    size_t n = 0;
    xsa_error err = {0};
    CHECK(file_read_all(FIX "llama2c_synth/tokenizer.bin", 1 << 20, &data, &n, &err) == 0);
    if (!data) return;
    CHECK_EQ_INT(load_bytes(dir, data, n, &err), 0);
    // Truncated inside the last token, inside a record header, inside the file header.
    CHECK_EQ_INT(load_bytes(dir, data, n - 1, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "truncated") && strstr(err.msg, "tokenizer.bin"));
    CHECK_EQ_INT(load_bytes(dir, data, 4 + 8 + 5 + 3, &err), XSA_EBADINPUT);
    CHECK_EQ_INT(load_bytes(dir, data, 2, &err), XSA_EBADINPUT);
    CHECK_EQ_INT(load_bytes(dir, data, 4, &err), XSA_EBADINPUT);  // no tokens at all
    // Every truncation: loads (at a record boundary) or fails with code 2.
    for (size_t cut = 0; cut < n; cut += 1 + cut / 16) {
        int rc = load_bytes(dir, data, cut, &err);
        CHECK(rc == 0 || rc == XSA_EBADINPUT);
    }
    // A negative token length; an absurd max_token_length.
    char *bad = malloc(n);
    memcpy(bad, data, n);
    memcpy(bad + 4 + 4, "\xff\xff\xff\xff", 4);
    CHECK_EQ_INT(load_bytes(dir, bad, n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "length") != NULL);
    memcpy(bad, data, n);
    memcpy(bad, "\x00\x00\x00\x80", 4);
    CHECK_EQ_INT(load_bytes(dir, bad, n, &err), XSA_EBADINPUT);
    free(bad);
    // A vocabulary without " ": non-empty text cannot get its dummy prefix.
    struct sbuf tiny = {0};
    sbuf_append(&tiny, "\x05\x00\x00\x00", 4);
    const char *toks[] = {"<unk>", "<s>", "</s>", "a"};
    for (int i = 0; i < 4; i++) {
        uint32_t len = (uint32_t)strlen(toks[i]);
        sbuf_append(&tiny, "\x00\x00\x00\x00", 4);
        sbuf_append(&tiny, (const char *)&len, 4);
        sbuf_append(&tiny, toks[i], len);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/tokenizer.bin", dir);
    CHECK(file_write_atomic(path, tiny.s, tiny.n, &err) == 0);
    struct tokenizer *t = NULL;
    CHECK(tokenizer_load(&t, path, &err) == 0);
    if (t) {
        struct ivec ids = {0};
        xsa_error e2 = {0};
        CHECK(tokenizer_encode(t, "", 0, 1, &ids, &e2) == 0);  // empty text: BOS only
        CHECK_EQ_INT(ids.n, 1);
        CHECK_EQ_INT(tokenizer_encode(t, "a", 1, 0, &ids, &e2), XSA_EBADINPUT);
        ivec_free(&ids);
    }
    tokenizer_free(t);
    unlink(path);
    sbuf_free(&tiny);
    free(data);
    rmdir(dir);
}

// Writes a tokenizer.bin of the given tokens and scores to dir and loads it.
static struct tokenizer *load_tokens(const char *dir, const char *const *toks, const float *scores, int n) {
    struct sbuf b = {0};
    sbuf_append(&b, "\x10\x00\x00\x00", 4);
    for (int i = 0; i < n; i++) {
        uint32_t len = (uint32_t)strlen(toks[i]);
        sbuf_append(&b, (const char *)&scores[i], 4);
        sbuf_append(&b, (const char *)&len, 4);
        sbuf_append(&b, toks[i], len);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/tokenizer.bin", dir);
    xsa_error err = {0};
    struct tokenizer *t = NULL;
    CHECK(file_write_atomic(path, b.s, b.n, &err) == 0);
    CHECK_MSG(tokenizer_load(&t, path, &err) == 0, "%s", err.msg);
    unlink(path);
    sbuf_free(&b);
    return t;
}

static int encode_is(const struct tokenizer *t, const char *text, int bos, const int32_t *want, size_t n) {
    struct ivec ids = {0};
    xsa_error err = {0};
    int ok = tokenizer_encode(t, text, strlen(text), bos, &ids, &err) == 0 && ids.n == n &&
             (n == 0 || memcmp(ids.v, want, n * sizeof *want) == 0);
    if (!ok) {
        fprintf(stderr, "    '%.40s': got", text);
        for (size_t i = 0; i < ids.n && i < 20; i++) fprintf(stderr, " %d", ids.v[i]);
        fprintf(stderr, "\n");
    }
    ivec_free(&ids);
    return ok;
}

// run.c's merge rule worked out by hand: the best score wins, the leftmost pair on a tie, and a
// pair scoring <= -1e10 or NaN is never merged (run.c starts from -1e10 and compares with >).
TEST(test_llama2c_merge_order) {
    char dir[] = "/tmp/xsa_l2c_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    static const char *const toks[] = {"<unk>", "<s>", "</s>", " ", "a", "b", "ab", "ba", " a", "aa", "bb"};
    const float scores[] = {0, 0, 0, 0, 0, 0, 1, 1, 0.5f, -1e10f, NAN};
    struct tokenizer *t = load_tokens(dir, toks, scores, 11);
    if (t) {
        CHECK(encode_is(t, "aba", 0, (const int32_t[]){3, 6, 4}, 3));  // "ab" and "ba" tie: the left one
        CHECK(encode_is(t, "aa", 0, (const int32_t[]){8, 4}, 2));      // "aa" at -1e10 is never taken
        CHECK(encode_is(t, "bb", 0, (const int32_t[]){3, 5, 5}, 3));   // NaN is never taken
        CHECK(encode_is(t, "ba", 1, (const int32_t[]){1, 3, 7}, 3));
        CHECK(encode_is(t, "", 0, NULL, 0));
        // A long single word: every "ab" merges, left to right.
        size_t n = 5000;
        char *text = malloc(2 * n + 1);
        int32_t *want = malloc((n + 1) * sizeof *want);
        want[0] = 3;
        for (size_t i = 0; i < n; i++) memcpy(text + 2 * i, "ab", 2), want[i + 1] = 6;
        text[2 * n] = '\0';
        CHECK(encode_is(t, text, 0, want, n + 1));
        free(text);
        free(want);
    }
    tokenizer_free(t);
    rmdir(dir);
}

// A failed encode leaves the output as it was (no BOS or byte ids half-written).
TEST(test_llama2c_failed_encode_appends_nothing) {
    char dir[] = "/tmp/xsa_l2c_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    static const char *const toks[] = {"<unk>", "<s>", "</s>", "a"};  // no " " token
    const float scores[] = {0, 0, 0, 0};
    struct tokenizer *t = load_tokens(dir, toks, scores, 4);
    if (t) {
        struct ivec ids = {0};
        ivec_push(&ids, 42);
        xsa_error err = {0};
        CHECK_EQ_INT(tokenizer_encode(t, "a", 1, 1, &ids, &err), XSA_EBADINPUT);
        CHECK_EQ_INT(ids.n, 1);
        ivec_free(&ids);
    }
    tokenizer_free(t);
    static const char *const toks2[] = {"<unk>", "<s>", "</s>", " ", "a"};  // bytes past the vocabulary
    const float scores2[] = {0, 0, 0, 0, 0};
    t = load_tokens(dir, toks2, scores2, 5);
    if (t) {
        struct ivec ids = {0};
        xsa_error err = {0};
        CHECK_EQ_INT(tokenizer_encode(t, "a\xc3\xa9", 3, 1, &ids, &err), XSA_EBADINPUT);
        CHECK(strstr(err.msg, "byte fallback") != NULL);
        CHECK_EQ_INT(ids.n, 0);
        ivec_free(&ids);
    }
    tokenizer_free(t);
    rmdir(dir);
}

RUN_TESTS(T(test_llama2c_synthetic_matches_reference), T(test_llama2c_tok512_matches_reference),
          T(test_llama2c_bad_files), T(test_llama2c_merge_order), T(test_llama2c_failed_encode_appends_nothing))
