// trend_report.c: training curves from results files (trend_report.h).
#include "reports/trend_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "eval/outdir.h"
#include "reports/report.h"
#include "reports/svg.h"

#define TREND_MAX_TASKS 32
#define TREND_MAX_SERIES 10

struct trend {
    int n_tasks, n_series, n_steps;
    char task[TREND_MAX_TASKS + 1][64];        // the last is "average"
    const char *series[TREND_MAX_SERIES];
    long long *steps;                          // (n_steps) ascending, all series together
    double *val, *se;                          // (n_series, n_tasks + 1, n_steps) points; NAN: no file
    char left_out[512];                        // tasks some files lack, left out of every curve
};

#define AT(t, s, k, i) ((((size_t)(s) * ((t)->n_tasks + 1) + (k)) * (t)->n_steps) + (i))

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static int build(struct trend *t, const struct results *const *rs, const char *const *paths, const char *const *series,
                 const long long *steps, int n, xsa_error *err) {
    memset(t, 0, sizeof *t);
    for (int k = 0; k < rs[0]->n_tasks && t->n_tasks < TREND_MAX_TASKS; k++) {
        int all = 1;
        for (int f = 1; f < n && all; f++) all = results_find_task(rs[f], rs[0]->tasks[k].name) != NULL;
        if (all) snprintf(t->task[t->n_tasks++], 64, "%s", rs[0]->tasks[k].name);
    }
    if (!t->n_tasks) return xsa_fail(err, XSA_EBADINPUT, "--trend: no task is in every results file");
    const char *left[TREND_MAX_TASKS];  // tasks some files lack, each once
    int n_left = 0;
    for (int f = 0; f < n; f++)
        for (int k = 0; k < rs[f]->n_tasks; k++) {
            const char *name = rs[f]->tasks[k].name;
            int seen = 0;
            for (int j = 0; j < t->n_tasks && !seen; j++) seen = !strcmp(t->task[j], name);
            for (int j = 0; j < n_left && !seen; j++) seen = !strcmp(left[j], name);
            if (seen || n_left == TREND_MAX_TASKS) continue;
            left[n_left++] = name;
            size_t used = strlen(t->left_out);
            snprintf(t->left_out + used, sizeof t->left_out - used, "%s%s", used ? ", " : "", name);
        }
    // The points of a curve must be scored alike: the same limits, shots and data (as compare).
    for (int f = 1; f < n; f++) {
        char la[32], lb[32];
        if (rs[f]->limit != rs[0]->limit || rs[f]->limit_fraction != rs[0]->limit_fraction)
            return xsa_fail(err, XSA_EBADINPUT, "--trend: %s was run with --limit %s, %s with --limit %s: the points "
                            "of a curve must score the same documents; rerun them alike", paths[0],
                            results_limit_text(rs[0], la, sizeof la), paths[f], results_limit_text(rs[f], lb, sizeof lb));
        if (rs[f]->num_fewshot != rs[0]->num_fewshot)
            return xsa_fail(err, XSA_EBADINPUT, "--trend: %s was run with %d shots, %s with %d; rerun them alike",
                            paths[0], rs[0]->num_fewshot, paths[f], rs[f]->num_fewshot);
        for (int k = 0; k < t->n_tasks; k++) {
            const struct task_result *a = results_find_task(rs[0], t->task[k]), *b = results_find_task(rs[f], t->task[k]);
            if (strcmp(a->data_sha256, b->data_sha256))
                return xsa_fail(err, XSA_EBADINPUT, "--trend: %s's data differ between %s (sha256 %.12s) and %s "
                                "(%.12s); rerun them on the same data", t->task[k], paths[0], a->data_sha256, paths[f],
                                b->data_sha256);
            if (a->fewshot_sha256[0] && b->fewshot_sha256[0] && strcmp(a->fewshot_sha256, b->fewshot_sha256))
                return xsa_fail(err, XSA_EBADINPUT, "--trend: %s's few-shot data differ between %s (sha256 %.12s) and "
                                "%s (%.12s); rerun them on the same data", t->task[k], paths[0], a->fewshot_sha256,
                                paths[f], b->fewshot_sha256);
        }
    }
    snprintf(t->task[t->n_tasks], 64, "average");
    t->steps = xsa_malloc((size_t)n * sizeof *t->steps);
    for (int f = 0; f < n; f++) {
        int s = 0;
        while (s < t->n_series && strcmp(t->series[s], series[f])) s++;
        if (s == t->n_series) {
            if (s == TREND_MAX_SERIES) return xsa_fail(err, XSA_EBADINPUT, "--trend: more than %d series", s);
            t->series[t->n_series++] = series[f];
        }
        int i = 0;
        while (i < t->n_steps && t->steps[i] != steps[f]) i++;
        if (i == t->n_steps) t->steps[t->n_steps++] = steps[f];
    }
    qsort(t->steps, (size_t)t->n_steps, sizeof *t->steps, cmp_ll);
    size_t cells = (size_t)t->n_series * (t->n_tasks + 1) * t->n_steps;
    t->val = xsa_malloc(cells * sizeof *t->val);
    t->se = xsa_malloc(cells * sizeof *t->se);
    for (size_t c = 0; c < cells; c++) t->val[c] = t->se[c] = NAN;
    for (int f = 0; f < n; f++) {
        int s = 0, i = 0;
        while (strcmp(t->series[s], series[f])) s++;
        while (t->steps[i] != steps[f]) i++;
        if (!isnan(t->val[AT(t, s, 0, i)]))
            return xsa_fail(err, XSA_EBADINPUT, "--trend: %s is a second %s file at step %lld; give each step "
                            "of a series once (or name the series with --series)", paths[f], series[f], steps[f]);
        double sum = 0, var = 0;  // var NAN once a task has no stderr: the average has none either
        for (int k = 0; k < t->n_tasks; k++) {
            const struct task_result *tr = results_find_task(rs[f], t->task[k]);
            int m = results_metric_index(tr, results_preferred_metric(tr));
            double v = m >= 0 ? tr->value[m] * 100 : NAN, e = m >= 0 ? tr->stderr_[m] * 100 : NAN;
            t->val[AT(t, s, k, i)] = v;
            t->se[AT(t, s, k, i)] = e;
            sum += v;
            var += e * e;
        }
        t->val[AT(t, s, t->n_tasks, i)] = sum / t->n_tasks;
        t->se[AT(t, s, t->n_tasks, i)] = sqrt(var) / t->n_tasks;
    }
    return 0;
}

static void markdown(const struct trend *t, const char *command, const char *chart_rel, struct sbuf *o) {
    sbuf_printf(o, "# Training curves\n\nEach task's preferred metric (%%) \xc2\xb1 stderr by training step; "
                            "average: the mean over the %d task%s every file has, stderr sqrt(sum se^2) / k.\n",
                         t->n_tasks, t->n_tasks == 1 ? "" : "s");
    if (t->left_out[0]) sbuf_printf(o, "\nLeft out, not in every file: %s.\n", t->left_out);
    for (int s = 0; s < t->n_series; s++) {
        sbuf_puts(o, "\n## ");
        md_text(o, t->series[s]);
        sbuf_puts(o, "\n\n| step |");
        for (int k = 0; k <= t->n_tasks; k++) sbuf_printf(o, " %s |", t->task[k]);
        sbuf_puts(o, "\n|--:|");
        for (int k = 0; k <= t->n_tasks; k++) sbuf_puts(o, "--:|");
        sbuf_puts(o, "\n");
        for (int i = 0; i < t->n_steps; i++) {
            if (isnan(t->val[AT(t, s, t->n_tasks, i)])) continue;
            sbuf_printf(o, "| %lld |", t->steps[i]);
            for (int k = 0; k <= t->n_tasks; k++) {
                double v = t->val[AT(t, s, k, i)], e = t->se[AT(t, s, k, i)];
                if (isnan(e)) sbuf_printf(o, " %.2f |", v);
                else sbuf_printf(o, " %.2f \xc2\xb1 %.2f |", v, e);
            }
            sbuf_puts(o, "\n");
        }
    }
    if (chart_rel) {
        sbuf_puts(o, "\n## Charts\n\n");
        for (int j = 0; j <= t->n_tasks; j++) {  // the average first, then the tasks in the tables' order
            int k = j ? j - 1 : t->n_tasks;
            char alt[96], suffix[96];
            snprintf(alt, sizeof alt, "%s against step", t->task[k]);
            snprintf(suffix, sizeof suffix, "_trend_%s.svg", t->task[k]);
            md_image(o, alt, chart_rel, suffix);
            sbuf_puts(o, "\n\n");
        }
    }
    if (command) {
        sbuf_puts(o, "\nCommand: ");
        md_code_prose(o, command);
        sbuf_puts(o, "\n");
    }
}

static void chart(const struct trend *t, int k, struct sbuf *out) {
    size_t n = (size_t)t->n_series * t->n_steps;
    double *x = xsa_malloc((size_t)t->n_steps * sizeof *x), *v = xsa_malloc(3 * n * sizeof *v);
    for (int i = 0; i < t->n_steps; i++) x[i] = (double)t->steps[i];
    for (int s = 0; s < t->n_series; s++)
        for (int i = 0; i < t->n_steps; i++) {
            size_t j = (size_t)s * t->n_steps + i;
            double y = t->val[AT(t, s, k, i)], e = t->se[AT(t, s, k, i)];
            v[j] = y, v[n + j] = isnan(e) ? NAN : y - e, v[2 * n + j] = isnan(e) ? NAN : y + e;
        }
    char title[128];
    snprintf(title, sizeof title, "%s against training step", t->task[k]);
    svg_line_chart(title, "training step", "score (%), shaded: +- 1 stderr", 0, t->series, t->n_series,
                            t->n_steps, x, NULL, v, v + n, v + 2 * n, out);
    free(x);
    free(v);
}

int trend_write_report(const struct results *const *rs, const char *const *paths, const char *const *series,
                       const long long *steps, int n, const char *command, const char *md_path, xsa_error *err) {
    struct trend t;
    int rc = build(&t, rs, paths, series, steps, n, err);
    struct sbuf md = {0}, full = {0}, rel = {0};
    struct sbuf svg[TREND_MAX_TASKS + 1] = {{0}}, names[TREND_MAX_TASKS + 1] = {{0}};
    int charts = !rc && report_chart_paths(md_path, &full, &rel);
    if (!rc) markdown(&t, command, charts ? rel.s : NULL, &md);
    if (!rc && !md_path) fwrite(md.s, 1, md.n, stdout);
    if (!rc && md_path) {
        const char *files[TREND_MAX_TASKS + 2], *data[TREND_MAX_TASKS + 2];
        size_t lens[TREND_MAX_TASKS + 2];
        int nf = 0;
        for (int k = 0; charts && k <= t.n_tasks; k++) {
            chart(&t, k, &svg[k]);
            sbuf_printf(&names[k], "%s_trend_%s.svg", full.s, t.task[k]);
            files[nf] = names[k].s, data[nf] = svg[k].s, lens[nf++] = svg[k].n;
        }
        files[nf] = md_path, data[nf] = md.s, lens[nf++] = md.n;
        rc = outdir_write_set(nf, files, data, lens, err);
    }
    for (int k = 0; k <= TREND_MAX_TASKS; k++) sbuf_free(&svg[k]), sbuf_free(&names[k]);
    sbuf_free(&md); sbuf_free(&full); sbuf_free(&rel);
    free(t.steps);
    free(t.val);
    free(t.se);
    return rc;
}
