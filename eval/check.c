// check.c: the regression gate's rule (see check.h); reports/check_report.c writes its outputs.
#include "eval/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"


int check_evaluate(const struct results *base, const struct results *cand, const struct check_options *opt,
                   struct check_verdict *v, xsa_error *err) {
    memset(v, 0, sizeof *v);
    if (!(opt->max_drop >= 0) || !isfinite(opt->max_drop))
        return xsa_fail(err, XSA_EBADINPUT, "--max-drop must be a number of points >= 0");
    if (!(opt->alpha > 0 && opt->alpha < 1)) return xsa_fail(err, XSA_EBADINPUT, "--alpha must be in (0, 1)");
    struct compare_options co = {.metric = opt->metric, .iters = opt->iters, .seed = opt->seed, .alpha = opt->alpha,
                                 .path_a = opt->baseline_path, .path_b = opt->results_path};
    int rc = compare_results(base, cand, &co, &v->cmp, err);
    if (rc) return rc;
    v->regressed = xsa_calloc((size_t)v->cmp.n_rows + 1, sizeof *v->regressed);
    for (int i = 0; i < v->cmp.n_rows; i++) {
        const struct compare_row *r = &v->cmp.rows[i];
        // (a drop of exactly --max-drop is none: COMPARE_EPS_POINTS)
        v->regressed[i] = r->delta < -opt->max_drop - COMPARE_EPS_POINTS && r->p < opt->alpha && r->hi < -COMPARE_EPS_POINTS;
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



