// fewshot.c: see fewshot.h. The sampler state runs through the docs in order, so all
// prefixes are drawn up front.
#include "eval/fewshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "tasks/rows.h"

#include "eval/mt19937.h"

#define FEWSHOT_SEED 1234

// lm-eval's build_qa_turn: doc_to_text (or the gold context for multiple-input tasks) +
// target_delimiter + target + fewshot_delimiter "\n\n"; an empty target (a WinoGrande sentence
// that ends at its blank) has no answer turn, so neither delimiter follows its text. Our
// requests already carry the delimiter at the front of the continuation; loglikelihood tasks
// (LAMBADA) get target_delimiter " " in front of a target that itself starts with a space,
// exactly as lm-eval builds it.
static int append_example(const struct task_def *t, const struct task_doc *ex, struct sbuf *out) {
    int g = t->output == TASK_LOGLIKELIHOOD ? 0 : ex->gold;
    if (g < 0 || g >= ex->n_requests) return 1;  // lm-eval raises IndexError on such an example
    const struct task_request *r = &ex->req[g];
    sbuf_puts(out, r->context);
    if (t->output == TASK_MULTIPLE_INPUT && !strcmp(r->continuation, " ")) return 0;  // delimiter + "": no answer
    if (t->output == TASK_LOGLIKELIHOOD) sbuf_puts(out, " ");
    sbuf_puts(out, r->continuation);
    sbuf_puts(out, "\n\n");
    return 0;
}

char **fewshot_row_json(cJSON *const *rows, int n) {
    char **j = xsa_calloc(n > 0 ? (size_t)n : 1, sizeof *j);
    for (int i = 0; i < n; i++) {
        j[i] = cJSON_PrintUnformatted(rows[i]);
        if (!j[i]) j[i] = xsa_strdup("");  // (out of memory: xsa_* would have stopped; cJSON's own)
    }
    return j;
}

void fewshot_row_json_free(char **row_json, int n) {
    for (int i = 0; row_json && i < n; i++) free(row_json[i]);
    free(row_json);
}

int fewshot_prepare(struct fewshot *fs, const struct task_def *t, const struct task_doc *docs, char *const *row_json,
                    int n_all, int n_eval, int k, const struct data_options *data, xsa_error *err) {
    memset(fs, 0, sizeof *fs);
    // Few-shot examples come from the few-shot split, which is the evaluated split itself for
    // LAMBADA. lm-eval passes the evaluated doc for exclusion (drawing k + 1) when its config's
    // fewshot_split equals its test_split: both are unset for the tasks evaluated on a
    // validation split, so exactly those draw k + 1.
    int same = !strcmp(t->fewshot_split, t->split);
    int exclude = strcmp(t->split, "test") != 0;
    const struct task_doc *pool = docs;
    char *const *pool_json = row_json;
    int n_pool = n_all;
    struct task_doc *own = NULL;
    char **own_json = NULL;
    int n_own = 0, rc = 0;
    if (exclude && !row_json) return xsa_fail(err, XSA_ERUNTIME, "%s: few-shot rows not kept", t->name);
    if (!same) {
        struct data_options none = {0};
        cJSON **rows = NULL;
        int n_rows = 0;
        char source[512];
        if ((rc = data_load_split(t, t->fewshot_split, data ? data : &none, &rows, &n_rows, source, err))) {
            char msg[sizeof err->msg];  // said as a --num-fewshot need
            snprintf(msg, sizeof msg, "%s", err->msg);
            err->code = 0;
            return xsa_fail(err, rc, "--num-fewshot: %s", msg);
        }
        char **where = data_row_names(source, n_rows);  // named as the evaluated split's rows are
        rc = task_docs_from_rows(t, rows, where, n_rows, 0, &own, &n_own, err);
        data_row_names_free(where, n_rows);
        char *ser = NULL;
        size_t ser_n = 0;
        if (!rc && !(rc = task_rows_serialize_array(rows, n_rows, &ser, &ser_n, err)))
            rc = sha256_hex(ser, ser_n, fs->sha256, err);
        free(ser);
        snprintf(fs->source, sizeof fs->source, "%s", source);
        if (!rc) own_json = fewshot_row_json(rows, n_rows);
        data_rows_free(rows, n_rows);
        if (rc) return rc;
        pool = own;
        pool_json = own_json;
        n_pool = n_own;
    }
    int draw = exclude ? k + 1 : k;
    if (draw > n_pool) {
        task_docs_free(own, n_own);
        fewshot_row_json_free(own_json, n_own);
        return xsa_fail(err, XSA_EBADINPUT, "%s: --num-fewshot %d needs %d examples but its %s split has %d", t->name, k,
                        draw, t->fewshot_split, n_pool);
    }
    fs->prefix = xsa_calloc((size_t)n_eval, sizeof *fs->prefix);
    size_t *pick = xsa_malloc((size_t)(n_pool + 1) * sizeof *pick);
    size_t *rest = xsa_malloc((size_t)(n_pool + 1) * sizeof *rest);  // the pool without the doc's copies
    size_t *chosen = xsa_malloc((size_t)(n_pool + 1) * sizeof *chosen);
    mt19937 rnd;
    mt19937_seed(&rnd, FEWSHOT_SEED);
    for (int d = 0; d < n_eval && !rc; d++) {
        if (mt19937_sample(&rnd, (size_t)n_pool, (size_t)draw, pick)) { rc = xsa_fail(err, XSA_ERUNTIME, "sampling failed"); break; }
        size_t n_chosen = 0;
        for (int i = 0; i < draw && (int)n_chosen < k; i++)
            if (!exclude || strcmp(pool_json[pick[i]], row_json[d])) chosen[n_chosen++] = pick[i];  // `x != doc`
        if (exclude && (int)n_chosen < k) {
            // v0.4.13: two copies of the doc drawn; `rnd.sample([x for x in pool if x != doc], k)`.
            size_t n_rest = 0;
            for (int i = 0; i < n_pool; i++)
                if (strcmp(pool_json[i], row_json[d])) rest[n_rest++] = (size_t)i;
            if ((int)n_rest < k) {
                rc = xsa_fail(err, XSA_EBADINPUT, "%s doc %d: --num-fewshot %d needs %d examples other than the document "
                              "itself, but the %s split has %zu", t->name, d, k, k, t->fewshot_split, n_rest);
                break;
            }
            if (mt19937_sample(&rnd, n_rest, (size_t)k, pick)) { rc = xsa_fail(err, XSA_ERUNTIME, "sampling failed"); break; }
            for (int i = 0; i < k; i++) chosen[i] = rest[pick[i]];
            n_chosen = (size_t)k;
        }
        struct sbuf s = {0};
        for (size_t i = 0; i < n_chosen && !rc; i++)
            if (append_example(t, &pool[chosen[i]], &s))
                rc = xsa_fail(err, XSA_EBADINPUT,
                              "%s: few-shot example %zu of the %s split has a label outside its choices "
                              "(lm-eval fails on it too); remove it from the few-shot split",
                              t->name, chosen[i], t->fewshot_split);
        if (!rc && !s.s) sbuf_puts(&s, "");
        fs->prefix[d] = s.s;
        fs->n_docs = d + 1;
    }
    free(pick);
    free(rest);
    free(chosen);
    task_docs_free(own, n_own);
    fewshot_row_json_free(own_json, n_own);
    if (rc) fewshot_free(fs);
    return rc;
}

int fewshot_context(const struct fewshot *fs, int doc, struct sbuf *out, xsa_error *err) {
    if (doc < 0 || doc >= fs->n_docs) return xsa_fail(err, XSA_ERUNTIME, "few-shot context for doc %d not prepared", doc);
    sbuf_puts(out, fs->prefix[doc]);
    return 0;
}

void fewshot_free(struct fewshot *fs) {
    for (int d = 0; d < fs->n_docs; d++) free(fs->prefix[d]);
    free(fs->prefix);
    memset(fs, 0, sizeof *fs);
}
