// test_cpu_optim.c: the adapters' optimizer (kernels/cpu/cpu_optim.c) against torch's fused AdamW
// (tests/fixtures/optim/adamw_fused.json, made by tools/fixtures/make_adamw_fixture.py): the same
// bits, step after step, wherever a value sits among the vector lanes and the scalar tail.
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_optim.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define FIXTURE "tests/fixtures/optim/adamw_fused.json"

// The float32 values whose bit patterns a JSON array lists; 0 when it is not n numbers.
static int read_bits(const cJSON *a, float *out, int n) {
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) return 0;
    for (int i = 0; i < n; i++) {
        uint32_t u = (uint32_t)cJSON_GetArrayItem(a, i)->valuedouble;
        memcpy(&out[i], &u, sizeof u);
    }
    return 1;
}

// Values whose bits differ from want's, counting two NaNs as equal.
static int n_differ(const float *got, const float *want, int n) {
    int bad = 0;
    for (int i = 0; i < n; i++) bad += memcmp(&got[i], &want[i], sizeof(float)) != 0 && !(isnan(got[i]) && isnan(want[i]));
    return bad;
}

// Steps n values at w (m, v, g beside) in pieces of the given lengths (0-terminated; the rest
// in one piece): every piece's last n % 8 values take the scalar loop.
static void step_in_pieces(float *w, const float *g, float *m, float *v, int n, const int *piece, const struct cpu_adamw *k) {
    int i = 0;
    for (; *piece && i + *piece <= n; i += *piece++) cpu_adamw_step(w + i, g + i, m + i, v + i, *piece, k);
    cpu_adamw_step(w + i, g + i, m + i, v + i, n - i, k);
}

TEST(adamw_fused_matches_torch) {
    cJSON *j = fixture_read_json(FIXTURE);
    CHECK(j != NULL);
    if (!j) return;
    int n = cJSON_GetObjectItem(j, "n")->valueint, n_cases = 0;
    enum { MAXN = 128, SHIFT = 3 };
    CHECK(n > 8 && n + SHIFT <= MAXN);
    // the whole array; at an offset, so every value sits in another lane; in uneven pieces, so
    // that a third of the values take the scalar loop
    static const int whole[] = {0}, uneven[] = {5, 13, 7, 1, 22, 0};
    const struct {
        int at;
        const int *piece;
        const char *what;
    } ways[] = {{0, whole, "whole"}, {SHIFT, whole, "shifted"}, {0, uneven, "in pieces of 5, 13, 7, 1, 22, 16"}};
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cases")) {
        double lr = cJSON_GetObjectItem(c, "lr")->valuedouble, b1 = cJSON_GetObjectItem(c, "beta1")->valuedouble,
               b2 = cJSON_GetObjectItem(c, "beta2")->valuedouble, wd = cJSON_GetObjectItem(c, "weight_decay")->valuedouble;
        for (size_t wi = 0; wi < sizeof ways / sizeof ways[0]; wi++) {
            int at = ways[wi].at;
            float w[MAXN] = {0}, m[MAXN] = {0}, v[MAXN] = {0}, g[MAXN], want[MAXN];
            CHECK(read_bits(cJSON_GetObjectItem(c, "w0"), w + at, n));
            long step = 0;
            const cJSON *s;
            cJSON_ArrayForEach(s, cJSON_GetObjectItem(c, "steps")) {
                struct cpu_adamw k;
                cpu_adamw_coef(&k, lr, b1, b2, wd, ++step);
                CHECK(read_bits(cJSON_GetObjectItem(s, "grad"), g + at, n));
                step_in_pieces(w + at, g + at, m + at, v + at, n, ways[wi].piece, &k);
                static const char *const names[] = {"w", "exp_avg", "exp_avg_sq"};
                const float *got[] = {w + at, m + at, v + at};
                for (int t = 0; t < 3; t++) {
                    CHECK(read_bits(cJSON_GetObjectItem(s, names[t]), want, n));
                    int bad = n_differ(got[t], want, n);
                    CHECK_MSG(bad == 0, "lr %g betas (%g, %g) wd %g, step %ld, %s: %d of %d values of %s differ from torch's",
                              lr, b1, b2, wd, step, ways[wi].what, bad, n, names[t]);
                }
            }
            CHECK_EQ_INT(step, 3);
        }
        n_cases++;
    }
    CHECK_EQ_INT(n_cases, 4);
    cJSON_Delete(j);
}

// A step on a zero gradient still decays the weights and moves them by the momentum, and a
// piece of an array stepped alone gets the bits it gets inside the whole.
TEST(adamw_pieces_as_whole) {
    enum { N = 203 };
    static float w[2][N], m[2][N], v[2][N], g[N];
    uint32_t s = 17u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        w[0][i] = w[1][i] = (float)((int)(s >> 8) % 2001 - 1000) / 256.0f;
        g[i] = i % 5 ? (float)((int)(s >> 4) % 301 - 150) / 1024.0f : 0.0f;
    }
    for (long step = 1; step <= 4; step++) {
        struct cpu_adamw k;
        cpu_adamw_coef(&k, 1e-3, 0.9, 0.999, 0.5, step);
        cpu_adamw_step(w[0], g, m[0], v[0], N, &k);
        for (int i0 = 0; i0 < N; i0 += 37) cpu_adamw_step(w[1] + i0, g + i0, m[1] + i0, v[1] + i0, N - i0 < 37 ? N - i0 : 37, &k);
        if (step == 1) memset(g, 0, sizeof g);
    }
    CHECK(memcmp(w[0], w[1], sizeof w[0]) == 0);
    CHECK(memcmp(m[0], m[1], sizeof m[0]) == 0);
    CHECK(memcmp(v[0], v[1], sizeof v[0]) == 0);
    CHECK(w[0][0] != 0 && m[0][1] != 0);
}

RUN_TESTS(T(adamw_fused_matches_torch), T(adamw_pieces_as_whole))
