// test_model_exact.c: the CPU backend against PyTorch. For every checkpoint under
// tests/fixtures/models/ (and stories260K when ../shared is present) and every case of its
// reference.json (written by tools/fixtures/make_model_fixtures.py / tools/references/llama2c_reference.py with
// torch + transformers), load, apply the case's --xsa spec, score every position and compare.
// Tolerance: |logprob - ref| <= 1e-4 (our fp32 forward vs a float64 or float32 torch forward);
// BF16 checkpoints are widened to fp32 exactly at load, so they get the same bound (measured
// worst error is printed per model). Greedy flags must be identical.
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "kernels/backend.h"
#include "kernels/batch.h"
#include "model/model.h"
#include "tests/backend_env.h"
#include "tests/check.h"

#define TOL_F32 1e-4
#define TOL_BF16 1e-4

// Scores every case of `ref_path` on the checkpoint at `model_path`; returns cases compared.
static int check_model(const char *model_path, const char *ref_path) {
    char *text = NULL;
    size_t len = 0;
    xsa_error err = {0};
    if (file_read_all(ref_path, 64u << 20, &text, &len, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return 0;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    CHECK_MSG(root != NULL, "%s: not JSON", ref_path);
    if (!root) return 0;
    const cJSON *cases = cJSON_GetObjectItem(root, "cases");
    const cJSON *dt = cJSON_GetObjectItem(root, "weights_dtype");
    double tol = cJSON_IsString(dt) && !strcmp(dt->valuestring, "BF16") ? TOL_BF16 : TOL_F32;
    int n_cases = 0;
    double worst = 0;
    const cJSON *cs;
    cJSON_ArrayForEach(cs, cases) {
        struct model m;
        xsa_error_clear(&err);
        if (model_load(&m, model_path, &err)) {
            CHECK_MSG(0, "%s", err.msg);
            break;
        }
        const cJSON *xsa = cJSON_GetObjectItem(cs, "xsa"), *toks = cJSON_GetObjectItem(cs, "tokens");
        const cJSON *lps = cJSON_GetObjectItem(cs, "logprobs"), *grs = cJSON_GetObjectItem(cs, "greedy");
        int n = cJSON_GetArraySize(toks);
        CHECK(cJSON_IsString(xsa) && n >= 2 && cJSON_GetArraySize(lps) == n - 1 && cJSON_GetArraySize(grs) == n - 1);
        CHECK_EQ_INT(model_apply_xsa_spec(&m.cfg, xsa->valuestring, &err), 0);
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
        float *lp = malloc(sizeof(float) * (size_t)n);
        uint8_t *gr = malloc((size_t)n);
        for (int i = 0; i < n; i++) ids[i] = (int32_t)cJSON_GetArrayItem(toks, i)->valuedouble;
        struct batch_builder bb;
        batch_init(&bb);
        int first;
        batch_add_row(&bb, ids, n, &first, &err);
        batch_add_entries_seq(&bb, first, ids, n, &err);
        struct score_batch b = batch_view(&bb);
        struct backend be;
        struct backend_options o = {.n_threads = 2, .max_batch_tokens = n};
        CHECK_EQ_INT(backend_open_env(&be, &m, &o, &err), 0);
        CHECK_EQ_INT(backend_score(&be, &b, lp, gr, &err), 0);
        for (int p = 0; p + 1 < n; p++) {
            double ref = cJSON_GetArrayItem(lps, p)->valuedouble;
            int g = cJSON_IsTrue(cJSON_GetArrayItem(grs, p));
            double d = fabs(lp[p] - ref);
            if (d > worst) worst = d;
            CHECK_MSG(d <= tol, "%s xsa=%s pos %d: %.7f vs torch %.7f", model_path, xsa->valuestring,
                      p + 1, lp[p], ref);
            CHECK_MSG(gr[p] == g, "%s xsa=%s pos %d: greedy %d vs torch %d", model_path,
                      xsa->valuestring, p + 1, gr[p], g);
        }
        backend_close(&be);
        batch_free(&bb);
        free(ids);
        free(lp);
        free(gr);
        model_free(&m);
        n_cases++;
    }
    fprintf(stderr, "  %s: %d cases, max |logprob - torch| = %.3g (tolerance %g)\n", model_path,
            n_cases, worst, tol);
    cJSON_Delete(root);
    return n_cases;
}

TEST(hf_fixtures_match_torch) {
    const char *dir = "tests/fixtures/models";
    DIR *d = opendir(dir);
    if (!d) SKIP("tests/fixtures/models absent");
    int n_models = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char mp[1024], rp[1100];
        snprintf(mp, sizeof mp, "%s/%s", dir, e->d_name);
        snprintf(rp, sizeof rp, "%s/reference.json", mp);
        if (!file_exists(rp)) continue;
        CHECK(check_model(mp, rp) > 0);
        n_models++;
    }
    closedir(d);
    if (!n_models) SKIP("no reference.json under tests/fixtures/models");
}

TEST(stories260k_matches_torch) {
    const char *ref = "tests/fixtures/stories260K_reference.json";
    const char *bin = shared_benchdata("models/stories260K/stories260K.bin");
    if (!bin) SKIP("../shared/benchdata/models/stories260K absent");
    if (!file_exists(ref)) SKIP("tests/fixtures/stories260K_reference.json absent");
    char path[4096];
    snprintf(path, sizeof path, "%s", bin);
    CHECK(check_model(path, ref) > 0);
}

RUN_TESTS(T(hf_fixtures_match_torch), T(stories260k_matches_torch))
