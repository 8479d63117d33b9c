// hellaswag.c: HellaSwag (lm_eval/tasks/hellaswag/hellaswag.yaml + utils.py), process_docs in C:
//   query   = preprocess(activity_label + ": " + ctx_a + " " + ctx_b.capitalize())
//   choices = [preprocess(e) for e in endings]; target "{{label}}" (a digit string -> int).
// Rows flagged "preprocessed" (the klosax text dump, see adapters.c) carry query, choices and
// gold already; preprocess runs on them again, which only changes text lm-eval would also
// have changed (leftover [..] spans, double spaces).
#include <stdio.h>
#include <string.h>

#include "common/vec.h"
#include "tasks/docbuild.h"
#include "tasks/pystr.h"

void hellaswag_preprocess(const char *s, size_t n, struct sbuf *out) {
    size_t a = pystr_lstrip_off(s, n), b = pystr_rstrip_len(s, n);
    if (b < a) b = a;
    struct sbuf t1 = {0}, t2 = {0};
    sbuf_append(&t1, "", 0);
    sbuf_append(&t2, "", 0);
    // Each pass copies the text between its matches in one append (a row is mostly such text).
    // 1. " [title]" -> ". "
    size_t run = a;
    for (size_t i = a; i < b;) {
        if (s[i] == ' ' && b - i >= 8 && memcmp(s + i, " [title]", 8) == 0) {
            sbuf_append(&t1, s + run, i - run);
            sbuf_append(&t1, ". ", 2);
            run = i += 8;
        } else {
            i++;
        }
    }
    sbuf_append(&t1, s + run, b - run);
    // 2. re.sub(r"\[.*?\]", "", text): '[' up to the nearest ']' with no '\n' between.
    run = 0;
    for (size_t i = 0; i < t1.n;) {
        if (t1.s[i] == '[') {
            size_t j = i + 1;
            while (j < t1.n && t1.s[j] != ']' && t1.s[j] != '\n') j++;
            if (j < t1.n && t1.s[j] == ']') {
                sbuf_append(&t2, t1.s + run, i - run);
                run = i = j + 1;
                continue;
            }
            // No ']' before the '\n' (or the end) at j: every '[' before j meets that same stop
            // first, so none of them opens a match either. Going on at j keeps the pass linear
            // (from each '[', a row of 4 MiB of "[" took hours).
            i = j;
            continue;
        }
        i++;
    }
    sbuf_append(&t2, t1.s + run, t1.n - run);
    // 3. One left-to-right pass of "  " -> " " (three spaces become two).
    run = 0;
    for (size_t i = 0; i < t2.n;) {
        if (i + 1 < t2.n && t2.s[i] == ' ' && t2.s[i + 1] == ' ') {
            sbuf_append(out, t2.s + run, i + 1 - run);  // (the first of the two spaces)
            run = i += 2;
        } else {
            i++;
        }
    }
    sbuf_append(out, t2.s + run, t2.n - run);
    sbuf_append(out, "", 0);
    sbuf_free(&t1);
    sbuf_free(&t2);
}

// lm-eval's gold from the label as "{{label}}" renders it: an isdigit() string is
// literal_eval'd to an int (leading zeros other than all-zero are a SyntaxError there);
// any other string is looked up among the choices.
static int gold_from_label(const char *lab, const struct task_doc *d, const char *where, xsa_error *err) {
    size_t n = strlen(lab), i = 0;
    while (i < n && lab[i] >= '0' && lab[i] <= '9') i++;
    if (n > 0 && i == n) {
        size_t z = 0;
        while (z < n && lab[z] == '0') z++;
        if (z > 0 && z < n)
            return xsa_fail(err, XSA_EBADINPUT, "%s: field 'label' \"%s\" has leading zeros (lm-eval raises SyntaxError)", where, lab), -1000;
        long long v = 0;
        for (i = 0; i < n && v < 1000000; i++) v = v * 10 + (lab[i] - '0');
        return doc_gold_in_range(v, d->n_requests);
    }
    for (int k = 0; k < d->n_requests; k++)
        if (strcmp(d->req[k].continuation + 1, lab) == 0) return k;
    return -100;
}

// Fills the doc from the query and the raw endings (each is preprocessed here).
static int build(const char *query, size_t qn, const cJSON *endings, int n_end, int doc_id,
                 struct task_doc *out, xsa_error *err) {
    int rc = doc_alloc(out, doc_id, n_end, err);
    if (rc) return rc;
    int i = 0;
    for (const cJSON *e = endings->child; e; e = e->next, i++) {
        struct sbuf c = {0};
        hellaswag_preprocess(e->valuestring, strlen(e->valuestring), &c);
        doc_set_request(out, i, query, qn, " ", c.s, c.n, (double)pystr_len(c.s, c.n));
        sbuf_free(&c);
    }
    return 0;
}

static int from_preprocessed(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                             xsa_error *err) {
    const char *query;
    const cJSON *choices;
    int n, gold, rc;
    if ((rc = row_get_string(row, "query", where, &query, err))) return rc;
    if ((rc = row_get_string_array(row, "choices", where, &choices, &n, err))) return rc;
    if ((rc = row_get_int(row, "gold", where, &gold, err))) return rc;
    if (n == 0) return xsa_fail(err, XSA_EBADINPUT, "%s: field 'choices' is empty", where);
    struct sbuf q = {0};
    hellaswag_preprocess(query, strlen(query), &q);
    rc = build(q.s, q.n, choices, n, doc_id, out, err);
    sbuf_free(&q);
    if (!rc) out->gold = doc_gold_in_range(gold, n);
    return rc;
}

int hellaswag_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                           xsa_error *err) {
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "preprocessed")))
        return from_preprocessed(row, doc_id, out, where, err);
    const char *act, *ctx_a, *ctx_b;
    const cJSON *endings;
    int n_end, rc;
    if ((rc = row_get_string(row, "activity_label", where, &act, err))) return rc;
    if ((rc = row_get_string(row, "ctx_a", where, &ctx_a, err))) return rc;
    if ((rc = row_get_string(row, "ctx_b", where, &ctx_b, err))) return rc;
    if ((rc = row_get_string_array(row, "endings", where, &endings, &n_end, err))) return rc;
    if (n_end == 0) return xsa_fail(err, XSA_EBADINPUT, "%s: field 'endings' is empty", where);
    // The label: a string "0".."3" in the HF schema (an int in the original JSONL).
    const cJSON *lab = cJSON_GetObjectItemCaseSensitive(row, "label");
    char numbuf[32];
    const char *label;
    if (!lab) return xsa_fail(err, XSA_EBADINPUT, "%s: field 'label' missing", where);
    if (cJSON_IsNumber(lab) && lab->valuedouble > -1e15 && lab->valuedouble < 1e15 &&
        lab->valuedouble == (double)(long long)lab->valuedouble) {
        snprintf(numbuf, sizeof numbuf, "%lld", (long long)lab->valuedouble);
        label = numbuf;
    } else if ((rc = row_get_string(row, "label", where, &label, err))) {
        return rc;
    }
    long long ignored;
    if (!py_parse_int(label, strlen(label), &ignored))  // process_docs does int(doc["label"])
        return xsa_fail(err, XSA_EBADINPUT, "%s: field 'label' \"%.20s\" is not an integer (lm-eval's int() raises)", where, label);
    struct sbuf raw = {0}, q = {0};
    sbuf_printf(&raw, "%s: %s ", act, ctx_a);
    pystr_capitalize(ctx_b, strlen(ctx_b), &raw);
    hellaswag_preprocess(raw.s, raw.n, &q);
    sbuf_free(&raw);
    rc = build(q.s, q.n, endings, n_end, doc_id, out, err);
    sbuf_free(&q);
    if (rc) return rc;
    int gold = gold_from_label(label, out, where, err);
    if (gold == -1000) return doc_fail(out, XSA_EBADINPUT);
    out->gold = gold;
    return 0;
}
