// test_data.c: the data layer without a network: canonical serialization and digests, the
// cache's commit and verification rules (tampering, missing manifest), cache root
// resolution, offline errors, and --data-dir loading from both layouts.
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fileio.h"
#include "data/cache.h"
#include "data/data.h"
#include "tasks/adapters.h"
#include "tasks/rows.h"
#include "tests/check.h"

static const struct task_def synth = {
    .name = "synth_task", .groups = "all", .output = TASK_MULTIPLE_CHOICE, .hf_dataset = "test/synth",
    .hf_config = "default", .split = "test", .n_docs = 3, .metrics = "acc", .preferred_metric = "acc",
};

static char *tmpdir(void) {
    static char buf[64];
    snprintf(buf, sizeof buf, "/tmp/xsa_test_data_XXXXXX");
    return mkdtemp(buf);
}

static const char *JSONL = "{\"a\":1,\"t\":\"caf\\u00e9 \\\"x\\\"\"}\n{\"a\":2,\"l\":[1,2]}\n\n{\"a\":3}\r\n";

TEST(serialize_is_canonical) {
    cJSON **rows = NULL;
    int n = 0;
    xsa_error err = {0};
    CHECK_EQ_INT(cache_rows_parse_jsonl(JSONL, strlen(JSONL), "mem", XSA_EBADINPUT, &rows, &n, &err), 0);
    CHECK_EQ_INT(n, 3);
    char *text = NULL;
    size_t len = 0;
    CHECK_EQ_INT(task_rows_serialize_array(rows, n, &text, &len, &err), 0);
    // cJSON_PrintUnformatted + "\n": no spaces, UTF-8 kept raw, blank line and \r dropped.
    CHECK_STR(text, "{\"a\":1,\"t\":\"caf\xc3\xa9 \\\"x\\\"\"}\n{\"a\":2,\"l\":[1,2]}\n{\"a\":3}\n");
    char sha[65], sha2[65];
    CHECK_EQ_INT(sha256_hex(text, len, sha, &err), 0);
    // Re-parsing the canonical text gives the same bytes, so the digest is stable.
    cJSON **rows2 = NULL;
    int n2 = 0;
    char *text2 = NULL;
    size_t len2 = 0;
    CHECK_EQ_INT(cache_rows_parse_jsonl(text, len, "mem", XSA_EBADINPUT, &rows2, &n2, &err), 0);
    CHECK_EQ_INT(task_rows_serialize_array(rows2, n2, &text2, &len2, &err), 0);
    CHECK_EQ_INT(sha256_hex(text2, len2, sha2, &err), 0);
    CHECK_STR(sha, sha2);
    free(text);
    free(text2);
    data_rows_free(rows, n);
    data_rows_free(rows2, n2);
}

TEST(parse_rejects_non_objects) {
    cJSON **rows = NULL;
    int n = 0;
    xsa_error err = {0};
    const char *bad = "{\"a\":1}\n[1,2]\n";
    CHECK_EQ_INT(cache_rows_parse_jsonl(bad, strlen(bad), "f.jsonl", XSA_EBADINPUT, &rows, &n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "f.jsonl:2") != NULL);
    CHECK(rows == NULL && n == 0);
    xsa_error_clear(&err);
    const char *trail = "{\"a\":1} x\n";
    CHECK_EQ_INT(cache_rows_parse_jsonl(trail, strlen(trail), "g", XSA_ERUNTIME, &rows, &n, &err), XSA_ERUNTIME);
}

// cJSON hands out C strings: a "\u0000" (or a raw NUL byte) inside a field would silently cut
// the text short, so such a row is refused, naming the file, line and field.
TEST(parse_refuses_nul_in_field) {
    static const struct { const char *text; size_t len; const char *field; } bad[] = {
        {"{\"a\":1}\n{\"q\":\"x\\u0000y\"}\n", 0, "field 'q'"},
        {"{\"a\":1}\n{\"c\":{\"text\":[\"ok\",\"a\\u0000\"]},\"z\":2}\n", 0, "field 'c.text[1]'"},
        {"{\"a\":1}\n{\"k\\u0000\":1}\n", 0, "field 'k"},
        {"{\"a\":1}\n{\"q\":\"x\0y\"}\n", 20, "field 'q'"},  // a raw NUL byte
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
        cJSON **rows = NULL;
        int n = 0;
        xsa_error err = {0};
        CHECK_EQ_INT(cache_rows_parse_jsonl(bad[i].text, len, "f.jsonl", XSA_ERUNTIME, &rows, &n, &err), XSA_ERUNTIME);
        CHECK_MSG(strstr(err.msg, "f.jsonl:2: ") && strstr(err.msg, bad[i].field) && strstr(err.msg, "NUL"), "%s", err.msg);
        CHECK(rows == NULL && n == 0);
        struct task_rows tr = {0};
        xsa_error e2 = {0};
        CHECK_EQ_INT(task_rows_parse_jsonl("g.jsonl", bad[i].text, len, &tr, &e2), XSA_EBADINPUT);
        CHECK_MSG(strstr(e2.msg, "g.jsonl:2: ") && strstr(e2.msg, bad[i].field) && strstr(e2.msg, "NUL"), "%s", e2.msg);
        CHECK_EQ_INT(tr.n, 0);
    }
    // An escaped backslash before "u0000" is six plain characters, not a NUL.
    const char *ok = "{\"q\":\"x\\\\u0000y\",\"r\":\"\\\\\"}\n";
    cJSON **rows = NULL;
    int n = 0;
    xsa_error err = {0};
    CHECK_EQ_INT(cache_rows_parse_jsonl(ok, strlen(ok), "f", XSA_ERUNTIME, &rows, &n, &err), 0);
    CHECK_EQ_INT(n, 1);
    if (n == 1) CHECK_STR(cJSON_GetObjectItem(rows[0], "q")->valuestring, "x\\u0000y");
    data_rows_free(rows, n);
    struct task_rows tr = {0};
    CHECK_EQ_INT(task_rows_parse_jsonl("g", ok, strlen(ok), &tr, &err), 0);
    CHECK_EQ_INT(tr.n, 1);
    task_rows_free(&tr);
}

static void commit_synth(const char *root, xsa_error *err) {
    const char *text = "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n";
    struct cache_entry e = {0};
    snprintf(e.task, sizeof e.task, "synth_task");
    snprintf(e.split, sizeof e.split, "test");
    snprintf(e.source, sizeof e.source, "viewer");
    snprintf(e.url, sizeof e.url, "http://127.0.0.1/x");
    e.rows = 3;
    sha256_hex(text, strlen(text), e.sha256, err);
    snprintf(e.raw_sha256, sizeof e.raw_sha256, "%s", e.sha256);
    cache_time_now(e.time);
    CHECK_EQ_INT(cache_commit(root, &synth, text, strlen(text), &e, err), 0);
}

TEST(cache_commit_verify_and_tamper) {
    char *root = tmpdir();
    CHECK(root != NULL);
    if (!root) return;
    xsa_error err = {0};
    struct cache_entry e;
    int valid = 1;
    char why[600];
    CHECK_EQ_INT(cache_verify(root, &synth, &e, &valid, why, sizeof why, NULL, NULL, &err), 0);
    CHECK_EQ_INT(valid, 0);
    CHECK(strstr(why, "not cached") != NULL);
    commit_synth(root, &err);
    char *buf = NULL;
    size_t len = 0;
    CHECK_EQ_INT(cache_verify(root, &synth, &e, &valid, why, sizeof why, &buf, &len, &err), 0);
    CHECK_EQ_INT(valid, 1);
    CHECK_EQ_INT(e.rows, 3);
    CHECK_EQ_INT(len, 24);
    free(buf);
    // Data layer: a valid cached copy loads offline with the manifest's digest.
    struct data_options opt = {.cache_dir = root, .offline = 1, .quiet = 1};
    cJSON **rows = NULL;
    int n = 0;
    struct data_provenance prov = {.preprocessed = -1};
    CHECK_EQ_INT(data_load_task(&synth, &opt, &rows, &n, &prov, &err), 0);
    CHECK_EQ_INT(n, 3);
    CHECK_STR(prov.sha256, e.sha256);
    CHECK_EQ_INT(prov.preprocessed, 0);
    CHECK(strncmp(prov.source, "viewer:", 7) == 0);
    CHECK_EQ_INT(prov.pinned, -1);  // synth has no pin
    data_rows_free(rows, n);
    // One changed byte: the copy is no longer valid, and offline loading says how to fetch it.
    char path[4200];
    snprintf(path, sizeof path, "%s/synth_task/test.jsonl", root);
    const char *tampered = "{\"a\":1}\n{\"a\":2}\n{\"a\":4}\n";
    CHECK_EQ_INT(file_write_atomic(path, tampered, strlen(tampered), &err), 0);
    CHECK_EQ_INT(cache_verify(root, &synth, &e, &valid, why, sizeof why, NULL, NULL, &err), 0);
    CHECK_EQ_INT(valid, 0);
    CHECK(strstr(why, "differs from the manifest") != NULL);
    xsa_error_clear(&err);
    CHECK_EQ_INT(data_load_task(&synth, &opt, &rows, &n, &prov, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "xsa-eval download --tasks synth_task") != NULL);
    CHECK(rows == NULL && n == 0);
    // A damaged manifest reads as not cached, never as valid.
    xsa_error_clear(&err);
    commit_synth(root, &err);
    snprintf(path, sizeof path, "%s/synth_task/test.manifest.json", root);
    CHECK_EQ_INT(file_write_atomic(path, "{\"rows\": 3}", 11, &err), 0);
    CHECK_EQ_INT(cache_verify(root, &synth, &e, &valid, why, sizeof why, NULL, NULL, &err), 0);
    CHECK_EQ_INT(valid, 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_EQ_INT(system(cmd), 0);
}

TEST(cache_pins_row_count) {
    char *root = tmpdir();
    if (!root) return;
    xsa_error err = {0};
    commit_synth(root, &err);
    struct task_def four = synth;
    four.n_docs = 4;  // the registry expects 4: the cached 3 are refused unless allowed
    struct data_options opt = {.cache_dir = root, .offline = 1, .quiet = 1};
    cJSON **rows = NULL;
    int n = 0;
    struct data_provenance prov;
    CHECK_EQ_INT(data_load_task(&four, &opt, &rows, &n, &prov, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "3 rows, expected 4") != NULL);
    xsa_error_clear(&err);
    opt.allow_data_change = 1;
    CHECK_EQ_INT(data_load_task(&four, &opt, &rows, &n, &prov, &err), 0);
    CHECK_EQ_INT(n, 3);
    data_rows_free(rows, n);
    // Rows that differ from the pinned digest are used (a warning; data_pinned says 0) unless
    // --strict-data refuses them.
    four.canonical_sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
    four.n_docs = 3;
    opt.allow_data_change = 0;
    xsa_error_clear(&err);
    CHECK_EQ_INT(data_load_task(&four, &opt, &rows, &n, &prov, &err), 0);
    CHECK_EQ_INT(n, 3);
    data_rows_free(rows, n);
    CHECK_EQ_INT(prov.pinned, 0);  // used, and recorded as not the pinned rows
    CHECK_EQ_INT(data_pinned(&four, prov.sha256), 0);
    CHECK_EQ_INT(data_pinned(&synth, prov.sha256), -1);
    struct task_def same = four;
    char pin[65];
    snprintf(pin, sizeof pin, "%s", prov.sha256);
    same.canonical_sha256 = pin;
    CHECK_EQ_INT(data_pinned(&same, prov.sha256), 1);
    opt.strict_data = 1;
    CHECK_EQ_INT(data_load_task(&four, &opt, &rows, &n, &prov, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "pinned 0000000000000000") != NULL && strstr(err.msg, "--strict-data") != NULL);
    xsa_error_clear(&err);
    CHECK_EQ_INT(data_load_task(&same, &opt, &rows, &n, &prov, &err), 0);
    CHECK_EQ_INT(prov.pinned, 1);
    data_rows_free(rows, n);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_EQ_INT(system(cmd), 0);
}

// A split with no rows cannot be evaluated (every metric and the bootstrap need one): refused
// at load, also under --allow-data-change, from the cache and from --data-dir.
TEST(zero_rows_refused) {
    char *root = tmpdir();
    if (!root) return;
    xsa_error err = {0};
    struct cache_entry e = {0};
    snprintf(e.task, sizeof e.task, "synth_task");
    snprintf(e.split, sizeof e.split, "test");
    snprintf(e.source, sizeof e.source, "viewer");
    snprintf(e.url, sizeof e.url, "http://127.0.0.1/x");
    sha256_hex("", 0, e.sha256, &err);
    cache_time_now(e.time);
    CHECK_EQ_INT(cache_commit(root, &synth, "", 0, &e, &err), 0);
    struct data_options opt = {.cache_dir = root, .offline = 1, .quiet = 1, .allow_data_change = 1};
    cJSON **rows = NULL;
    int n = -1;
    struct data_provenance prov;
    CHECK_EQ_INT(data_load_task(&synth, &opt, &rows, &n, &prov, &err), XSA_ERUNTIME);
    CHECK_MSG(strstr(err.msg, "synth_task: no rows (cache ") && strstr(err.msg, "an empty split cannot be evaluated"), "%s", err.msg);
    CHECK(rows == NULL && n == 0);
    struct data_options local = {.data_dir = root, .quiet = 1, .allow_data_change = 1};
    xsa_error_clear(&err);
    CHECK_EQ_INT(data_load_task(&synth, &local, &rows, &n, &prov, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "synth_task: no rows (local:") != NULL, "%s", err.msg);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_EQ_INT(system(cmd), 0);
}

static void touch(const char *dir, const char *name) {
    char p[8400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
}

static int present(const char *dir, const char *name) {
    char p[8400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

// The lock's sweep removes exactly the temp files cache_commit names (<split>.jsonl.tmp.<pid>,
// <split>.manifest.json.tmp.<pid>) whose writer is gone; a user's file with ".tmp." in its name,
// a live writer's temp and other names stay.
TEST(lock_sweeps_only_dead_writers_temps) {
    char *root = tmpdir();
    if (!root) return;
    pid_t child = fork();
    if (child == 0) _exit(0);
    CHECK(child > 0);
    waitpid(child, NULL, 0);  // now a pid no process has
    char dir[4200], raw[4200], dead_data[64], dead_man[64], live[64], other[64];
    snprintf(dir, sizeof dir, "%s/synth_task", root);
    snprintf(raw, sizeof raw, "%s/raw/synth_task", root);
    snprintf(dead_data, sizeof dead_data, "test.jsonl.tmp.%ld", (long)child);
    snprintf(dead_man, sizeof dead_man, "test.manifest.json.tmp.%ld", (long)child);
    snprintf(live, sizeof live, "test.jsonl.tmp.%ld", (long)getppid());
    snprintf(other, sizeof other, "other.jsonl.tmp.%ld", (long)child);
    xsa_error err = {0};
    CHECK_EQ_INT(file_mkdirs(raw, "", &err), 0);
    CHECK_EQ_INT(file_mkdirs(dir, "", &err), 0);
    const char *keep[] = {"notes.tmp.txt", live, other, "test.jsonl.tmp.12x", "test.jsonl.tmp."};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) touch(dir, keep[i]);
    touch(dir, dead_data);
    touch(dir, dead_man);
    touch(raw, "notes.tmp.txt");
    int fd = -1;
    CHECK_EQ_INT(cache_lock(root, &synth, 1, &fd, &err), 0);
    cache_unlock(fd);
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) CHECK_MSG(present(dir, keep[i]), "%s was removed", keep[i]);
    CHECK_MSG(present(raw, "notes.tmp.txt"), "raw/synth_task/notes.tmp.txt was removed");
    CHECK_MSG(!present(dir, dead_data), "%s was kept", dead_data);
    CHECK_MSG(!present(dir, dead_man), "%s was kept", dead_man);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_EQ_INT(system(cmd), 0);
}

TEST(cache_root_resolution) {
    char out[4096];
    xsa_error err = {0};
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    CHECK_EQ_INT(cache_root_dir(NULL, out, sizeof out, &err), 0);
    CHECK_STR(out, "/x/cache/xsa-eval");
    CHECK_EQ_INT(cache_root_dir("/given", out, sizeof out, &err), 0);
    CHECK_STR(out, "/given");
    setenv("XDG_CACHE_HOME", "relative", 1);  // the XDG spec says ignore relative paths
    setenv("HOME", "/home/u", 1);
    CHECK_EQ_INT(cache_root_dir(NULL, out, sizeof out, &err), 0);
    CHECK_STR(out, "/home/u/.cache/xsa-eval");
    unsetenv("XDG_CACHE_HOME");
}

TEST(data_dir_cache_layout_and_errors) {
    char *root = tmpdir();
    if (!root) return;
    xsa_error err = {0};
    commit_synth(root, &err);
    struct data_options opt = {.data_dir = root, .quiet = 1};
    cJSON **rows = NULL;
    int n = 0;
    struct data_provenance prov;
    CHECK_EQ_INT(data_load_task(&synth, &opt, &rows, &n, &prov, &err), 0);
    CHECK_EQ_INT(n, 3);
    CHECK(strstr(prov.source, "local:") == prov.source);
    data_rows_free(rows, n);
    // A broken local file is bad input (exit 2) naming file and line.
    char path[4200];
    snprintf(path, sizeof path, "%s/synth_task/test.jsonl", root);
    CHECK_EQ_INT(file_write_atomic(path, "{\"a\":1}\nnot json\n", 17, &err), 0);
    CHECK_EQ_INT(data_load_task(&synth, &opt, &rows, &n, &prov, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "test.jsonl:2") != NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_EQ_INT(system(cmd), 0);
}

TEST(data_dir_benchdata_all_tasks) {
    const char *dir = shared_benchdata("lambada_openai/lambada_test.jsonl");
    if (!dir) SKIP("../shared/benchdata absent");
    char root[4096];
    snprintf(root, sizeof root, "%s", dir);
    *strrchr(root, '/') = '\0';
    *strrchr(root, '/') = '\0';  // .../benchdata
    int nt = 0;
    const struct task_def *reg = task_registry(&nt);
    for (int i = 0; i < nt; i++) {
        const struct task_def *t = &reg[i];
        struct data_options opt = {.data_dir = root, .quiet = 1};
        cJSON **rows = NULL;
        int n = 0;
        struct data_provenance prov = {.preprocessed = -1};
        xsa_error err = {0};
        CHECK_MSG(data_load_task(t, &opt, &rows, &n, &prov, &err) == 0, "%s: %s", t->name, err.msg);
        CHECK_MSG(n == t->n_docs, "%s: %d rows", t->name, n);
        CHECK_EQ_INT(prov.preprocessed, !strcmp(t->name, "hellaswag"));  // the benchdata HellaSwag is the preprocessed dump
        // Every row builds a document, as run does.
        struct task_doc *docs = NULL;
        int n_docs = 0;
        CHECK_MSG(task_docs_from_rows(t, rows, NULL, n, 0, &docs, &n_docs, &err) == 0, "%s: %s", t->name, err.msg);
        CHECK_EQ_INT(n_docs, n);
        task_docs_free(docs, n_docs);
        data_rows_free(rows, n);
    }
}

RUN_TESTS(T(serialize_is_canonical), T(parse_rejects_non_objects), T(parse_refuses_nul_in_field),
          T(cache_commit_verify_and_tamper), T(cache_pins_row_count), T(zero_rows_refused),
          T(lock_sweeps_only_dead_writers_temps), T(cache_root_resolution), T(data_dir_cache_layout_and_errors),
          T(data_dir_benchdata_all_tasks))
