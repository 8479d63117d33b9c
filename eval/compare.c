// compare.c: paired SA-vs-XSA statistics over two results files. The statistics themselves
// live in eval/stats.c; this file pairs documents, picks metrics and checks comparability
// (reports/compare_report.c lays out the report).
#include "eval/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "eval/metrics.h"
#include "eval/stats.h"
#include "tasks/task.h"

static int appendf(char *buf, size_t cap, const char *fmt, const char *a, const char *b, const char *c) {
    size_t n = strlen(buf);
    if (n + 3 >= cap) return 0;
    if (n) { memcpy(buf + n, "; ", 3); n += 2; }
    snprintf(buf + n, cap - n, fmt, a, b, c);
    return 0;
}

// Appends ", name" (or "name") to buf.
static void join_name(char *buf, size_t cap, const char *name) {
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", name);
}

double compare_min_iters(int n, double alpha) {
    double x = 2.0 * n / alpha, r = nearbyint(x);  // (alpha is a decimal, rarely exact: a few ulps either way)
    return fabs(x - r) <= x * 1e-14 ? r : ceil(x);
}

int compare_inputs_differ(const struct results *a, const struct results *b, char *why, size_t cap) {
    why[0] = '\0';
    char only_a[512] = "", only_b[512] = "";
    for (int i = 0; i < a->n_tasks; i++)
        if (!results_find_task(b, a->tasks[i].name)) join_name(only_a, sizeof only_a, a->tasks[i].name);
    for (int i = 0; i < b->n_tasks; i++)
        if (!results_find_task(a, b->tasks[i].name)) join_name(only_b, sizeof only_b, b->tasks[i].name);
    if (only_a[0] || only_b[0])
        appendf(why, cap, "task sets differ (only in A: %s; only in B: %s)%s", only_a[0] ? only_a : "none",
                only_b[0] ? only_b : "none", "");
    if (a->limit != b->limit || a->limit_fraction != b->limit_fraction) {
        char la[32], lb[32];
        appendf(why, cap, "limits differ (A: %s, B: %s)%s", results_limit_text(a, la, sizeof la),
                results_limit_text(b, lb, sizeof lb), "");
    }
    if (a->num_fewshot != b->num_fewshot) {
        char fa[32], fb[32];
        snprintf(fa, sizeof fa, "%d", a->num_fewshot);
        snprintf(fb, sizeof fb, "%d", b->num_fewshot);
        appendf(why, cap, "num_fewshot differs (A: %s, B: %s)%s", fa, fb, "");
    }
    for (int i = 0; i < a->n_tasks; i++) {
        const struct task_result *ta = &a->tasks[i], *tb = results_find_task(b, ta->name);
        if (!tb || !strcmp(ta->data_sha256, tb->data_sha256)) continue;
        char da[13], db[13];  // the digests' first 12 hex digits, as the reports show them
        snprintf(da, sizeof da, "%.12s", ta->data_sha256);
        snprintf(db, sizeof db, "%.12s", tb->data_sha256);
        appendf(why, cap, "%s data differ (sha256 %s vs %s)", ta->name, da, db);
    }
    for (int i = 0; i < a->n_tasks; i++) {  // the few-shot examples' split (absent from older files)
        const struct task_result *ta = &a->tasks[i], *tb = results_find_task(b, ta->name);
        if (!tb || !ta->fewshot_sha256[0] || !tb->fewshot_sha256[0] || !strcmp(ta->fewshot_sha256, tb->fewshot_sha256))
            continue;
        char da[13], db[13];
        snprintf(da, sizeof da, "%.12s", ta->fewshot_sha256);
        snprintf(db, sizeof db, "%.12s", tb->fewshot_sha256);
        appendf(why, cap, "%s few-shot data differ (sha256 %s vs %s)", ta->name, da, db);
    }
    return why[0] != '\0';
}

void comparison_free(struct comparison *c) {
    free(c->rows);
    memset(c, 0, sizeof *c);
}

static int cmp_pair(const void *x, const void *y) {
    const int *p = x, *q = y;
    return (p[0] > q[0]) - (p[0] < q[0]);
}

// A task's (doc_id, index) pairs sorted by doc_id.                 returns (n, 2), caller frees
static int *sorted_ids(const struct task_result *t) {
    int *s = xsa_malloc(sizeof(int) * 2 * (size_t)(t->n_docs + 1));
    for (int i = 0; i < t->n_docs; i++) { s[2 * i] = t->doc_id[i]; s[2 * i + 1] = i; }
    qsort(s, (size_t)t->n_docs, 2 * sizeof(int), cmp_pair);
    return s;
}

// Pairs the documents of ta and tb by doc_id. Outputs (idx_a[k], idx_b[k]) for k < *n_out in
// doc_id order, so the bootstrap's draws do not depend on how a file lists its documents. With
// `intersect` documents missing from either side are dropped; otherwise a difference is an
// error.                                                            idx_a, idx_b: (ta->n_docs)
// na_, nb_: how the messages name the two files ("A (path)"), so that a refusal says which file lacks a document.
static int pair_docs(const struct task_result *ta, const struct task_result *tb, int intersect, const char *na_,
                     const char *nb_, int *idx_a, int *idx_b, int *n_out, xsa_error *err) {
    int *sa = sorted_ids(ta), *sb = sorted_ids(tb);
    int rc = 0, k = 0, i = 0, j = 0, na = ta->n_docs, nb = tb->n_docs;
    for (int d = 1; d < na && !rc; d++)
        if (sa[2 * d] == sa[2 * d - 2])
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: document id %d appears twice in %s", ta->name, sa[2 * d], na_);
    for (int d = 1; d < nb && !rc; d++)
        if (sb[2 * d] == sb[2 * d - 2])
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: document id %d appears twice in %s", ta->name, sb[2 * d], nb_);
    while (!rc && (i < na || j < nb)) {
        int ia = i < na ? sa[2 * i] : -1, ib = j < nb ? sb[2 * j] : -1;
        if (i < na && j < nb && ia == ib) {
            idx_a[k] = sa[2 * i++ + 1];
            idx_b[k++] = sb[2 * j++ + 1];
        } else if (j >= nb || (i < na && ia < ib)) {  // in A only
            if (!intersect)
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: document %d of %s is not in %s; paired statistics need the "
                              "same documents (xsa-eval compare --force pairs those both have)", ta->name, ia, na_, nb_);
            i++;
        } else {  // in B only
            if (!intersect)
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: document %d of %s is not in %s; paired statistics need the "
                              "same documents (xsa-eval compare --force pairs those both have)", ta->name, ib, nb_, na_);
            j++;
        }
    }
    if (!rc && k == 0) rc = xsa_fail(err, XSA_EBADINPUT, "%s: the two files share no documents", ta->name);
    free(sa);
    free(sb);
    *n_out = k;
    return rc;
}

static int per_doc_ok(const double *x, int n) {
    for (int i = 0; i < n; i++)
        if (x[i] != 0 && x[i] != 1) return 0;
    return 1;
}

// One task: fills row, and the paired 0/1 arrays *pa, *pb (n = row->n, caller frees) that the
// averages resample.
static int compare_task(const struct task_result *ta, const struct task_result *tb, const struct compare_options *opt,
                        struct comparison *c, int intersect, struct compare_row *row, double **pa, double **pb,
                        xsa_error *err) {
    const char *metric = results_preferred_metric(ta);
    if (opt->metric && strcmp(opt->metric, "auto")) metric = opt->metric;
    if (results_metric_index(ta, metric) < 0 && !strcmp(metric, "acc_norm")) metric = "acc";  // BoolQ etc.
    int ma = results_metric_index(ta, metric), mb = results_metric_index(tb, metric);
    char na_[600], nb_[600];  // "A (path)", "B (path)": the files as the messages name them
    snprintf(na_, sizeof na_, opt->path_a ? "A (%.500s)" : "A", opt->path_a);
    snprintf(nb_, sizeof nb_, opt->path_b ? "B (%.500s)" : "B", opt->path_b);
    if (ma < 0 || mb < 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: metric %s is missing in %s", ta->name, metric, ma < 0 ? na_ : nb_);
    snprintf(row->task, sizeof row->task, "%s", ta->name);
    snprintf(row->metric, sizeof row->metric, "%s", metric);
    int n = ta->n_docs;
    int *ia = xsa_malloc(sizeof(int) * (size_t)(n + 1)), *ib = xsa_malloc(sizeof(int) * (size_t)(n + 1));  // (n)
    *pa = xsa_malloc(sizeof(double) * (size_t)(n + 1));                                                     // (n)
    *pb = xsa_malloc(sizeof(double) * (size_t)(n + 1));                                                     // (n)
    int rc = 0;
    if (!rc) rc = pair_docs(ta, tb, intersect, na_, nb_, ia, ib, &n, err);
    for (int k = 0; !rc && k < n; k++) {
        (*pa)[k] = ta->per_doc[ma][ia[k]];
        (*pb)[k] = tb->per_doc[mb][ib[k]];
    }
    if (!rc && (n != ta->n_docs || n != tb->n_docs)) {  // only under --force: the report says so
        char why[160];
        snprintf(why, sizeof why, "%s: %d documents paired, of A's %d and B's %d", ta->name, n, ta->n_docs, tb->n_docs);
        appendf(c->not_comparable, sizeof c->not_comparable, "%s%s%s", why, "", "");
        c->forced = 1;
    }
    if (!rc && (!per_doc_ok(*pa, n) || !per_doc_ok(*pb, n)))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: per-document %s values must be 0 or 1", ta->name, metric);
    if (!rc) {
        row->n = n;
        // The files' own aggregates when every document is paired, else those of the pairs.
        if (n == ta->n_docs && n == tb->n_docs) {
            row->a = ta->value[ma];
            row->b = tb->value[mb];
            row->a_se = ta->stderr_[ma];
            row->b_se = tb->stderr_[mb];
        } else {
            double sa = 0, sb = 0;
            for (int k = 0; k < n; k++) { sa += (*pa)[k]; sb += (*pb)[k]; }
            row->a = sa / n;
            row->b = sb / n;
            row->a_se = n > 1 ? sqrt(row->a * (1 - row->a) / (n - 1)) : NAN;
            row->b_se = n > 1 ? sqrt(row->b * (1 - row->b) / (n - 1)) : NAN;
        }
        for (int k = 0; k < n; k++) {
            row->n10 += (*pa)[k] == 1 && (*pb)[k] == 0;
            row->n01 += (*pa)[k] == 0 && (*pb)[k] == 1;
        }
        row->p = stats_mcnemar_exact_p(row->n10, row->n01);
        double d, lo, hi;
        if (stats_paired_bootstrap_ci(*pa, *pb, n, c->iters, c->seed, c->level, &d, &lo, &hi))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: no paired documents to bootstrap", ta->name);
        row->delta = d * 100;
        // Resampling one document gives it back every time: a zero-width "interval" that is none.
        row->lo = n > 1 ? lo * 100 : NAN;
        row->hi = n > 1 ? hi * 100 : NAN;
        int pa_i = results_metric_index(ta, "perplexity"), pb_i = results_metric_index(tb, "perplexity");
        if (pa_i >= 0 && pb_i >= 0) {
            row->has_ppl = 1;
            row->ppl_a = ta->value[pa_i];
            row->ppl_b = tb->value[pb_i];
        }
        if (pa_i >= 0 && pb_i >= 0 && (n != ta->n_docs || n != tb->n_docs)) {  // as the accuracies: the pairs' own
            double *la = xsa_malloc(sizeof(double) * (size_t)n), *lb = xsa_malloc(sizeof(double) * (size_t)n);
            for (int k = 0; k < n; k++) la[k] = ta->per_doc[pa_i][ia[k]], lb[k] = tb->per_doc[pb_i][ib[k]];
            row->ppl_a = metrics_perplexity(la, n);
            row->ppl_b = metrics_perplexity(lb, n);
            free(la), free(lb);
        }
    }
    free(ia);
    free(ib);
    return rc;
}

// The per-task decisions as one family: without a correction, nine tasks with no difference
// anywhere read some task real 28-35% of the time at alpha 0.05 (docs/statistics.md). Holm's
// step-down on the exact McNemar p-values holds the family-wise rate at alpha whatever the
// intervals do (real needs both), and the interval stays the (1 - alpha) one the report shows.
static void family_decisions(struct comparison *c) {
    double *p = xsa_malloc(sizeof(double) * (size_t)c->n_rows);
    for (int i = 0; i < c->n_rows; i++) p[i] = c->rows[i].p;
    c->n_family = c->n_rows;
    if (stats_holm_adjust(p, c->n_rows, p))  // (an exact p is always in [0, 1]; never adjust down)
        for (int i = 0; i < c->n_rows; i++) p[i] = 1.0;
    for (int i = 0; i < c->n_rows; i++) {
        struct compare_row *r = &c->rows[i];
        r->p_holm = p[i];
        r->real = (r->lo > COMPARE_EPS_POINTS || r->hi < -COMPARE_EPS_POINTS) && r->p_holm < c->alpha;
    }
    free(p);
}

// Average over the rows selected by `paper_only`.                  pa, pb: (n_rows) per-row arrays
static int compare_average(struct comparison *c, double *const *pa, double *const *pb, int paper_only,
                           struct compare_avg *avg, xsa_error *err) {
    const double **sa = xsa_malloc(sizeof(double *) * (size_t)(c->n_rows + 1));
    const double **sb = xsa_malloc(sizeof(double *) * (size_t)(c->n_rows + 1));
    int *n = xsa_malloc(sizeof(int) * (size_t)(c->n_rows + 1));
    int rc = 0;
    int k = 0;
    double sum_a = 0, sum_b = 0, var_a = 0, var_b = 0;
    int one_doc = 0;  // tasks of one document: constants in the resampling; all of them, no interval
    // Tasks in registry order, whatever a file's order, so the draws depend on the data only
    // (rows of tasks outside the registry, built in memory, after them in their order).
    int *order = xsa_malloc(sizeof(int) * (size_t)(c->n_rows + 1)), n_order = 0, n_reg;
    const struct task_def *reg = task_registry(&n_reg);
    for (int t = 0; t <= n_reg; t++)
        for (int i = 0; i < c->n_rows; i++)
            if (t < n_reg ? !strcmp(c->rows[i].task, reg[t].name) : !task_find(c->rows[i].task)) order[n_order++] = i;
    for (int o = 0; o < n_order; o++) {
        int i = order[o];
        const struct compare_row *r = &c->rows[i];
        if (paper_only && !results_is_paper_task(r->task)) continue;
        sa[k] = pa[i];
        sb[k] = pb[i];
        n[k++] = r->n;
        one_doc += r->n < 2;
        sum_a += r->a;
        sum_b += r->b;
        var_a += r->a_se * r->a_se;
        var_b += r->b_se * r->b_se;
    }
    if (!rc && k > 0) {
        double d, lo, hi;
        if (stats_paired_bootstrap_ci_multi(sa, sb, n, k, c->iters, c->seed, c->level, &d, &lo, &hi))
            rc = xsa_fail(err, XSA_EBADINPUT, "average: no paired documents to bootstrap");
        avg->present = 1;
        avg->n_tasks = k;
        avg->a = sum_a / k;
        avg->b = sum_b / k;
        avg->a_se = sqrt(var_a) / k;
        avg->b_se = sqrt(var_b) / k;
        avg->delta = d * 100;
        avg->lo = one_doc == k ? NAN : lo * 100;
        avg->hi = one_doc == k ? NAN : hi * 100;
        avg->n_one_doc = one_doc;
        avg->real = avg->lo > COMPARE_EPS_POINTS || avg->hi < -COMPARE_EPS_POINTS;
    }
    free(sa);
    free(sb);
    free(n);
    free(order);
    return rc;
}

int compare_results(const struct results *a, const struct results *b, const struct compare_options *opt,
                    struct comparison *c, xsa_error *err) {
    memset(c, 0, sizeof *c);
    c->alpha = opt->alpha > 0 && opt->alpha < 1 ? opt->alpha : 0.05;
    c->level = 1 - c->alpha;
    c->iters = opt->iters > 0 ? opt->iters : COMPARE_DEFAULT_ITERS;
    c->seed = opt->seed ? opt->seed : COMPARE_DEFAULT_SEED;
    if (opt->metric && strcmp(opt->metric, "auto") && strcmp(opt->metric, "acc") && strcmp(opt->metric, "acc_norm"))
        return xsa_fail(err, XSA_EBADINPUT, "--metric %s: expected auto, acc or acc_norm", opt->metric);
    if (compare_inputs_differ(a, b, c->not_comparable, sizeof c->not_comparable)) {
        if (!opt->force)
            return xsa_fail(err, XSA_EBADINPUT, "%s vs %s: not comparable: %s; rerun both on the same data and "
                            "settings (xsa-eval compare --force compares them anyway)", opt->path_a ? opt->path_a : "A",
                            opt->path_b ? opt->path_b : "B", c->not_comparable);
        c->forced = 1;
    }
    c->rows = xsa_calloc((size_t)a->n_tasks + 1, sizeof *c->rows);
    double **pa = xsa_calloc((size_t)a->n_tasks + 1, sizeof *pa), **pb = xsa_calloc((size_t)a->n_tasks + 1, sizeof *pb);
    int rc = 0;
    for (int i = 0; i < a->n_tasks && !rc; i++) {
        const struct task_result *tb = results_find_task(b, a->tasks[i].name);
        if (!tb) continue;  // only under --force: the report lists the difference
        rc = compare_task(&a->tasks[i], tb, opt, c, opt->force, &c->rows[c->n_rows], &pa[c->n_rows], &pb[c->n_rows], err);
        c->n_rows++;
    }
    if (!rc && c->n_rows == 0) rc = xsa_fail(err, XSA_EBADINPUT, "the two results files share no task");
    if (!rc) family_decisions(c);
    if (!rc) rc = compare_average(c, pa, pb, 1, &c->paper, err);
    if (!rc) rc = compare_average(c, pa, pb, 0, &c->all, err);
    for (int i = 0; pa && pb && i < a->n_tasks; i++) { free(pa[i]); free(pb[i]); }
    free(pa);
    free(pb);
    if (rc) comparison_free(c);
    return rc;
}
