// stats.c: McNemar's exact test, paired percentile bootstraps, the cluster-robust t interval of a
// ratio, Wilson interval (stats.h).
#include "eval/stats.h"

#include <math.h>
#include <stdlib.h>

#include "common/error.h"
#include "common/xalloc.h"
#include "eval/mt19937.h"

// ---- binomial(n, 1/2) ---------------------------------------------------------------------
// Loader (2000), "Fast and accurate computation of binomial probabilities": the pmf as
// exp(-(stirling errors) - bd0 terms) / sqrt(2 pi k (n-k)/n), with no cancellation between
// large log-factorials, so tail probabilities stay accurate to ~1e-12 relative (stats.h).

// stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n), n >= 1. Exact values up to 15 (computed
// with mpmath at 50 digits), then the asymptotic series, whose first omitted term is < 1e-16.
static double stirlerr(double n) {
    static const double table[16] = {
        0.0,  // unused: n = 0 never reaches here
        0.08106146679532726,  0.0413406959554093,    0.02767792568499834,
        0.020790672103765093, 0.016644691189821193,  0.013876128823070748,
        0.01189670994589177,  0.010411265261972096,  0.009255462182712733,
        0.00833056343336287,  0.007573675487951841,  0.00694284010720953,
        0.006408994188004207, 0.0059513701127588475, 0.005554733551962801,
    };
    if (n <= 15.0) return table[(int)n];
    const double s0 = 1.0 / 12, s1 = 1.0 / 360, s2 = 1.0 / 1260, s3 = 1.0 / 1680, s4 = 1.0 / 1188;
    double nn = n * n;
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n;
}

// bd0(x, np) = x log(x / np) + np - x, by a series when x is near np (where the direct form
// cancels).
static double bd0(double x, double np) {
    if (fabs(x - np) < 0.1 * (x + np)) {
        double v = (x - np) / (x + np);
        double s = (x - np) * v;
        double ej = 2 * x * v;
        v = v * v;
        for (int j = 1; j < 1000; j++) {
            ej *= v;
            double s1 = s + ej / (2 * j + 1);
            if (s1 == s) return s1;
            s = s1;
        }
        return s;
    }
    return x * log(x / np) + np - x;
}

double stats_binom_pmf_half(long k, long n) {
    if (n < 0) return NAN;
    if (k < 0 || k > n) return 0.0;
    if (k == 0 || k == n) return ldexp(1.0, n > 100000 ? -100000 : -(int)n);  // 2^-n
    double dn = (double)n, dk = (double)k, half = 0.5 * dn;
    double lc = stirlerr(dn) - stirlerr(dk) - stirlerr(dn - dk) - bd0(dk, half) -
                bd0(dn - dk, half);
    double lf = log(2 * M_PI) + log(dk) + log1p(-dk / dn);
    return exp(lc - 0.5 * lf);
}

double stats_binom_cdf_half(long k, long n) {
    if (n < 0) return NAN;
    if (k < 0) return 0.0;
    if (k >= n) return 1.0;
    // Upper half by symmetry, so the summed terms always decrease away from k.
    if (2 * k > n) return 1.0 - stats_binom_cdf_half(n - k - 1, n);
    double term = stats_binom_pmf_half(k, n), sum = term;
    for (long i = k; i > 0 && term > sum * 1e-18; i--) {
        term *= (double)i / (double)(n - i + 1);  // pmf(i-1) = pmf(i) * i / (n - i + 1)
        sum += term;
    }
    return sum;
}

double stats_mcnemar_exact_p(long b, long c) {
    if (b < 0 || c < 0) return NAN;
    double p = 2.0 * stats_binom_cdf_half(b < c ? b : c, b + c);
    return p < 1.0 ? p : 1.0;
}

// ---- percentile bootstrap -----------------------------------------------------------------

double stats_quantile_linear(const double *sorted, int n, double q) {
    if (!sorted || n < 1 || !(q >= 0.0 && q <= 1.0)) return NAN;
    double v = (double)(n - 1) * q;  // numpy: (n - 1) * quantiles
    if (v >= (double)(n - 1)) return sorted[n - 1];
    double fi = floor(v);
    int i = (int)fi;
    double g = v - fi;
    double a = sorted[i], b = sorted[i + 1], diff = b - a;
    return g >= 0.5 ? b - diff * (1.0 - g) : a + diff * g;  // numpy's _lerp
}

// Ascending, NaN last (numpy's sort order).
static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    if (isnan(a)) return isnan(b) ? 0 : 1;
    if (isnan(b)) return -1;
    return (a > b) - (a < b);
}

static int finish_ci(double *reps, int iters, double level, double *lo, double *hi) {
    qsort(reps, (size_t)iters, sizeof *reps, cmp_double);
    if (lo) *lo = stats_quantile_linear(reps, iters, (1.0 - level) / 2.0);
    if (hi) *hi = stats_quantile_linear(reps, iters, (1.0 + level) / 2.0);
    return 0;
}

int stats_paired_bootstrap_ci(const double *a, const double *b, int n, int iters, uint64_t seed,
                              double level, double *delta, double *lo, double *hi) {
    const double *const pa[1] = {a}, *const pb[1] = {b};
    return stats_paired_bootstrap_ci_multi(pa, pb, &n, 1, iters, seed, level, delta, lo, hi);
}

int stats_paired_bootstrap_ci_multi(const double *const *a, const double *const *b,
                                    const int *n, int n_tasks, int iters, uint64_t seed,
                                    double level, double *delta, double *lo, double *hi) {
    if (!a || !b || !n || n_tasks < 1 || iters < 1 || !(level > 0.0 && level < 1.0))
        return XSA_EBADINPUT;
    size_t total = 0, max_n = 0;
    for (int t = 0; t < n_tasks; t++) {
        if (!a[t] || !b[t] || n[t] < 1) return XSA_EBADINPUT;
        total += (size_t)n[t];
        if ((size_t)n[t] > max_n) max_n = (size_t)n[t];
    }
    double *d = xsa_malloc(total * sizeof *d);          // (sum n,) per-doc b - a, task after task
    double *u = xsa_malloc(max_n * sizeof *u);          // (max n,) one task's random() draws
    double *reps = xsa_malloc((size_t)iters * sizeof *reps);  // (iters,)
    double tot = 0.0;
    for (int t = 0, off = 0; t < n_tasks; off += n[t], t++) {
        double s = 0.0;
        for (int i = 0; i < n[t]; i++) {
            d[off + i] = b[t][i] - a[t][i];
            s += d[off + i];
        }
        tot += s / (double)n[t];
    }
    if (delta) *delta = tot / (double)n_tasks;

    mt19937 rng;
    mt19937_seed(&rng, seed);
    for (int r = 0; r < iters; r++) {
        tot = 0.0;
        for (int t = 0, off = 0; t < n_tasks; off += n[t], t++) {
            const double *dt = d + off;
            const double dn = (double)n[t];
            mt19937_fill_random(&rng, u, (size_t)n[t]);
            double s = 0.0;
            for (int i = 0; i < n[t]; i++) {
                size_t j = (size_t)(u[i] * dn);  // floor(random() * n), always < n
                s += dt[j < (size_t)n[t] ? j : (size_t)n[t] - 1];
            }
            tot += s / dn;
        }
        reps[r] = tot / (double)n_tasks;
    }
    int rc = finish_ci(reps, iters, level, lo, hi);
    free(d), free(u), free(reps);
    return rc;
}

// ---- Student t -----------------------------------------------------------------------------

// Regularized incomplete beta I_x(a, b), 0 < x < 1, by its continued fraction (DLMF 8.17.22)
// evaluated with the modified Lentz method; the fraction converges fast for x < (a + 1) / (a + b
// + 2), and I_x(a, b) = 1 - I_{1-x}(b, a) covers the rest.
static double incbeta(double x, double a, double b) {
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    if (x > (a + 1.0) / (a + b + 2.0)) return 1.0 - incbeta(1.0 - x, b, a);
    double front = exp(a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b))) / a;
    const double tiny = 1e-300;
    double f = 1.0, c = 1.0, d = 0.0;
    for (int i = 0; i < 100000; i++) {  // i = 2m or 2m + 1: the fraction's terms d_i
        int m = i / 2;
        double num = i == 0 ? 1.0
                     : i % 2 ? -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1))
                             : (m * (b - m) * x) / ((a + 2.0 * m - 1) * (a + 2.0 * m));
        d = 1.0 + num * d;
        if (fabs(d) < tiny) d = tiny;
        d = 1.0 / d;
        c = 1.0 + num / c;
        if (fabs(c) < tiny) c = tiny;
        double cd = c * d;
        f *= cd;
        if (fabs(1.0 - cd) < 4e-16) break;
    }
    return front * (f - 1.0);
}

double stats_t_quantile(double p, double df) {
    if (!(p > 0.0 && p < 1.0) || !(df > 0.0)) return NAN;
    if (p == 0.5) return 0.0;
    double level = fabs(2.0 * p - 1.0);  // P(|T| <= t)
    // Solve in whichever variable keeps the target away from 1, by bisection to the last bit:
    // P(|T| > t) = I_x(df/2, 1/2) with x = df / (df + t^2); P(|T| <= t) = I_y(1/2, df/2), y = 1 - x.
    int tail = level > 0.5;
    double target = tail ? (p < 0.5 ? 2.0 * p : 2.0 * (1.0 - p)) : level;
    double lo = 0.0, hi = 1.0;
    for (;;) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        double v = tail ? incbeta(mid, 0.5 * df, 0.5) : incbeta(mid, 0.5, 0.5 * df);
        if (v < target) lo = mid;
        else hi = mid;
    }
    double z = 0.5 * (lo + hi);
    double t = tail ? sqrt(df * (1.0 - z) / z) : sqrt(df * z / (1.0 - z));
    return p < 0.5 ? -t : t;
}

// ---- cluster-robust t interval of a ratio ---------------------------------------------------

int stats_cluster_ratio_ci(const double *a, const double *b, const double *w, int n, double level,
                           struct stats_ratio_ci *out) {
    if (!a || !b || !w || !out || n < 1 || !(level > 0.0 && level < 1.0)) return XSA_EBADINPUT;
    double sd = 0.0, sw = 0.0;
    for (int i = 0; i < n; i++) {
        if (!(w[i] > 0.0)) return XSA_EBADINPUT;
        sd += b[i] - a[i];
        sw += w[i];
    }
    *out = (struct stats_ratio_ci){sd / sw, NAN, NAN, NAN, NAN};
    if (n < 2) return 0;  // one unit: no spread between units to estimate
    // rest[i] = the other units' weight, from prefix and suffix sums (sw - w[i] would cancel when
    // one unit holds nearly every target).
    double *rest = xsa_malloc((size_t)n * sizeof *rest);
    double s = 0.0;
    for (int i = n - 1; i >= 0; i--) rest[i] = s, s += w[i];
    s = 0.0;
    double v = 0.0, sp2 = 0.0, cross = 0.0, tsum = 0.0;
    for (int i = 0; i < n; i++) {
        rest[i] += s, s += w[i];
        double r = (b[i] - a[i]) - out->delta * w[i];  // the unit's score
        v += r * r / (sw * rest[i]);                   // CR2: r / sqrt(1 - w_i / sw), bread 1 / sw
        double p = w[i] / sw, t = w[i] * w[i] / (sw * rest[i]);  // t = p^2 / (1 - p)
        sp2 += p * p;
        cross += t * tsum;  // sum over j < i of t_i t_j: positive terms, no cancellation
        tsum += t;
    }
    free(rest);
    out->se = sqrt(v);
    out->df = 1.0 / (sp2 + 2.0 * cross);
    if (out->df > n - 1) out->df = n - 1;  // (the bound it can only pass by rounding)
    double q = stats_t_quantile(0.5 + 0.5 * level, out->df);
    out->lo = out->delta - q * out->se;
    out->hi = out->delta + q * out->se;
    return 0;
}

// ---- Holm ---------------------------------------------------------------------------------

int stats_holm_adjust(const double *p, int m, double *adj) {
    if (!p || !adj || m < 1) return XSA_EBADINPUT;
    for (int i = 0; i < m; i++)
        if (!(p[i] >= 0.0 && p[i] <= 1.0)) return XSA_EBADINPUT;
    // Indices by ascending p (insertion sort: a family is a few tasks; the order among ties
    // cannot change the running maximum's values).
    int *ord = xsa_malloc(sizeof(int) * (size_t)m);
    for (int i = 0; i < m; i++) {
        int j = i;
        for (; j > 0 && p[ord[j - 1]] > p[i]; j--) ord[j] = ord[j - 1];
        ord[j] = i;
    }
    double *out = xsa_malloc(sizeof(double) * (size_t)m), run = 0.0;
    for (int k = 0; k < m; k++) {  // step k (0-based) tests at alpha / (m - k)
        double v = (double)(m - k) * p[ord[k]];
        if (v > run) run = v;
        out[ord[k]] = run > 1.0 ? 1.0 : run;
    }
    for (int i = 0; i < m; i++) adj[i] = out[i];
    free(ord), free(out);
    return 0;
}

// ---- Wilson -------------------------------------------------------------------------------

int stats_wilson_ci(long k, long n, double z, double *lo, double *hi) {
    if (n < 1 || k < 0 || k > n || !(z >= 0.0)) return XSA_EBADINPUT;
    // statsmodels' expression order, so results agree to the last bits or nearly.
    double dn = (double)n, q = (double)k / dn, z2 = z * z;
    double denom = 1.0 + z2 / dn;
    double center = (q + z2 / (2.0 * dn)) / denom;
    double dist = z * sqrt(q * (1.0 - q) / dn + z2 / (4.0 * dn * dn)) / denom;
    double l = center - dist, h = center + dist;
    if (lo) *lo = l < 0.0 ? 0.0 : (l > 1.0 ? 1.0 : l);
    if (hi) *hi = h < 0.0 ? 0.0 : (h > 1.0 ? 1.0 : h);
    return 0;
}
