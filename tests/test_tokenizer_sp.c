// Tests of the SentencePiece .model tokenizer against expectations written by
// tools/fixtures/make_sp_fixtures.py with the sentencepiece library: every corpus line id for id (with and
// without BOS) and decoded byte for byte, for two trained models and ../shared's real sp1024
// model (also on real benchmark text), plus corrupt, truncated and unsupported model files.
#include <bzlib.h>
#include <cjson/cJSON.h>
#include <unistd.h>

#include "common/fileio.h"
#include "model/tokenizer.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define FIX "tests/fixtures/tokenizers/"

// ---------------------------------------------------------------- fixture helpers

// Splits line into up to `max` tab-separated fields (pointers + lengths); returns the count.
static int split_tabs(char *line, const char **f, size_t *len, int max) {
    int k = 0;
    char *p = line;
    while (k < max) {
        char *tab = strchr(p, '\t');
        f[k] = p;
        len[k] = tab ? (size_t)(tab - p) : strlen(p);
        k++;
        if (!tab) break;
        p = tab + 1;
    }
    return k;
}

static void print_ivec(const char *what, const struct ivec *a) {
    fprintf(stderr, "    %s:", what);
    for (size_t i = 0; i < a->n && i < 40; i++) fprintf(stderr, " %d", a->v[i]);
    fprintf(stderr, a->n > 40 ? " ...\n" : "\n");
}

// Checks every line of expected.tsv (hex, ids, ids with BOS, decoded hex); returns lines checked.
static int check_expected(const char *model, const char *tsv) {
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, model, &err) == 0, "%s", err.msg);
    if (!t) return 0;
    char *data = NULL;
    size_t n = 0;
    CHECK_MSG(file_read_all(tsv, 64 << 20, &data, &n, &err) == 0, "%s", err.msg);
    if (!data) {
        tokenizer_free(t);
        return 0;
    }
    struct sbuf text = {0}, dec = {0}, want_dec = {0};
    struct ivec got = {0}, want = {0};
    int lines = 0, bad = 0;
    for (char *line = data, *nl; line < data + n; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        *nl = '\0';
        const char *f[4];
        size_t fl[4];
        if (split_tabs(line, f, fl, 4) != 4) {
            CHECK_MSG(0, "%s:%d: malformed fixture line", tsv, lines + 1);
            break;
        }
        lines++;
        fixture_hex_to_sbuf(f[0], fl[0], &text);
        for (int special = 0; special < 2; special++) {
            got.n = 0;
            fixture_parse_ids(f[1 + special], fl[1 + special], &want);
            int rc = tokenizer_encode(t, text.s, text.n, special, &got, &err);
            if (rc || !fixture_ivec_eq(&got, &want)) {
                if (bad++ < 5) {
                    fprintf(stderr, "  %s line %d (add_special=%d) text hex %.*s\n", tsv, lines, special, (int)fl[0], f[0]);
                    print_ivec("want", &want);
                    print_ivec("got ", &got);
                }
                CHECK(rc == 0 && fixture_ivec_eq(&got, &want));
            }
        }
        fixture_parse_ids(f[1], fl[1], &want);
        dec.n = 0;
        sbuf_append(&dec, "", 0);
        fixture_hex_to_sbuf(f[3], fl[3], &want_dec);
        int rc = tokenizer_decode(t, want.v, want.n, &dec, &err);
        if (rc || dec.n != want_dec.n || memcmp(dec.s, want_dec.s, dec.n) != 0) {
            if (bad++ < 5) fprintf(stderr, "  %s line %d: decoded \"%s\" want \"%s\"\n", tsv, lines, dec.s, want_dec.s);
            CHECK(0);
        }
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

// Checks decode.tsv (ids, decoded hex); returns lines checked.
static int check_decode(const char *model, const char *tsv) {
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
    struct sbuf dec = {0}, want_dec = {0};
    struct ivec ids = {0};
    int lines = 0;
    for (char *line = data, *nl; line < data + n; line = nl + 1) {
        if (!(nl = strchr(line, '\n'))) break;
        *nl = '\0';
        const char *f[2];
        size_t fl[2];
        if (split_tabs(line, f, fl, 2) != 2) break;
        lines++;
        fixture_parse_ids(f[0], fl[0], &ids);
        fixture_hex_to_sbuf(f[1], fl[1], &want_dec);
        dec.n = 0;
        sbuf_append(&dec, "", 0);
        CHECK(tokenizer_decode(t, ids.v, ids.n, &dec, &err) == 0);
        CHECK_MSG(dec.n == want_dec.n && memcmp(dec.s, want_dec.s, dec.n) == 0, "%s line %d: \"%s\" vs \"%s\"", tsv,
                  lines, dec.s, want_dec.s);
    }
    sbuf_free(&dec);
    sbuf_free(&want_dec);
    ivec_free(&ids);
    free(data);
    tokenizer_free(t);
    return lines;
}

// ---------------------------------------------------------------- trained models

TEST(test_sp_bpe_matches_sentencepiece) {
    int n = check_expected(FIX "sp_bpe/tokenizer.model", FIX "sp_bpe/expected.tsv");
    CHECK(n >= 100);
}

TEST(test_sp_bpe_raw_matches_sentencepiece) {
    int n = check_expected(FIX "sp_bpe_raw/tokenizer.model", FIX "sp_bpe_raw/expected.tsv");
    CHECK(n >= 100);
}

TEST(test_sp_bpe_llama_style_matches_sentencepiece) {
    int n = check_expected(FIX "sp_bpe_llama/tokenizer.model", FIX "sp_bpe_llama/expected.tsv");
    CHECK(n >= 100);
}

TEST(test_sp_unused_pieces_match_sentencepiece) {
    int n = check_expected(FIX "sp_bpe_unused/tokenizer.model", FIX "sp_bpe_unused/expected.tsv");
    CHECK(n >= 100);
}

// 400 user-defined symbols with nested prefixes: always the longest one, as the library's
// PrefixMatcher (tools/fixtures/make_sp_user_fixture.py).
TEST(test_sp_user_symbols_match_sentencepiece) {
    int n = check_expected(FIX "sp_user/tokenizer.model", FIX "sp_user/expected.tsv");
    CHECK(n >= 200);
}

TEST(test_sp_decode_matches_sentencepiece) {
    CHECK(check_decode(FIX "sp_bpe/tokenizer.model", FIX "sp_bpe/decode.tsv") >= 100);
    CHECK(check_decode(FIX "sp_bpe_raw/tokenizer.model", FIX "sp_bpe_raw/decode.tsv") >= 100);
    CHECK(check_decode(FIX "sp_bpe_llama/tokenizer.model", FIX "sp_bpe_llama/decode.tsv") >= 100);
}

TEST(test_sp_metadata) {
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, FIX "sp_bpe/tokenizer.model", &err) == 0, "%s", err.msg);
    if (!t) return;
    CHECK_EQ_INT(tokenizer_kind(t), TOKENIZER_SENTENCEPIECE);
    CHECK_EQ_INT(tokenizer_vocab_size(t), 600);
    CHECK_EQ_INT(tokenizer_bos_id(t), 1);
    CHECK_EQ_INT(tokenizer_eos_id(t), 2);
    CHECK_EQ_INT(tokenizer_adds_bos(t), 1);
    // Empty text: nothing, or BOS alone.
    struct ivec ids = {0};
    CHECK(tokenizer_encode(t, "", 0, 0, &ids, &err) == 0);
    CHECK_EQ_INT(ids.n, 0);
    CHECK(tokenizer_encode(t, "", 0, 1, &ids, &err) == 0);
    CHECK_EQ_INT(ids.n, 1);
    CHECK_EQ_INT(ids.v[0], 1);
    // Out-of-range ids are refused by decode.
    struct sbuf s = {0};
    int32_t bad[2] = {5, 600};
    CHECK_EQ_INT(tokenizer_decode(t, bad, 2, &s, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "600") != NULL);
    xsa_error e2 = {0};
    int32_t neg = -1;
    CHECK_EQ_INT(tokenizer_decode(t, &neg, 1, &s, &e2), XSA_EBADINPUT);
    ivec_free(&ids);
    sbuf_free(&s);
    tokenizer_free(t);
}

// ---------------------------------------------------------------- the real sp1024 model

#define SP1024 "models/parameter_golf_sp1024/fineweb_1024_bpe.model"

TEST(test_sp1024_corpus_matches_sentencepiece) {
    const char *model = shared_benchdata(SP1024);
    if (!model) SKIP("../shared/benchdata absent");
    char path[4096];
    snprintf(path, sizeof path, "%s", model);
    CHECK(check_expected(path, FIX "sp_sp1024/expected.tsv") >= 100);
    CHECK(check_decode(path, FIX "sp_sp1024/decode.tsv") >= 100);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK(tokenizer_load(&t, path, &err) == 0);
    if (t) {
        CHECK_EQ_INT(tokenizer_vocab_size(t), 1024);
        CHECK_EQ_INT(tokenizer_bos_id(t), 1);
        CHECK_EQ_INT(tokenizer_eos_id(t), 2);
    }
    tokenizer_free(t);
}

struct bench_file {  // the last benchmark file read, whole (decompressed)
    char rel[512];
    struct sbuf all;
};

static int bench_read(const char *rel, struct bench_file *bf) {
    if (!strcmp(bf->rel, rel)) return 0;
    const char *p = shared_benchdata(rel);
    if (!p) return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    snprintf(bf->rel, sizeof bf->rel, "%s", rel);
    struct sbuf *all = &bf->all;
    all->n = 0;
    size_t rl = strlen(rel);
    if (rl > 4 && !strcmp(rel + rl - 4, ".bz2")) {
        FILE *fp = fopen(path, "rb");
        int bzerr = 0;
        BZFILE *bz = fp ? BZ2_bzReadOpen(&bzerr, fp, 0, 0, NULL, 0) : NULL;
        char buf[65536];
        while (bz && bzerr == BZ_OK) {
            int k = BZ2_bzRead(&bzerr, bz, buf, sizeof buf);
            if (k > 0) sbuf_append(all, buf, (size_t)k);
        }
        if (bz) BZ2_bzReadClose(&bzerr, bz);
        if (fp) fclose(fp);
    } else {
        char *d = NULL;
        size_t n = 0;
        xsa_error err = {0};
        if (file_read_all(path, 256 << 20, &d, &n, &err)) return -1;
        sbuf_append(all, d, n);
        free(d);
    }
    return 0;
}

// The text of (file, 1-based line, field): a dotted JSON path, or "-" for the whole line.
static int bench_text(const char *rel, long line, const char *field, struct bench_file *bf, struct sbuf *out) {
    if (bench_read(rel, bf) || !bf->all.s) return -1;
    const char *s = bf->all.s, *end = bf->all.s + bf->all.n;
    for (long i = 1; i < line && s < end; i++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        s = nl ? nl + 1 : end;
    }
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
    int rc = -1;
    out->n = 0;
    if (!strcmp(field, "-")) {
        rc = sbuf_append(out, s, len);
    } else {
        cJSON *j = cJSON_ParseWithLength(s, len), *v = j;
        char key[256];
        snprintf(key, sizeof key, "%s", field);
        for (char *k = strtok(key, "."); k && v; k = strtok(NULL, ".")) v = cJSON_GetObjectItemCaseSensitive(v, k);
        if (cJSON_IsString(v)) rc = sbuf_puts(out, v->valuestring);
        cJSON_Delete(j);
    }
    return rc;
}

TEST(test_sp1024_benchmark_text_matches_sentencepiece) {
    const char *model = shared_benchdata(SP1024);
    if (!model) SKIP("../shared/benchdata absent");
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, model, &err) == 0, "%s", err.msg);
    char *data = NULL;
    size_t n = 0;
    CHECK(file_read_all(FIX "sp_sp1024/benchdata.tsv", 16 << 20, &data, &n, &err) == 0);
    if (!t || !data) {
        tokenizer_free(t);
        free(data);
        return;
    }
    struct sbuf text = {0};
    struct ivec got = {0}, want = {0};
    struct bench_file bf = {0};
    int lines = 0;
    for (char *line = data, *nl; line < data + n; line = nl + 1) {
        if (!(nl = strchr(line, '\n'))) break;
        *nl = '\0';
        const char *f[4];
        size_t fl[4];
        if (split_tabs(line, f, fl, 4) != 4) break;
        char rel[512], field[128];
        snprintf(rel, sizeof rel, "%.*s", (int)fl[0], f[0]);
        snprintf(field, sizeof field, "%.*s", (int)fl[2], f[2]);
        long ln = strtol(f[1], NULL, 10);
        if (bench_text(rel, ln, field, &bf, &text)) {
            CHECK_MSG(0, "%s:%ld: cannot read %s", rel, ln, field);
            continue;
        }
        lines++;
        fixture_parse_ids(f[3], fl[3], &want);
        got.n = 0;
        CHECK(tokenizer_encode(t, text.s, text.n, 0, &got, &err) == 0);
        CHECK_MSG(fixture_ivec_eq(&got, &want), "%s:%ld %s: ids differ", rel, ln, field);
    }
    CHECK(lines >= 200);
    sbuf_free(&bf.all);
    sbuf_free(&text);
    ivec_free(&got);
    ivec_free(&want);
    free(data);
    tokenizer_free(t);
}

// ---------------------------------------------------------------- bad files

static void pb_varint(struct sbuf *b, uint64_t v) {
    do {
        char c = (char)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        sbuf_append(b, &c, 1);
        v >>= 7;
    } while (v);
}

static void pb_bytes(struct sbuf *b, int field, const char *s, size_t n) {
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    sbuf_append(b, s, n);
}

static void pb_uint(struct sbuf *b, int field, uint64_t v) {
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

// A tiny ModelProto: pieces <unk> a b ab, and a TrainerSpec with model_type (0: absent).
// Appends one ModelProto.SentencePiece of type `type` (score 0).
static void tiny_piece(struct sbuf *out, const char *piece, int type) {
    struct sbuf p = {0};
    pb_bytes(&p, 1, piece, strlen(piece));
    pb_varint(&p, 2 << 3 | 5);  // score, fixed32 0.0
    sbuf_append(&p, "\0\0\0\0", 4);
    pb_uint(&p, 3, (uint64_t)type);
    pb_bytes(out, 1, p.s, p.n);
    sbuf_free(&p);
}

static void tiny_model(struct sbuf *out, int model_type) {
    static const char *pieces[] = {"<unk>", "a", "b", "ab"};
    out->n = 0;
    sbuf_append(out, "", 0);
    for (int i = 0; i < 4; i++) tiny_piece(out, pieces[i], i == 0 ? 2 : 1);  // UNKNOWN, NORMAL
    if (model_type) {
        struct sbuf tr = {0};
        pb_uint(&tr, 3, (uint64_t)model_type);
        pb_bytes(out, 2, tr.s, tr.n);
        sbuf_free(&tr);
    }
}

// Writes data to dir/name and tries to load it; returns the load's code, message in err.
static int load_bytes(const char *dir, const char *name, const char *data, size_t n, xsa_error *err) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    xsa_error werr = {0};
    if (file_write_atomic(path, data, n, &werr)) return -1;
    struct tokenizer *t = NULL;
    xsa_error_clear(err);
    int rc = tokenizer_load(&t, path, err);
    if (rc == 0) {  // a loadable model must also encode without trouble
        struct ivec ids = {0};
        xsa_error e2 = {0};
        CHECK(tokenizer_encode(t, "ab ba", 5, 1, &ids, &e2) == 0);
        ivec_free(&ids);
    }
    tokenizer_free(t);
    unlink(path);
    return rc;
}

// The CaseOps tokenizer of the parameter-golf records from 2026-04-18 (a BPE trained on
// transformed text, the four markers user-defined): text is transformed as their
// lossless_caps.py does before encoding and restored after decoding
// (tools/fixtures/make_caseops_fixtures.py, with the record's own functions).
TEST(test_sp_caseops_matches_the_records_transform) {
    int n = check_expected(FIX "sp_caseops/tokenizer.model", FIX "sp_caseops/expected.tsv");
    CHECK(n >= 100);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK(tokenizer_load(&t, FIX "sp_caseops/tokenizer.model", &err) == 0);
    if (t) CHECK_EQ_INT(tokenizer_caseops(t), 1);
    tokenizer_free(t);
    CHECK(tokenizer_load(&t, FIX "sp_bpe/tokenizer.model", &err) == 0);
    if (t) CHECK_EQ_INT(tokenizer_caseops(t), 0);
    tokenizer_free(t);
}

// The markers of another lossless-caps version (here v1's U+E000, or a part of U+E001..E004)
// are refused: xsa-eval would feed raw capitals to a model that never saw them.
TEST(test_sp_other_lossless_caps_refused) {
    char dir[] = "/tmp/xsa_sp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct sbuf m = {0};
    xsa_error err = {0};
    tiny_model(&m, 2);
    tiny_piece(&m, "\xee\x80\x80", 4);  // U+E000, user-defined
    CHECK_EQ_INT(load_bytes(dir, "v1.model", m.s, m.n, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "lossless-caps text transform other than CaseOps") != NULL, "%s", err.msg);
    tiny_model(&m, 2);
    tiny_piece(&m, "\xee\x80\x82", 4);  // U+E002 and U+E004 only: v4's
    tiny_piece(&m, "\xee\x80\x84", 4);
    CHECK_EQ_INT(load_bytes(dir, "v4.model", m.s, m.n, &err), XSA_EBADINPUT);
    tiny_model(&m, 2);
    for (int k = 1; k <= 4; k++) {
        const char piece[4] = {(char)0xee, (char)0x80, (char)(0x80 + k), 0};
        tiny_piece(&m, piece, 4);
    }
    CHECK_EQ_INT(load_bytes(dir, "caseops.model", m.s, m.n, &err), 0);
    char path[512];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, (const char *[]){"v1.model", "v4.model", "caseops.model"}[i]);
        unlink(path);
    }
    rmdir(dir);
    sbuf_free(&m);
}

TEST(test_sp_tiny_handmade_model) {
    char dir[] = "/tmp/xsa_sp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct sbuf m = {0};
    tiny_model(&m, 2);
    xsa_error err = {0};
    CHECK_EQ_INT(load_bytes(dir, "tiny.model", m.s, m.n, &err), 0);
    // No <s>/</s> control pieces: no BOS, and add_special adds nothing.
    char path[512];
    snprintf(path, sizeof path, "%s/tiny.model", dir);
    file_write_atomic(path, m.s, m.n, &err);
    struct tokenizer *t = NULL;
    CHECK(tokenizer_load(&t, path, &err) == 0);
    if (t) {
        CHECK_EQ_INT(tokenizer_bos_id(t), -1);
        CHECK_EQ_INT(tokenizer_adds_bos(t), 0);
        struct ivec ids = {0};
        // No charsmap, dummy prefix "▁" is unknown: <unk>, then "ab" merged; "c" unknown.
        CHECK(tokenizer_encode(t, "abc", 3, 1, &ids, &err) == 0);
        CHECK_EQ_INT(ids.n, 3);
        if (ids.n == 3) {
            CHECK_EQ_INT(ids.v[0], 0);
            CHECK_EQ_INT(ids.v[1], 3);
            CHECK_EQ_INT(ids.v[2], 0);
        }
        ivec_free(&ids);
    }
    tokenizer_free(t);
    unlink(path);
    rmdir(dir);
    sbuf_free(&m);
}

TEST(test_sp_unsupported_model_types) {
    char dir[] = "/tmp/xsa_sp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct sbuf m = {0};
    xsa_error err = {0};
    tiny_model(&m, 1);
    CHECK_EQ_INT(load_bytes(dir, "uni.model", m.s, m.n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "unigram SentencePiece models are not supported") != NULL);
    CHECK(strstr(err.msg, "uni.model") != NULL);
    tiny_model(&m, 0);  // model_type absent: the proto default, UNIGRAM
    CHECK_EQ_INT(load_bytes(dir, "default.model", m.s, m.n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "unigram") != NULL);
    tiny_model(&m, 3);
    CHECK_EQ_INT(load_bytes(dir, "word.model", m.s, m.n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "word") != NULL);
    tiny_model(&m, 4);
    CHECK_EQ_INT(load_bytes(dir, "char.model", m.s, m.n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "char") != NULL);
    rmdir(dir);
    sbuf_free(&m);
}

// bad = model m with one more piece (its SentencePiece message, n bytes) and a trainer spec of
// model type 2 (BPE) with byte_fallback as given.
static void with_byte_piece(struct sbuf *bad, const struct sbuf *m, const char *piece, size_t n, int fallback) {
    bad->n = 0;
    sbuf_append(bad, m->s, m->n);
    pb_bytes(bad, 1, piece, n);
    struct sbuf tr = {0};
    pb_uint(&tr, 3, 2);
    pb_uint(&tr, 35, (uint64_t)fallback);
    pb_bytes(bad, 2, tr.s, tr.n);
    sbuf_free(&tr);
}

TEST(test_sp_corrupt_models) {
    char dir[] = "/tmp/xsa_sp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct sbuf m = {0}, bad = {0};
    xsa_error err = {0};
    tiny_model(&m, 2);
    // A length-delimited field whose length runs past the end.
    sbuf_append(&bad, m.s, m.n);
    pb_varint(&bad, 1 << 3 | 2);
    pb_varint(&bad, 1000);
    sbuf_append(&bad, "xyz", 3);
    CHECK_EQ_INT(load_bytes(dir, "long.model", bad.s, bad.n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "long.model") && strstr(err.msg, "past the end"));
    // Unknown wire types (3: group start, 7).
    for (int wire = 3; wire <= 7; wire += 4) {
        bad.n = 0;
        sbuf_append(&bad, m.s, m.n);
        pb_varint(&bad, (uint64_t)(9 << 3 | wire));
        pb_varint(&bad, 1);
        CHECK_EQ_INT(load_bytes(dir, "wire.model", bad.s, bad.n, &err), XSA_EBADINPUT);
        CHECK(strstr(err.msg, "wire type") != NULL);
    }
    // A varint cut short, a piece without a string, two unknown pieces, no unknown piece.
    bad.n = 0;
    sbuf_append(&bad, m.s, m.n);
    sbuf_append(&bad, "\x10\xff\xff", 3);
    CHECK_EQ_INT(load_bytes(dir, "varint.model", bad.s, bad.n, &err), XSA_EBADINPUT);
    bad.n = 0;
    sbuf_append(&bad, m.s, m.n);
    pb_bytes(&bad, 1, "\x18\x01", 2);  // piece {type: NORMAL}, no string
    CHECK_EQ_INT(load_bytes(dir, "empty.model", bad.s, bad.n, &err), XSA_EBADINPUT);
    bad.n = 0;
    sbuf_append(&bad, m.s, m.n);
    pb_bytes(&bad, 1, "\x0a\x03<u>\x18\x02", 7);  // a second UNKNOWN piece
    CHECK_EQ_INT(load_bytes(dir, "unk2.model", bad.s, bad.n, &err), XSA_EBADINPUT);
    bad.n = 0;
    sbuf_append(&bad, m.s, m.n);
    pb_bytes(&bad, 1, "\x0a\x01" "a\x18\x01", 5);  // "a" defined twice
    CHECK_EQ_INT(load_bytes(dir, "dup.model", bad.s, bad.n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "twice") != NULL);
    // A byte piece that is not <0xXX>; byte pieces without byte_fallback.
    for (int fallback = 1; fallback >= 0; fallback--) {
        with_byte_piece(&bad, &m, "\x0a\x06<0xZZ>\x18\x06", 10, fallback);
        CHECK_EQ_INT(load_bytes(dir, "byte.model", bad.s, bad.n, &err), XSA_EBADINPUT);
        CHECK(strstr(err.msg, fallback ? "<0xZZ>" : "byte_fallback") != NULL);
    }
    // A damaged piece's bytes reach the message escaped, never raw.
    with_byte_piece(&bad, &m, "\x0a\x04<\xff\x1b>\x18\x06", 8, 1);
    CHECK_EQ_INT(load_bytes(dir, "raw.model", bad.s, bad.n, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "byte piece") && strstr(err.msg, "\"<\\xff\\x1b>\"") && strstr(err.msg, "re-export"), "%s", err.msg);
    // A UTF-8 piece with a C1 control character (U+009B, a terminal's CSI): that one escaped.
    with_byte_piece(&bad, &m, "\x0a\x05<\xc2\x9b\xc3\xa9\x18\x06", 9, 1);
    CHECK_EQ_INT(load_bytes(dir, "c1.model", bad.s, bad.n, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "\"<\\xc2\\x9b\xc3\xa9\"") != NULL, "%s", err.msg);
    // Not a model at all; an empty file.
    CHECK_EQ_INT(load_bytes(dir, "text.model", "hello world\n", 12, &err), XSA_EBADINPUT);
    CHECK_EQ_INT(load_bytes(dir, "zero.model", "", 0, &err), XSA_EBADINPUT);
    // Every truncation of a real trained model loads cleanly or fails with code 2, never crashes.
    char *data = NULL;
    size_t n = 0;
    CHECK(file_read_all(FIX "sp_bpe_raw/tokenizer.model", 1 << 20, &data, &n, &err) == 0);
    int refused = 0, tries = 0;
    for (size_t cut = 0; data && cut < n; cut += 1 + cut / 8) {
        int rc = load_bytes(dir, "cut.model", data, cut, &err);
        CHECK(rc == 0 || rc == XSA_EBADINPUT);
        refused += rc == XSA_EBADINPUT;
        tries++;
    }
    CHECK(refused > tries / 2);
    // A corrupt charsmap (trie size beyond the blob) inside a real model with one.
    free(data);
    rmdir(dir);
    sbuf_free(&m);
    sbuf_free(&bad);
}

TEST(test_sp_corrupt_charsmap) {
    char dir[] = "/tmp/xsa_sp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct sbuf m = {0}, ns = {0};
    xsa_error err = {0};
    tiny_model(&m, 2);
    pb_bytes(&ns, 2, "\xff\xff\x00\x00" "abcd", 8);  // trie of 65535 bytes in an 8-byte blob
    pb_bytes(&m, 3, ns.s, ns.n);
    CHECK_EQ_INT(load_bytes(dir, "cmap.model", m.s, m.n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "charsmap") != NULL);
    // A charsmap whose trie units point anywhere: loads, and encoding stays in bounds.
    tiny_model(&m, 2);
    ns.n = 0;
    pb_bytes(&ns, 2, "\x08\x00\x00\x00\xff\xff\xff\xff\x61\x01\x00\x80zz", 14);
    pb_bytes(&m, 3, ns.s, ns.n);
    CHECK_EQ_INT(load_bytes(dir, "cmap2.model", m.s, m.n, &err), 0);
    rmdir(dir);
    sbuf_free(&m);
    sbuf_free(&ns);
}

// Fields this reader does not use (self_test_data = 4, unknown numbers, any wire type) are
// skipped as protobuf skips them: the model loads and encodes exactly as without them.
TEST(test_sp_skips_other_fields) {
    char dir[] = "/tmp/xsa_sp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *data = NULL;
    size_t n = 0;
    xsa_error err = {0};
    CHECK(file_read_all(FIX "sp_bpe_raw/tokenizer.model", 1 << 20, &data, &n, &err) == 0);
    struct sbuf m = {0}, st = {0}, sample = {0};
    sbuf_append(&m, data ? data : "", data ? n : 0);
    pb_bytes(&sample, 1, "hello", 5);    // SelfTestData.Sample {input, expected}
    pb_bytes(&sample, 2, "x", 1);
    pb_bytes(&st, 1, sample.s, sample.n);
    pb_bytes(&m, 4, st.s, st.n);          // self_test_data
    pb_bytes(&m, 168, "junk", 4);         // an unknown length-delimited field
    pb_uint(&m, 99, 7);                   // an unknown varint
    char path[512], orig[] = FIX "sp_bpe_raw/tokenizer.model";
    snprintf(path, sizeof path, "%s/extra.model", dir);
    CHECK(file_write_atomic(path, m.s, m.n, &err) == 0);
    struct tokenizer *a = NULL, *b = NULL;
    CHECK_MSG(tokenizer_load(&a, orig, &err) == 0, "%s", err.msg);
    xsa_error e2 = {0};
    int rc = tokenizer_load(&b, path, &e2);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, e2.msg);
    if (a && b) {
        const char *text = "Hello world, this is a test of the other fields.";
        struct ivec x = {0}, y = {0};
        CHECK(tokenizer_encode(a, text, strlen(text), 1, &x, &err) == 0);
        CHECK(tokenizer_encode(b, text, strlen(text), 1, &y, &err) == 0);
        CHECK(x.n > 2 && fixture_ivec_eq(&x, &y));
        ivec_free(&x);
        ivec_free(&y);
    }
    tokenizer_free(a);
    tokenizer_free(b);
    unlink(path);
    rmdir(dir);
    free(data);
    sbuf_free(&m);
    sbuf_free(&st);
    sbuf_free(&sample);
}

RUN_TESTS(T(test_sp_bpe_matches_sentencepiece), T(test_sp_bpe_raw_matches_sentencepiece),
          T(test_sp_bpe_llama_style_matches_sentencepiece), T(test_sp_unused_pieces_match_sentencepiece), T(test_sp_decode_matches_sentencepiece),
          T(test_sp_metadata), T(test_sp1024_corpus_matches_sentencepiece),
          T(test_sp1024_benchmark_text_matches_sentencepiece), T(test_sp_tiny_handmade_model),
          T(test_sp_unsupported_model_types), T(test_sp_corrupt_models), T(test_sp_corrupt_charsmap),
          T(test_sp_skips_other_fields), T(test_sp_user_symbols_match_sentencepiece),
          T(test_sp_caseops_matches_the_records_transform), T(test_sp_other_lossless_caps_refused))
