// check_report.c: the two outputs of the regression gate (eval/check.h judges): the Markdown
// summary for a pull-request comment and the verdict JSON.
#include "reports/check_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "reports/report.h"

void check_markdown(const struct results *base, const struct results *cand, const struct check_verdict *v,
                    const struct check_options *opt, struct sbuf *o) {
    const struct comparison *c = &v->cmp;
    double pct = c->level * 100;
    sbuf_printf(o, "## xsa-eval check: %s\n\n", v->pass ? "PASS :white_check_mark:" : "FAIL :x:");
    sbuf_puts(o, "Baseline ");
    md_code_prose(o, opt->baseline_path ? opt->baseline_path : "-");
    sbuf_puts(o, " (");
    md_text(o, report_label(base));
    sbuf_puts(o, ") vs candidate ");
    md_code_prose(o, opt->results_path ? opt->results_path : "-");
    sbuf_puts(o, " (");
    md_text(o, report_label(cand));
    sbuf_puts(o, "). ");
    sbuf_printf(o, "A task fails when it drops by more than %.2f points and the drop is significant (exact McNemar "
                   "p < %g and the %g%% paired bootstrap interval below 0); the average over all %d tasks "
                   "fails when it drops by more than %.2f points and its interval is below 0.",
                opt->max_drop, v->test_alpha, pct, c->all.n_tasks, opt->max_drop);
    if (v->n_tests > 1)  // Bonferroni: the level of the whole gate, not of each test, is alpha
        sbuf_printf(o, " Each of these %d tests is at level %g / %d, so that a candidate no worse than the baseline "
                       "fails with probability at most %g.", v->n_tests, opt->alpha, v->n_tests, opt->alpha);
    sbuf_puts(o, "\n\n");
    report_same_model_note(o, base, cand);
    sbuf_printf(o, "| task | metric | baseline | new | \xce\x94 (pts) | %g%% CI | McNemar p | verdict |\n"
                   "|---|---|--:|--:|--:|:-:|--:|---|\n", pct);
    for (int i = 0; i < c->n_rows; i++) {
        const struct compare_row *r = &c->rows[i];
        char p[32];
        report_fmt_p(r->p, p);
        // A drop of exactly --max-drop (within COMPARE_EPS_POINTS, as check_evaluate judges) is allowed.
        // Improved: the gate's own test of that task, in the other direction (its Bonferroni level
        // already covers the family; compare's Holm-corrected `real` would correct twice).
        int gain = r->delta > 0 && r->p < v->test_alpha && (r->lo > COMPARE_EPS_POINTS || r->hi < -COMPARE_EPS_POINTS);
        const char *verdict = v->regressed[i] ? "**regressed**"
                              : r->delta < -opt->max_drop - COMPARE_EPS_POINTS ? "drop, not significant"
                              : gain ? "improved" : "ok";
        char ci[48];
        report_fmt_ci(r->lo, r->hi, ci);
        sbuf_printf(o, "| %s | %s | %.2f | %.2f | %+.2f | %s | %s | %s |\n", r->task, r->metric, r->a * 100,
                    r->b * 100, r->delta, ci, p, verdict);
    }
    const struct compare_avg *g = &c->all;
    char gci[48];
    report_fmt_ci(g->lo, g->hi, gci);
    if (g->present)
        sbuf_printf(o, "| **average (%d task%s)** | mean | %.2f | %.2f | **%+.2f** | %s | - | %s |\n",
                    g->n_tasks, g->n_tasks == 1 ? "" : "s", g->a * 100, g->b * 100, g->delta, gci,
                    v->avg_regressed                                    ? "**regressed**"
                    : g->delta < -opt->max_drop - COMPARE_EPS_POINTS ? "drop, not significant"
                                                                       : "ok");
    if (v->pass) sbuf_puts(o, "\nNo significant regression.\n");
    else sbuf_printf(o, "\n%d task regression%s%s.\n", v->n_regressed, v->n_regressed == 1 ? "" : "s",
                     v->avg_regressed ? " and a regression of the average" : "");
    char iters[32];
    report_thousands(c->iters, iters);
    sbuf_printf(o, "\n<sub>xsa-eval check, %s bootstrap resamples, seed %llu.</sub>\n", iters, (unsigned long long)c->seed);
}

int check_verdict_json(const struct check_verdict *v, const struct check_options *opt, struct sbuf *out) {
    const struct comparison *c = &v->cmp;
    struct jsonw w = {0};
    jsonw_object(&w, NULL);
    jsonw_bool(&w, "pass", v->pass);
    jsonw_str(&w, "baseline", opt->baseline_path ? opt->baseline_path : "");
    jsonw_str(&w, "results", opt->results_path ? opt->results_path : "");
    jsonw_num_prec(&w, "max_drop", opt->max_drop, 10);
    jsonw_num_prec(&w, "alpha", opt->alpha, 10);
    jsonw_int(&w, "tests", v->n_tests);
    jsonw_num_prec(&w, "test_alpha", v->test_alpha, 10);
    jsonw_int(&w, "bootstrap_iters", c->iters);
    jsonw_int(&w, "seed", (long long)c->seed);
    jsonw_array(&w, "tasks");
    for (int i = 0; i < c->n_rows; i++) {
        const struct compare_row *r = &c->rows[i];
        jsonw_object(&w, NULL);
        report_json_task(&w, r, "baseline", "new");
        jsonw_bool(&w, "regressed", v->regressed[i]);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    const struct compare_avg *g = &c->all;
    jsonw_object(&w, "average");
    jsonw_int(&w, "tasks", g->n_tasks);
    report_json_delta(&w, "baseline", g->a, "new", g->b, g->delta, g->lo, g->hi);
    jsonw_bool(&w, "regressed", v->avg_regressed);
    jsonw_end(&w);
    jsonw_end(&w);
    if (w.failed) { jsonw_free(&w); return -1; }
    *out = w.out;
    return 0;
}
