// scaling_report.c: pairs of results -> the scaling table and chart (scaling_report.h).
#include "reports/scaling_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "eval/outdir.h"
#include "eval/trend.h"
#include "reports/report.h"
#include "reports/svg.h"

// "125M", "1.3B", "6.7K": a parameter count as the paper's tables write it.
static void scaling_params_label(long long n, char *buf, size_t cap) {
    if (n <= 0) snprintf(buf, cap, "?");
    else if (n >= 1000000000LL) snprintf(buf, cap, "%.3gB", (double)n / 1e9);
    else if (n >= 1000000LL) snprintf(buf, cap, "%.3gM", (double)n / 1e6);
    else if (n >= 1000LL) snprintf(buf, cap, "%.3gK", (double)n / 1e3);
    else snprintf(buf, cap, "%lld", n);
}

struct pair_row {
    int i;                      // input pair
    long long params;
    struct comparison c;
};

static int by_params(const void *x, const void *y) {
    const struct pair_row *a = x, *b = y;
    return a->params < b->params ? -1 : a->params > b->params ? 1 : a->i - b->i;
}

static const struct compare_avg *row_avg(const struct comparison *c) { return c->paper.present ? &c->paper : &c->all; }

// Task columns: every task of any pair, in the order first seen.
static int task_columns(const struct pair_row *rows, int n, char (*names)[64], int cap) {
    int k = 0;
    for (int r = 0; r < n; r++)
        for (int t = 0; t < rows[r].c.n_rows; t++) {
            int j = 0;
            while (j < k && strcmp(names[j], rows[r].c.rows[t].task)) j++;
            if (j == k && k < cap) snprintf(names[k++], 64, "%s", rows[r].c.rows[t].task);
        }
    return k;
}

static void markdown(const struct pair_row *rows, int n, const struct results *const *a, const struct results *const *b,
                    const char *const *pa, const char *const *pb, const struct compare_options *opt,
                    const char *forced, const char *chart_rel, struct sbuf *o) {
    char names[64][64], lab[32];
    int nt = task_columns(rows, n, names, 64);
    double pct = rows[0].c.level * 100;
    sbuf_printf(o, "# Scaling: B - A by model size\n\nEach row pairs two results files; cells are B - A in points "
                         "(* : the %g%% paired bootstrap interval excludes 0 and McNemar's p, Holm-adjusted over the "
                         "row's tasks, is < %g). The average is over "
                         "the XSA paper's eight tasks where present, else over all compared tasks; it is *real* "
                         "when its interval excludes 0 (N/A: every task of one document, which has no interval).\n\n",
                      pct, rows[0].c.alpha);
    sbuf_puts(o, "| parameters | A | B |");
    for (int t = 0; t < nt; t++) sbuf_printf(o, " %s |", names[t]);
    sbuf_printf(o, " average \xce\x94 | %g%% CI | real? |\n|---|---|---|", pct);
    for (int t = 0; t < nt; t++) sbuf_puts(o, "--:|");
    sbuf_puts(o, "--:|:-:|:-:|\n");
    for (int r = 0; r < n; r++) {
        const struct pair_row *p = &rows[r];
        scaling_params_label(p->params, lab, sizeof lab);
        sbuf_printf(o, "| %s | ", lab);
        // One checkpoint under --xsa overrides has one name: the series tells the sides apart.
        int same_name = !strcmp(report_label(a[p->i]), report_label(b[p->i]));
        md_text(o, report_label(a[p->i]));
        if (same_name) sbuf_printf(o, " (%s)", trend_series(a[p->i]));
        sbuf_puts(o, " | ");
        md_text(o, report_label(b[p->i]));
        if (same_name) sbuf_printf(o, " (%s)", trend_series(b[p->i]));
        sbuf_puts(o, " |");
        for (int t = 0; t < nt; t++) {
            int j = 0;
            while (j < p->c.n_rows && strcmp(p->c.rows[j].task, names[t])) j++;
            if (j == p->c.n_rows) sbuf_puts(o, " - |");
            else sbuf_printf(o, " %+.2f%s |", p->c.rows[j].delta, p->c.rows[j].real ? "*" : "");
        }
        const struct compare_avg *g = row_avg(&p->c);
        char ci[48];
        report_fmt_ci(g->lo, g->hi, ci);
        sbuf_printf(o, " **%+.2f** | %s | %s |\n", g->delta, ci, g->real ? "**yes**" : "no");
    }
    if (forced && forced[0]) sbuf_printf(o, "\n> [!WARNING]\n> FORCED: not a scaling table: %s.\n", forced);
    for (int r = 0; r < n; r++)
        if (rows[r].c.forced)
            sbuf_printf(o, "\n> [!WARNING]\n> FORCED (row %d): inputs not comparable: %s.\n", r + 1,
                              rows[r].c.not_comparable);
    for (int r = 0; r < n; r++)
        if (rows[r].params <= 0)
            sbuf_printf(o, "\nRow %d has no parameter count (its A file records none): it is labelled ? and left out "
                           "of the chart.\n", r + 1);
    if (chart_rel) {
        sbuf_puts(o, "\n");
        md_image(o, "Average delta against parameter count", chart_rel, "_scaling.svg");
        sbuf_puts(o, "\n");
    }
    sbuf_puts(o, "\n## Inputs\n\n| parameters | A | B |\n|---|---|---|\n");
    for (int r = 0; r < n; r++) {
        scaling_params_label(rows[r].params, lab, sizeof lab);
        sbuf_printf(o, "| %s | ", lab);
        md_code(o, pa[rows[r].i]);
        sbuf_puts(o, " | ");
        md_code(o, pb[rows[r].i]);
        sbuf_puts(o, " |\n");
    }
    sbuf_printf(o, "\nBootstrap: %d resamples, seed %llu.", rows[0].c.iters, (unsigned long long)rows[0].c.seed);
    if (opt->command) {
        sbuf_puts(o, " Command: ");
        md_code_prose(o, opt->command);
    }
    sbuf_puts(o, "\n");
}

static void chart(const struct pair_row *rows, int n, struct sbuf *out) {
    double *v = xsa_malloc((size_t)n * 4 * sizeof *v);
    char (*lab)[32] = xsa_malloc((size_t)n * sizeof *lab);
    const char **labels = xsa_malloc((size_t)n * sizeof *labels);
    for (int r = 0; r < n; r++) {
        const struct compare_avg *g = row_avg(&rows[r].c);
        v[r] = rows[r].params > 0 ? (double)rows[r].params : NAN;
        v[n + r] = g->delta, v[2 * n + r] = g->lo, v[3 * n + r] = g->hi;
        scaling_params_label(rows[r].params, lab[r], sizeof lab[r]);  // as the table labels the rows
        labels[r] = lab[r];
    }
    const char *series[1] = {"average B - A (points)"};
    svg_line_chart("Average delta B - A against model size", "parameters", "points, shaded: interval", 1,
                            series, 1, n, v, labels, v + n, v + 2 * n, v + 3 * n, out);
    free(v);
    free(lab);
    free(labels);
}

// One model, as far as a results file tells: the same weights and the same XSA layers.
static int same_model(const struct results *x, const struct results *y) {
    return x->model.weights_sha256[0] && !strcmp(x->model.weights_sha256, y->model.weights_sha256) &&
           !strcmp(x->model.xsa_layers, y->model.xsa_layers);
}

// What makes the pairs no scaling table, one line each into `why` (empty: nothing): a pair that
// was not run as the first (tasks, limits, data: the average would mean other things from row to
// row), a model against itself (shell globs over folders holding a rerun's second file pair
// files of one model), two sizes in one row, a pair given twice.
static void pair_problems(const struct results *const *a, const struct results *const *b, const char *const *pa,
                          const char *const *pb, int n, struct sbuf *why) {
    for (int i = 0; i < n; i++) {
        char d[1024];
        if (i > 0 && compare_inputs_differ(a[0], a[i], d, sizeof d))
            sbuf_printf(why, "%spair %d (%s) was not run as pair 1 (%s): %s", why->n ? "; " : "", i + 1, pa[i], pa[0], d);
        if (same_model(a[i], b[i]))
            sbuf_printf(why, "%spair %d (%s, %s) is one model twice (weights sha256 %.12s, XSA layers %s): give each "
                        "pair as the SA file then the XSA file of one size, one file each", why->n ? "; " : "", i + 1,
                        pa[i], pb[i], a[i]->model.weights_sha256, a[i]->model.xsa_layers);
        long long x = a[i]->model.n_params, y = b[i]->model.n_params;
        if (x > 0 && y > 0 && llabs(x - y) * 100 > (x > y ? x : y))  // XSA's gates add a few parameters, no more
            sbuf_printf(why, "%spair %d (%s, %s) pairs %lld parameters with %lld: a row is one model size",
                        why->n ? "; " : "", i + 1, pa[i], pb[i], x, y);
        for (int j = 0; j < i; j++)
            if (same_model(a[i], a[j]) && same_model(b[i], b[j]))
                sbuf_printf(why, "%spair %d repeats pair %d (the same two models)", why->n ? "; " : "", i + 1, j + 1);
    }
}

int scaling_write_report(const struct results *const *a, const struct results *const *b, const char *const *paths_a,
                         const char *const *paths_b, int n, const struct compare_options *opt, const char *md_path,
                         xsa_error *err) {
    struct sbuf why = {0};
    pair_problems(a, b, paths_a, paths_b, n, &why);
    if (why.n && !opt->force) {
        int rc = xsa_fail(err, XSA_EBADINPUT, "not a scaling table: %s; rerun or regroup the files, or --force (the "
                          "report then says FORCED)", why.s);
        sbuf_free(&why);
        return rc;
    }
    for (int i = 0; i < n; i++)
        if (!same_model(a[i], b[i]) && strcmp(trend_series(a[i]), trend_series(b[i])) && !strcmp(trend_series(b[i]), "SA"))
            fprintf(stderr, "xsa-eval compare: note: pair %d has the XSA model first (%s) and the SA model second (%s): "
                    "its cells are SA - XSA\n", i + 1, paths_a[i], paths_b[i]);
    struct pair_row *rows = xsa_calloc((size_t)n, sizeof *rows);
    int rc = 0, done = 0;
    for (; done < n && !rc; done++) {
        rows[done].i = done;
        rows[done].params = a[done]->model.n_params;
        rc = compare_results(a[done], b[done], opt, &rows[done].c, err);
        if (rc) {
            char why[1024];
            snprintf(why, sizeof why, "%s", err->msg);
            err->code = 0;
            rc = xsa_fail(err, rc, "pair %d (%s, %s): %s", done + 1, paths_a[done], paths_b[done], why);
        }
    }
    if (rc) done--;
    if (!rc) qsort(rows, (size_t)n, sizeof *rows, by_params);
    struct sbuf md = {0}, full = {0}, rel = {0}, svg = {0}, p1 = {0};
    int charts = !rc && report_chart_paths(md_path, &full, &rel);
    if (!rc) markdown(rows, n, a, b, paths_a, paths_b, opt, why.s, charts ? rel.s : NULL, &md);
    if (!rc && !md_path) fwrite(md.s, 1, md.n, stdout);
    if (!rc && md_path) {
        if (charts) chart(rows, n, &svg);
        sbuf_printf(&p1, "%s_scaling.svg", full.s);
        const char *paths[2] = {p1.s, md_path}, *data[2] = {svg.s, md.s};
        size_t lens[2] = {svg.n, md.n};
        rc = outdir_write_set(2 - !charts, paths + !charts, data + !charts, lens + !charts, err);
    }
    for (int r = 0; r < done; r++) comparison_free(&rows[r].c);
    free(rows);
    sbuf_free(&md); sbuf_free(&full); sbuf_free(&rel); sbuf_free(&svg); sbuf_free(&p1); sbuf_free(&why);
    return rc;
}
