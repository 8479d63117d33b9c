// Tests of eval/mt19937 (CPython's random.Random) and eval/metrics (lm-eval's per-doc metrics,
// mean, stderr, perplexity and its seeded bootstrap) against tests/fixtures/stats/*.json, made
// by tools/fixtures/make_stats_fixtures.py with CPython 3.11 (naive sum) and 3.12 (Neumaier sum).
#include <cjson/cJSON.h>
#include <stdint.h>

#include "common/error.h"
#include "common/fileio.h"
#include "eval/metrics.h"
#include "eval/mt19937.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

static cJSON *load_fixture(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/stats/%s", name);
    return fixture_read_json(path);
}

// A JSON array of numbers as a malloc'd double array; *n gets the length.
static double *json_doubles(const cJSON *arr, int *n) {
    *n = cJSON_GetArraySize(arr);
    double *x = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *x);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {  // infinities come as strings ("-inf")
        x[i++] = cJSON_IsString(e) ? strtod(e->valuestring, NULL) : e->valuedouble;
    }
    return x;
}

static double num(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static uint64_t u64_str(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? strtoull(v->valuestring, NULL, 10) : UINT64_MAX;
}

static void seed_from_words(mt19937 *r, const cJSON *words) {
    uint32_t w[8];
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, words) if (n < 8) w[n++] = (uint32_t)e->valuedouble;
    mt19937_seed_words(r, w, (size_t)n);
}

// Bit-identical, NaN equal to NaN.
static int same(double a, double b) {
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

// ---- RNG ----------------------------------------------------------------------------------

TEST(test_rng_random_streams) {
    cJSON *j = load_fixture("rng.json");
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *s;
    int streams = 0;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "streams")) {
        mt19937 r;
        seed_from_words(&r, cJSON_GetObjectItem(s, "seed_words"));
        int n, bad = 0;
        double *want = json_doubles(cJSON_GetObjectItem(s, "random"), &n);
        CHECK(n >= 1300);
        for (int i = 0; i < n; i++) bad += mt19937_random(&r) != want[i];
        CHECK_MSG(bad == 0, "seed %s: %d of %d random() values differ",
                  cJSON_GetObjectItem(s, "seed")->valuestring, bad, n);
        // The block version gives the same stream.
        mt19937 r2;
        seed_from_words(&r2, cJSON_GetObjectItem(s, "seed_words"));
        double *got = malloc((size_t)n * sizeof *got);
        mt19937_fill_random(&r2, got, 7);
        mt19937_fill_random(&r2, got + 7, (size_t)n - 7);
        CHECK(memcmp(got, want, (size_t)n * sizeof *got) == 0);
        free(got);
        free(want);
        streams++;
    }
    CHECK_EQ_INT(streams, 6);
    cJSON_Delete(j);
}

TEST(test_rng_fill_random_after_odd_draw) {
    // After an odd number of 32-bit draws a random() pair straddles the state refresh; the
    // block generator must give what random() gives (itself checked against CPython above).
    for (int odd = 1; odd <= 623; odd += 311) {
        mt19937 r1, r2;
        mt19937_seed(&r1, 1234);
        for (int i = 0; i < odd; i++) mt19937_uint32(&r1);
        r2 = r1;
        double got[1500];
        mt19937_fill_random(&r1, got, 1500);
        int bad = 0;
        for (int i = 0; i < 1500; i++) bad += got[i] != mt19937_random(&r2);
        CHECK_EQ_INT(bad, 0);
    }
}

TEST(test_rng_seed_u64_matches_words) {
    // seed(2**32 + 5) through the u64 entry point equals the 2-word key.
    cJSON *j = load_fixture("rng.json");
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *s;
    int checked = 0;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "streams")) {
        const char *seed = cJSON_GetObjectItem(s, "seed")->valuestring;
        if (strlen(seed) > 19) continue;  // 2**64 + 3 does not fit
        mt19937 r;
        mt19937_seed(&r, strtoull(seed, NULL, 10));
        const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "random"), 0);
        CHECK(mt19937_random(&r) == first->valuedouble);
        checked++;
    }
    CHECK_EQ_INT(checked, 5);
    cJSON_Delete(j);
}

TEST(test_rng_raw_bits_and_randbelow) {
    cJSON *j = load_fixture("rng.json");
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "raw")) {
        mt19937 r;
        seed_from_words(&r, cJSON_GetObjectItem(s, "seed_words"));
        int n, bad = 0;
        double *want = json_doubles(cJSON_GetObjectItem(s, "uint32"), &n);
        for (int i = 0; i < n; i++) bad += mt19937_uint32(&r) != (uint32_t)want[i];
        CHECK_EQ_INT(bad, 0);
        free(want);
    }
    mt19937 r;
    mt19937_seed(&r, 99);
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "getrandbits")) {
        int k = (int)num(s, "k");
        uint64_t got = mt19937_getrandbits(&r, k), want = u64_str(s, "value");
        CHECK_MSG(got == want, "getrandbits(%d): %llu != %llu", k, (unsigned long long)got,
                  (unsigned long long)want);
    }
    mt19937_seed(&r, 5);
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "randbelow")) {
        uint64_t n = u64_str(s, "n");
        uint64_t got = mt19937_randbelow(&r, n), want = u64_str(s, "value");
        CHECK_MSG(got == want, "_randbelow(%llu): %llu != %llu", (unsigned long long)n,
                  (unsigned long long)got, (unsigned long long)want);
    }
    CHECK(mt19937_getrandbits(&r, 0) == 0);
    cJSON_Delete(j);
}

// choices / sample / shuffle: fixture entries {seed, n, k, picks|perm}.
static void check_picks(const cJSON *list, int which) {
    const cJSON *s;
    int cases = 0;
    cJSON_ArrayForEach(s, list) {
        mt19937 r;
        mt19937_seed(&r, (uint64_t)num(s, "seed"));
        size_t n = (size_t)num(s, "n");
        int nw;
        double *want = json_doubles(cJSON_GetObjectItem(s, which == 2 ? "perm" : "picks"), &nw);
        size_t k = which == 2 ? n : (size_t)num(s, "k");
        CHECK_EQ_INT(nw, k);
        size_t *got = malloc((k ? k : 1) * sizeof *got);
        if (which == 0) {
            mt19937_choices(&r, n, k, got);
        } else if (which == 1) {
            CHECK_EQ_INT(mt19937_sample(&r, n, k, got), 0);
        } else {
            for (size_t i = 0; i < n; i++) got[i] = i;
            mt19937_shuffle(&r, got, n);
        }
        int bad = 0;
        for (size_t i = 0; i < k; i++) bad += got[i] != (size_t)want[i];
        CHECK_MSG(bad == 0, "seed %g n %zu k %zu: %d picks differ", num(s, "seed"), n, k, bad);
        free(got);
        free(want);
        cases++;
    }
    CHECK(cases >= 4);
}

TEST(test_rng_choices) {
    cJSON *j = load_fixture("rng.json");
    CHECK(j != NULL);
    if (!j) return;
    check_picks(cJSON_GetObjectItem(j, "choices"), 0);
    cJSON_Delete(j);
}

TEST(test_rng_sample_both_branches) {
    cJSON *j = load_fixture("rng.json");
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *s;
    int pool = 0, set = 0;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "sample")) {
        const char *b = cJSON_GetObjectItem(s, "branch")->valuestring;
        pool += strcmp(b, "pool") == 0;
        set += strcmp(b, "set") == 0;
    }
    CHECK(pool >= 4 && set >= 4);  // the fixture exercises both of CPython's branches
    check_picks(cJSON_GetObjectItem(j, "sample"), 1);
    cJSON_Delete(j);
    // k > n is CPython's ValueError.
    mt19937 r;
    mt19937_seed(&r, 1);
    size_t out[4];
    CHECK_EQ_INT(mt19937_sample(&r, 3, 4, out), -1);
}

TEST(test_rng_shuffle) {
    cJSON *j = load_fixture("rng.json");
    CHECK(j != NULL);
    if (!j) return;
    check_picks(cJSON_GetObjectItem(j, "shuffle"), 2);
    cJSON_Delete(j);
}

// ---- per-doc metrics ----------------------------------------------------------------------

TEST(test_mc_doc_fixture_numpy_argmax) {
    cJSON *j = load_fixture("metrics.json");
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *d;
    int cases = 0;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(j, "mc_docs")) {
        int n, nl;
        double *lls = json_doubles(cJSON_GetObjectItem(d, "lls"), &n);
        double *len = json_doubles(cJSON_GetObjectItem(d, "len"), &nl);
        double acc = -1, acc_norm = -1;
        int pred = -1, pred_norm = -1;
        CHECK_EQ_INT(metrics_mc_doc(lls, len, n, (int)num(d, "gold"), &acc, &acc_norm, &pred,
                                    &pred_norm), 0);
        CHECK_EQ_INT(pred, num(d, "pred"));
        CHECK_EQ_INT(pred_norm, num(d, "pred_norm"));
        CHECK(acc == num(d, "acc"));
        CHECK(acc_norm == num(d, "acc_norm"));
        free(lls);
        free(len);
        cases++;
    }
    CHECK(cases >= 25);
    cJSON_Delete(j);
}

TEST(test_mc_doc_unit_cases) {
    double acc, acc_norm;
    int pred, pred_norm;
    // Ties: the first maximum wins for both argmaxes.
    const double lls[3] = {-1.0, -1.0, -2.0}, len[3] = {3, 3, 3};
    CHECK_EQ_INT(metrics_mc_doc(lls, len, 3, 1, &acc, &acc_norm, &pred, &pred_norm), 0);
    CHECK_EQ_INT(pred, 0);
    CHECK_EQ_INT(pred_norm, 0);
    CHECK(acc == 0.0 && acc_norm == 0.0);
    // Equal normalised scores (-1 each): acc_norm picks index 0; acc picks the largest ll.
    const double l2[3] = {-4.0, -2.0, -8.0}, n2[3] = {4, 2, 8};
    CHECK_EQ_INT(metrics_mc_doc(l2, n2, 3, 0, &acc, &acc_norm, &pred, &pred_norm), 0);
    CHECK_EQ_INT(pred, 1);
    CHECK_EQ_INT(pred_norm, 0);
    CHECK(acc == 0.0 && acc_norm == 1.0);
    // Length normalisation flips the answer.
    const double l3[2] = {-5.0, -3.0}, n3[2] = {10, 2};
    CHECK_EQ_INT(metrics_mc_doc(l3, n3, 2, 0, &acc, &acc_norm, &pred, &pred_norm), 0);
    CHECK(pred == 1 && pred_norm == 0 && acc == 0.0 && acc_norm == 1.0);
    // gold -100 and gold >= n are always wrong, even where pred would be that index.
    CHECK_EQ_INT(metrics_mc_doc(l3, n3, 2, -100, &acc, &acc_norm, NULL, NULL), 0);
    CHECK(acc == 0.0 && acc_norm == 0.0);
    CHECK_EQ_INT(metrics_mc_doc(l3, n3, 2, 2, &acc, &acc_norm, NULL, NULL), 0);
    CHECK(acc == 0.0 && acc_norm == 0.0);
    // Bad input.
    CHECK_EQ_INT(metrics_mc_doc(l3, n3, 0, 0, &acc, NULL, NULL, NULL), XSA_EBADINPUT);
    CHECK_EQ_INT(metrics_mc_doc(NULL, n3, 2, 0, &acc, NULL, NULL, NULL), XSA_EBADINPUT);
    CHECK_EQ_INT(metrics_mc_doc(l3, NULL, 2, 0, &acc, NULL, NULL, NULL), XSA_EBADINPUT);
    // argmax: NaN is the maximum (numpy), n < 1 is -1.
    const double nanx[3] = {1.0, NAN, 5.0};
    CHECK_EQ_INT(metrics_argmax(nanx, 3), 1);
    CHECK_EQ_INT(metrics_argmax(nanx, 0), -1);
    // LAMBADA doc.
    double item, a;
    metrics_ll_doc(-3.25, 1, &item, &a);
    CHECK(item == -3.25 && a == 1.0);
    metrics_ll_doc(-9.0, 0, NULL, &a);
    CHECK(a == 0.0);
}

// ---- aggregation --------------------------------------------------------------------------

static void check_aggregates(const cJSON *arrays, const cJSON *expect, metrics_sum mode) {
    int i = 0, bad = 0, cases = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, arrays) {
        const cJSON *e = cJSON_GetArrayItem(expect, i++);
        int n;
        double *x = json_doubles(cJSON_GetObjectItem(a, "x"), &n);
        double m = metrics_mean_ex(x, n, mode), se = metrics_mean_stderr_ex(x, n, mode);
        double ppl = metrics_perplexity_ex(x, n, mode);
        const cJSON *se_want = cJSON_GetObjectItem(e, "mean_stderr");
        double se_ref = cJSON_IsNumber(se_want) ? se_want->valuedouble : NAN;  // null = N/A
        if (!same(m, num(e, "mean")) || !same(se, se_ref) || !same(ppl, num(e, "perplexity"))) {
            fprintf(stderr, "  mode %d %s: mean %.17g/%.17g stderr %.17g/%.17g ppl %.17g/%.17g\n",
                    (int)mode, cJSON_GetObjectItem(a, "name")->valuestring, m, num(e, "mean"), se,
                    se_ref, ppl, num(e, "perplexity"));
            bad++;
        }
        free(x);
        cases++;
    }
    CHECK_EQ_INT(bad, 0);  // bit for bit
    CHECK(cases >= 12);
}

TEST(test_aggregates_bit_exact_py311) {
    cJSON *j = load_fixture("metrics.json");
    CHECK(j != NULL);
    if (!j) return;
    CHECK_STR(cJSON_GetObjectItem(j, "sum")->valuestring, "naive");
    check_aggregates(cJSON_GetObjectItem(j, "arrays"), cJSON_GetObjectItem(j, "arrays"),
                     METRICS_SUM_NAIVE);
    // The plain API is the naive (3.11) mode.
    const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "arrays"), 10);
    int n;
    double *x = json_doubles(cJSON_GetObjectItem(a, "x"), &n);
    CHECK(same(metrics_mean(x, n), num(a, "mean")));
    CHECK(same(metrics_mean_stderr(x, n), num(a, "mean_stderr")));
    CHECK(same(metrics_perplexity(x, n), num(a, "perplexity")));
    free(x);
    cJSON_Delete(j);
}

TEST(test_aggregates_bit_exact_py312) {
    cJSON *j = load_fixture("metrics.json");
    CHECK(j != NULL);
    if (!j) return;
    const cJSON *alt = cJSON_GetObjectItem(j, "alt");
    if (!cJSON_IsObject(alt)) {
        cJSON_Delete(j);
        SKIP("fixture made without a Python >= 3.12");
    }
    CHECK_STR(cJSON_GetObjectItem(alt, "sum")->valuestring, "neumaier");
    check_aggregates(cJSON_GetObjectItem(j, "arrays"), cJSON_GetObjectItem(alt, "arrays"),
                     METRICS_SUM_NEUMAIER);
    cJSON_Delete(j);
}

TEST(test_pythia160m_arc_easy_documented) {
    // docs/lm-eval-semantics.md §1.8: 1034 correct of 2376 -> 0.4351851851851852 +- 0.010173216430370908.
    // The stderr's last bits depend on where the 1s sit (the order of the squared deviations
    // in the sum; we do not have pythia's per-doc outcomes), so it is checked to 1e-15 here;
    // the fixture's "pythia160m_arc_easy" array is checked bit for bit above.
    double x[2376];
    for (int i = 0; i < 2376; i++) x[i] = (i * 7919) % 2376 < 1034 ? 1.0 : 0.0;
    CHECK(metrics_mean(x, 2376) == 0.4351851851851852);
    CHECK_NEAR(metrics_mean_stderr(x, 2376), 0.010173216430370908, 1e-15);
    CHECK_NEAR(metrics_mean_stderr_ex(x, 2376, METRICS_SUM_NEUMAIER), 0.010173216430370908,
               1e-15);
    for (int i = 0; i < 2376; i++) x[i] = i < 1034 ? 1.0 : 0.0;  // another order, same value
    CHECK_NEAR(metrics_mean_stderr(x, 2376), 0.010173216430370908, 1e-15);
}

TEST(test_na_cases) {
    const double one[1] = {0.5};
    CHECK(isnan(metrics_mean_stderr(one, 1)));  // "N/A"
    CHECK(isnan(metrics_sample_stddev_ex(one, 1, METRICS_SUM_NAIVE)));
    CHECK(isnan(metrics_perplexity_bootstrap_stderr(one, 1, 1000, 1)));
    CHECK(metrics_mean(one, 1) == 0.5);
    CHECK(isnan(metrics_mean(one, 0)));
    CHECK(isnan(metrics_perplexity(NULL, 3)));
    const double two[2] = {-1.0, -2.0};
    CHECK(isnan(metrics_perplexity_bootstrap_stderr(two, 2, 0, 1)));
    CHECK(isnan(metrics_perplexity_bootstrap_stderr(two, 2, 1, 1)));  // one replicate
    CHECK(metrics_sum_py(two, 0, METRICS_SUM_NAIVE) == 0.0);
    // Neumaier recovers what naive addition loses; naive matches CPython 3.11's answer 0.0.
    const double hard[4] = {1.0, 1e100, 1.0, -1e100};
    CHECK(metrics_sum_py(hard, 4, METRICS_SUM_NEUMAIER) == 2.0);
    CHECK(metrics_sum_py(hard, 4, METRICS_SUM_NAIVE) == 0.0);
}

static void check_bootstrap(const cJSON *j, const cJSON *expect, metrics_sum mode,
                            int n_threads) {
    const cJSON *arrays = cJSON_GetObjectItem(j, "arrays");
    const cJSON *b;
    int i = 0, cases = 0;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(j, "bootstrap")) {
        const char *name = cJSON_GetObjectItem(b, "array")->valuestring;
        const cJSON *a, *found = NULL;
        cJSON_ArrayForEach(a, arrays) if (strcmp(cJSON_GetObjectItem(a, "name")->valuestring,
                                                 name) == 0) found = a;
        CHECK(found != NULL);
        if (!found) continue;
        int n;
        double *x = json_doubles(cJSON_GetObjectItem(found, "x"), &n);
        int iters = (int)num(b, "iters");
        double want = expect ? cJSON_GetArrayItem(expect, i)->valuedouble : num(b, "stderr");
        double got = metrics_perplexity_bootstrap_stderr_ex(x, n, iters, n_threads, mode);
        CHECK_MSG(fabs(got - want) <= 1e-12 * fabs(want), "%s iters %d: %.17g vs %.17g", name,
                  iters, got, want);
        CHECK_MSG(same(got, want), "%s iters %d mode %d threads %d: not bit-identical: %.17g vs "
                  "%.17g", name, iters, (int)mode, n_threads, got, want);
        free(x);
        i++;
        cases++;
    }
    CHECK(cases >= 6);
}

TEST(test_bootstrap_stderr_matches_lm_eval) {
    cJSON *j = load_fixture("metrics.json");
    CHECK(j != NULL);
    if (!j) return;
    check_bootstrap(j, NULL, METRICS_SUM_NAIVE, 1);
    check_bootstrap(j, NULL, METRICS_SUM_NAIVE, 3);  // thread count changes nothing
    const cJSON *alt = cJSON_GetObjectItem(j, "alt");
    if (cJSON_IsObject(alt))
        check_bootstrap(j, cJSON_GetObjectItem(alt, "bootstrap"), METRICS_SUM_NEUMAIER, 2);
    cJSON_Delete(j);
}

TEST(test_bootstrap_threads_identical) {
    double x[97];
    mt19937 r;
    mt19937_seed(&r, 4);
    for (int i = 0; i < 97; i++) x[i] = -30.0 * mt19937_random(&r);
    double s1 = metrics_perplexity_bootstrap_stderr(x, 97, 7000, 1);
    double s4 = metrics_perplexity_bootstrap_stderr(x, 97, 7000, 4);
    double s0 = metrics_perplexity_bootstrap_stderr(x, 97, 7000, 0);
    CHECK(!isnan(s1) && s1 > 0);
    CHECK(same(s1, s4));
    CHECK(same(s1, s0));
}

RUN_TESTS(T(test_rng_random_streams), T(test_rng_fill_random_after_odd_draw),
          T(test_rng_seed_u64_matches_words),
          T(test_rng_raw_bits_and_randbelow), T(test_rng_choices),
          T(test_rng_sample_both_branches), T(test_rng_shuffle),
          T(test_mc_doc_fixture_numpy_argmax), T(test_mc_doc_unit_cases),
          T(test_aggregates_bit_exact_py311), T(test_aggregates_bit_exact_py312),
          T(test_pythia160m_arc_easy_documented), T(test_na_cases),
          T(test_bootstrap_stderr_matches_lm_eval), T(test_bootstrap_threads_identical))
