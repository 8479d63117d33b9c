// metrics.c: lm-eval's per-doc metrics and aggregations, reproduced to the bit (metrics.h).
#include "eval/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/error.h"
#include "common/xalloc.h"
#include "eval/mt19937.h"

int metrics_argmax(const double *x, int n) {
    if (!x || n < 1) return -1;
    // numpy's float argmax: a strict "not <=" comparison, so ties keep the first index and
    // the first NaN (which compares false with everything) stops the search.
    int best = 0;
    double m = x[0];
    if (isnan(m)) return 0;
    for (int i = 1; i < n; i++) {
        if (!(x[i] <= m)) {
            m = x[i];
            best = i;
            if (isnan(m)) break;
        }
    }
    return best;
}

int metrics_mc_doc(const double *lls, const double *choice_len, int n, int gold, double *acc,
                   double *acc_norm, int *pred, int *pred_norm) {
    if (!lls || !choice_len || n < 1) return XSA_EBADINPUT;
    int p = metrics_argmax(lls, n);
    // argmax over lls / len, first maximum wins; computed without a temporary array.
    int pn = 0;
    double m = lls[0] / choice_len[0];
    if (!isnan(m)) {
        for (int i = 1; i < n; i++) {
            double v = lls[i] / choice_len[i];
            if (!(v <= m)) {
                m = v;
                pn = i;
                if (isnan(m)) break;
            }
        }
    }
    int gold_ok = gold >= 0 && gold < n;  // lm-eval maps out-of-range gold to -100
    if (pred) *pred = p;
    if (pred_norm) *pred_norm = pn;
    if (acc) *acc = gold_ok && p == gold ? 1.0 : 0.0;
    if (acc_norm) *acc_norm = gold_ok && pn == gold ? 1.0 : 0.0;
    return 0;
}

void metrics_ll_doc(double ll, int is_greedy, double *perplexity_item, double *acc) {
    if (perplexity_item) *perplexity_item = ll;
    if (acc) *acc = is_greedy ? 1.0 : 0.0;
}

// Python's sum() of floats, one term at a time: the default mode adds left to right as
// Python < 3.12 does; METRICS_SUM_NEUMAIER is CPython 3.12's builtin_sum float path,
// statement for statement (a compensation c, added once at the end when finite).
struct py_sum {
    double s, c;
    metrics_sum mode;
};

static struct py_sum py_sum_start(double x0, metrics_sum mode) {
    return (struct py_sum){0.0 + x0, 0.0, mode};  // sum() starts from the int 0: -0.0 becomes 0.0
}

static inline void py_sum_add(struct py_sum *p, double v) {
    if (p->mode != METRICS_SUM_NEUMAIER) {
        p->s += v;
        return;
    }
    double t = p->s + v;
    if (fabs(p->s) >= fabs(v))
        p->c += (p->s - t) + v;
    else
        p->c += (v - t) + p->s;
    p->s = t;
}

static double py_sum_value(const struct py_sum *p) {
    return p->c != 0.0 && isfinite(p->c) ? p->s + p->c : p->s;
}

double metrics_sum_py(const double *x, int n, metrics_sum mode) {
    if (!x || n < 1) return 0.0;
    struct py_sum ps = py_sum_start(x[0], mode);
    for (int i = 1; i < n; i++) py_sum_add(&ps, x[i]);
    return py_sum_value(&ps);
}

double metrics_mean_ex(const double *x, int n, metrics_sum mode) {
    if (!x || n < 1) return NAN;
    return metrics_sum_py(x, n, mode) / (double)n;
}

double metrics_mean(const double *x, int n) {
    return metrics_mean_ex(x, n, METRICS_SUM_DEFAULT);
}

// CPython's float `d ** 2`: libm pow(|d|, 2.0). The exponent goes through a volatile so the
// compiler keeps the libm call instead of folding it to d * d: we promise what CPython computes,
// not what should be the same.
static double py_square(double d) {
    static const volatile double two = 2.0;
    return pow(fabs(d), two);
}

// sum([(x - mu) ** 2 for x in arr]) under `mode`, without materialising the list.
static double sum_sq_dev(const double *x, int n, double mu, metrics_sum mode) {
    struct py_sum ps = py_sum_start(py_square(x[0] - mu), mode);
    for (int i = 1; i < n; i++) py_sum_add(&ps, py_square(x[i] - mu));
    return py_sum_value(&ps);
}

double metrics_sample_stddev_ex(const double *x, int n, metrics_sum mode) {
    if (!x || n <= 1) return NAN;
    double mu = metrics_mean_ex(x, n, mode);
    return sqrt(sum_sq_dev(x, n, mu, mode) / (double)(n - 1));
}

double metrics_mean_stderr_ex(const double *x, int n, metrics_sum mode) {
    if (!x || n <= 1) return NAN;
    return metrics_sample_stddev_ex(x, n, mode) / sqrt((double)n);
}

double metrics_mean_stderr(const double *x, int n) {
    return metrics_mean_stderr_ex(x, n, METRICS_SUM_DEFAULT);
}

double metrics_perplexity_ex(const double *lls, int n, metrics_sum mode) {
    if (!lls || n < 1) return NAN;
    return exp(-metrics_mean_ex(lls, n, mode));
}

double metrics_perplexity(const double *lls, int n) {
    return metrics_perplexity_ex(lls, n, METRICS_SUM_DEFAULT);
}

// ---- bootstrap ----------------------------------------------------------------------------

struct boot_job {
    const double *x;    // (n,) the per-doc lls
    int n;
    int chunk;          // resamples per chunk (= per seed)
    int n_chunks;
    metrics_sum mode;
    double *res;        // (n_chunks * chunk,) replicate values, chunk i at i * chunk
    atomic_int next;    // next chunk to claim
};

// One replicate: perplexity(rnd.choices(x, k=n)) from n random() values u.   u: (n,)
static double boot_replicate(const struct boot_job *job, const double *u) {
    const double *x = job->x;
    const int n = job->n;
    const double dn = (double)n;
    size_t j = (size_t)(u[0] * dn);
    struct py_sum ps = py_sum_start(x[j < (size_t)n ? j : (size_t)n - 1], job->mode);
    for (int i = 1; i < n; i++) {
        j = (size_t)(u[i] * dn);
        py_sum_add(&ps, x[j < (size_t)n ? j : (size_t)n - 1]);
    }
    double s = py_sum_value(&ps);
    return exp(-(s / dn));
}

static void *boot_worker(void *arg) {
    struct boot_job *job = arg;
    double *u = xsa_malloc((size_t)job->n * sizeof *u);  // (n,) one replicate's random() draws
    mt19937 rng;
    for (;;) {
        int c = atomic_fetch_add(&job->next, 1);
        if (c >= job->n_chunks) break;
        mt19937_seed(&rng, (uint64_t)c);  // rnd = random.Random(); rnd.seed(i)
        double *out = job->res + (size_t)c * (size_t)job->chunk;
        for (int r = 0; r < job->chunk; r++) {
            mt19937_fill_random(&rng, u, (size_t)job->n);
            out[r] = boot_replicate(job, u);
        }
    }
    free(u);
    return NULL;
}

double metrics_perplexity_bootstrap_stderr_ex(const double *lls, int n, int iters,
                                              int n_threads, metrics_sum mode) {
    if (!lls || n <= 1 || iters < 1) return NAN;
    struct boot_job job = {.x = lls, .n = n, .mode = mode};
    job.chunk = iters < 1000 ? iters : 1000;
    job.n_chunks = iters / job.chunk;
    atomic_init(&job.next, 0);
    size_t total = (size_t)job.n_chunks * (size_t)job.chunk;
    job.res = xsa_calloc(total, sizeof *job.res);

    if (n_threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n_threads = cpus > 0 ? (int)cpus : 1;
    }
    if (n_threads > job.n_chunks) n_threads = job.n_chunks;
    if (n_threads > 256) n_threads = 256;
    pthread_t tid[256];
    int started = 0;
    for (int t = 1; t < n_threads; t++) {  // the caller is worker 0
        if (pthread_create(&tid[started], NULL, boot_worker, &job) != 0) break;
        started++;
    }
    boot_worker(&job);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);

    // Only a worker holding its buffer claims chunks and finishes every chunk it claims, so
    // all replicates exist once the claim counter has passed the end.
    double se = NAN;
    if (atomic_load(&job.next) >= job.n_chunks && total > 1)
        se = metrics_sample_stddev_ex(job.res, (int)total, mode);
    free(job.res);
    return se;
}

double metrics_perplexity_bootstrap_stderr(const double *lls, int n, int iters, int n_threads) {
    return metrics_perplexity_bootstrap_stderr_ex(lls, n, iters, n_threads, METRICS_SUM_DEFAULT);
}
