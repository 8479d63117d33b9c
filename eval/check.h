// check.h: the CI regression gate. A candidate's results are compared with a baseline's
// (eval/compare.h, paired statistics) and fail when
//   - a task's delta < -max_drop points AND the drop is significant: exact McNemar p < a
//     AND the (1 - a) paired bootstrap interval lies below 0 (both, so that a noisy
//     interval or a lucky p alone never fails a build); or
//   - the average over all compared tasks drops by more than max_drop points AND its
//     (1 - a) interval (documents resampled within each task) lies below 0,
// where a = alpha / m, m the number of those tests (check_n_tests): Bonferroni, so that a
// candidate no different from the baseline fails with probability at most alpha over the whole
// gate, not alpha per test (nine tasks tested at alpha each failed such a candidate about 16% of
// the time at --limit 400: tools/references/calibrate_compare.py).
// LAMBADA's perplexity is reported by compare, not gated.
#ifndef XSA_EVAL_CHECK_H
#define XSA_EVAL_CHECK_H

#include "common/vec.h"
#include "eval/compare.h"

#define CHECK_DEFAULT_MAX_DROP 1.0
#define CHECK_DEFAULT_ALPHA 0.05

struct check_options {
    double max_drop;            // points (>= 0)
    double alpha;               // significance level in (0, 1)
    int iters;                  // bootstrap replicates (<= 0: COMPARE_DEFAULT_ITERS)
    uint64_t seed;              // 0: COMPARE_DEFAULT_SEED
    const char *baseline_path;  // for the messages and the verdict
    const char *results_path;
    const char *metric;         // NULL/"auto": each task's preferred metric
};

struct check_verdict {
    int pass;
    int n_tests;                // m: the tests of the rule (check_n_tests)
    double test_alpha;          // alpha / m, each test's level (cmp.alpha)
    struct comparison cmp;      // baseline = A, candidate = B
    int *regressed;             // (cmp.n_rows) 1 when that task failed
    int n_regressed;
    int avg_regressed;          // the "all" average failed
};

// The number of tests the rule makes on results with n_tasks tasks: one per task and one for
// the average, which with a single task is the task itself (1).
int check_n_tests(int n_tasks);

// Compares and judges. Returns 0 (see v->pass), or XSA_EBADINPUT for incomparable inputs /
// bad options. Free with check_verdict_free().
int check_evaluate(const struct results *base, const struct results *cand, const struct check_options *opt,
                   struct check_verdict *v, xsa_error *err);
void check_verdict_free(struct check_verdict *v);

#endif
