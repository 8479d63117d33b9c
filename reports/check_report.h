// check_report.h: the outputs of the regression gate (eval/check.h judges).
#ifndef XSA_REPORTS_CHECK_REPORT_H
#define XSA_REPORTS_CHECK_REPORT_H

#include "common/vec.h"
#include "eval/check.h"

// A Markdown summary fit for a pull-request comment.
void check_markdown(const struct results *base, const struct results *cand, const struct check_verdict *v,
                    const struct check_options *opt, struct sbuf *out);
// The verdict as JSON: {"pass", "baseline", "results", "max_drop", "alpha", "bootstrap_iters",
// "seed", "tasks": [{task, metric, n, baseline, new, delta, ci, mcnemar_p, regressed}],
// "average": {tasks, baseline, new, delta, ci, regressed}} (values in points where named
// delta/ci, fractions for baseline/new; 10 significant digits).
int check_verdict_json(const struct check_verdict *v, const struct check_options *opt, struct sbuf *out);
#endif
