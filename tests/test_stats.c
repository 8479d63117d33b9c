// Tests of eval/stats: McNemar's exact p-value and the binomial(n, 1/2) tail against
// statsmodels / scipy, the paired bootstrap intervals against an independent Python version
// (random + numpy.quantile), Wilson intervals against statsmodels. Fixtures:
// tests/fixtures/stats/stats.json from tools/fixtures/make_stats_fixtures.py; Holm's adjustment
// against statsmodels' multipletests (tests/fixtures/stats/holm.json from
// tools/fixtures/make_holm_fixture.py).
#include <cjson/cJSON.h>
#include <stdint.h>

#include "common/error.h"
#include "common/fileio.h"
#include "eval/stats.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

static cJSON *load_stats_fixture(void) { return fixture_read_json("tests/fixtures/stats/stats.json"); }

static double num(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double *json_doubles(const cJSON *arr, int *n) {
    *n = cJSON_GetArraySize(arr);
    double *x = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *x);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) x[i++] = e->valuedouble;
    return x;
}

// |got - want| <= rel * |want|; below the normal range (scipy underflows to 0 where the true
// tail is a subnormal) both only need to be below it.
static int close_rel(double got, double want, double rel) {
    if (fabs(want) < 2.3e-308) return fabs(got) < 2.3e-308;
    return fabs(got - want) <= rel * fabs(want);
}

TEST(test_mcnemar_matches_statsmodels) {
    cJSON *j = load_stats_fixture();
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *c;
    int cases = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "mcnemar")) {
        long b = (long)num(c, "b"), cc = (long)num(c, "c");
        double p = stats_mcnemar_exact_p(b, cc);
        CHECK_MSG(close_rel(p, num(c, "p"), 1e-12), "mcnemar(%ld, %ld) = %.17g, statsmodels %.17g",
                  b, cc, p, num(c, "p"));
        CHECK_MSG(close_rel(p, num(c, "p_binomtest"), 1e-12), "mcnemar(%ld, %ld) = %.17g, "
                  "binomtest %.17g", b, cc, p, num(c, "p_binomtest"));
        cases++;
    }
    CHECK(cases >= 20);
    cJSON_Delete(j);
}

TEST(test_mcnemar_unit_cases) {
    CHECK(stats_mcnemar_exact_p(0, 0) == 1.0);
    CHECK(stats_mcnemar_exact_p(5, 5) == 1.0);
    CHECK(stats_mcnemar_exact_p(2, 0) == 0.5);           // 2 * 1/4
    CHECK(stats_mcnemar_exact_p(0, 10) == 2.0 / 1024);   // exact power of two
    CHECK(stats_mcnemar_exact_p(3, 9) == stats_mcnemar_exact_p(9, 3));
    CHECK(isnan(stats_mcnemar_exact_p(-1, 3)));
    // Large, balanced counts: no overflow, and a p-value near 1 (counts differ by 1).
    double p = stats_mcnemar_exact_p(1000000, 1000001);
    CHECK(p > 0.99 && p <= 1.0);
    // Huge imbalance underflows to 0, never NaN.
    CHECK(stats_mcnemar_exact_p(0, 5000) == 0.0);
}

TEST(test_binom_half_matches_scipy) {
    cJSON *j = load_stats_fixture();
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *c;
    int cases = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "binom")) {
        long k = (long)num(c, "k"), n = (long)num(c, "n");
        double cdf = stats_binom_cdf_half(k, n), pmf = stats_binom_pmf_half(k, n);
        CHECK_MSG(close_rel(cdf, num(c, "cdf"), 1e-12), "cdf(%ld; %ld) %.17g vs %.17g", k, n, cdf,
                  num(c, "cdf"));
        CHECK_MSG(close_rel(pmf, num(c, "pmf"), 1e-12), "pmf(%ld; %ld) %.17g vs %.17g", k, n, pmf,
                  num(c, "pmf"));
        cases++;
    }
    CHECK(cases >= 15);
    CHECK(stats_binom_cdf_half(-1, 5) == 0.0);
    CHECK(stats_binom_cdf_half(5, 5) == 1.0);
    CHECK(stats_binom_pmf_half(6, 5) == 0.0);
    CHECK(isnan(stats_binom_cdf_half(0, -1)));
    cJSON_Delete(j);
}

TEST(test_paired_bootstrap_matches_python) {
    cJSON *j = load_stats_fixture();
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *c;
    int cases = 0, multi = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "paired_bootstrap")) {
        const cJSON *as = cJSON_GetObjectItem(c, "a"), *bs = cJSON_GetObjectItem(c, "b");
        int T = cJSON_GetArraySize(as);
        double *a[8] = {0}, *b[8] = {0};
        int n[8];
        CHECK(T >= 1 && T <= 8);
        if (T < 1 || T > 8) continue;
        for (int t = 0; t < T; t++) {
            int nb;
            a[t] = json_doubles(cJSON_GetArrayItem(as, t), &n[t]);
            b[t] = json_doubles(cJSON_GetArrayItem(bs, t), &nb);
            CHECK_EQ_INT(nb, n[t]);
        }
        int iters = (int)num(c, "iters");
        uint64_t seed = (uint64_t)num(c, "seed");
        double level = num(c, "level"), delta = NAN, lo = NAN, hi = NAN;
        int rc;
        if (T == 1) {
            rc = stats_paired_bootstrap_ci(a[0], b[0], n[0], iters, seed, level, &delta, &lo, &hi);
        } else {
            rc = stats_paired_bootstrap_ci_multi((const double *const *)a, (const double *const *)b,
                                                 n, T, iters, seed, level, &delta, &lo, &hi);
            multi++;
        }
        CHECK_EQ_INT(rc, 0);
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        // The same doubles in the same order: expect the identical bits; 1e-12 is the contract.
        CHECK_MSG(close_rel(delta, num(c, "delta"), 1e-12), "%s delta %.17g vs %.17g", name,
                  delta, num(c, "delta"));
        CHECK_MSG(close_rel(lo, num(c, "lo"), 1e-12), "%s lo %.17g vs %.17g", name, lo,
                  num(c, "lo"));
        CHECK_MSG(close_rel(hi, num(c, "hi"), 1e-12), "%s hi %.17g vs %.17g", name, hi,
                  num(c, "hi"));
        CHECK_MSG(lo == num(c, "lo") && hi == num(c, "hi"), "%s: not bit-identical", name);
        CHECK(lo <= hi);
        for (int t = 0; t < T; t++) free(a[t]), free(b[t]);
        cases++;
    }
    CHECK(cases >= 5);
    CHECK(multi >= 1);
    cJSON_Delete(j);
}

TEST(test_t_quantile_matches_scipy) {
    cJSON *j = load_stats_fixture();
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *c;
    int cases = 0;
    double worst = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "t_quantile")) {
        double p = num(c, "p"), df = num(c, "df"), want = num(c, "t"), got = stats_t_quantile(p, df);
        double rel = fabs(got - want) / fabs(want);
        if (rel > worst) worst = rel;
        // lgamma's cancellation at a million degrees of freedom costs a few more bits
        CHECK_MSG(rel <= (df > 1e4 ? 1e-9 : 1e-12), "t.ppf(%g, %g) = %.17g, got %.17g", p, df, want, got);
        cases++;
    }
    CHECK(cases >= 100);
    CHECK(stats_t_quantile(0.5, 3) == 0.0);
    CHECK(isnan(stats_t_quantile(0.0, 3)) && isnan(stats_t_quantile(1.0, 3)) && isnan(stats_t_quantile(0.9, 0)));
    CHECK(stats_t_quantile(0.3, 7.5) == -stats_t_quantile(0.7, 7.5));
    cJSON_Delete(j);
}

// ppl's interval against the general matrix formulas (and, for units of one size, statsmodels'
// own CR1 t interval), cases from tools/fixtures/make_stats_fixtures.py.
TEST(test_cluster_ratio_ci_matches_reference) {
    cJSON *j = load_stats_fixture();
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *c;
    int cases = 0, equal = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cluster_ratio")) {
        int n, nb, nw;
        double *a = json_doubles(cJSON_GetObjectItem(c, "a"), &n), *b = json_doubles(cJSON_GetObjectItem(c, "b"), &nb),
               *w = json_doubles(cJSON_GetObjectItem(c, "w"), &nw);
        CHECK(nb == n && nw == n);
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        struct stats_ratio_ci r;
        CHECK_EQ_INT(stats_cluster_ratio_ci(a, b, w, n, num(c, "level"), &r), 0);
        // Per-unit sums here, per-target rows in the reference: the same numbers but for rounding.
        double scale = fabs(num(c, "hi") - num(c, "lo")) + fabs(num(c, "delta"));
        CHECK_MSG(fabs(r.delta - num(c, "delta")) <= 1e-13 * (1 + fabs(num(c, "delta"))), "%s delta %.17g vs %.17g", name,
                  r.delta, num(c, "delta"));
        CHECK_MSG(fabs(r.se - num(c, "se")) <= 1e-10 * num(c, "se") + 1e-14, "%s se %.17g vs %.17g", name, r.se, num(c, "se"));
        CHECK_MSG(fabs(r.df - num(c, "df")) <= 1e-10 * num(c, "df"), "%s df %.17g vs %.17g", name, r.df, num(c, "df"));
        CHECK_MSG(fabs(r.lo - num(c, "lo")) <= 1e-10 * scale + 1e-13 && fabs(r.hi - num(c, "hi")) <= 1e-10 * scale + 1e-13,
                  "%s [%.17g, %.17g] vs [%.17g, %.17g]", name, r.lo, r.hi, num(c, "lo"), num(c, "hi"));
        int same = 1;
        for (int i = 1; i < n; i++) same &= w[i] == w[0];
        if (same) {  // one size: statsmodels' OLS cluster (CR1) interval
            const cJSON *sm = cJSON_GetObjectItem(c, "statsmodels_cr1");
            double slo = cJSON_GetArrayItem(sm, 0)->valuedouble, shi = cJSON_GetArrayItem(sm, 1)->valuedouble;
            CHECK_MSG(fabs(r.lo - slo) <= 1e-10 * scale + 1e-13 && fabs(r.hi - shi) <= 1e-10 * scale + 1e-13,
                      "%s [%.17g, %.17g] vs statsmodels [%.17g, %.17g]", name, r.lo, r.hi, slo, shi);
            equal++;
        }
        CHECK(r.lo <= r.delta && r.delta <= r.hi && r.df >= 1 - 1e-12 && r.df <= n - 1 + 1e-12);
        free(a), free(b), free(w);
        cases++;
    }
    CHECK(cases >= 9);
    CHECK(equal >= 2);
    double a[2] = {1, 2}, b[2] = {2, 3}, w[2] = {1, 0};
    struct stats_ratio_ci r;
    CHECK_EQ_INT(stats_cluster_ratio_ci(a, b, w, 2, 0.95, &r), XSA_EBADINPUT);  // a unit of no targets
    w[1] = 4;
    CHECK_EQ_INT(stats_cluster_ratio_ci(a, b, w, 0, 0.95, &r), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_cluster_ratio_ci(a, b, w, 2, 1.0, &r), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_cluster_ratio_ci(a, b, w, 2, 0.95, NULL), XSA_EBADINPUT);
    // One unit: the delta, no interval.
    CHECK_EQ_INT(stats_cluster_ratio_ci(a, b, w, 1, 0.95, &r), 0);
    CHECK(r.delta == 1.0 && isnan(r.se) && isnan(r.df) && isnan(r.lo) && isnan(r.hi));
    // Two units: always 1 degree of freedom, whatever their sizes.
    CHECK_EQ_INT(stats_cluster_ratio_ci(a, b, w, 2, 0.95, &r), 0);
    CHECK_NEAR(r.df, 1.0, 1e-12);
    // A unit of nearly every target: about 1 degree of freedom, not n - 1, and finite.
    double ua[4] = {0, 0, 0, 0}, ub[4] = {3e6, 1, -2, 0.5}, uw[4] = {1e7, 2, 3, 2};
    CHECK_EQ_INT(stats_cluster_ratio_ci(ua, ub, uw, 4, 0.95, &r), 0);
    CHECK(r.df >= 1.0 && r.df < 1.01 && isfinite(r.lo) && isfinite(r.hi));
    cJSON_Delete(j);
}

TEST(test_paired_bootstrap_properties_and_errors) {
    double a[40], b[40];
    for (int i = 0; i < 40; i++) a[i] = i % 2, b[i] = i % 3 == 0;
    double d1, l1, h1, d2, l2, h2;
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 500, 11, 0.95, &d1, &l1, &h1), 0);
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 500, 11, 0.95, &d2, &l2, &h2), 0);
    CHECK(d1 == d2 && l1 == l2 && h1 == h2);  // deterministic for a seed
    CHECK(l1 <= d1 + 0.2 && h1 >= d1 - 0.2 && l1 < h1);
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 500, 12, 0.95, &d2, &l2, &h2), 0);
    CHECK(d1 == d2 && (l1 != l2 || h1 != h2));  // another seed, another interval
    // Identical models: delta and interval are exactly 0.
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, a, 40, 100, 1, 0.95, &d1, &l1, &h1), 0);
    CHECK(d1 == 0.0 && l1 == 0.0 && h1 == 0.0);
    // Outputs may be NULL.
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 10, 1, 0.9, NULL, NULL, NULL), 0);
    // Bad input.
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 0, 10, 1, 0.95, &d1, &l1, &h1), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 0, 1, 0.95, &d1, &l1, &h1), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 10, 1, 1.0, &d1, &l1, &h1), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 10, 1, NAN, &d1, &l1, &h1), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_paired_bootstrap_ci(NULL, b, 40, 10, 1, 0.95, &d1, &l1, &h1),
                 XSA_EBADINPUT);
    const double *pa[2] = {a, NULL}, *pb[2] = {b, b};
    int n[2] = {40, 40};
    CHECK_EQ_INT(stats_paired_bootstrap_ci_multi(pa, pb, n, 2, 10, 1, 0.95, &d1, &l1, &h1),
                 XSA_EBADINPUT);
    pa[1] = a;
    n[1] = 0;
    CHECK_EQ_INT(stats_paired_bootstrap_ci_multi(pa, pb, n, 2, 10, 1, 0.95, &d1, &l1, &h1),
                 XSA_EBADINPUT);
    CHECK_EQ_INT(stats_paired_bootstrap_ci_multi(pa, pb, n, 0, 10, 1, 0.95, &d1, &l1, &h1),
                 XSA_EBADINPUT);
    // One task through the multi entry point equals the single-task call.
    n[1] = 40;
    CHECK_EQ_INT(stats_paired_bootstrap_ci_multi(pa, pb, n, 1, 300, 5, 0.95, &d1, &l1, &h1), 0);
    CHECK_EQ_INT(stats_paired_bootstrap_ci(a, b, 40, 300, 5, 0.95, &d2, &l2, &h2), 0);
    CHECK(d1 == d2 && l1 == l2 && h1 == h2);
}

TEST(test_quantile_linear) {
    const double s[5] = {1.0, 2.0, 4.0, 8.0, 16.0};
    CHECK(stats_quantile_linear(s, 5, 0.0) == 1.0);
    CHECK(stats_quantile_linear(s, 5, 1.0) == 16.0);
    CHECK(stats_quantile_linear(s, 5, 0.5) == 4.0);
    CHECK(stats_quantile_linear(s, 5, 0.625) == 6.0);  // v = 2.5
    CHECK(stats_quantile_linear(s, 5, 0.125) == 1.5);  // v = 0.5
    CHECK(stats_quantile_linear(s, 1, 0.3) == 1.0);
    CHECK(isnan(stats_quantile_linear(s, 5, 1.5)));
    CHECK(isnan(stats_quantile_linear(s, 0, 0.5)));
}

TEST(test_wilson_matches_statsmodels) {
    cJSON *j = load_stats_fixture();
    CHECK(j != NULL);
    if (!j) return;
    double z = num(j, "wilson_z");
    CHECK_NEAR(z, 1.959963984540054, 1e-15);
    const cJSON *c;
    int cases = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "wilson")) {
        long k = (long)num(c, "k"), n = (long)num(c, "n");
        double lo = NAN, hi = NAN;
        CHECK_EQ_INT(stats_wilson_ci(k, n, z, &lo, &hi), 0);
        CHECK_MSG(fabs(lo - num(c, "lo")) <= 1e-15 && fabs(hi - num(c, "hi")) <= 1e-15,
                  "wilson(%ld, %ld) [%.17g, %.17g] vs [%.17g, %.17g]", k, n, lo, hi, num(c, "lo"),
                  num(c, "hi"));
        cases++;
    }
    CHECK(cases >= 6);
    double lo, hi;
    CHECK_EQ_INT(stats_wilson_ci(5, 4, z, &lo, &hi), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_wilson_ci(0, 0, z, &lo, &hi), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_wilson_ci(1, 2, -1.0, &lo, &hi), XSA_EBADINPUT);
    cJSON_Delete(j);
}

// Holm's step-down against statsmodels, bit for bit ((m - k + 1) p is one rounding in both),
// and the properties that make it a step-down: adj >= p, adj <= 1, and adj non-decreasing in
// p (equal p, equal adj), so a task with a smaller p is never the one left unrejected.
TEST(test_holm_matches_statsmodels) {
    cJSON *j = fixture_read_json("tests/fixtures/stats/holm.json");
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *c;
    int cases = 0, with_ties = 0, big = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cases")) {
        int m, m2;
        double *p = json_doubles(cJSON_GetObjectItem(c, "p"), &m), *want = json_doubles(cJSON_GetObjectItem(c, "adj"), &m2);
        double *adj = malloc(sizeof(double) * (size_t)m);
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        CHECK_EQ_INT(m, m2);
        CHECK_EQ_INT(stats_holm_adjust(p, m, adj), 0);
        for (int i = 0; i < m; i++)
            CHECK_MSG(adj[i] == want[i], "%s[%d]: p %.17g adjusted %.17g, statsmodels %.17g", name, i, p[i], adj[i], want[i]);
        for (int i = 0; i < m; i++) {
            CHECK_MSG(adj[i] >= p[i] && adj[i] <= 1.0, "%s[%d]: %.17g for p %.17g", name, i, adj[i], p[i]);
            for (int k = 0; k < m; k++) {
                CHECK_MSG(p[i] > p[k] || adj[i] <= adj[k], "%s: p %.17g <= %.17g but adjusted %.17g > %.17g", name,
                          p[i], p[k], adj[i], adj[k]);
                with_ties += i < k && p[i] == p[k];
            }
        }
        if (m == 1) CHECK(adj[0] == p[0]);  // one task: no correction
        stats_holm_adjust(p, m, p);         // in place
        for (int i = 0; i < m; i++) CHECK(p[i] == want[i]);
        big += m >= 100;
        cases++;
        free(p), free(want), free(adj);
    }
    CHECK(cases >= 10 && with_ties > 0 && big > 0);
    double p2[2] = {0.5, NAN}, out[2];
    CHECK_EQ_INT(stats_holm_adjust(p2, 2, out), XSA_EBADINPUT);
    p2[1] = 1.5;
    CHECK_EQ_INT(stats_holm_adjust(p2, 2, out), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_holm_adjust(p2, 0, out), XSA_EBADINPUT);
    cJSON_Delete(j);
}

RUN_TESTS(T(test_mcnemar_matches_statsmodels), T(test_holm_matches_statsmodels), T(test_mcnemar_unit_cases),
          T(test_binom_half_matches_scipy), T(test_paired_bootstrap_matches_python),
          T(test_t_quantile_matches_scipy), T(test_cluster_ratio_ci_matches_reference), T(test_paired_bootstrap_properties_and_errors), T(test_quantile_linear),
          T(test_wilson_matches_statsmodels))
