// check.c: the regression gate's rule (see check.h); reports/check_report.c writes its outputs.
#include "eval/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"


int check_n_tests(int n_tasks) { return n_tasks > 1 ? n_tasks + 1 : 1; }

int check_evaluate(const struct results *base, const struct results *cand, const struct check_options *opt,
                   struct check_verdict *v, xsa_error *err) {
    memset(v, 0, sizeof *v);
    if (!(opt->max_drop >= 0) || !isfinite(opt->max_drop))
        return xsa_fail(err, XSA_EBADINPUT, "--max-drop must be a number of points >= 0");
    if (!(opt->alpha > 0 && opt->alpha < 1)) return xsa_fail(err, XSA_EBADINPUT, "--alpha must be in (0, 1)");
    // (the task sets must match, else compare_results refuses: the baseline's count is the gate's)
    v->n_tests = check_n_tests(base->n_tasks);
    v->test_alpha = opt->alpha / v->n_tests;
    // Each test's interval needs 2 m / alpha resamples (as compare's 2 / alpha; cmd_check leaves
    // this to the gate, which knows m); inputs that are not comparable are refused for that
    // first, by compare_results.
    int iters = opt->iters > 0 ? opt->iters : COMPARE_DEFAULT_ITERS;
    double need = compare_min_iters(v->n_tests, opt->alpha);
    const char *most = need > 10000000 ? ", above the most --iters takes: raise --alpha" : "";
    char why[8];
    if (iters < need && !compare_inputs_differ(base, cand, why, sizeof why))
        return v->n_tests == 1
                   ? xsa_fail(err, XSA_EBADINPUT, "--iters %d: too few resamples for a 1 - %g interval; give at least "
                              "%.15g (2 / alpha)%s", iters, opt->alpha, need, most)
                   : xsa_fail(err, XSA_EBADINPUT, "--iters %d: too few resamples for the gate's %d tests at %g / %d "
                              "each (1 - %g intervals); give at least %.15g (2 * %d / alpha)%s", iters, v->n_tests,
                              opt->alpha, v->n_tests, v->test_alpha, need, v->n_tests, most);
    struct compare_options co = {.metric = opt->metric, .iters = opt->iters, .seed = opt->seed,
                                 .alpha = v->test_alpha, .path_a = opt->baseline_path, .path_b = opt->results_path};
    int rc = compare_results(base, cand, &co, &v->cmp, err);
    if (rc) return rc;
    v->regressed = xsa_calloc((size_t)v->cmp.n_rows + 1, sizeof *v->regressed);
    for (int i = 0; i < v->cmp.n_rows; i++) {
        const struct compare_row *r = &v->cmp.rows[i];
        // (a drop of exactly --max-drop is none: COMPARE_EPS_POINTS)
        v->regressed[i] = r->delta < -opt->max_drop - COMPARE_EPS_POINTS && r->p < v->test_alpha && r->hi < -COMPARE_EPS_POINTS;
        v->n_regressed += v->regressed[i];
    }
    const struct compare_avg *g = &v->cmp.all;
    v->avg_regressed = g->present && g->delta < -opt->max_drop - COMPARE_EPS_POINTS && g->hi < -COMPARE_EPS_POINTS;
    v->pass = v->n_regressed == 0 && !v->avg_regressed;
    return 0;
}

void check_verdict_free(struct check_verdict *v) {
    free(v->regressed);
    comparison_free(&v->cmp);
    memset(v, 0, sizeof *v);
}



