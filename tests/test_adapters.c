// test_adapters.c: original-author formats -> canonical rows (fixtures written by
// tools/fixtures/make_task_fixtures.py, with the rows they must become), --data-dir loading, error
// paths, and the real files in ../shared/benchdata (exact row counts, spot-checked docs).
#include <bzlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "tasks/adapters.h"
#include "tasks/rows.h"
#include "tasks/task.h"
#include "tests/check.h"
#include "tests/load_docs.h"

#define ORIG "tests/fixtures/data/original"

static int push(void *ctx, cJSON *row, const char *where, xsa_error *err) {
    return task_rows_push(ctx, row, where, err);
}

// Adapts ORIG/<dir> for `task` and compares the canonical serialization with expected/<exp>.jsonl.
static void check_adapter(const char *task, const char *dir, const char *exp, int want_pre) {
    const struct task_def *t = task_find(task);
    char path[256];
    snprintf(path, sizeof path, ORIG "/%s", dir);
    struct task_rows got = {0}, want;
    int pre = -1;
    xsa_error err = {0};
    int rc = task_adapt_original_dir(t, path, push, &got, &pre, &err);
    CHECK_MSG(rc == 0, "%s: %s", task, err.msg);
    CHECK_EQ_INT(pre, want_pre);
    snprintf(path, sizeof path, ORIG "/expected/%s.jsonl", exp);
    if (task_rows_read_jsonl(path, &want, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        task_rows_free(&got);
        return;
    }
    CHECK(got.n >= 6);
    CHECK_EQ_INT(got.n, want.n);
    char *a, *b;
    size_t an, bn;
    if (!task_rows_serialize(&got, &a, &an, &err) && !task_rows_serialize(&want, &b, &bn, &err)) {
        CHECK_MSG(an == bn && memcmp(a, b, an) == 0, "%s: adapted rows differ:\n%s\nwant:\n%s", task, a, b);
        free(a);
        free(b);
    }
    // Each adapted row builds a doc.
    struct task_doc *docs;
    int n;
    CHECK_EQ_INT(task_docs_from_rows(t, got.row, got.where, got.n, 0, &docs, &n, &err), 0);
    task_docs_free(docs, n);
    task_rows_free(&got);
    task_rows_free(&want);
}

TEST(adapt_arc) {
    check_adapter("arc_easy", "arc_easy", "arc_easy", 0);
    check_adapter("arc_challenge", "arc_challenge", "arc_challenge", 0);
}
TEST(adapt_openbookqa) { check_adapter("openbookqa", "openbookqa", "openbookqa", 0); }
TEST(adapt_boolq_google) { check_adapter("boolq", "boolq", "boolq", 0); }
TEST(adapt_boolq_superglue) { check_adapter("boolq", "boolq_superglue", "boolq", 0); }
TEST(adapt_hellaswag_jsonl) { check_adapter("hellaswag", "hellaswag", "hellaswag", 0); }
TEST(adapt_hellaswag_text_bz2) { check_adapter("hellaswag", "hellaswag_text", "hellaswag_text", 1); }
TEST(adapt_lambada) { check_adapter("lambada_openai", "lambada_openai", "lambada_openai", 0); }
TEST(adapt_piqa) { check_adapter("piqa", "piqa", "piqa", 0); }
TEST(adapt_siqa) { check_adapter("social_iqa", "siqa", "social_iqa", 0); }
TEST(adapt_winogrande) { check_adapter("winogrande", "winogrande", "winogrande", 0); }

TEST(dirnames) {
    CHECK_STR(task_original_dirname(task_find("social_iqa")), "siqa");
    CHECK_STR(task_original_dirname(task_find("lambada_openai")), "lambada_openai");
    CHECK_STR(task_original_dirname(task_find("arc_challenge")), "arc_challenge");
}

TEST(load_docs_from_original_layout) {
    // ORIG has no <task>/<split>.jsonl, so the original files are adapted.
    const struct task_def *t = task_find("social_iqa");
    struct task_doc *docs;
    int n, pre;
    char sha[65], want_sha[65];
    xsa_error err = {0};
    CHECK_EQ_INT(test_load_docs(t, ORIG, 0, &docs, &n, &pre, sha, &err), 0);
    CHECK_EQ_INT(n, 12);
    CHECK_EQ_INT(pre, 0);
    CHECK_STR(docs[0].req[0].context,
              "Q: Tracy didn't go home that evening and resisted Riley's attacks. What does Tracy need to do before this?\nA:");
    CHECK_EQ_INT(docs[0].gold, 2);
    task_docs_free(docs, n);
    struct task_rows want;
    CHECK_EQ_INT(task_rows_read_jsonl(ORIG "/expected/social_iqa.jsonl", &want, &err), 0);
    CHECK_EQ_INT(task_rows_sha256(&want, want_sha, &err), 0);
    CHECK_STR(sha, want_sha);
    task_rows_free(&want);
}

// ---- error paths --------------------------------------------------------------------------

static char tmpdir[256];

static void make_tmpdir(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/xsa_adapters_XXXXXX");
    if (!mkdtemp(tmpdir)) tmpdir[0] = '\0';
}

static void put(const char *name, const char *text, size_t n) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    if (f) {
        fwrite(text, 1, n, f);
        fclose(f);
    }
}

static void rm_tmpdir(const char **names, int n) {
    char p[512];
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
}

static int adapt_tmp(const char *task, xsa_error *err) {
    struct task_rows rows = {0};
    int pre;
    xsa_error_clear(err);
    int rc = task_adapt_original_dir(task_find(task), tmpdir, push, &rows, &pre, err);
    task_rows_free(&rows);
    return rc;
}

static void put_bz2_stream(const char *name, const char *text, int append);

TEST(adapter_errors) {
    make_tmpdir();
    if (!tmpdir[0]) SKIP("no temp dir");
    xsa_error err;
    const char *two = "{\"goal\":\"g\",\"sol1\":\"a\",\"sol2\":\"b\"}\n{\"goal\":\"h\",\"sol1\":\"a\",\"sol2\":\"b\"}\n";
    put("valid.jsonl", two, strlen(two));
    put("valid-labels.lst", "0\n", 2);
    CHECK_EQ_INT(adapt_tmp("piqa", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "valid-labels.lst") && strstr(err.msg, "1 labels for 2 rows"));
    put("valid-labels.lst", "0\n7\n", 4);
    CHECK_EQ_INT(adapt_tmp("piqa", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "valid.jsonl:2") != NULL);
    put("valid-labels.lst", "0\r\n1\r\n", 6);  // CRLF labels are fine
    CHECK_EQ_INT(adapt_tmp("piqa", &err), 0);
    CHECK_EQ_INT(adapt_tmp("social_iqa", &err), XSA_EBADINPUT);  // no dev.jsonl
    CHECK(strstr(err.msg, "dev.jsonl") != NULL);
    // HellaSwag text dump: 7 lines is not whole items; garbage is not bzip2.
    const char seven[] = "a: b\n0\ne1\ne2\ne3\ne4\nextra\n";
    put("hellaswag_val_full.txt.bz2", seven, strlen(seven));
    CHECK_EQ_INT(adapt_tmp("hellaswag", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "bzip2") != NULL);
    // ARC with a choice that has no label; WinoGrande disagreeing with its labels file.
    const char *arc = "{\"id\":\"1\",\"question\":{\"stem\":\"q\",\"choices\":[{\"text\":\"a\"}]},\"answerKey\":\"A\"}\n";
    put("ARC-Easy-Test.jsonl", arc, strlen(arc));
    CHECK_EQ_INT(adapt_tmp("arc_easy", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "ARC-Easy-Test.jsonl:1") && strstr(err.msg, "choices[0]"));
    const char *wg = "{\"sentence\":\"a _ b\",\"option1\":\"x\",\"option2\":\"y\",\"answer\":\"1\"}\n";
    put("dev.jsonl", wg, strlen(wg));
    put("dev-labels.lst", "2\n", 2);
    CHECK_EQ_INT(adapt_tmp("winogrande", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "disagrees") != NULL);
    const char *bq = "{\"question\":\"q\",\"title\":\"T\",\"passage\":\"p\"}\n";
    put("dev.jsonl", bq, strlen(bq));
    CHECK_EQ_INT(adapt_tmp("boolq", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "dev.jsonl:1: field 'answer'") != NULL);
    // A SuperGLUE label that is not true/false or 0/1 is refused, not truncated to an int.
    const char *sg = "{\"question\":\"q\",\"passage\":\"p\",\"idx\":0,\"label\":0.7}\n";
    put("val.jsonl", sg, strlen(sg));
    CHECK_EQ_INT(adapt_tmp("boolq", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "val.jsonl:1: field 'label' missing or not true/false") != NULL, "%s", err.msg);
    // HellaSwag's original JSONL: a label that is no ending's index is refused, not rounded.
    const char *hs = "{\"ind\":1,\"activity_label\":\"a\",\"ctx_a\":\"c\",\"ctx_b\":\"d\",\"ctx\":\"c d\","
                     "\"endings\":[\"1\",\"2\",\"3\",\"4\"],\"source_id\":\"s\",\"split\":\"val\","
                     "\"split_type\":\"indomain\",\"label\":2.7}\n";
    put("hellaswag_val.jsonl", hs, strlen(hs));
    CHECK_EQ_INT(adapt_tmp("hellaswag", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "hellaswag_val.jsonl:1: field 'label' is 2.7, not the index of an ending") != NULL, "%s", err.msg);
    char hp[512];
    snprintf(hp, sizeof hp, "%s/hellaswag_val.jsonl", tmpdir);
    unlink(hp);
    // Its text dump: a gold label outside 0-3 is named with its file and line.
    const char *neg = "a: b\n-5\ne1\ne2\ne3\ne4\n";
    put_bz2_stream("hellaswag_val_full.txt.bz2", neg, 0);
    CHECK_EQ_INT(adapt_tmp("hellaswag", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "hellaswag_val_full.txt.bz2: line 2 should be the gold label 0-3, got '-5'") != NULL, "%s", err.msg);
    const char *names[] = {"valid.jsonl", "valid-labels.lst", "hellaswag_val_full.txt.bz2",
                           "ARC-Easy-Test.jsonl", "dev.jsonl", "dev-labels.lst", "val.jsonl"};
    rm_tmpdir(names, 7);
    struct task_rows rows = {0};
    int pre;
    xsa_error_clear(&err);
    CHECK_EQ_INT(task_adapt_original_dir(task_find("piqa"), "tests/fixtures/no_such_dir", push, &rows, &pre, &err),
                 XSA_EBADINPUT);
}

// bzip2 of text[0, n) appended to the file `name` in tmpdir: one more stream.
static void put_bz2_stream(const char *name, const char *text, int append) {
    char out[4096], p[512];
    unsigned int n = sizeof out;
    CHECK_EQ_INT(BZ2_bzBuffToBuffCompress(out, &n, (char *)text, (unsigned)strlen(text), 9, 0, 0), BZ_OK);
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, append ? "ab" : "wb");
    if (f) {
        fwrite(out, 1, n, f);
        fclose(f);
    }
}

// The HellaSwag dump as pbzip2 writes it (one stream per block) is read whole, as Python reads
// it, not up to the end of its first stream.
TEST(hellaswag_dump_streams) {
    make_tmpdir();
    if (!tmpdir[0]) SKIP("no temp dir");
    const char *one = "A: ctx one\n2\ne1\ne2\ne3\ne4\n", *two = "B: ctx two\n0\nf1\nf2\nf3\nf4\n";
    const char *name = "hellaswag_val_full.txt.bz2";
    put_bz2_stream(name, one, 0);
    put_bz2_stream(name, two, 1);
    struct task_rows rows = {0};
    int pre;
    xsa_error err = {0};
    CHECK_EQ_INT(task_adapt_original_dir(task_find("hellaswag"), tmpdir, push, &rows, &pre, &err), 0);
    CHECK_EQ_INT(rows.n, 2);
    if (rows.n == 2) {
        CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(rows.row[0], "gold")->valueint, 2);
        CHECK_STR(cJSON_GetObjectItemCaseSensitive(rows.row[1], "query")->valuestring, "B: ctx two");
    }
    task_rows_free(&rows);
    // Bytes after the last stream that start no stream (a newline, padding) are ignored, as
    // Python's bz2 ignores them; a second stream cut short is damage.
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "ab");
    if (f) fwrite("\n\0\0\0", 1, 4, f), fclose(f);
    CHECK_EQ_INT(task_adapt_original_dir(task_find("hellaswag"), tmpdir, push, &rows, &pre, &err), 0);
    CHECK_EQ_INT(rows.n, 2);
    task_rows_free(&rows);
    put_bz2_stream(name, one, 0);
    if ((f = fopen(p, "ab"))) fwrite("BZh9", 1, 4, f), fclose(f);
    CHECK_EQ_INT(adapt_tmp("hellaswag", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "corrupt bzip2 data") != NULL, "%s", err.msg);
    const char *names[] = {"hellaswag_val_full.txt.bz2"};
    rm_tmpdir(names, 1);
}

static int stop_at_third(void *ctx, cJSON *row, const char *where, xsa_error *err) {
    struct task_rows *r = ctx;
    if (r->n == 2) {
        cJSON_Delete(row);
        return xsa_fail(err, XSA_ERUNTIME, "%s: stop", where);
    }
    return task_rows_push(r, row, where, err);
}

TEST(emit_error_stops_the_walk) {
    struct task_rows rows = {0};
    int pre;
    xsa_error err = {0};
    CHECK_EQ_INT(task_adapt_original_dir(task_find("hellaswag"), ORIG "/hellaswag_text", stop_at_third, &rows,
                                         &pre, &err), XSA_ERUNTIME);
    CHECK_EQ_INT(rows.n, 2);
    CHECK(strstr(err.msg, "hellaswag_val_full.txt.bz2:13: stop") != NULL);
    task_rows_free(&rows);
}

// ---- the real files ---------------------------------------------------------------------------

struct spot {
    const char *task;
    int doc, req;
    const char *context, *continuation;
    int gold;
};

static const struct spot spots[] = {
    {"arc_easy", 0, 0, "Question: Which statement best explains why photosynthesis is the foundation of most food webs?\nAnswer:",
     " Sunlight is the source of energy for nearly all ecosystems.", 0},
    {"boolq", 0, 1, NULL, " yes", 0},
    {"hellaswag", 0, 3, "Roof shingle removal: A man is sitting on a roof. he", " starts pulling up roofing on a roof.", 3},
    {"lambada_openai", 1, 0, NULL, " Shane", 0},
    {"openbookqa", 1, 0, "There is most likely going to be fog around:", " a marsh", 0},
    {"piqa", 1, 0, "Question: dresser\nAnswer:", " replace drawer with bobby pin ", 1},
    {"social_iqa", 0, 2, "Q: Tracy didn't go home that evening and resisted Riley's attacks. What does Tracy need to do before this?\nA:",
     " Find somewhere to go", 2},
    {"winogrande", 0, 1, "Sarah was a much better surgeon than Maria so Maria", " always got the easier cases.", 1},
};

TEST(real_benchdata_row_counts_and_spot_checks) {
    const char *root = shared_benchdata(".");
    if (!root) SKIP("../shared/benchdata absent");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", root);
    int n_tasks;
    const struct task_def *reg = task_registry(&n_tasks);
    for (int i = 0; i < n_tasks; i++) {
        const struct task_def *t = &reg[i];
        struct task_doc *docs;
        int n, pre;
        char sha[65];
        xsa_error err = {0};
        int rc = test_load_docs(t, dir, 0, &docs, &n, &pre, sha, &err);
        CHECK_MSG(rc == 0, "%s: %s", t->name, err.msg);
        if (rc) continue;
        CHECK_MSG(n == t->n_docs, "%s: %d docs, want %d", t->name, n, t->n_docs);
        CHECK_EQ_INT(pre, strcmp(t->name, "hellaswag") == 0);
        int invalid = 0;
        for (int k = 0; k < n; k++) invalid += docs[k].gold == -100;
        CHECK_MSG(invalid == 0, "%s: %d docs without a valid gold", t->name, invalid);
        for (size_t s = 0; s < sizeof spots / sizeof spots[0]; s++) {
            const struct spot *sp = &spots[s];
            if (strcmp(sp->task, t->name) != 0) continue;
            if (sp->context) CHECK_STR(docs[sp->doc].req[sp->req].context, sp->context);
            CHECK_STR(docs[sp->doc].req[sp->req].continuation, sp->continuation);
            CHECK_EQ_INT(docs[sp->doc].gold, sp->gold);
        }
        if (!strcmp(t->name, "boolq")) {
            CHECK(strncmp(docs[0].req[0].context, "Ethanol fuel -- All biomass goes through", 40) == 0);
            const char *c = docs[0].req[0].context;
            CHECK(strstr(c, "\nQuestion: does ethanol take more energy make that produces?\nAnswer:") != NULL);
        }
        if (!strcmp(t->name, "arc_easy")) {  // answerKeys and labels vary: some rows use 1-4
            int three = 0, five = 0;
            for (int k = 0; k < n; k++) three += docs[k].n_requests == 3, five += docs[k].n_requests == 5;
            CHECK(three > 0 && five > 0);
        }
        task_docs_free(docs, n);
    }
}

RUN_TESTS(T(hellaswag_dump_streams), T(adapt_arc), T(adapt_openbookqa), T(adapt_boolq_google), T(adapt_boolq_superglue),
          T(adapt_hellaswag_jsonl), T(adapt_hellaswag_text_bz2), T(adapt_lambada), T(adapt_piqa),
          T(adapt_siqa), T(adapt_winogrande), T(dirnames), T(load_docs_from_original_layout),
          T(adapter_errors), T(emit_error_stops_the_walk), T(real_benchdata_row_counts_and_spot_checks))
