// test_ppl_units.c: ppl's interval over a token stream's documents (eval/ppl.h's
// ppl_units_documents, then ppl_summarize): each target counted in the document it lies in,
// whichever window scored it, against tests/fixtures/stats/stream_units.json (made by
// tools/fixtures/make_stream_units_fixture.py: the CR2 / Bell-McCaffrey interval by the matrix
// formulas over per-target rows grouped by document, CR1 checked against statsmodels).
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/ppl.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define REF "tests/fixtures/stats/stream_units.json"

static int rel_close(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(b), 1e-300); }

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

// The case's stream as ppl_inputs_load leaves a shard (one document of every token, a stream),
// and its targets as ppl_score gives them: each with the window that scored it as its unit.
static void load_case(const cJSON *c, struct ppl_docs *d, struct ppl_scores s[2]) {
    const cJSON *tok = item(c, "tokens"), *where = item(c, "where"), *win = item(c, "window");
    const cJSON *na = item(c, "nll_a"), *nb = item(c, "nll_b");
    int nt = cJSON_GetArraySize(tok), n = cJSON_GetArraySize(where);
    int32_t *v = calloc((size_t)nt, sizeof *v);
    for (int i = 0; i < nt; i++) v[i] = (int32_t)cJSON_GetArrayItem(tok, i)->valuedouble;
    memset(d, 0, sizeof *d);
    xsa_error err = {0};
    CHECK_EQ_INT(ppl_docs_add(d, v, (size_t)nt, &err), 0);
    d->stream = 1;
    free(v);
    int last = 0;
    for (int m = 0; m < 2; m++) {
        ppl_scores_alloc(&s[m], (size_t)n);
        for (int t = 0; t < n; t++) {
            s[m].nll[t] = (float)cJSON_GetArrayItem(m ? nb : na, t)->valuedouble;  // (float32 values: exact)
            s[m].greedy[t] = 0;
            s[m].ctx[t] = 1;
            s[m].unit[t] = (int32_t)cJSON_GetArrayItem(win, t)->valuedouble;
            s[m].where[t] = (size_t)cJSON_GetArrayItem(where, t)->valuedouble;
            if (s[m].unit[t] > last) last = s[m].unit[t];
        }
        s[m].bytes = NAN;
    }
    s[0].n_units = s[1].n_units = last + 1;
}

static void check_interval(const struct ppl_summary *sum, const cJSON *want, const char *name) {
    CHECK_MSG(sum->n_units == (int)item(want, "units")->valuedouble, "%s: %d units", name, sum->n_units);
    CHECK_MSG(rel_close(sum->delta, item(want, "delta")->valuedouble, 1e-9), "%s: delta %.17g", name, sum->delta);
    CHECK_MSG(rel_close(sum->se, item(want, "se")->valuedouble, 1e-9), "%s: se %.17g", name, sum->se);
    CHECK_MSG(rel_close(sum->df, item(want, "df")->valuedouble, 1e-9), "%s: df %.17g", name, sum->df);
    CHECK_MSG(rel_close(sum->dlo, item(want, "lo")->valuedouble, 1e-9), "%s: lo %.17g", name, sum->dlo);
    CHECK_MSG(rel_close(sum->dhi, item(want, "hi")->valuedouble, 1e-9), "%s: hi %.17g", name, sum->dhi);
}

// Documents found from the BOS: the units, their count and the interval over them are the
// reference's; the windows' interval (ppl's units for shards before) is not.
TEST(stream_interval_is_over_documents) {
    cJSON *ref = fixture_read_json(REF);
    CHECK(ref != NULL);
    if (!ref) return;
    double level = item(ref, "level")->valuedouble;
    int n_cases = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, item(ref, "cases")) {
        const char *name = item(c, "name")->valuestring;
        if (!item(c, "documents")) continue;
        n_cases++;
        struct ppl_docs d;
        struct ppl_scores s[2];
        load_case(c, &d, s);
        int bos = (int)item(c, "bos")->valuedouble;
        CHECK_EQ_INT(ppl_units_documents(&d, bos, s, 2), (int)item(c, "n_documents")->valuedouble);
        const cJSON *doc = item(c, "document");
        int same = 1;
        for (size_t t = 0; t < s[0].n; t++)
            same &= s[0].unit[t] == (int32_t)cJSON_GetArrayItem(doc, (int)t)->valuedouble && s[1].unit[t] == s[0].unit[t];
        CHECK_MSG(same, "%s: a target's document differs from the reference's", name);
        // targets out of stream order (test-time training scores the stream's last ones again)
        struct ppl_docs d2;
        struct ppl_scores r[2];
        load_case(c, &d2, r);
        for (size_t i = 0, j = r[0].n - 1; i < j; i++, j--) {
            size_t w = r[0].where[i];
            r[0].where[i] = r[0].where[j], r[0].where[j] = w;
        }
        CHECK_EQ_INT(ppl_units_documents(&d2, bos, r, 1), (int)item(c, "n_documents")->valuedouble);
        same = 1;
        for (size_t t = 0; t < r[0].n; t++) same &= r[0].unit[t] == s[0].unit[r[0].n - 1 - t];
        CHECK_MSG(same, "%s: targets in reverse order find other documents", name);
        ppl_scores_free(&r[0]);
        ppl_scores_free(&r[1]);
        ppl_docs_free(&d2);
        struct ppl_summary sum;
        xsa_error err = {0};
        CHECK_EQ_INT(ppl_summarize(s, 2, NULL, NULL, 0, (int)item(c, "context")->valuedouble, level, &sum, &err), 0);
        check_interval(&sum, item(c, "documents"), name);
        const cJSON *w = item(c, "windows");
        CHECK_MSG(!rel_close(sum.se, item(w, "se")->valuedouble, 1e-3) && sum.n_units < (int)item(w, "units")->valuedouble,
                  "%s: the documents' interval is the windows'", name);
        ppl_scores_free(&s[0]);
        ppl_scores_free(&s[1]);
        ppl_docs_free(&d);
    }
    CHECK_EQ_INT(n_cases, 3);
    cJSON_Delete(ref);
}

// No BOS in the stream, or none known: nothing changes, and the interval is the windows'.
TEST(stream_without_bos_keeps_windows) {
    cJSON *ref = fixture_read_json(REF);
    CHECK(ref != NULL);
    if (!ref) return;
    double level = item(ref, "level")->valuedouble;
    const cJSON *c;
    int n_cases = 0;
    cJSON_ArrayForEach(c, item(ref, "cases")) {
        const char *name = item(c, "name")->valuestring;
        int no_bos = !item(c, "documents");
        n_cases++;
        struct ppl_docs d;
        struct ppl_scores s[2];
        load_case(c, &d, s);
        CHECK_EQ_INT(ppl_units_documents(&d, no_bos ? (int)item(c, "bos")->valuedouble : -1, s, 2), 0);
        const cJSON *win = item(c, "window");
        int same = 1;
        for (size_t t = 0; t < s[0].n; t++) same &= s[0].unit[t] == (int32_t)cJSON_GetArrayItem(win, (int)t)->valuedouble;
        CHECK_MSG(same, "%s: the units changed", name);
        struct ppl_summary sum;
        xsa_error err = {0};
        CHECK_EQ_INT(ppl_summarize(s, 2, NULL, NULL, 0, (int)item(c, "context")->valuedouble, level, &sum, &err), 0);
        check_interval(&sum, item(c, "windows"), name);
        ppl_scores_free(&s[0]);
        ppl_scores_free(&s[1]);
        ppl_docs_free(&d);
    }
    CHECK_EQ_INT(n_cases, 4);
    cJSON_Delete(ref);
}

RUN_TESTS(T(stream_interval_is_over_documents), T(stream_without_bos_keeps_windows))
