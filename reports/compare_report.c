// compare_report.c: the Markdown report and SVG charts of a paired comparison (eval/compare.h
// computes it): per-task rows, group averages, model sections, provenance.
#include "reports/compare_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/xalloc.h"
#include "eval/outdir.h"
#include "eval/results.h"
#include "eval/trend.h"
#include "reports/report.h"
#include "reports/svg.h"
#include "tasks/task.h"

static void value_se(struct sbuf *o, double v, double se) {  // fractions -> "43.25 ± 2.48"
    if (isnan(se)) sbuf_printf(o, " %.2f |", v * 100);
    else sbuf_printf(o, " %.2f \xc2\xb1 %.2f |", v * 100, se * 100);
}

static void avg_row(struct sbuf *o, const char *name, const struct compare_avg *g) {
    if (!g->present) return;
    sbuf_printf(o, "| **%s (%d task%s)** | mean |", name, g->n_tasks, g->n_tasks == 1 ? "" : "s");
    value_se(o, g->a, g->a_se);
    value_se(o, g->b, g->b_se);
    char ci[48];
    report_fmt_ci(g->lo, g->hi, ci);
    sbuf_printf(o, " **%+.2f** | %s | - | - | %s |\n", g->delta, ci, g->real ? "**yes**" : "no");
}

void compare_markdown(const struct results *a, const struct results *b, const struct comparison *c,
                      const struct compare_options *opt, const char *chart_base, struct sbuf *o) {
    const char *la = opt->label_a ? opt->label_a : report_label(a), *lb = opt->label_b ? opt->label_b : report_label(b);
    double pct = c->level * 100;
    sbuf_puts(o, "# ");
    md_text(o, la);
    sbuf_puts(o, " (A) vs ");
    md_text(o, lb);
    sbuf_puts(o, " (B)\n\n");
    if (c->forced)
        sbuf_printf(o, "> [!WARNING]\n> FORCED: inputs not comparable: %s. The numbers below pair the documents "
                       "both runs scored; do not publish them as a like-for-like comparison.\n\n",
                    c->not_comparable);
    report_same_model_note(o, a, b);
    if (!strcmp(trend_series(a), "XSA") && !strcmp(trend_series(b), "SA"))  // the order help and README give is SA, XSA
        sbuf_puts(o, "> [!NOTE]\n> A is the XSA model and B the SA one: every delta below is SA - XSA (give the SA "
                     "results first for XSA - SA).\n\n");
    // One-sentence answer first: the average, then which tasks moved for real.
    const struct compare_avg *g = c->paper.present ? &c->paper : &c->all;
    char over[64];
    if (!c->paper.present) snprintf(over, sizeof over, "all %d task%s", g->n_tasks, g->n_tasks == 1 ? "" : "s");
    else if (g->n_tasks < task_group_size("paper")) snprintf(over, sizeof over, "%d of the XSA paper's %d tasks", g->n_tasks, task_group_size("paper"));
    else snprintf(over, sizeof over, "the XSA paper's %d tasks", g->n_tasks);
    char ci[48];
    report_fmt_ci(g->lo, g->hi, ci);
    if (isnan(g->lo))
        sbuf_printf(o, "**Summary.** Over %s, B scores **%+.2f points** against A on average (no interval: every "
                       "task has a single document): not distinguishable from zero.", over, g->delta);
    else
        sbuf_printf(o, "**Summary.** Over %s, B scores **%+.2f points** against A on average (%g%% CI %s%s): %s.",
                    over, g->delta, pct, ci, g->n_one_doc ? "; tasks of one document as constants" : "",
                    g->real ? (g->delta > 0 ? "a real gain" : "a real loss") : "not distinguishable from zero");
    int n_real = 0;
    for (int i = 0; i < c->n_rows; i++) n_real += c->rows[i].real;
    sbuf_printf(o, " %d of %d per-task deltas %s real", n_real, c->n_rows, n_real == 1 ? "is" : "are");
    if (c->n_family > 1) sbuf_printf(o, " (Holm-corrected over the %d tasks)", c->n_family);
    for (int i = 0, k = 0; i < c->n_rows; i++)
        if (c->rows[i].real) sbuf_printf(o, "%s%s %+.2f", k++ ? ", " : ": ", c->rows[i].task, c->rows[i].delta);
    sbuf_puts(o, ".\n\n## Results\n\n");
    sbuf_printf(o, "| task | metric | A \xc2\xb1 se | B \xc2\xb1 se | \xce\x94 (pts) | %g%% CI | McNemar p | Holm p | real? |\n"
                   "|---|---|--:|--:|--:|:-:|--:|--:|:-:|\n", pct);
    for (int i = 0; i < c->n_rows; i++) {
        const struct compare_row *r = &c->rows[i];
        char p[32], ph[32];
        report_fmt_p(r->p, p);
        report_fmt_p(r->p_holm, ph);
        sbuf_printf(o, "| %s | %s |", r->task, r->metric);
        value_se(o, r->a, r->a_se);
        value_se(o, r->b, r->b_se);
        report_fmt_ci(r->lo, r->hi, ci);
        sbuf_printf(o, " %+.2f | %s | %s | %s | %s |\n", r->delta, ci, p, ph, r->real ? "**yes**" : "no");
    }
    avg_row(o, "paper", &c->paper);
    avg_row(o, "all", &c->all);
    for (int i = 0; i < c->n_rows; i++) {
        const struct compare_row *r = &c->rows[i];
        if (!r->has_ppl) continue;
        // A perplexity past DBL_MAX (lm-eval's math.exp raises there) is null in the file.
        char pa[32], pb[32];
        report_value(r->ppl_a, 3, pa);
        report_value(r->ppl_b, 3, pb);
        if (!isfinite(r->ppl_a)) snprintf(pa, sizeof pa, "n/a (overflow)");
        if (!isfinite(r->ppl_b)) snprintf(pb, sizeof pb, "n/a (overflow)");
        sbuf_printf(o, "\n%s perplexity (lower is better): A %s, B %s", r->task, pa, pb);
        double ratio = r->ppl_b / r->ppl_a;
        if (isfinite(r->ppl_a) && isfinite(r->ppl_b) && r->ppl_a > 0)
            sbuf_printf(o, ratio >= 1e-3 && ratio < 1e6 ? " (B/A = %.4f)" : " (B/A = %.3e)", ratio);
        sbuf_puts(o, ".\n");
    }
    char iters[32];
    report_thousands(c->iters, iters);
    sbuf_printf(o, "\nValues are percentages \xc2\xb1 lm-eval's standard error; \xce\x94 = B \xe2\x88\x92 A in points. "
                   "A task's delta is *real* when its %g%% paired bootstrap interval excludes 0 **and** its exact "
                   "McNemar p", pct);
    if (c->n_family > 1)  // Holm: the family-wise level, not each task's, is alpha
        sbuf_printf(o, ", Holm-adjusted over the %d tasks compared (Holm p), is < %g, so that when no task differs "
                       "some task reads real with probability at most %g", c->n_family, c->alpha, c->alpha);
    else sbuf_printf(o, " < %g (one task: no correction; Holm p = p)", c->alpha);
    sbuf_printf(o, "; for the averages, when the interval excludes 0. Bootstrap: %s resamples of documents "
                   "(within each task for the averages), seed %llu; a task of one document has no interval (N/A) "
                   "and enters an average as a constant. McNemar on per-document correctness: "
                   "b = A right & B wrong, c = A wrong & B right. The average's \xc2\xb1 is "
                   "sqrt(\xce\xa3 se\xc2\xb2)/k.\n\n",
                iters, (unsigned long long)c->seed);
    if (chart_base) {
        char alt[80];
        snprintf(alt, sizeof alt, "Per-task delta B - A with its %g%% interval", pct);
        sbuf_puts(o, "## Charts\n\n");
        md_image(o, alt, chart_base, "_delta.svg");
        sbuf_puts(o, "\n\n");
        md_image(o, "Per-task score of A and B", chart_base, "_acc.svg");
        sbuf_puts(o, "\n\n");
    }
    sbuf_puts(o, "## Models\n\n");
    report_model_section(o, "A: ", la, a, opt->path_a);
    report_model_section(o, "B: ", lb, b, opt->path_b);
    const struct results *rs[2] = {a, b};
    const char *labels[2] = {"A", "B"};
    sbuf_puts(o, "## Provenance\n\n");
    report_provenance(o, rs, labels, 2);
    report_command(o, opt->command);
}

// The two charts of a comparison.
static void compare_charts(const struct comparison *c, const char *la, const char *lb, struct sbuf *delta_svg,
                           struct sbuf *acc_svg) {
    int k = c->n_rows + 2;
    const char **labels = xsa_calloc((size_t)k, sizeof *labels);
    double *d = xsa_calloc((size_t)k * 3, sizeof *d), *val = xsa_calloc((size_t)c->n_rows * 4, sizeof *val);
    int *sign = xsa_calloc((size_t)k, sizeof *sign);
    char avg_names[2][48];
    int m = 0;
    for (int i = 0; i < c->n_rows; i++, m++) {
        const struct compare_row *r = &c->rows[i];
        labels[m] = r->task;
        d[m] = r->delta; d[k + m] = r->lo; d[2 * k + m] = r->hi;
        sign[m] = r->real ? (r->delta > 0 ? 1 : -1) : 0;
    }
    const struct compare_avg *gs[2] = {&c->paper, &c->all};
    for (int j = 0; j < 2; j++) {
        if (!gs[j]->present) continue;
        snprintf(avg_names[j], sizeof avg_names[j], "%s avg (%d)", j == 0 ? "paper" : "all", gs[j]->n_tasks);
        labels[m] = avg_names[j];
        d[m] = gs[j]->delta; d[k + m] = gs[j]->lo; d[2 * k + m] = gs[j]->hi;
        sign[m] = gs[j]->real ? (gs[j]->delta > 0 ? 1 : -1) : 0;
        m++;
    }
    // svg_delta_chart reads lo/hi at the row index: pack them contiguously.
    memmove(d + m, d + k, sizeof(double) * (size_t)m);
    memmove(d + 2 * m, d + 2 * k, sizeof(double) * (size_t)m);
    svg_delta_chart("Per-task delta, B - A (points)", labels, d, d + m, d + 2 * m, sign, m, c->level, delta_svg);
    int n = c->n_rows;
    for (int i = 0; i < n; i++) {
        val[i] = c->rows[i].a * 100;
        val[n + i] = c->rows[i].b * 100;
        val[2 * n + i] = c->rows[i].a_se * 100;
        val[3 * n + i] = c->rows[i].b_se * 100;
    }
    const char *series[2] = {la, lb};
    svg_bars_chart("Per-task score (metric of each row)", labels, n, series, 2, val, val + 2 * n, acc_svg);
    free(labels);
    free(d);
    free(val);
    free(sign);
}

static void avg_json(struct jsonw *w, const char *key, const struct compare_avg *g) {
    if (!g->present) return;
    jsonw_object(w, key);
    jsonw_int(w, "tasks", g->n_tasks);
    report_json_delta(w, "a", g->a, "b", g->b, g->delta, g->lo, g->hi);
    jsonw_num_prec(w, "a_se", g->a_se, 10);
    jsonw_num_prec(w, "b_se", g->b_se, 10);
    jsonw_bool(w, "real", g->real);
    jsonw_end(w);
}

int compare_json(const struct comparison *c, const struct compare_options *opt, struct sbuf *out) {
    struct jsonw w = {0};
    jsonw_object(&w, NULL);
    jsonw_str(&w, "a", opt->path_a ? opt->path_a : "");
    jsonw_str(&w, "b", opt->path_b ? opt->path_b : "");
    jsonw_bool(&w, "forced", c->forced);
    jsonw_str(&w, "not_comparable", c->not_comparable);
    jsonw_int(&w, "bootstrap_iters", c->iters);
    jsonw_int(&w, "seed", (long long)c->seed);
    jsonw_num_prec(&w, "alpha", c->alpha, 10);
    jsonw_num_prec(&w, "level", c->level, 10);
    jsonw_str(&w, "correction", c->n_family > 1 ? "holm" : "none");
    jsonw_int(&w, "family_tasks", c->n_family);
    jsonw_array(&w, "tasks");
    for (const struct compare_row *r = c->rows; r < c->rows + c->n_rows; r++) {
        jsonw_object(&w, NULL);
        report_json_task(&w, r, "a", "b");
        jsonw_num_prec(&w, "mcnemar_p_holm", r->p_holm, 10);
        jsonw_bool(&w, "real", r->real);
        jsonw_num_prec(&w, "a_se", r->a_se, 10);
        jsonw_num_prec(&w, "b_se", r->b_se, 10);
        jsonw_int(&w, "n10", r->n10);
        jsonw_int(&w, "n01", r->n01);
        if (r->has_ppl) jsonw_num_prec(&w, "perplexity_a", r->ppl_a, 10), jsonw_num_prec(&w, "perplexity_b", r->ppl_b, 10);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_object(&w, "average");
    avg_json(&w, "paper", &c->paper);
    avg_json(&w, "all", &c->all);
    jsonw_end(&w);
    jsonw_end(&w);
    if (w.failed) { jsonw_free(&w); return -1; }
    *out = w.out;
    return 0;
}

int compare_write_report(const struct results *a, const struct results *b, const struct compare_options *opt,
                         const char *md_path, const char *json_path, xsa_error *err) {
    struct comparison c;
    int rc = compare_results(a, b, opt, &c, err);
    if (rc) return rc;
    struct sbuf md = {0}, full = {0}, rel = {0}, dsvg = {0}, asvg = {0}, p1 = {0}, p2 = {0}, js = {0};
    int charts = report_chart_paths(md_path, &full, &rel);
    compare_markdown(a, b, &c, opt, charts ? rel.s : NULL, &md);
    if (json_path && compare_json(&c, opt, &js))
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: the comparison's JSON could not be built", json_path);
    const char *paths[4], *data[4];
    size_t lens[4];
    int n = 0;
    if (charts) {
        const char *la = opt->label_a ? opt->label_a : report_label(a), *lb = opt->label_b ? opt->label_b : report_label(b);
        compare_charts(&c, la, lb, &dsvg, &asvg);
        sbuf_printf(&p1, "%s_delta.svg", full.s);
        sbuf_printf(&p2, "%s_acc.svg", full.s);
        paths[n] = p1.s, data[n] = dsvg.s, lens[n++] = dsvg.n;
        paths[n] = p2.s, data[n] = asvg.s, lens[n++] = asvg.n;
    }
    if (md_path) paths[n] = md_path, data[n] = md.s, lens[n++] = md.n;
    if (json_path) paths[n] = json_path, data[n] = js.s, lens[n++] = js.n;
    if (!rc && n) rc = outdir_write_set(n, paths, data, lens, err);
    // Markdown on stdout unless the JSON went there: one document a parser can read.
    if (!rc && !md_path && !outdir_is_stdout(json_path)) fwrite(md.s, 1, md.n, stdout);
    sbuf_free(&md); sbuf_free(&full); sbuf_free(&rel); sbuf_free(&dsvg); sbuf_free(&asvg); sbuf_free(&p1); sbuf_free(&p2);
    sbuf_free(&js);
    comparison_free(&c);
    return rc;
}
