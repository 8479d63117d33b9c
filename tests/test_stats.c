// Tests of eval/stats: McNemar's exact p-value and the binomial(n, 1/2) tail against
// statsmodels / scipy, the paired bootstrap intervals against an independent Python version
// (random + numpy.quantile), Wilson intervals against statsmodels. Fixtures:
// tests/fixtures/stats/stats.json from tools/fixtures/make_stats_fixtures.py.
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

TEST(test_paired_bootstrap_ratio_matches_python) {
    cJSON *j = load_stats_fixture();
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *c;
    int cases = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "paired_bootstrap_ratio")) {
        int n, nb, nw;
        double *a = json_doubles(cJSON_GetObjectItem(c, "a"), &n), *b = json_doubles(cJSON_GetObjectItem(c, "b"), &nb),
               *w = json_doubles(cJSON_GetObjectItem(c, "w"), &nw);
        CHECK(nb == n && nw == n);
        double delta = NAN, lo = NAN, hi = NAN;
        CHECK_EQ_INT(stats_paired_bootstrap_ratio_ci(a, b, w, n, (int)num(c, "iters"), (uint64_t)num(c, "seed"),
                                                     num(c, "level"), &delta, &lo, &hi), 0);
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        // The same doubles in the same order: the identical bits.
        CHECK_MSG(delta == num(c, "delta") && lo == num(c, "lo") && hi == num(c, "hi"),
                  "%s: %.17g [%.17g, %.17g] vs %.17g [%.17g, %.17g]", name, delta, lo, hi, num(c, "delta"),
                  num(c, "lo"), num(c, "hi"));
        // The point estimate is the difference of the per-target means, not a mean of per-unit means.
        double sa = 0, sb = 0, sw = 0;
        for (int i = 0; i < n; i++) sa += a[i], sb += b[i], sw += w[i];
        CHECK_NEAR(delta, sb / sw - sa / sw, 1e-12 * (1 + fabs(sa / sw)));
        free(a), free(b), free(w);
        cases++;
    }
    CHECK(cases >= 3);
    double a[2] = {1, 2}, b[2] = {2, 3}, w[2] = {1, 0};
    CHECK_EQ_INT(stats_paired_bootstrap_ratio_ci(a, b, w, 2, 10, 1, 0.95, NULL, NULL, NULL), XSA_EBADINPUT);  // a unit of no targets
    w[1] = 1;
    CHECK_EQ_INT(stats_paired_bootstrap_ratio_ci(a, b, w, 0, 10, 1, 0.95, NULL, NULL, NULL), XSA_EBADINPUT);
    CHECK_EQ_INT(stats_paired_bootstrap_ratio_ci(a, b, w, 2, 10, 1, 0.95, NULL, NULL, NULL), 0);
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

RUN_TESTS(T(test_mcnemar_matches_statsmodels), T(test_mcnemar_unit_cases),
          T(test_binom_half_matches_scipy), T(test_paired_bootstrap_matches_python),
          T(test_paired_bootstrap_ratio_matches_python), T(test_paired_bootstrap_properties_and_errors), T(test_quantile_linear),
          T(test_wilson_matches_statsmodels))
