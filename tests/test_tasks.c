// test_tasks.c: the task registry, Python string semantics, and every fixture doc against the
// requests, gold and choice lengths REAL lm-eval built from the same rows
// (tools/fixtures/make_task_fixtures.py -> tests/fixtures/tasks/*.expected.jsonl).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "tasks/adapters.h"
#include "tasks/docbuild.h"
#include "tasks/pystr.h"
#include "tasks/rows.h"
#include "tasks/task.h"
#include "tests/check.h"
#include "tests/load_docs.h"

TEST(registry_has_nine_tasks) {
    int n;
    const struct task_def *r = task_registry(&n);
    CHECK_EQ_INT(n, 9);
    static const char *names[9] = {"arc_easy", "arc_challenge", "boolq", "hellaswag", "lambada_openai",
                                   "openbookqa", "piqa", "social_iqa", "winogrande"};
    static const int sizes[9] = {2376, 1172, 3270, 10042, 5153, 500, 1838, 1954, 1267};
    for (int i = 0; i < n && i < 9; i++) {
        CHECK_STR(r[i].name, names[i]);
        CHECK_EQ_INT(r[i].n_docs, sizes[i]);
        CHECK(r[i].doc_from_row != NULL);
        CHECK(r[i].schema && *r[i].schema);
        CHECK(task_find(names[i]) == &r[i]);
        // Pinned from the original files for all but HellaSwag, whose original is not at hand.
        CHECK((r[i].canonical_sha256 == NULL) == !strcmp(names[i], "hellaswag"));
        CHECK(!r[i].canonical_sha256 || strlen(r[i].canonical_sha256) == 64);
    }
    CHECK(task_find("nope") == NULL);
    const struct task_def *t = task_find("lambada_openai");
    CHECK_EQ_INT(t->output, TASK_LOGLIKELIHOOD);
    CHECK_STR(t->metrics, "perplexity,acc");
    CHECK_EQ_INT(task_find("winogrande")->output, TASK_MULTIPLE_INPUT);
    CHECK_STR(task_find("hellaswag")->preferred_metric, "acc_norm");
    CHECK_STR(task_find("boolq")->preferred_metric, "acc");
    CHECK_NEAR(task_find("boolq")->version, 2.0, 0);
    CHECK_NEAR(task_find("social_iqa")->version, 0.0, 0);
    CHECK_STR(task_find("social_iqa")->hf_dataset, "lighteval/siqa");  // as lm-eval main reads it
    CHECK_STR(task_find("social_iqa")->hf_alt_dataset, "allenai/social_i_qa");
    CHECK_STR(task_find("arc_challenge")->hf_config, "ARC-Challenge");
    CHECK_STR(task_find("openbookqa")->split, "test");
    CHECK_STR(task_find("piqa")->split, "validation");
}

TEST(expand_groups_and_names) {
    const struct task_def *out[16];
    int n;
    xsa_error err = {0};
    CHECK_EQ_INT(task_expand_list("all", out, 16, &n, &err), 0);
    CHECK_EQ_INT(n, 9);
    CHECK_EQ_INT(task_expand_list("paper", out, 16, &n, &err), 0);
    CHECK_EQ_INT(n, 8);
    for (int i = 0; i < n; i++) CHECK(strcmp(out[i]->name, "arc_challenge") != 0);
    // Registry order and no duplicates, whatever the order given.
    CHECK_EQ_INT(task_expand_list("winogrande, arc_easy,paper,arc_easy", out, 16, &n, &err), 0);
    CHECK_EQ_INT(n, 8);
    CHECK_STR(out[0]->name, "arc_easy");
    CHECK_STR(out[7]->name, "winogrande");
    CHECK_EQ_INT(task_expand_list("piqa,arc_challenge", out, 16, &n, &err), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_STR(out[0]->name, "arc_challenge");
    CHECK_STR(out[1]->name, "piqa");
    // Errors name the bad entry and the valid names.
    CHECK_EQ_INT(task_expand_list("piqa,mmlu", out, 16, &n, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "'mmlu'") && strstr(err.msg, "arc_easy") && strstr(err.msg, "winogrande") &&
          strstr(err.msg, "paper"));
    xsa_error_clear(&err);
    CHECK_EQ_INT(task_expand_list("", out, 16, &n, &err), XSA_EBADINPUT);
    xsa_error_clear(&err);
    CHECK_EQ_INT(task_expand_list("piqa,,boolq", out, 16, &n, &err), XSA_EBADINPUT);
    xsa_error_clear(&err);
    CHECK_EQ_INT(task_expand_list("all", out, 3, &n, &err), XSA_EBADINPUT);
}

// ---- pystr against Python -------------------------------------------------------------------

static char *json_str(const cJSON *o, const char *k) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

TEST(pystr_matches_python_cases) {
    struct task_rows rows;
    xsa_error err = {0};
    if (task_rows_read_jsonl("tests/fixtures/tasks/pystr_cases.jsonl", &rows, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    CHECK(rows.n >= 40);
    for (int i = 0; i < rows.n; i++) {
        const cJSON *r = rows.row[i];
        const char *s = json_str(r, "s");
        size_t n = strlen(s);
        CHECK_EQ_INT(pystr_len(s, n), cJSON_GetObjectItem(r, "len")->valueint);
        size_t a = pystr_lstrip_off(s, n), b = pystr_rstrip_len(s, n);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(b > a ? b - a : 0), s + a);
        CHECK_STR(buf, json_str(r, "strip"));
        snprintf(buf, sizeof buf, "%.*s", (int)b, s);
        CHECK_STR(buf, json_str(r, "rstrip"));
        CHECK_STR(s + a, json_str(r, "lstrip"));
        struct sbuf cap = {0};
        pystr_capitalize(s, n, &cap);
        CHECK_STR(cap.s, json_str(r, "capitalize"));
        sbuf_free(&cap);
    }
    task_rows_free(&rows);
}

static int parse_cps(const char *s, uint32_t *out, int max) {
    int k = 0;
    while (*s && *s != '\t' && *s != '\n' && k < max) {
        char *end;
        out[k++] = (uint32_t)strtoul(s, &end, 16);
        s = end;
        while (*s == ' ') s++;
    }
    return k;
}

TEST(pystr_case_map_matches_python_for_every_code_point) {
    char *buf;
    size_t len;
    xsa_error err = {0};
    if (file_read_all("tests/fixtures/tasks/pystr_case_map.tsv", 1 << 20, &buf, &len, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    unsigned char *listed = calloc(0x110000, 1);
    int lines = 0, bad = 0;
    for (char *p = buf; p && *p;) {
        char *nl = strchr(p, '\n');
        if (*p != '#') {
            uint32_t cp = (uint32_t)strtoul(p, NULL, 16), want_t[4], want_l[4], got[3];
            char *t1 = strchr(p, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
            if (!t2 || cp >= 0x110000) {
                CHECK_MSG(0, "bad line %d", lines);
                break;
            }
            int nt = parse_cps(t1 + 1, want_t, 4), nl2 = parse_cps(t2 + 1, want_l, 4);
            listed[cp] = 1;
            int k = pystr_title_full(cp, got);
            int ok = k == nt && memcmp(got, want_t, (size_t)k * 4) == 0;
            k = pystr_lower_full(cp, got);
            ok = ok && k == nl2 && memcmp(got, want_l, (size_t)k * 4) == 0;
            if (!ok && bad++ < 10) CHECK_MSG(0, "case mapping of U+%04X differs from Python", cp);
            lines++;
        }
        p = nl ? nl + 1 : NULL;
    }
    CHECK(lines > 2000);
    // Everything else maps to itself in Python: utf8proc must agree.
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (listed[cp] || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
        uint32_t got[3];
        int ok = pystr_title_full(cp, got) == 1 && got[0] == cp;
        ok = ok && pystr_lower_full(cp, got) == 1 && got[0] == cp;
        if (!ok && bad++ < 10) CHECK_MSG(0, "U+%04X maps in C but not in Python", cp);
    }
    CHECK_EQ_INT(bad, 0);
    free(listed);
    free(buf);
}

TEST(pystr_utf8_validation) {
    CHECK(pystr_utf8_valid("", 0));
    CHECK(pystr_utf8_valid("caf\xc3\xa9 \xf0\x9f\x99\x82", 10));
    CHECK(!pystr_utf8_valid("\xc3", 1));              // truncated
    CHECK(!pystr_utf8_valid("\xc0\xaf", 2));          // overlong '/'
    CHECK(!pystr_utf8_valid("\xe0\x80\xaf", 3));      // overlong
    CHECK(!pystr_utf8_valid("\xed\xa0\x80", 3));      // surrogate U+D800
    CHECK(!pystr_utf8_valid("\xf4\x90\x80\x80", 4));  // > U+10FFFF
    CHECK(!pystr_utf8_valid("\x80", 1));              // lone continuation
    CHECK(!pystr_utf8_valid("a\xff", 2));
    CHECK(pystr_utf8_valid("\xf4\x8f\xbf\xbf", 4));   // U+10FFFF
    CHECK(pystr_isspace(0x1c) && pystr_isspace(0x85) && pystr_isspace(0x3000));
    CHECK(!pystr_isspace(0x200b) && !pystr_isspace(0xfeff) && !pystr_isspace('a'));
    long long v;
    CHECK(py_parse_int(" 2\n", 3, &v) && v == 2);
    CHECK(py_parse_int("-1_0", 4, &v) && v == -10);
    CHECK(!py_parse_int("1__0", 4, &v) && !py_parse_int("", 0, &v) && !py_parse_int("2.0", 3, &v));
}

// ---- every fixture doc equals lm-eval's -----------------------------------------------------

static void check_task_fixture(const char *name) {
    const struct task_def *t = task_find(name);
    char data[256], exp[256];
    snprintf(data, sizeof data, "tests/fixtures/data/%s/%s.jsonl", name, t->split);
    snprintf(exp, sizeof exp, "tests/fixtures/tasks/%s.expected.jsonl", name);
    struct task_rows rows, want;
    xsa_error err = {0};
    if (task_rows_read_jsonl(data, &rows, &err) || task_rows_read_jsonl(exp, &want, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    struct task_doc *docs;
    int n;
    if (task_docs_from_rows(t, rows.row, rows.where, rows.n, 0, &docs, &n, &err)) {
        CHECK_MSG(0, "%s: %s", name, err.msg);
        task_rows_free(&rows);
        task_rows_free(&want);
        return;
    }
    CHECK(n >= 12);
    CHECK_EQ_INT(n, want.n);
    for (int i = 0; i < n && i < want.n; i++) {
        const cJSON *w = want.row[i];
        const cJSON *reqs = cJSON_GetObjectItem(w, "requests"), *lens = cJSON_GetObjectItem(w, "choice_len");
        CHECK_EQ_INT(docs[i].doc_id, cJSON_GetObjectItem(w, "doc_id")->valueint);
        CHECK_EQ_INT(docs[i].n_requests, cJSON_GetArraySize(reqs));
        CHECK_MSG(docs[i].gold == cJSON_GetObjectItem(w, "gold")->valueint, "%s doc %d gold %d", name, i,
                  docs[i].gold);
        for (int k = 0; k < docs[i].n_requests && k < cJSON_GetArraySize(reqs); k++) {
            const cJSON *r = cJSON_GetArrayItem(reqs, k);
            CHECK_STR(docs[i].req[k].context, cJSON_GetArrayItem(r, 0)->valuestring);
            CHECK_STR(docs[i].req[k].continuation, cJSON_GetArrayItem(r, 1)->valuestring);
            if (t->output != TASK_LOGLIKELIHOOD)
                CHECK_NEAR(docs[i].choice_len[k], cJSON_GetArrayItem(lens, k)->valuedouble, 0);
        }
    }
    // limit keeps a prefix.
    task_docs_free(docs, n);
    CHECK_EQ_INT(task_docs_from_rows(t, rows.row, rows.where, rows.n, 3, &docs, &n, &err), 0);
    CHECK_EQ_INT(n, 3);
    task_docs_free(docs, n);
    task_rows_free(&rows);
    task_rows_free(&want);
}

TEST(fixture_arc_easy) { check_task_fixture("arc_easy"); }
TEST(fixture_arc_challenge) { check_task_fixture("arc_challenge"); }
TEST(fixture_boolq) { check_task_fixture("boolq"); }
TEST(fixture_hellaswag) { check_task_fixture("hellaswag"); }
TEST(fixture_lambada_openai) { check_task_fixture("lambada_openai"); }
TEST(fixture_openbookqa) { check_task_fixture("openbookqa"); }
TEST(fixture_piqa) { check_task_fixture("piqa"); }
TEST(fixture_social_iqa) { check_task_fixture("social_iqa"); }
TEST(fixture_winogrande) { check_task_fixture("winogrande"); }

TEST(load_docs_from_canonical_data_dir) {
    const struct task_def *t = task_find("piqa");
    struct task_doc *docs;
    int n, pre;
    char sha[65], sha2[65];
    xsa_error err = {0};
    CHECK_EQ_INT(test_load_docs(t, "tests/fixtures/data", 5, &docs, &n, &pre, sha, &err), 0);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(pre, 0);
    task_docs_free(docs, n);
    // The digest covers all rows, whatever the limit, and equals the rows' serialization digest.
    struct task_rows rows;
    CHECK_EQ_INT(task_rows_read_jsonl("tests/fixtures/data/piqa/validation.jsonl", &rows, &err), 0);
    CHECK_EQ_INT(task_rows_sha256(&rows, sha2, &err), 0);
    CHECK_STR(sha, sha2);
    task_rows_free(&rows);
    CHECK_EQ_INT(test_load_docs(t, "tests/fixtures/nowhere", 0, &docs, &n, &pre, sha, &err),
                 XSA_EBADINPUT);
    CHECK(strstr(err.msg, "--data-dir tests/fixtures/nowhere: No such file or directory") != NULL);
}

// ---- rows, serialization and error rows -----------------------------------------------------

TEST(rows_serialization_digest) {
    const char *in = "{\"a\": 1, \"s\": \"caf\\u00e9\"}\r\n\n  \n{\"b\": [1, 2.5]}";
    struct task_rows rows;
    xsa_error err = {0};
    CHECK_EQ_INT(task_rows_parse_jsonl("mem.jsonl", in, strlen(in), &rows, &err), 0);
    CHECK_EQ_INT(rows.n, 2);
    CHECK_STR(rows.where[1], "mem.jsonl:4");
    char *s;
    size_t n;
    CHECK_EQ_INT(task_rows_serialize(&rows, &s, &n, &err), 0);
    CHECK_STR(s, "{\"a\":1,\"s\":\"caf\xc3\xa9\"}\n{\"b\":[1,2.5]}\n");
    free(s);
    char sha[65];
    CHECK_EQ_INT(task_rows_sha256(&rows, sha, &err), 0);  // value from Python hashlib
    CHECK_STR(sha, "ad24082a7d78723914ce43a0e5b0ea866e919eff195511196c69ca5ac02de065");
    task_rows_free(&rows);
}

TEST(rows_keys_in_schema_order) {
    cJSON *row = cJSON_Parse("{\"extra\":0,\"answerKey\":\"A\",\"choices\":{\"label\":[\"A\"],\"text\":[\"x\"]},"
                             "\"question\":\"q\",\"id\":\"1\"}");
    task_row_order_keys(row, task_find("arc_easy")->schema);
    char *s = cJSON_PrintUnformatted(row);
    CHECK_STR(s, "{\"id\":\"1\",\"question\":\"q\",\"choices\":{\"text\":[\"x\"],\"label\":[\"A\"]},"
                 "\"answerKey\":\"A\",\"extra\":0}");
    free(s);
    task_row_order_keys(row, "");  // no schema: left as it is
    s = cJSON_PrintUnformatted(row);
    CHECK(!strncmp(s, "{\"id\":", 6));
    free(s);
    cJSON_Delete(row);
}

TEST(rows_reject_bad_lines) {
    struct task_rows rows;
    xsa_error err = {0};
    const char *bad_utf8 = "{\"text\": \"ok\"}\n{\"text\": \"caf\xe9\"}\n";
    CHECK_EQ_INT(task_rows_parse_jsonl("d.jsonl", bad_utf8, strlen(bad_utf8), &rows, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "d.jsonl:2") && strstr(err.msg, "UTF-8"));
    xsa_error_clear(&err);
    const char *not_obj = "[1, 2]\n";
    CHECK_EQ_INT(task_rows_parse_jsonl("d.jsonl", not_obj, strlen(not_obj), &rows, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "d.jsonl:1") != NULL);
    xsa_error_clear(&err);
    const char *two = "{\"a\": 1}\n{\"a\": 1} {\"b\": 2}\n";
    CHECK_EQ_INT(task_rows_parse_jsonl("d.jsonl", two, strlen(two), &rows, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "d.jsonl:2") != NULL);
    xsa_error_clear(&err);
    // A field given twice: Python's json keeps the last, cJSON the first; neither is guessed.
    const char *twice = "{\"label\": 0, \"goal\": \"g\", \"label\": 1}\n";
    CHECK_EQ_INT(task_rows_parse_jsonl("d.jsonl", twice, strlen(twice), &rows, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "d.jsonl:1: field 'label' stands twice in one object") != NULL, "%s", err.msg);
    xsa_error_clear(&err);
    const char *broken = "{\"a\": \n";
    CHECK_EQ_INT(task_rows_parse_jsonl("d.jsonl", broken, strlen(broken), &rows, &err), XSA_EBADINPUT);
    xsa_error_clear(&err);
    CHECK_EQ_INT(task_rows_read_jsonl("tests/fixtures/no/such.jsonl", &rows, &err), XSA_EBADINPUT);
}

// Builds doc 0 of `task` from one JSON line; returns the rc and leaves the message in err.
static int doc_of(const char *task, const char *json, struct task_doc *d, xsa_error *err) {
    struct task_rows rows;
    xsa_error_clear(err);
    int rc = task_rows_parse_jsonl("rows.jsonl", json, strlen(json), &rows, err);
    if (rc) return rc;
    rc = task_find(task)->doc_from_row(rows.row[rows.n - 1], 0, d, rows.where[rows.n - 1], err);
    task_rows_free(&rows);
    return rc;
}

TEST(error_rows) {
    struct task_doc d;
    xsa_error err;
    // Missing and mistyped fields name the file:line and the field.
    CHECK_EQ_INT(doc_of("arc_easy", "\n{\"id\":\"x\",\"choices\":{\"text\":[\"a\"],\"label\":[\"A\"]},\"answerKey\":\"A\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "rows.jsonl:2: field 'question' missing") != NULL);
    CHECK_EQ_INT(doc_of("piqa", "{\"goal\":\"g\",\"sol1\":\"a\",\"sol2\":3,\"label\":0}", &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "rows.jsonl:1: field 'sol2' must be a string") != NULL);
    CHECK_EQ_INT(doc_of("boolq", "{\"question\":\"q\",\"passage\":\"p\",\"label\":0.5}", &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "'label'") != NULL);
    CHECK_EQ_INT(doc_of("lambada_openai", "{\"txt\":\"a b\"}", &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "field 'text' missing") != NULL);
    // answerKey not among the labels: lm-eval raises ValueError; we refuse the row.
    CHECK_EQ_INT(doc_of("arc_easy", "{\"id\":\"x\",\"question\":\"q\",\"choices\":{\"text\":[\"a\",\"b\"],\"label\":[\"A\",\"B\"]},\"answerKey\":\"E\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "answerKey 'E'") != NULL);
    // Empty choice lists.
    CHECK_EQ_INT(doc_of("openbookqa", "{\"id\":\"x\",\"question_stem\":\"q\",\"choices\":{\"text\":[],\"label\":[]},\"answerKey\":\"A\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "empty") != NULL);
    CHECK_EQ_INT(doc_of("hellaswag", "{\"activity_label\":\"a\",\"ctx_a\":\"b\",\"ctx_b\":\"c\",\"endings\":[],\"label\":\"0\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "'endings' is empty") != NULL);
    // Labels lm-eval cannot parse: int("x") and literal_eval("03") raise.
    CHECK_EQ_INT(doc_of("hellaswag", "{\"activity_label\":\"a\",\"ctx_a\":\"b\",\"ctx_b\":\"c\",\"endings\":[\"d\"],\"label\":\"x\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK_EQ_INT(doc_of("hellaswag", "{\"activity_label\":\"a\",\"ctx_a\":\"b\",\"ctx_b\":\"c\",\"endings\":[\"d\"],\"label\":\"03\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "leading zeros") != NULL);
    CHECK_EQ_INT(doc_of("winogrande", "{\"sentence\":\"a _ b\",\"option1\":\"x\",\"option2\":\"y\",\"answer\":\"3\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "'answer'") != NULL);
    CHECK_EQ_INT(doc_of("winogrande", "{\"sentence\":\"no blank\",\"option1\":\"x\",\"option2\":\"y\",\"answer\":\"1\"}",
                        &d, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "'_'") != NULL);
    // Labels out of range are kept, with gold -100 (always wrong), as lm-eval does.
    CHECK_EQ_INT(doc_of("boolq", "{\"question\":\"q\",\"passage\":\"p\",\"idx\":0,\"label\":5}", &d, &err), 0);
    CHECK_EQ_INT(d.gold, -100);
    task_doc_free(&d);
    CHECK_EQ_INT(doc_of("piqa", "{\"goal\":\"g\",\"sol1\":\"a\",\"sol2\":\"b\",\"label\":-1}", &d, &err), 0);
    CHECK_EQ_INT(d.gold, -100);
    task_doc_free(&d);
    CHECK_EQ_INT(doc_of("social_iqa", "{\"context\":\"c\",\"question\":\"q\",\"answerA\":\"-1\",\"answerB\":\"b\",\"answerC\":\"c\",\"label\":\"0\"}",
                        &d, &err), 0);
    CHECK_EQ_INT(d.gold, 0);  // "-1" is looked up among the choices, as lm-eval does
    task_doc_free(&d);
    // Invalid UTF-8 inside a row built in memory (adapters, not the reader) is refused too.
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "text", "bad \xff word");
    xsa_error_clear(&err);
    CHECK_EQ_INT(task_find("lambada_openai")->doc_from_row(row, 0, &d, "mem:1", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "mem:1: field 'text' is not valid UTF-8") != NULL);
    cJSON_Delete(row);
}

TEST(hellaswag_preprocess_rules) {
    struct sbuf out = {0};
    const char *s = "  a [title]b [x]c  d   e [no\nmatch] [o[p]q] \u3000";
    hellaswag_preprocess(s, strlen(s), &out);
    CHECK_STR(out.s, "a. b c d  e [no\nmatch] q]");  // values as Python's utils.preprocess gives
    sbuf_free(&out);
    // re.sub(r"\[.*?\]", "", ...) where several '[' share one stop (a '\n' or the end), as Python gives.
    static const char *const cases[][2] = {{"[[a]b", "b"}, {"x[[[\n[y]z", "x[[[\nz"}, {"[a\n[b]c[", "[a\nc["},
                                           {"[[[[", "[[[["}, {"a[b[c\nd]e]f", "a[b[c\nd]e]f"}, {"[\n]", "[\n]"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sbuf o = {0};
        hellaswag_preprocess(cases[i][0], strlen(cases[i][0]), &o);
        CHECK_MSG(!strcmp(o.s, cases[i][1]), "%s -> %s", cases[i][0], o.s);
        sbuf_free(&o);
    }
    // A row of 4 MiB of '[' (a stranger's HellaSwag copy) once took hours: each '[' scanned to the
    // end for its ']'. It is one linear pass now, and the text stays as it is. (No clock here: speed is
    // for bench/; a quadratic pass again would show as this test hanging.)
    size_t big = (size_t)4 << 20;
    char *b = malloc(big);
    memset(b, '[', big);
    hellaswag_preprocess(b, big, &out);
    CHECK(out.n == big && !memcmp(out.s, b, big));
    sbuf_free(&out);
    free(b);
}

RUN_TESTS(T(registry_has_nine_tasks), T(expand_groups_and_names), T(pystr_matches_python_cases),
          T(pystr_case_map_matches_python_for_every_code_point), T(pystr_utf8_validation),
          T(fixture_arc_easy), T(fixture_arc_challenge), T(fixture_boolq), T(fixture_hellaswag),
          T(fixture_lambada_openai), T(fixture_openbookqa), T(fixture_piqa), T(fixture_social_iqa),
          T(fixture_winogrande), T(load_docs_from_canonical_data_dir), T(rows_serialization_digest),
          T(rows_keys_in_schema_order), T(rows_reject_bad_lines), T(error_rows), T(hellaswag_preprocess_rules))
