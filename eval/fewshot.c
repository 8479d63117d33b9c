// fewshot.c: see fewshot.h. The sampler state runs through the docs in order, so all
// prefixes are drawn up front.
#include "eval/fewshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#include "eval/mt19937.h"

#define FEWSHOT_SEED 1234

// lm-eval: doc_to_text (or the gold context for multiple-input tasks) + target_delimiter +
// target. Our requests already carry the delimiter at the front of the continuation;
// loglikelihood tasks (LAMBADA) get target_delimiter " " in front of a target that itself
// starts with a space, exactly as lm-eval builds it.
static int append_example(const struct task_def *t, const struct task_doc *ex, struct sbuf *out) {
    int g = t->output == TASK_LOGLIKELIHOOD ? 0 : ex->gold;
    if (g < 0 || g >= ex->n_requests) return 1;  // lm-eval raises IndexError on such an example
    const struct task_request *r = &ex->req[g];
    sbuf_puts(out, r->context);
    if (t->output == TASK_LOGLIKELIHOOD) sbuf_puts(out, " ");
    sbuf_puts(out, r->continuation);
    sbuf_puts(out, "\n\n");
    return 0;
}

// lm-eval's `x != doc`: rows compare as dicts; two docs with the same requests and gold are
// taken as the same row.
static int same_doc(const struct task_doc *a, const struct task_doc *b) {
    if (a->n_requests != b->n_requests || a->gold != b->gold) return 0;
    for (int i = 0; i < a->n_requests; i++)
        if (strcmp(a->req[i].context, b->req[i].context) || strcmp(a->req[i].continuation, b->req[i].continuation))
            return 0;
    return 1;
}

int fewshot_prepare(struct fewshot *fs, const struct task_def *t, const struct task_doc *docs, int n_all, int n_eval,
                    int k, const struct data_options *data, xsa_error *err) {
    memset(fs, 0, sizeof *fs);
    // Few-shot examples come from the few-shot split, which is the evaluated split itself for
    // LAMBADA. lm-eval passes the evaluated doc for exclusion (drawing k + 1) when its config's
    // fewshot_split equals its test_split: both are unset for the tasks evaluated on a
    // validation split, so exactly those draw k + 1.
    int same = !strcmp(t->fewshot_split, t->split);
    int exclude = strcmp(t->split, "test") != 0;
    const struct task_doc *pool = docs;
    int n_pool = n_all;
    struct task_doc *own = NULL;
    int n_own = 0, rc = 0;
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
        data_rows_free(rows, n_rows);
        if (rc) return rc;
        pool = own;
        n_pool = n_own;
    }
    int draw = exclude ? k + 1 : k;
    if (draw > n_pool) {
        task_docs_free(own, n_own);
        return xsa_fail(err, XSA_EBADINPUT, "%s: --num-fewshot %d needs %d examples but its %s split has %d", t->name, k,
                        draw, t->fewshot_split, n_pool);
    }
    fs->prefix = xsa_calloc((size_t)n_eval, sizeof *fs->prefix);
    size_t *pick = xsa_malloc((size_t)draw * sizeof *pick);
    mt19937 rnd;
    mt19937_seed(&rnd, FEWSHOT_SEED);
    for (int d = 0; d < n_eval && !rc; d++) {
        if (mt19937_sample(&rnd, (size_t)n_pool, (size_t)draw, pick)) { rc = xsa_fail(err, XSA_ERUNTIME, "sampling failed"); break; }
        struct sbuf s = {0};
        int used = 0;
        for (int i = 0; i < draw && used < k && !rc; i++) {
            if (exclude && same_doc(&pool[pick[i]], &docs[d])) continue;  // `x != doc`
            if (append_example(t, &pool[pick[i]], &s))
                rc = xsa_fail(err, XSA_EBADINPUT,
                              "%s: few-shot example %zu of the %s split has a label outside its choices "
                              "(lm-eval fails on it too); remove it from the few-shot split",
                              t->name, pick[i], t->fewshot_split);
            used++;
        }
        if (!rc && used < k)  // lm-eval asserts len(examples) == k here
            rc = xsa_fail(err, XSA_EBADINPUT,
                          "%s doc %d: its few-shot draw holds the document itself more than once, leaving %d of %d "
                          "examples (lm-eval fails here too); remove duplicate rows from the %s split",
                          t->name, d, used, k, t->fewshot_split);
        if (!rc && !s.s) sbuf_puts(&s, "");
        fs->prefix[d] = s.s;
        fs->n_docs = d + 1;
    }
    free(pick);
    task_docs_free(own, n_own);
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
