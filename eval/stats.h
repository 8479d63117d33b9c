// stats.h: paired statistics for comparing two models scored on the same documents (SA vs
// XSA): McNemar's exact test on 0/1 outcomes, percentile-bootstrap confidence intervals of the
// mean difference (one task, or the average over several tasks), a cluster-robust t interval of
// a difference of per-target means (ppl), and a Wilson interval.
//
// The bootstrap uses CPython's random.Random (eval/mt19937.h) so that a few lines of Python
// reproduce it exactly (tools/fixtures/make_stats_fixtures.py does, independently of this code):
//
//   d = [b[i] - a[i] for i in range(n)]                 # per-doc differences
//   delta = mean(d)                                     # see "means" below
//   rnd = random.Random(seed); reps = []
//   for _ in range(iters):
//       s = 0.0
//       for _ in range(n): s += d[math.floor(rnd.random() * n)]
//       reps.append(s / n)
//   lo, hi = numpy.quantile(reps, [(1 - level) / 2, (1 + level) / 2])   # method 'linear'
//
// "means" are explicit left-to-right sums (s = 0.0; s += x ...) divided by n, the same under
// every Python version (the builtin sum() changed in 3.12, see eval/metrics.h).
// numpy.quantile 'linear' (= numpy.percentile's default with q * 100) on the sorted reps:
// v = (iters - 1) * q, i = floor(v), g = v - i, lo/hi = sorted[i] + (sorted[i+1] - sorted[i]) * g
// when g < 0.5, else sorted[i+1] - (sorted[i+1] - sorted[i]) * (1 - g); v >= iters - 1 gives
// the last value.
//
// Multi-task version (the "average over the tasks" row), one stream for all tasks:
//   for _ in range(iters):
//       tot = 0.0
//       for t in range(T):                         # tasks in the given order
//           s = 0.0
//           for _ in range(n[t]): s += d[t][math.floor(rnd.random() * n[t])]
//           tot += s / n[t]
//       reps.append(tot / T)
//   delta = (sum over t, left to right, of mean(d[t])) / T
// Documents are resampled within each task (tasks are fixed, not resampled), so the interval
// is for the unweighted mean over these tasks of the per-task mean difference.
//
// Ratio form (`ppl`: per-target means over units of unequal size, documents or windows): no
// bootstrap but the cluster-robust t interval of stats_cluster_ratio_ci below.
#ifndef XSA_EVAL_STATS_H
#define XSA_EVAL_STATS_H

#include <stdint.h>

// P(X = k) and P(X <= k) for X ~ Binomial(n, 1/2), to ~1e-12 relative for any n (Loader's
// saddle-point form of the pmf, then the pmf ratio recurrence; the exp() of a large exponent
// loses a few bits in far tails: against exact rationals up to n = 6000, at most 1.1e-13 for
// values above 1e-30 and 6e-13 down to 1e-300). 0 outside the support / 1 for k >= n in the
// cdf; n < 0 gives NAN.
double stats_binom_pmf_half(long k, long n);
double stats_binom_cdf_half(long k, long n);

// Two-sided exact McNemar p-value for the discordant counts b (A right, B wrong) and c (A
// wrong, B right): min(1, 2 * P(X <= min(b, c))), X ~ Binomial(b + c, 1/2), as
// statsmodels.stats.contingency_tables.mcnemar(table, exact=True).pvalue; 1.0 when b + c == 0.
// NAN when b or c is negative.
double stats_mcnemar_exact_p(long b, long c);

// Holm's step-down adjustment of m p-values (one family: each of compare's tasks):
// with p sorted ascending, adj_(j) = min(1, max over k <= j of (m - k + 1) p_(k)), j = 1..m,
// as statsmodels.stats.multitest.multipletests(p, method='holm')[1]. A hypothesis is rejected
// at family-wise level alpha when adj < alpha; m = 1 leaves p as it is. Ties get one value
// whatever their order. Returns 0, or XSA_EBADINPUT (m < 1, a p outside [0, 1] or NaN, NULL).
// adj may be p itself.                                                    p, adj: (m,)
int stats_holm_adjust(const double *p, int m, double *adj);

// numpy.quantile(sorted, q) with the default 'linear' method, for ascending `sorted`, n >= 1,
// 0 <= q <= 1 (NAN otherwise).                                            sorted: (n,)
double stats_quantile_linear(const double *sorted, int n, double q);

// Paired percentile bootstrap of mean(b - a) over n documents (see the top of this file):
// *delta = the mean difference, [*lo, *hi] the `level` interval (e.g. 0.95) from `iters`
// resamples drawn with random.Random(seed). Any output pointer may be NULL.
// Returns 0, or XSA_EBADINPUT (n < 1, iters < 1, level outside (0, 1), NULL inputs). Cost: iters * n draws, one thread.          a, b: (n,)
int stats_paired_bootstrap_ci(const double *a, const double *b, int n, int iters, uint64_t seed,
                              double level, double *delta, double *lo, double *hi);

// The same over n_tasks tasks: a[t], b[t] have n[t] docs each; the statistic is the unweighted
// mean over tasks of each task's mean(b - a) (see the top of this file).
// Returns as stats_paired_bootstrap_ci (also XSA_EBADINPUT for n_tasks < 1 or any n[t] < 1).
int stats_paired_bootstrap_ci_multi(const double *const *a, const double *const *b,
                                    const int *n, int n_tasks, int iters, uint64_t seed,
                                    double level, double *delta, double *lo, double *hi);

// Student t quantile: the t with P(T <= t) = p for T ~ t(df), df > 0 (not only whole numbers),
// as scipy.stats.t.ppf(p, df) to ~1e-12 relative up to df 1e4, ~1e-9 at 1e6 (bisection resolves
// x = df / (df + t^2) near 1 to the last bit, not t; the incomplete beta by its continued
// fraction; tests/fixtures/stats/stats.json). NAN outside 0 < p < 1, df > 0.
double stats_t_quantile(double p, double df);

struct stats_ratio_ci {
    double delta;               // sum(b - a) / sum(w)
    double se, df;              // CR2 standard error and Bell-McCaffrey degrees of freedom
    double lo, hi;              // delta -/+ t_{(1 + level) / 2}(df) * se
};

// Interval for the ratio delta = sum(d) / sum(w), d = b - a, over n independent units (clusters)
// of w[i] > 0 targets each: the least-squares mean of the per-target differences with a
// cluster-robust standard error. With N = sum(w), the units' scores r_i = d_i - delta * w_i and
// leverages p_i = w_i / N:
//   se^2 = sum(r_i^2 / (1 - p_i)) / N^2                  (CR2, Bell and McCaffrey 2002)
//   df   = 1 / (sum(p_i^2) + 2 sum_{i<j} t_i t_j),  t_i = p_i^2 / (1 - p_i)
// the Bell-McCaffrey degrees of freedom of that variance under independent targets (Imbens and
// Kolesar 2016, "Robust standard errors in small samples"): n - 1 when the units are of one
// size, fewer when a few units hold most targets, always in [1, n - 1]. Units of one size give
// exactly statsmodels' OLS of the per-target differences on a constant with cov_type='cluster'
// (CR1) and use_t (t on n - 1 df). Why this and not a bootstrap: docs/statistics.md (coverage).
// n == 1: delta only, the rest NAN. Returns 0, or XSA_EBADINPUT (NULL, n < 1, a weight not > 0,
// level outside (0, 1)).                                                  a, b, w: (n,)
int stats_cluster_ratio_ci(const double *a, const double *b, const double *w, int n, double level,
                           struct stats_ratio_ci *out);
// Its name in reports and their JSON.
#define STATS_CLUSTER_RATIO_METHOD "cluster-robust t (CR2 standard error, Bell-McCaffrey df)"

// Wilson score interval for k successes in n trials with critical value z (1.959963984540054
// for 95%), as statsmodels proportion_confint(k, n, alpha, method="wilson"), clipped to [0, 1].
// Returns 0, or XSA_EBADINPUT when n < 1, k outside [0, n] or z < 0.
int stats_wilson_ci(long k, long n, double z, double *lo, double *hi);

#endif
