// test_parquet.c: data/parquet.c against files the real library wrote (pyarrow,
// tools/fixtures/make_parquet_fixtures.py): every task's rows in every writer variant equal what pyarrow
// reads back, byte for byte once serialized; unsupported features are refused by name; damaged
// files (truncated, bad magic, offsets and lengths past the end, flipped bytes) fail with one
// error line and never crash.
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "data/cache.h"
#include "data/data.h"
#include "data/parquet.h"
#include "data/sources.h"
#include "tasks/rows.h"
#include "tasks/task.h"
#include "tests/check.h"

#define DIR_ "tests/fixtures/parquet"

// The rows' canonical serialization (what every digest is taken over), or NULL.
static char *serialize(cJSON *const *rows, int n) {
    char *text = NULL;
    size_t len = 0;
    xsa_error err = {0};
    if (task_rows_serialize_array(rows, n, &text, &len, &err)) return NULL;
    return text;
}

// The rows of `path` serialized canonically, or NULL with err filled.
static char *read_serialized(const char *path, long *n, xsa_error *err) {
    struct source_result r = {0};  // rows kept as the data sources keep them
    int rc = parquet_read_file(path, source_result_emit, &r, n, err);
    char *text = rc ? NULL : serialize(r.rows, r.n);
    source_result_free(&r);
    return text;
}

static char *expected_serialized(const char *path, int *n) {
    char *buf = NULL;
    size_t len = 0;
    xsa_error err = {0};
    cJSON **rows = NULL;
    *n = 0;
    if (file_read_all(path, (size_t)1 << 26, &buf, &len, &err) ||
        cache_rows_parse_jsonl(buf, len, path, XSA_EBADINPUT, &rows, n, &err)) {
        free(buf);
        fprintf(stderr, "  %s\n", err.msg);
        return NULL;
    }
    char *text = serialize(rows, *n);
    data_rows_free(rows, *n);
    free(buf);
    return text;
}

TEST(every_fixture_reads_as_pyarrow_reads_it) {
    DIR *d = opendir(DIR_);
    CHECK(d != NULL);
    int files = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *dot = strchr(e->d_name, '.');
        size_t nl = strlen(e->d_name);
        if (!dot || nl < 8 || strcmp(e->d_name + nl - 8, ".parquet") || !strncmp(e->d_name, "unsupported", 11) ||
            !strncmp(e->d_name, "bad_", 4) || !strncmp(e->d_name, "zero_rows", 9) ||
            !strncmp(e->d_name, "bomb.", 5))
            continue;
        char path[512], exp[512];
        snprintf(path, sizeof path, DIR_ "/%s", e->d_name);
        snprintf(exp, sizeof exp, DIR_ "/%.*s.expected.jsonl", (int)(dot - e->d_name), e->d_name);
        int n_exp = 0;
        long n = 0;
        xsa_error err = {0};
        char *want = expected_serialized(exp, &n_exp);
        char *got = read_serialized(path, &n, &err);
        CHECK_MSG(got != NULL, "%s: %s", path, err.msg);
        CHECK_MSG(want && got && !strcmp(want, got), "%s: rows differ from %s", path, exp);
        CHECK_EQ_INT(n, n_exp);
        CHECK(n > 0);
        free(want);
        free(got);
        files++;
    }
    if (d) closedir(d);
    CHECK_EQ_INT(files, 11 * 4);  // nine tasks, nulls and types, four writer variants each
}

static void expect_refused(const char *name, const char *what) {
    char path[512];
    snprintf(path, sizeof path, DIR_ "/%s", name);
    long n = -1;
    xsa_error err = {0};
    char *got = read_serialized(path, &n, &err);
    CHECK_MSG(got == NULL, "%s was accepted", name);
    CHECK_EQ_INT(err.code, XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, what) && strstr(err.msg, path) && !strchr(err.msg, '\n'), "%s: '%s' lacks '%s'", name,
              err.msg, what);
    free(got);
}

TEST(unsupported_features_are_refused_by_name) {
    expect_refused("unsupported.brotli.parquet", "compression BROTLI is not supported");
    expect_refused("unsupported.delta.parquet", "column 'idx'");
    expect_refused("unsupported.delta.parquet", "encoding DELTA_BINARY_PACKED is not supported");
    expect_refused("unsupported.timestamp.parquet", "field 'when': logical type TIMESTAMP is not supported");
    expect_refused("unsupported.binary.parquet", "field 'blob': BYTE_ARRAY without a STRING annotation");
    expect_refused("bad_string_length.parquet", "a string goes past the end of its page");
}

// Pages that claim far more than their file's size could hold are refused before their memory is
// asked for: 2M values in 5 KB, a page that inflates to 20 MB from 1 KB.
TEST(expansion_bombs_refused) {
    expect_refused("bomb.values.parquet", "column 'label'");
    expect_refused("bomb.values.parquet", "its pages claim more values than a Parquet file of 4857 bytes holds");
    expect_refused("bomb.bytes.parquet", "its pages claim more decompressed bytes than a Parquet file of 1034 bytes holds");
}

// A file of no rows reads as none (pyarrow's answer), not as pages outside the file.
TEST(zero_rows_read_as_none) {
    long n = -1;
    xsa_error err = {0};
    char *got = read_serialized(DIR_ "/zero_rows.parquet", &n, &err);
    CHECK_MSG(got != NULL, "%s", err.msg);
    CHECK_EQ_INT(n, 0);
    free(got);
}

static unsigned char *load(const char *name, size_t *len) {
    char path[512], *buf = NULL;
    snprintf(path, sizeof path, DIR_ "/%s", name);
    xsa_error err = {0};
    if (file_read_all(path, (size_t)1 << 24, &buf, len, &err)) return NULL;
    return (unsigned char *)buf;
}

// rc of reading buf[0..len) (a copy, so reads past the end are caught by ASan); checks the
// error record is one line with the file's name.
static int read_mem(const unsigned char *buf, size_t len, char *msg, size_t mn) {
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    struct source_result r = {0};
    long n = 0;
    xsa_error err = {0};
    int rc = parquet_read_rows(copy, len, "mem.parquet", source_result_emit, &r, &n, &err);
    if (rc) {
        CHECK_MSG(rc == err.code && err.msg[0] && !strchr(err.msg, '\n') && strstr(err.msg, "mem.parquet"),
                  "bad error record: %d '%s'", rc, err.msg);
        CHECK_EQ_INT(r.n, n);
    }
    if (msg) snprintf(msg, mn, "%s", err.msg);
    source_result_free(&r);
    free(copy);
    return rc;
}

TEST(damaged_files_fail_cleanly) {
    size_t len = 0;
    unsigned char *buf = load("arc_easy.gzip_v2_groups.parquet", &len);
    CHECK(buf != NULL);
    if (!buf) return;
    char msg[1024];
    CHECK_EQ_INT(read_mem(buf, len, msg, sizeof msg), 0);
    // Every truncation: the magic at the end is gone, or the footer is cut.
    int refused = 0;
    for (size_t k = 0; k < len; k++) refused += read_mem(buf, k, NULL, 0) == XSA_EBADINPUT;
    CHECK_EQ_INT(refused, (long long)len);
    CHECK_EQ_INT(read_mem(buf, len / 2, msg, sizeof msg), XSA_EBADINPUT);
    CHECK(strstr(msg, "not a Parquet file") != NULL);
    // Bad magic at the start.
    unsigned char *m = malloc(len);
    memcpy(m, buf, len);
    m[0] = 'X';
    CHECK_EQ_INT(read_mem(m, len, msg, sizeof msg), XSA_EBADINPUT);
    CHECK(strstr(msg, "PAR1") != NULL);
    // A footer length past the start of the file.
    memcpy(m, buf, len);
    m[len - 8] = m[len - 7] = m[len - 6] = 0xff;
    CHECK_EQ_INT(read_mem(m, len, msg, sizeof msg), XSA_EBADINPUT);
    CHECK_MSG(strstr(msg, "footer length") != NULL, "%s", msg);
    // The pages cut out, the footer kept: the chunks' offsets now point past the end.
    size_t flen = (size_t)buf[len - 8] | (size_t)buf[len - 7] << 8 | (size_t)buf[len - 6] << 16;
    size_t keep = 4 + flen + 8, cut = len - keep;
    memcpy(m, buf, 4);
    memcpy(m + 4, buf + 4 + cut, flen + 8);
    CHECK_EQ_INT(read_mem(m, keep, msg, sizeof msg), XSA_EBADINPUT);
    CHECK_MSG(strstr(msg, "lie outside the file") != NULL, "%s", msg);
    // A page's bytes changed under its CRC (a question's text, stored as is in this file).
    size_t plen = 0;
    unsigned char *plain = load("arc_easy.none_plain_groups.parquet", &plen);
    unsigned char *at = plain ? memmem(plain, plen, "Which object in the sky", 23) : NULL;
    CHECK(at != NULL);
    if (at) {
        CHECK_EQ_INT(read_mem(plain, plen, msg, sizeof msg), 0);
        at[3] ^= 0x20;
        CHECK_EQ_INT(read_mem(plain, plen, msg, sizeof msg), XSA_EBADINPUT);
        CHECK_MSG(strstr(msg, "column 'question'") && strstr(msg, "CRC mismatch"), "%s", msg);
    }
    free(plain);
    // Flipped bytes anywhere: success or one clean error, never a crash (ASan checks reads).
    unsigned s = 12345;
    for (int it = 0; it < 3000; it++) {
        memcpy(m, buf, len);
        for (int f = 0; f < 1 + it % 4; f++) {
            s = s * 1103515245u + 12345u;
            size_t at = (s >> 8) % len;
            s = s * 1103515245u + 12345u;
            m[at] ^= (unsigned char)(1u << ((s >> 16) % 8));
        }
        int rc = read_mem(m, len, NULL, 0);
        CHECK(rc == 0 || rc == XSA_EBADINPUT);
    }
    free(m);
    free(buf);
}

static int copy_file(const char *from, const char *to) {
    char *buf = NULL;
    size_t len = 0;
    xsa_error err = {0};
    int rc = file_read_all(from, (size_t)1 << 24, &buf, &len, &err);
    if (!rc) rc = file_write_atomic(to, buf, len, &err);
    free(buf);
    return rc;
}

// data_load_task's rows, serialized (NULL on failure, err filled).
static char *load_serialized(const struct task_def *t, const char *dir, char src[512], xsa_error *err) {
    struct data_options opt = {.data_dir = dir, .quiet = 1, .allow_data_change = 1};  // fixtures are short
    cJSON **rows = NULL;
    int n = 0;
    struct data_provenance prov;
    if (data_load_task(t, &opt, &rows, &n, &prov, err)) return NULL;
    snprintf(src, 512, "%s", prov.source);
    char *text = serialize(rows, n);
    data_rows_free(rows, n);
    return text;
}

// --data-dir DIR/<task>/<split>.parquet, and a Hugging Face hub cache's snapshot of the repository.
TEST(data_dir_reads_parquet) {
    char root[] = "/tmp/xsa_test_parquet_XXXXXX";
    if (!mkdtemp(root)) return;
    static const char *const tasks[] = {"arc_easy", "arc_challenge", "boolq", "hellaswag", "lambada_openai",
                                        "openbookqa", "piqa", "social_iqa", "winogrande"};
    char path[4200], from[512], want_path[512], src[512], cmd[4400];
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++) {
        const struct task_def *t = task_find(tasks[i]);
        CHECK(t != NULL);
        if (!t) continue;
        snprintf(path, sizeof path, "%s/%s", root, t->name);
        xsa_error err = {0};
        CHECK_EQ_INT(cache_mkdirs(path, &err), 0);
        snprintf(path, sizeof path, "%s/%s/%s.parquet", root, t->name, t->split);
        snprintf(from, sizeof from, DIR_ "/%s.gzip_v2_groups.parquet", t->name);
        CHECK_EQ_INT(copy_file(from, path), 0);
        snprintf(want_path, sizeof want_path, "tests/fixtures/data/%s/%s.jsonl", t->name, t->split);
        int n_want = 0;
        char *want = expected_serialized(want_path, &n_want);
        // Rows from a Hugging Face file are canonical: SocialIQA's labels lose the loader script's "\n".
        for (char *p = want; p && !strcmp(t->name, "social_iqa") && (p = strstr(p, "\\n\"}")); p++)
            memmove(p, p + 2, strlen(p + 2) + 1);
        char *got = load_serialized(t, root, src, &err);
        CHECK_MSG(got && want && !strcmp(got, want), "%s: %s", t->name, err.msg);
        CHECK_MSG(got && strstr(src, path), "%s: source %s", t->name, src);
        free(got);
        free(want);
    }
    // A damaged file is bad input (exit 2) naming it.
    const struct task_def *piqa = task_find("piqa");
    snprintf(path, sizeof path, "%s/piqa/validation.parquet", root);
    xsa_error err = {0};
    CHECK_EQ_INT(file_write_atomic(path, "PAR1 not really", 15, &err), 0);
    char *got = load_serialized(piqa, root, src, &err);
    CHECK(got == NULL);
    CHECK_EQ_INT(err.code, XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, path) && strstr(err.msg, "not a Parquet file"), "%s", err.msg);
    free(got);
    // The hub cache: datasets--ORG--NAME/refs/main names the snapshot folder.
    const struct task_def *arc = task_find("arc_easy");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* && mkdir -p '%s/datasets--allenai--ai2_arc/refs' "
             "'%s/datasets--allenai--ai2_arc/snapshots/0a1b2c/ARC-Easy' && printf '0a1b2c' > "
             "'%s/datasets--allenai--ai2_arc/refs/main'", root, root, root, root);
    CHECK_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/datasets--allenai--ai2_arc/snapshots/0a1b2c/ARC-Easy/test-00000-of-00001.parquet",
             root);
    CHECK_EQ_INT(copy_file(DIR_ "/arc_easy.snappy.parquet", path), 0);
    int n_want = 0;
    char *want = expected_serialized("tests/fixtures/data/arc_easy/test.jsonl", &n_want);
    xsa_error e2 = {0};
    got = load_serialized(arc, root, src, &e2);
    CHECK_MSG(got && want && !strcmp(got, want), "%s", e2.msg);
    CHECK_MSG(strstr(src, "snapshots/0a1b2c/ARC-Easy") != NULL, "%s", src);
    free(got);
    free(want);
    // A ref that is not a commit id is not followed.
    snprintf(cmd, sizeof cmd, "printf '../0a1b2c' > '%s/datasets--allenai--ai2_arc/refs/main'", root);
    CHECK_EQ_INT(system(cmd), 0);
    xsa_error e3 = {0};
    got = load_serialized(arc, root, src, &e3);
    CHECK(got == NULL && e3.code == XSA_EBADINPUT);
    free(got);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_EQ_INT(system(cmd), 0);
}

RUN_TESTS(T(zero_rows_read_as_none), T(every_fixture_reads_as_pyarrow_reads_it), T(unsupported_features_are_refused_by_name), T(expansion_bombs_refused),
          T(damaged_files_fail_cleanly), T(data_dir_reads_parquet))
