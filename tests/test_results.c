// test_results.c: the results JSON reader and writer (eval/results.c). The fixtures were written
// by tools/fixtures/make_compare_fixtures.py in the writer's byte layout, independently of the C code,
// so read + write must reproduce them byte for byte.
#include <stdlib.h>
#include <unistd.h>

#include "common/fileio.h"
#include "eval/compare.h"
#include "eval/results.h"
#include "tests/check.h"

#define FIX "tests/fixtures/results/"

static char *slurp(const char *path, size_t *n) {
    char *buf = NULL;
    xsa_error err = {0};
    if (file_read_all(path, 1 << 26, &buf, n, &err)) return NULL;
    return buf;
}

// Writes `text` to a temp file and returns its path (static buffer).
static const char *temp_with(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/xsa_test_results_%ld.json", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

TEST(reads_fixture_fields) {
    struct results r;
    xsa_error err = {0};
    CHECK_EQ_INT(results_read_json(&r, FIX "sa.json", &err), 0);
    if (err.code) { fprintf(stderr, "  %s\n", err.msg); return; }
    CHECK_EQ_INT(r.n_tasks, 9);
    CHECK_STR(r.tasks[0].name, "arc_easy");
    CHECK_STR(r.tasks[8].name, "winogrande");
    CHECK_EQ_INT(r.limit, 400);
    CHECK_EQ_INT(r.num_fewshot, 0);
    CHECK_STR(r.model.name, "sa-125m");
    CHECK_STR(r.model.xsa_layers, "none");
    CHECK_EQ_INT(r.model.n_params, 124439808);
    CHECK_EQ_INT(r.model.n_kv_head, 4);
    CHECK_STR(r.device, "cuda:0");
    CHECK_EQ_INT(r.tokens_computed, 900000);
    CHECK_NEAR(r.score_s, 120.5, 0);
    const struct task_result *t = results_find_task(&r, "arc_easy");
    CHECK(t != NULL);
    if (!t) { results_free(&r); return; }
    CHECK_EQ_INT(t->n_metrics, 2);
    CHECK_STR(t->metric[0], "acc");
    CHECK_STR(t->metric[1], "acc_norm");
    CHECK_STR(results_preferred_metric(t), "acc_norm");
    CHECK_EQ_INT(t->n_docs, 400);
    CHECK_EQ_INT(t->n_docs_original, 2376);
    CHECK_NEAR(t->value[1], 0.39, 1e-15);
    CHECK_EQ_INT(t->doc_id[399], 399);
    double s = 0;
    for (int i = 0; i < t->n_docs; i++) s += t->per_doc[1][i];
    CHECK_NEAR(s, 156, 0);  // 0.39 * 400
    CHECK_STR(t->split, "test");
    CHECK_EQ_INT(strlen(t->data_sha256), 64);
    const struct task_result *l = results_find_task(&r, "lambada_openai");
    CHECK(l && results_metric_index(l, "perplexity") == 0 && results_metric_index(l, "acc") == 1);
    CHECK(l && !l->higher_is_better[0] && l->higher_is_better[1]);
    CHECK(l && l->value[0] > 30 && l->value[0] < 50);
    const struct task_result *b = results_find_task(&r, "boolq");
    CHECK(b && b->version == 2.0 && !strcmp(results_preferred_metric(b), "acc"));
    CHECK(results_find_task(&r, "nope") == NULL);
    CHECK(results_is_paper_task("piqa") && !results_is_paper_task("arc_challenge"));
    results_free(&r);
}

// Read + write reproduces the Python-written files byte for byte (%.17g, layout, key order).
TEST(roundtrip_bytes_match_fixtures) {
    const char *files[] = {"sa.json", "xsa.json", "xsa_regressed.json", "xsa_three_tasks.json", "xsa_limit200.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, FIX "%s", files[i]);
        struct results r;
        xsa_error err = {0};
        CHECK_EQ_INT(results_read_json(&r, path, &err), 0);
        struct sbuf out = {0};
        CHECK_EQ_INT(results_to_json(&r, &out, &err), 0);
        size_t n = 0;
        char *want = slurp(path, &n);
        CHECK(want != NULL);
        CHECK_MSG(want && out.s && out.n == n && !memcmp(out.s, want, n), "%s differs after read + write", files[i]);
        if (want && out.s && (out.n != n || memcmp(out.s, want, n))) {
            size_t k = 0;
            while (k < n && k < out.n && out.s[k] == want[k]) k++;
            fprintf(stderr, "  first difference at byte %zu: got \"%.40s\" want \"%.40s\"\n", k, out.s + k, want + k);
        }
        free(want);
        sbuf_free(&out);
        results_free(&r);
    }
}

TEST(write_atomic_and_nan_stderr) {
    struct results r;
    xsa_error err = {0};
    CHECK_EQ_INT(results_read_json(&r, FIX "xsa.json", &err), 0);
    r.tasks[0].stderr_[0] = NAN;  // lm-eval writes "N/A"
    // A log-likelihood that needs 17 digits, and the perplexity that follows from it (a file
    // whose summary disagrees with its per-document values does not read back).
    struct task_result *lam = (struct task_result *)results_find_task(&r, "lambada_openai");
    int ip = lam ? results_metric_index(lam, "perplexity") : -1;
    CHECK(ip >= 0);
    if (ip < 0) return;
    lam->per_doc[ip][3] = -0.1;
    double sum = 0;
    for (int d = 0; d < lam->n_docs; d++) sum += lam->per_doc[ip][d];
    lam->value[ip] = exp(-sum / lam->n_docs);
    char path[64];
    snprintf(path, sizeof path, "/tmp/xsa_test_results_w%ld.json", (long)getpid());
    CHECK_EQ_INT(results_write_json(&r, path, &err), 0);
    size_t n;
    char *text = slurp(path, &n);
    CHECK(text && strstr(text, "\"acc_stderr,none\": \"N/A\""));
    CHECK(text && strstr(text, "-0.10000000000000001"));
    free(text);
    struct results back;
    CHECK_EQ_INT(results_read_json(&back, path, &err), 0);
    CHECK(isnan(back.tasks[0].stderr_[0]));
    const struct task_result *blam = results_find_task(&back, "lambada_openai");
    CHECK(blam && blam->per_doc[ip][3] == -0.1);
    CHECK_NEAR(back.tasks[0].value[1], r.tasks[0].value[1], 0);
    results_free(&back);
    results_free(&r);
    unlink(path);
}

// A fractional --limit (lm-eval's limit < 1.0) is written as the number given, in config and in
// xsa_eval, read back, and makes two files incomparable with an integer limit.
TEST(fractional_limit_roundtrip) {
    struct results r, back, other;
    xsa_error err = {0};
    CHECK_EQ_INT(results_read_json(&r, FIX "xsa_three_tasks.json", &err), 0);
    if (err.code) return;
    r.limit = -1;
    r.limit_fraction = 0.3;
    char path[64];
    snprintf(path, sizeof path, "/tmp/xsa_test_results_f%ld.json", (long)getpid());
    CHECK_EQ_INT(results_write_json(&r, path, &err), 0);
    size_t n;
    char *text = slurp(path, &n);
    const char *first = text ? strstr(text, "\"limit\": 0.3,\n") : NULL;
    CHECK(first && strstr(first + 1, "\"limit\": 0.3,\n"));  // config.limit and xsa_eval.limit
    free(text);
    CHECK_EQ_INT(results_read_json(&back, path, &err), 0);
    CHECK(back.limit_fraction == 0.3 && back.limit == -1);
    CHECK_EQ_INT(results_read_json(&other, FIX "xsa_three_tasks.json", &err), 0);
    char why[1024], lim[32];
    CHECK(compare_inputs_differ(&back, &r, why, sizeof why) == 0);
    CHECK(compare_inputs_differ(&other, &back, why, sizeof why) == 1);
    CHECK_MSG(strstr(why, "limits differ (A: 400, B: 0.3)") != NULL, "%s", why);
    CHECK_STR(results_limit_text(&back, lim, sizeof lim), "0.3");
    results_free(&other);
    results_free(&back);
    results_free(&r);
    unlink(path);
}

// run --step N is kept through a write and read; a file without it says no step (and writes
// no "step", so files of runs without --step keep their bytes).
TEST(step_roundtrip) {
    struct results r, back;
    xsa_error err = {0};
    CHECK_EQ_INT(results_read_json(&r, FIX "xsa_three_tasks.json", &err), 0);
    if (err.code) return;
    CHECK(!r.has_step);
    char path[64];
    snprintf(path, sizeof path, "/tmp/xsa_test_results_s%ld.json", (long)getpid());
    CHECK_EQ_INT(results_write_json(&r, path, &err), 0);
    size_t n;
    char *text = slurp(path, &n);
    CHECK(text && !strstr(text, "\"step\""));
    free(text);
    r.has_step = 1, r.step = 4000;
    CHECK_EQ_INT(results_write_json(&r, path, &err), 0);
    CHECK_EQ_INT(results_read_json(&back, path, &err), 0);
    CHECK(back.has_step && back.step == 4000);
    results_free(&back);
    results_free(&r);
    unlink(path);
}

// A non-finite score (an overflowed perplexity: exp(-mean ll) > DBL_MAX) is written as null,
// JSON having no infinity; reading it back refuses the file (exit 2) naming the task and
// metric, so compare and check never rest on it.
TEST(nonfinite_metric_value_refused) {
    struct results r, back;
    xsa_error err = {0};
    CHECK_EQ_INT(results_read_json(&r, FIX "xsa.json", &err), 0);
    if (err.code) return;
    struct task_result *l = (struct task_result *)results_find_task(&r, "lambada_openai");
    CHECK(l != NULL);
    if (!l) { results_free(&r); return; }
    l->value[0] = INFINITY;
    l->stderr_[0] = NAN;
    char path[64];
    snprintf(path, sizeof path, "/tmp/xsa_test_results_i%ld.json", (long)getpid());
    CHECK_EQ_INT(results_write_json(&r, path, &err), 0);
    size_t n;
    char *text = slurp(path, &n);
    CHECK(text && strstr(text, "\"perplexity,none\": null"));
    free(text);
    CHECK_EQ_INT(results_read_json(&back, path, &err), 2);
    CHECK(strstr(err.msg, "lambada_openai: perplexity is not a finite number") != NULL);
    results_free(&r);
    unlink(path);
}

// Each malformed input is one error naming the file, never a crash.
TEST(rejects_bad_files) {
    struct {
        const char *text, *want;
    } cases[] = {
        {"{\"results\": {\"arc_easy\": {\"acc,none\": 0.5}}}", "not an xsa-eval results file"},
        {"{\"results\": ", "not valid JSON"},
        {"[1, 2]", "not a results file"},
        {"{\"results\": {\"arc_easy\": {\"acc,none\": \"x\"}}, \"xsa_eval\": {\"per_doc\": {}}}", "must be a number"},
        {"{\"results\": {\"arc_easy\": {\"acc,none\": 0.5}}, \"xsa_eval\": {\"per_doc\": {}}}", "xsa_eval.data.arc_easy missing"},
        {"{\"results\": {\"arc_easy\": {\"acc,none\": 0.5}}, \"xsa_eval\": {\"per_doc\": {}, \"data\": {\"arc_easy\": {\"sha256\": \"abc\"}}}}",
         "64 lowercase hex"},
        {"{\"results\": {\"arc_easy\": {\"acc,none\": 0.5}}, \"xsa_eval\": {\"per_doc\": {\"arc_easy\": {\"doc_id\": [0, 1], \"acc\": [1]}}, "
         "\"data\": {\"arc_easy\": {\"sha256\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}}}",
         "length differs"},
        {"{\"results\": {\"arc_easy\": {\"acc,none\": 0.5}}, \"xsa_eval\": {\"per_doc\": {\"arc_easy\": {\"doc_id\": [0, -1], \"acc\": [1, 0]}}, "
         "\"data\": {\"arc_easy\": {\"sha256\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}}}",
         "non-negative integers"},
        {"{\"results\": {\"arc_easy\": {\"acc,none\": 0.5}}, \"xsa_eval\": {\"per_doc\": {\"arc_easy\": {\"doc_id\": [0]}}, "
         "\"data\": {\"arc_easy\": {\"sha256\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}}}",
         "per_doc.arc_easy.acc missing"},
        {"{\"results\": {}, \"xsa_eval\": {\"per_doc\": {}}}", "holds no tasks"},
        {"{\"results\": {\"arc_easy\": {\"acc,none\": 0.5}}, \"xsa_eval\": {\"per_doc\": {}, \"limit\": 1.5}}", "xsa_eval.limit must be null, a whole number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = temp_with(cases[i].text);
        struct results r;
        xsa_error err = {0};
        int rc = results_read_json(&r, path, &err);
        CHECK_EQ_INT(rc, XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, cases[i].want) && strstr(err.msg, path), "case %zu: %s", i, err.msg);
        CHECK(r.tasks == NULL && r.n_tasks == 0);
        unlink(path);
    }
    struct results r;
    xsa_error err = {0};
    CHECK_EQ_INT(results_read_json(&r, FIX "no_such_file.json", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "no_such_file.json") != NULL);
    err = (xsa_error){0};
    CHECK_EQ_INT(results_read_json(&r, FIX "lm_eval_plain.json", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "per-document data needed for paired statistics") != NULL);
}

// A file whose parts contradict each other, or that readers could read two ways, is refused:
// each case below is a valid file (the first) with one thing changed.
#define SHA64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define RES(TASK, SE, EXTRA_ROOT, IDS, PREF, LIMIT, ORIG)                                                         \
    "{\"results\": {\"" TASK "\": {\"acc,none\": 0.5, \"acc_stderr,none\": " SE "}}, " EXTRA_ROOT              \
    "\"n-samples\": {\"" TASK "\": {\"effective\": 2, \"original\": " ORIG "}}, "                              \
    "\"xsa_eval\": {\"limit\": " LIMIT ", \"per_doc\": {\"" TASK "\": {\"doc_id\": " IDS ", \"acc\": [1, 0]}}, " \
    "\"data\": {\"" TASK "\": {\"sha256\": \"" SHA64 "\"" PREF "}}}}"
TEST(rejects_contradicted_files) {
    struct {
        const char *text, *want;
    } cases[] = {
        {RES("arc_easy", "0.5", "", "[0, 1]", "", "null", "2"), NULL},
        {RES("arc_easy", "\"N/A\"", "", "[0, 1]", "", "2", "5"), NULL},
        {RES("mmlu", "0.5", "", "[0, 1]", "", "null", "2"), "results.mmlu: not one of xsa-eval's tasks"},
        {RES("arc_easy", "0.5", "", "[3, 3]", "", "null", "2"), "doc_id: document 3 stands twice"},
        {RES("arc_easy", "0.4", "", "[0, 1]", "", "null", "2"), "acc_stderr disagrees with its per-document values"},
        {RES("arc_easy", "1e308", "", "[0, 1]", "", "null", "2"), "acc_stderr disagrees with its per-document values"},
        {RES("arc_easy", "0.5", "", "[0, 1]", ", \"preferred_metric\": \"acc\"", "null", "2"),
         "preferred_metric is not lm-eval's for the task (acc_norm)"},
        {RES("arc_easy", "0.5", "", "[0, 1]", "", "1", "2"), "holds more documents than xsa_eval.limit allows"},
        {RES("arc_easy", "0.5", "", "[0, 1]", "", "\"all\"", "2"), "xsa_eval.limit must be null, a whole number"},
        {RES("arc_easy", "0.5", "", "[0, 1]", "", "null", "1"), "original is below the number of documents scored"},
        {RES("arc_easy", "0.5", "\"results\": {}, ", "[0, 1]", "", "null", "2"), "key \"results\" stands twice"},
        {RES("arc_easy", "0.5", "", "[0, 1]", "", "null", "2") " {}", "text after the JSON object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = temp_with(cases[i].text);
        struct results r;
        xsa_error err = {0};
        int rc = results_read_json(&r, path, &err);
        CHECK_EQ_INT(rc, cases[i].want ? XSA_EBADINPUT : 0);
        if (cases[i].want) CHECK_MSG(strstr(err.msg, cases[i].want) && strstr(err.msg, path), "case %zu: %s", i, err.msg);
        else CHECK_MSG(rc == 0, "case %zu: %s", i, err.msg);
        results_free(&r);
        unlink(path);
    }
}

RUN_TESTS(T(reads_fixture_fields), T(roundtrip_bytes_match_fixtures), T(write_atomic_and_nan_stderr), T(rejects_bad_files), T(rejects_contradicted_files), T(fractional_limit_roundtrip), T(nonfinite_metric_value_refused), T(step_roundtrip))
