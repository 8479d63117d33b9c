// metrics.h: per-document metrics and their aggregation, exactly as lm-evaluation-harness v0.4
// computes them (lm_eval/api/metrics.py, ConfigurableTask.process_results; docs/lm-eval-semantics.md
// sections 1.7 and 1.8).
//
// Python's `sum()` of floats changed in CPython 3.12 (gh-100425): <= 3.11 adds left to right,
// >= 3.12 uses Neumaier's compensated sum. lm-eval's mean() and sample_stddev() call the
// builtin sum, so the last bits of every mean / stderr / perplexity depend on the Python that
// produced a results file. Both are implemented; the *_ex functions take the mode, the plain
// ones use METRICS_SUM_DEFAULT = naive (CPython 3.11, the interpreter that made our fixtures and
// the one most lm-eval v0.4 results were made with). For 0/1 data (acc, acc_norm) the mean is
// the same under both; only the stderr's last bits can differ.
//
// Conventions: n is the number of documents; a statistic that lm-eval reports as "N/A"
// (stderr with n <= 1) or that is undefined (mean of nothing) is NAN.
#ifndef XSA_EVAL_METRICS_H
#define XSA_EVAL_METRICS_H

typedef enum metrics_sum {
    METRICS_SUM_NAIVE = 0,     // CPython <= 3.11 sum(): s += x, left to right
    METRICS_SUM_NEUMAIER = 1,  // CPython >= 3.12 sum(): Neumaier compensation, added at the end
} metrics_sum;

#define METRICS_SUM_DEFAULT METRICS_SUM_NAIVE

// lm-eval's default bootstrap_iters (100 chunks of 1000 resamples).
#define METRICS_BOOTSTRAP_ITERS 100000

// ---- per document -------------------------------------------------------------------------

// numpy.argmax: index of the first maximum; a NaN counts as the maximum (first NaN wins).
// Returns -1 when n < 1.                                                      x: (n,)
int metrics_argmax(const double *x, int n);

// A multiple-choice doc: pred = argmax(lls), pred_norm = argmax(lls[i] / choice_len[i])
// (choice_len = character count of the choice text; ll / 0 follows IEEE, as numpy does),
// acc = pred == gold, acc_norm = pred_norm == gold, both 0.0 when gold is outside [0, n)
// (lm-eval's -100 "always wrong"). Any output pointer may be NULL.
// Returns 0, or XSA_EBADINPUT when n < 1 or an input array is NULL.   lls, choice_len: (n,)
int metrics_mc_doc(const double *lls, const double *choice_len, int n, int gold, double *acc,
                   double *acc_norm, int *pred, int *pred_norm);

// A LAMBADA-style loglikelihood doc: the perplexity item is ll itself (the aggregate takes
// exp(-mean)), acc = is_greedy. Either output may be NULL.
void metrics_ll_doc(double ll, int is_greedy, double *perplexity_item, double *acc);

// ---- aggregation --------------------------------------------------------------------------

// Python's builtin sum(x) of floats under `mode` (0.0 for n < 1).             x: (n,)
double metrics_sum_py(const double *x, int n, metrics_sum mode);

// mean(arr) = sum(arr) / len(arr); NAN when n < 1.
double metrics_mean(const double *x, int n);
double metrics_mean_ex(const double *x, int n, metrics_sum mode);

// sample_stddev(arr) = sqrt(sum([(x - mu) ** 2 for x in arr]) / (n - 1)), mu = mean(arr),
// `** 2` being libm pow() as in CPython; NAN when n <= 1.
double metrics_sample_stddev_ex(const double *x, int n, metrics_sum mode);

// mean_stderr = sample_stddev / sqrt(n); NAN ("N/A") when n <= 1.
double metrics_mean_stderr(const double *x, int n);
double metrics_mean_stderr_ex(const double *x, int n, metrics_sum mode);

// perplexity(lls) = exp(-mean(lls)), lls = per-doc summed log-likelihoods; NAN when n < 1.
double metrics_perplexity(const double *lls, int n);
double metrics_perplexity_ex(const double *lls, int n, metrics_sum mode);

// lm-eval's bootstrap_stderr(perplexity, lls, iters), bit for bit: chunk = min(1000, iters);
// for i in range(iters // chunk): rnd = random.Random(i); chunk times:
// res.append(perplexity(rnd.choices(lls, k=n))); return sample_stddev(res).
// Chunks run on n_threads threads (<= 0: one per online CPU); each has its own seed and its
// own slice of res, so the result does not depend on the thread count.
// NAN when n <= 1 ("N/A"), iters < 1, or memory runs out.                    lls: (n,)
double metrics_perplexity_bootstrap_stderr(const double *lls, int n, int iters, int n_threads);
double metrics_perplexity_bootstrap_stderr_ex(const double *lls, int n, int iters,
                                              int n_threads, metrics_sum mode);

#endif
