// test_cpu_backend.c: the CPU backend on small random models: sharing a prefix changes no
// score, batch composition and thread count change no bit, XSA outputs are orthogonal to the
// token's own value vector, log-probabilities are normalised over the full vocabulary, argmax
// ties go to the lowest id, bad batches fail with code 2 without crashing, weights packed at
// load and a last block run on the scored tokens only change no bit, and every GEMM and attention kernel passes the same checks.
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/batch.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_state.h"
#include "tests/check.h"
#include "tests/fixture_io.h"
#include "tests/backend_env.h"
#include "tests/random_model.h"

// gpt2; llama with GQA and HF rope; llama2.c-style rope, tied head, biases, vocab > one chunk.
static const struct random_model_spec specs[] = {
    {MODEL_ARCH_GPT2, ROPE_NONE, 2, 4, 4, 8, 32, 64, 300, 256, 0, 1, 11},
    {MODEL_ARCH_LLAMA, ROPE_HALF, 3, 4, 2, 8, 32, 72, 301, 256, 0, 0, 12},
    {MODEL_ARCH_LLAMA, ROPE_ADJACENT, 2, 6, 2, 6, 24, 40, 4200, 256, 1, 1, 13},
};
#define N_SPECS ((int)(sizeof specs / sizeof specs[0]))

static void make_tokens(int32_t *out, int n, int V, uint64_t seed) {
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        out[i] = (int32_t)((seed >> 33) % (uint64_t)V);
    }
}

// Puts an environment variable back as it was (tests that force a kernel leave the outer
// setting, e.g. CI's kernel matrix, to the tests after them). saved: a strdup'd value or NULL.
static void env_restore(const char *name, char *saved) {
    if (saved) setenv(name, saved, 1);
    else unsetenv(name);
    free(saved);
}

static char *env_save(const char *name) {
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

// Opens with the kernel XSA_CPU_GEMM forces, or the backend's own pick where a forced OpenBLAS
// would not be batch-invariant (tests/backend_env.h): these tests assert bit identity.
static int open_cpu(struct backend *be, const struct model *m, int threads, int max_tokens) {
    struct backend_options o = {.n_threads = threads, .max_batch_tokens = max_tokens};
    xsa_error err = {0};
    int rc = backend_open_batch_invariant(be, m, &o, &err);
    if (rc) fprintf(stderr, "  backend_open: %s\n", err.msg);
    return rc;
}

static int score(struct backend *be, const struct batch_builder *bb, float *lp, uint8_t *gr) {
    struct score_batch b = batch_view(bb);
    xsa_error err = {0};
    int rc = backend_score(be, &b, lp, gr, &err);
    if (rc) fprintf(stderr, "  score: %s\n", err.msg);
    return rc;
}

// A row of prefix + 3 branches scores every entry exactly as prefix+branch plain rows do.
TEST(prefix_branches_match_plain_rows) {
    for (int si = 0; si < N_SPECS; si++) {
        struct model m;
        random_model_init(&m, &specs[si]);
        for (int l = 0; l < m.cfg.n_layer; l++) m.cfg.xsa[l] = (unsigned char)(l % 2 == si % 2);
        struct backend be;
        CHECK(open_cpu(&be, &m, 2, 16) == 0);
        int32_t pre[9], br[3][6];
        int blen[3] = {3, 1, 6};
        make_tokens(pre, 9, m.cfg.vocab_size, 100 + si);
        for (int b = 0; b < 3; b++) make_tokens(br[b], blen[b], m.cfg.vocab_size, 200 + b);
        const int32_t *brp[3] = {br[0], br[1], br[2]};

        // Tree: entries score each branch given the prefix (first token read at the prefix end).
        struct batch_builder t;
        batch_init(&t);
        int pf, bf[3];
        xsa_error err = {0};
        CHECK(batch_add_tree(&t, pre, 9, brp, blen, 3, &pf, bf, &err) == 0);
        for (int b = 0; b < 3; b++) {
            batch_add_entry(&t, pf + 8, br[b][0], &err);
            for (int i = 1; i < blen[b]; i++) batch_add_entry(&t, bf[b] + i - 1, br[b][i], &err);
        }
        float lt[16], lp[16];
        uint8_t gt[16], gp[16];
        CHECK(score(&be, &t, lt, gt) == 0);

        struct batch_builder p;
        batch_init(&p);
        int e = 0, same = 1;
        for (int b = 0; b < 3; b++) {
            int32_t row[15];
            memcpy(row, pre, sizeof pre);
            memcpy(row + 9, br[b], (size_t)blen[b] * sizeof(int32_t));
            batch_reset(&p);
            int first;
            CHECK(batch_add_row(&p, row, 9 + blen[b], &first, &err) == 0);
            for (int i = 0; i < blen[b]; i++) batch_add_entry(&p, first + 8 + i, row[9 + i], &err);
            CHECK(score(&be, &p, lp, gp) == 0);
            for (int i = 0; i < blen[b]; i++, e++) {
                CHECK_NEAR(lt[e], lp[i], 1e-5);
                CHECK_EQ_INT(gt[e], gp[i]);
                same &= memcmp(&lt[e], &lp[i], sizeof(float)) == 0;
                CHECK(lt[e] < 0 && isfinite(lt[e]));
            }
        }
        CHECK_MSG(same, "spec %d: shared-prefix scores are not bit-identical to plain rows", si);
        batch_free(&t);
        batch_free(&p);
        backend_close(&be);
        random_model_free(&m);
    }
}

// The last block runs on the scored tokens only; a probe on that block makes it run on every
// token. Both give the same bits, for a tree batch scored at scattered tokens (entries out of
// token order, one token scored twice), with XSA in the last block and without.
TEST(last_block_on_scored_tokens_bit_identical) {
    for (int si = 0; si < N_SPECS; si++)
        for (int x = 0; x < 2; x++) {
            struct model m;
            random_model_init(&m, &specs[si]);
            int L = m.cfg.n_layer;
            m.cfg.xsa[L - 1] = (unsigned char)x;
            struct backend be;
            CHECK(open_cpu(&be, &m, 2, 64) == 0);
            int32_t pre[21], br[3][7];
            int blen[3] = {7, 1, 5};
            make_tokens(pre, 21, m.cfg.vocab_size, 300 + si);
            for (int b = 0; b < 3; b++) make_tokens(br[b], blen[b], m.cfg.vocab_size, 400 + b);
            const int32_t *brp[3] = {br[0], br[1], br[2]};
            struct batch_builder t;
            batch_init(&t);
            int pf, bf[3];
            xsa_error err = {0};
            CHECK(batch_add_tree(&t, pre, 21, brp, blen, 3, &pf, bf, &err) == 0);
            for (int b = 2; b >= 0; b--)  // later branches first: rows gathered out of token order
                for (int i = blen[b] - 1; i >= 1; i--) batch_add_entry(&t, bf[b] + i - 1, br[b][i], &err);
            batch_add_entry(&t, pf + 20, br[0][0], &err);
            batch_add_entry(&t, pf + 3, pre[4], &err);
            batch_add_entry(&t, pf + 20, br[1][0], &err);  // the same token, another target
            struct score_batch b = batch_view(&t);
            float lg[32], lf[32];
            uint8_t gg[32], gf[32];
            int S = b.n_entries;
            CHECK(S <= 32);
            CHECK(backend_score(&be, &b, lg, gg, &err) == 0);
            struct cpu_probe pr = {L - 1, NULL, NULL};
            CHECK(cpu_backend_score_probe(&be, &b, lf, gf, &pr, &err) == 0);
            CHECK_MSG(memcmp(lg, lf, sizeof(float) * S) == 0 && memcmp(gg, gf, (size_t)S) == 0,
                      "spec %d xsa %d: last block on scored tokens differs from the full block", si, x);
            for (int i = 0; i < S; i++) CHECK(lg[i] < 0 && isfinite(lg[i]));
            batch_free(&t);
            backend_close(&be);
            random_model_free(&m);
        }
}

// One request scored alone and at several places in bigger batches, with 1-3 threads.
TEST(batch_composition_bit_identical) {
    for (int si = 0; si < N_SPECS; si++) {
        struct model m;
        random_model_init(&m, &specs[si]);
        m.cfg.xsa[m.cfg.n_layer - 1] = 1;
        int32_t req[21], fill[200];
        make_tokens(req, 21, m.cfg.vocab_size, 7);
        make_tokens(fill, 200, m.cfg.vocab_size, 8);
        float ref[20], got[400];
        uint8_t gref[20], ggot[400];
        xsa_error err = {0};
        struct batch_builder bb;
        batch_init(&bb);
        struct backend be;
        CHECK(open_cpu(&be, &m, 1, 21) == 0);
        int first;
        batch_add_row(&bb, req, 21, &first, &err);
        batch_add_entries_seq(&bb, first, req, 21, &err);
        CHECK(score(&be, &bb, ref, gref) == 0);
        backend_close(&be);

        // Fillers before (crossing a 64-row tile boundary), a branched row after, more entries.
        int before[] = {0, 5, 50, 60, 130};
        int threads[] = {1, 2, 3};
        for (int ti = 0; ti < 3; ti++) {
            CHECK(open_cpu(&be, &m, threads[ti], 8) == 0);  // small: forces scratch to grow
            for (int k = 0; k < 5; k++) {
                batch_reset(&bb);
                int f0 = -1, dummy;
                if (before[k]) batch_add_row(&bb, fill, before[k], &f0, &err);
                batch_add_row(&bb, req, 21, &first, &err);
                const int32_t *brp[2] = {fill + 3, fill + 10};
                int blen[2] = {4, 30};
                batch_add_tree(&bb, fill + 40, 12, brp, blen, 2, &dummy, NULL, &err);
                if (f0 >= 0) batch_add_entries_seq(&bb, f0, fill, before[k], &err);
                batch_add_entries_seq(&bb, first, req, 21, &err);
                batch_add_entry(&bb, batch_n_tokens(&bb) - 1, 3, &err);
                int off = before[k] > 1 ? before[k] - 1 : 0;
                CHECK(score(&be, &bb, got, ggot) == 0);
                CHECK_MSG(memcmp(ref, got + off, sizeof ref) == 0,
                          "spec %d threads %d filler %d: scores differ in bits", si, threads[ti], before[k]);
                CHECK(memcmp(gref, ggot + off, sizeof gref) == 0);
            }
            backend_close(&be);
        }
        batch_free(&bb);
        random_model_free(&m);
    }
}

// XSA: every head's output is orthogonal to the token's own value vector of its kv head;
// without XSA it is not (so the check can fail), and the scores change.
TEST(xsa_orthogonal_to_own_value) {
    for (int si = 0; si < N_SPECS; si++) {
        struct model m;
        random_model_init(&m, &specs[si]);
        const struct model_config *c = &m.cfg;
        int T = 40, H = c->n_head, Hkv = c->n_kv_head, hd = c->head_dim, layer = 1;
        int32_t toks[40];
        make_tokens(toks, T, c->vocab_size, 99);
        struct batch_builder bb;
        batch_init(&bb);
        xsa_error err = {0};
        int first;
        batch_add_row(&bb, toks, T, &first, &err);
        batch_add_entries_seq(&bb, first, toks, T, &err);
        struct score_batch b = batch_view(&bb);
        float *att = malloc(sizeof(float) * T * H * hd), *v = malloc(sizeof(float) * T * Hkv * hd);
        float lp[2][40];
        uint8_t gr[40];
        double worst[2] = {0, 0};
        for (int x = 0; x < 2; x++) {
            memset(m.cfg.xsa, 0, sizeof m.cfg.xsa);
            m.cfg.xsa[layer] = (unsigned char)x;
            struct backend be;
            CHECK(open_cpu(&be, &m, 2, T) == 0);
            struct cpu_probe pr = {layer, att, v};
            CHECK(cpu_backend_score_probe(&be, &b, lp[x], gr, &pr, &err) == 0);
            for (int t = 0; t < T; t++)
                for (int h = 0; h < H; h++) {
                    const float *z = att + ((long)t * H + h) * hd;
                    const float *vv = v + ((long)t * Hkv + h / (H / Hkv)) * hd;
                    double zv = 0, zz = 0, v2 = 0;
                    for (int d = 0; d < hd; d++) zv += (double)z[d] * vv[d], zz += (double)z[d] * z[d], v2 += (double)vv[d] * vv[d];
                    double cs = fabs(zv) / sqrt(zz * v2 + 1e-300);
                    if (cs > worst[x]) worst[x] = cs;
                }
            backend_close(&be);
        }
        CHECK_MSG(worst[1] < 1e-5, "spec %d: max |cos(z, v)| = %g with XSA", si, worst[1]);
        CHECK_MSG(worst[0] > 1e-2, "spec %d: max |cos(y, v)| = %g without XSA", si, worst[0]);
        CHECK(memcmp(lp[0], lp[1], sizeof lp[0]) != 0);
        free(att);
        free(v);
        batch_free(&bb);
        random_model_free(&m);
    }
}

// Scoring every id at one position: sum exp(logprob) == 1 (the vocabulary spans 2 chunks).
TEST(logprobs_normalised_over_vocab) {
    for (int si = 0; si < N_SPECS; si++) {
        struct model m;
        random_model_init(&m, &specs[si]);
        int V = m.cfg.vocab_size;
        int32_t toks[6];
        make_tokens(toks, 6, V, 5);
        struct batch_builder bb;
        batch_init(&bb);
        xsa_error err = {0};
        int first;
        batch_add_row(&bb, toks, 6, &first, &err);
        for (int id = 0; id < V; id++) batch_add_entry(&bb, first + 3, id, &err);
        float *lp = malloc(sizeof(float) * V);
        uint8_t *gr = malloc((size_t)V);
        struct backend be;
        CHECK(open_cpu(&be, &m, 2, 6) == 0);
        CHECK(score(&be, &bb, lp, gr) == 0);
        double s = 0, best = -INFINITY;
        int n_greedy = 0, arg = -1;
        for (int id = 0; id < V; id++) {
            s += exp((double)lp[id]);
            n_greedy += gr[id];
            if (lp[id] > best) best = lp[id], arg = id;
        }
        CHECK_NEAR(s, 1.0, 1e-4);
        CHECK_EQ_INT(n_greedy, 1);
        CHECK(gr[arg] == 1);
        backend_close(&be);
        free(lp);
        free(gr);
        batch_free(&bb);
        random_model_free(&m);
    }
}

// A gpt2 model whose final norm maps every token to e0 (gain 0, bias e0): logits are
// lm_head[:, 0], set to 1 at a few ids and 0 elsewhere, so ties and log P are known exactly.
TEST(argmax_ties_lowest_id) {
    struct random_model_spec sp = {MODEL_ARCH_GPT2, ROPE_NONE, 1, 2, 2, 8, 16, 32, 5000, 64, 0, 1, 3};
    struct model m;
    random_model_init(&m, &sp);
    int C = m.cfg.d_model, V = m.cfg.vocab_size;
    memset(m.final_norm_w, 0, sizeof(float) * C);
    memset(m.final_norm_b, 0, sizeof(float) * C);
    m.final_norm_b[0] = 1;
    int ties[][3] = {{9, 7, 4100}, {4100, 4097, 4999}};
    for (int k = 0; k < 2; k++) {
        memset(m.lm_head, 0, sizeof(float) * V * C);
        for (int i = 0; i < 3; i++) m.lm_head[(long)ties[k][i] * C] = 1;
        int32_t toks[3] = {1, 2, 3};
        struct batch_builder bb;
        batch_init(&bb);
        xsa_error err = {0};
        int first;
        batch_add_row(&bb, toks, 3, &first, &err);
        for (int i = 0; i < 3; i++) batch_add_entry(&bb, first + 1, ties[k][i], &err);
        batch_add_entry(&bb, first + 1, 0, &err);
        float lp[4];
        uint8_t gr[4];
        struct backend be;
        CHECK(open_cpu(&be, &m, 2, 3) == 0);
        CHECK(score(&be, &bb, lp, gr) == 0);
        int lowest = ties[k][0] < ties[k][1] ? ties[k][0] : ties[k][1];
        lowest = ties[k][2] < lowest ? ties[k][2] : lowest;
        double lse = log(3 * exp(1.0) + (V - 3));
        for (int i = 0; i < 3; i++) {
            CHECK_EQ_INT(gr[i], ties[k][i] == lowest);
            CHECK_NEAR(lp[i], 1.0 - lse, 1e-5);
        }
        CHECK_EQ_INT(gr[3], 0);
        CHECK_NEAR(lp[3], -lse, 1e-5);
        backend_close(&be);
        batch_free(&bb);
    }
    random_model_free(&m);
}

// cpu_argmax (8 lanes where the CPU has AVX2) finds what the plain loop finds: ties to the
// first index, a NaN first element wins, later NaNs never do, all -inf gives index 0; every
// length around the vector width and its tail.
TEST(vector_argmax_as_plain_loop) {
    float x[200];
    uint32_t s = 7u;
    int cases = 0, bad = 0;
    for (int n = 1; n <= 150; n++)
        for (int kind = 0; kind < 7; kind++) {
            for (int i = 0; i < n; i++) {
                s = s * 1664525u + 1013904223u;
                x[i] = kind == 1 ? (float)(s >> 29) : (float)((s >> 8) & 0xffff) / 4096.0f - 8.0f;  // kind 1: many ties
            }
            if (kind == 2) x[0] = NAN;
            if (kind == 3)
                for (int i = 1; i < n; i += 3) x[i] = NAN;
            if (kind == 4)
                for (int i = 0; i < n; i++) x[i] = (i % 5 == 2) ? NAN : -INFINITY;
            if (kind == 5) x[n - 1] = 100.0f, x[n / 2] = 100.0f;
            if (kind == 6)  // signed zeros: the value kept is the first index's
                for (int i = 0; i < n; i++) x[i] = i % 3 == 1 ? -0.0f : i % 3 == 2 ? 0.0f : -1.0f;
            float m = x[0], got_m;
            int am = 0;
            for (int j = 1; j < n; j++)
                if (x[j] > m) m = x[j], am = j;
            int got = cpu_argmax(x, n, &got_m);
            bad |= got != am || memcmp(&got_m, &m, sizeof m) != 0;
            cases++;
        }
    CHECK_MSG(!bad, "cpu_argmax differs from the plain loop");
    CHECK(cases == 1050);
}

// SwiGLU's vector path: silu(g) * u to float rounding of a double reference, and the same
// bits wherever a value sits in the array (lanes and the scalar tail do the same arithmetic).
TEST(swiglu_vector_path) {
    enum { N = 1003 };
    static float g[N], u[N], g2[N + 5], u2[N + 5];
    uint32_t s = 99u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        g[i] = (float)((s >> 8) & 0xffff) / 2048.0f - 16.0f;
        s = s * 1664525u + 1013904223u;
        u[i] = (float)((s >> 8) & 0xffff) / 8192.0f - 4.0f;
    }
    g[5] = -100.0f, g[6] = 100.0f, g[7] = 0.0f;
    memcpy(g2 + 5, g, sizeof g), memcpy(u2 + 5, u, sizeof u);
    float ref[N];
    for (int i = 0; i < N; i++) ref[i] = (float)((double)g[i] / (1.0 + exp(-(double)g[i])) * u[i]);
    cpu_swiglu(g, u, N);
    cpu_swiglu(g2 + 5, u2 + 5, N);
    double worst = 0;
    for (int i = 0; i < N; i++) worst = fmax(worst, fabs(g[i] - ref[i]) / fmax(fabs(ref[i]), 1e-30));
    CHECK_MSG(worst < 1e-6, "max relative |swiglu - reference| %g", worst);
    CHECK(memcmp(g, g2 + 5, sizeof g) == 0);
}

// parameter-golf's MLP activation, F.leaky_relu(u, slope).square(), and its backward: the vector
// lanes and the scalar tail both give the float32 formula's bits (NaN for NaN), in place too.
TEST(leaky_relu2_vector_path) {
    enum { N = 1003 };
    static float u[N], h[N], hin[N], dh[N], want[N];
    static const float slopes[] = {0.0f, 0.5f, 0.01f};
    uint32_t s = 7u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        u[i] = (float)((int)(s >> 8) % 20001 - 10000) / 1000.0f;
    }
    u[3] = 0.0f, u[4] = -0.0f, u[9] = NAN, u[10] = INFINITY, u[11] = -INFINITY, u[N - 1] = -1e-30f;
    int bad = 0;
    for (size_t k = 0; k < sizeof slopes / sizeof slopes[0]; k++) {
        float sl = slopes[k];
        cpu_leaky_relu2(u, h, N, sl);
        memcpy(hin, u, sizeof u);
        cpu_leaky_relu2(hin, hin, N, sl);
        for (int i = 0; i < N; i++) {
            float r = u[i] > 0 ? u[i] : u[i] * sl;
            want[i] = r * r;
            bad += memcmp(&h[i], &want[i], sizeof(float)) && !(isnan(h[i]) && isnan(want[i]));
        }
        bad += memcmp(h, hin, sizeof h) != 0;
        for (int i = 0; i < N; i++) dh[i] = want[i] = (float)(i % 17) - 8.5f;
        cpu_leaky_relu2_bwd(u, dh, N, sl);
        for (int i = 0; i < N; i++) {
            float r = u[i] > 0 ? u[i] : u[i] * sl;
            want[i] *= 2.0f * r * (u[i] > 0 ? 1.0f : sl);
            bad += memcmp(&dh[i], &want[i], sizeof(float)) && !(isnan(dh[i]) && isnan(want[i]));
        }
    }
    CHECK_MSG(bad == 0, "%d values differ from the formula's", bad);
    CHECK(h[1] != 0 && dh[1] != 0);
}

// RMSNorm runs 4 rows at a time where the CPU has AVX2: each row must get the bits it gets
// alone (1 row: the plain loop), for widths that leave tails of every length.
TEST(rms_norm_rows_as_one_row) {
    static const int widths[] = {1, 3, 4, 7, 8, 13, 37, 64, 384, 515};
    float x[6 * 515], w[515], all[6 * 515], one[515];
    uint32_t s = 5u;
    int bad = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        int C = widths[wi];
        for (int i = 0; i < 6 * C; i++) {
            s = s * 1664525u + 1013904223u;
            x[i] = ((float)((s >> 8) & 0xffff) / 4096.0f - 8.0f) * (i % 7 == 0 ? 1000.0f : 1.0f);
        }
        for (int i = 0; i < C; i++) w[i] = 1.0f + 0.01f * (float)(i % 13);
        cpu_norm_rows(x, all, 6, C, w, NULL, 1e-5f);
        for (int r = 0; r < 6; r++) {
            cpu_norm_rows(x + (long)r * C, one, 1, C, w, NULL, 1e-5f);
            bad |= memcmp(one, all + (long)r * C, sizeof(float) * C) != 0;
        }
    }
    CHECK_MSG(!bad, "a row normed among 6 differs from the same row alone");
}

// The weightless RMSNorm of parameter-golf (F.rms_norm(x, (d,)) with eps None) against PyTorch
// on rows whose mean square is near eps (tools/fixtures/make_pgolf_fixtures.py --rms-norm-dump): eps is
// float32's machine epsilon, and the 4-row and 1-row paths agree with torch.
TEST(weightless_rms_norm_eps_matches_torch) {
    cJSON *r = fixture_read_json("tests/fixtures/pgolf/rms_norm_eps.json");
    CHECK(r != NULL);
    if (!r) return;
    CHECK(cJSON_GetObjectItem(r, "eps_picked")->valuedouble == (double)FLT_EPSILON);
    const cJSON *xs = cJSON_GetObjectItem(r, "x"), *ys = cJSON_GetObjectItem(r, "y");
    int R = cJSON_GetArraySize(xs), C = cJSON_GetArraySize(cJSON_GetArrayItem(xs, 0));
    CHECK(R == 6 && C == 16);
    float x[6 * 16], y[6 * 16], wrong[6 * 16];
    for (int i = 0; i < R * C; i++) x[i] = (float)cJSON_GetArrayItem(cJSON_GetArrayItem(xs, i / C), i % C)->valuedouble;
    cpu_norm_rows(x, y, R, C, NULL, NULL, FLT_EPSILON);
    cpu_norm_rows(x, wrong, R, C, NULL, NULL, 1e-6f);
    double worst = 0, off = 0;
    for (int i = 0; i < R * C; i++) {
        double want = cJSON_GetArrayItem(cJSON_GetArrayItem(ys, i / C), i % C)->valuedouble;
        worst = fmax(worst, fabs(y[i] - want) / fmax(fabs(want), 1e-3));
        off = fmax(off, fabs(wrong[i] - want) / fmax(fabs(want), 1e-3));
    }
    CHECK_MSG(worst < 1e-6, "relative error %.3g vs torch", worst);
    CHECK_MSG(off > 1e-2, "eps 1e-6 should visibly differ (%.3g)", off);  // the fixture pins eps
    cJSON_Delete(r);
}

static int score_raw(struct backend *be, const struct score_batch *b, char *msg) {
    float lp[8];
    uint8_t gr[8];
    xsa_error err = {0};
    int rc = backend_score(be, b, lp, gr, &err);
    snprintf(msg, 1024, "%s", err.msg);
    return rc;
}

// Bad batches: code 2 with a message, nothing written out of bounds, the backend still works.
TEST(bad_batches_fail_with_code_2) {
    struct model m;
    random_model_init(&m, &specs[0]);  // gpt2, max_seq_len 256
    struct backend be;
    CHECK(open_cpu(&be, &m, 2, 8) == 0);
    int32_t toks[4] = {1, 2, 3, 4};
    struct batch_builder bb;
    batch_init(&bb);
    xsa_error err = {0};
    int first;
    batch_add_row(&bb, toks, 4, &first, &err);
    batch_add_entries_seq(&bb, first, toks, 4, &err);
    struct score_batch good = batch_view(&bb), b;
    char msg[1024];
    int32_t idx[3] = {0, 4, 1}, tgt[3] = {1, 300, 2}, neg[3] = {-1, 0, 0}, bigpos[4] = {0, 1, 2, 256};
    int32_t lo_bad[4] = {0, 0, 0, 3}, hi_future[4] = {1, 3, 3, 4}, empty[4] = {0, 0, 0, 0};

    b = good, b.entry_index = idx;  // index 4 of 4 tokens
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    CHECK(strstr(msg, "index 4") != NULL);
    b = good, b.entry_target = tgt;  // target 300 of vocab 300
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    CHECK(strstr(msg, "target id 300") != NULL);
    b = good, b.entry_index = neg;
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    b = good, b.token = tgt + 1, b.n_tokens = 2, b.n_entries = 0;  // token id 300
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    CHECK(strstr(msg, "outside the vocabulary") != NULL);
    b = good, b.pos = bigpos;  // gpt2 learned positions end at 256
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    b = good, b.span0_hi = hi_future;  // token 1 would see token 2
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    b = good, b.span0_lo = lo_bad;  // token 3: span0 [3, 4) ok, but ...
    b.span1_lo = empty, b.span1_hi = empty;  // ... empty spans are fine only when span0 isn't
    CHECK_EQ_INT(score_raw(&be, &b, msg), 0);
    b = good, b.span0_hi = empty, b.span1_lo = empty, b.span1_hi = empty;  // no keys at all
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    b = good, b.n_tokens = -1;
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    b = good, b.entry_index = NULL;
    CHECK_EQ_INT(score_raw(&be, &b, msg), 2);
    b = (struct score_batch){0};  // empty batch: nothing to do
    CHECK_EQ_INT(score_raw(&be, &b, msg), 0);
    CHECK_EQ_INT(score_raw(&be, &good, msg), 0);  // still usable
    backend_close(&be);
    batch_free(&bb);
    random_model_free(&m);
}

// backend_open: device strings, and a model the cpu backend cannot run.
TEST(backend_open_devices) {
    struct model m;
    random_model_init(&m, &specs[1]);
    struct backend be;
    xsa_error err = {0};
    struct backend_options o = {.n_threads = 1, .max_batch_tokens = 16};
    CHECK_EQ_INT(backend_open(&be, "cpu", &m, &o, &err), 0);
    CHECK_STR(be.name, "cpu");
    backend_close(&be);
    CHECK_EQ_INT(backend_open(&be, "auto", &m, &o, &err), 0);  // no GPU here: falls back
    CHECK_STR(be.name, "cpu");
    backend_close(&be);
    CHECK_EQ_INT(backend_open(&be, "cuda", &m, &o, &err), 3);
    CHECK(strstr(err.msg, "CUDA backend is not available") != NULL);
    xsa_error_clear(&err);
    CHECK_EQ_INT(backend_open(&be, "cuda:1", &m, &o, &err), 3);
    xsa_error_clear(&err);
    CHECK_EQ_INT(backend_open(&be, "cuda:x", &m, &o, &err), 2);
    xsa_error_clear(&err);
    CHECK_EQ_INT(backend_open(&be, "tpu", &m, &o, &err), 2);
    CHECK(strstr(err.msg, "unknown device") != NULL);
    xsa_error_clear(&err);
    m.cfg.n_kv_head = 3;  // 4 heads do not split into 3 kv groups
    CHECK_EQ_INT(backend_open(&be, "cpu", &m, &o, &err), 2);
    random_model_free(&m);
}

// The builder lays spans out as backend.h says.
TEST(batch_builder_spans) {
    struct batch_builder bb;
    batch_init(&bb);
    xsa_error err = {0};
    int32_t a[2] = {5, 6}, p[3] = {1, 2, 3}, b0[2] = {7, 8}, b1[1] = {9};
    const int32_t *br[2] = {b0, b1};
    int bl[2] = {2, 1}, pf, bf[2], first;
    CHECK(batch_add_row(&bb, a, 2, &first, &err) == 0);
    CHECK(batch_add_tree(&bb, p, 3, br, bl, 2, &pf, bf, &err) == 0);
    CHECK_EQ_INT(first, 0);
    CHECK_EQ_INT(pf, 2);
    CHECK_EQ_INT(bf[0], 5);
    CHECK_EQ_INT(bf[1], 7);
    struct score_batch b = batch_view(&bb);
    CHECK_EQ_INT(b.n_tokens, 8);
    int32_t pos[8] = {0, 1, 0, 1, 2, 3, 4, 3}, l0[8] = {0, 0, 2, 2, 2, 2, 2, 2},
            h0[8] = {1, 2, 3, 4, 5, 5, 5, 5}, l1[8] = {1, 2, 3, 4, 5, 5, 5, 7},
            h1[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(memcmp(b.pos, pos, sizeof pos) == 0);
    CHECK(memcmp(b.span0_lo, l0, sizeof l0) == 0);
    CHECK(memcmp(b.span0_hi, h0, sizeof h0) == 0);
    CHECK(memcmp(b.span1_lo, l1, sizeof l1) == 0);
    CHECK(memcmp(b.span1_hi, h1, sizeof h1) == 0);
    CHECK(batch_add_entries_seq(&bb, first, a, 2, &err) == 0);
    b = batch_view(&bb);
    CHECK_EQ_INT(b.n_entries, 1);
    CHECK_EQ_INT(b.entry_index[0], 0);
    CHECK_EQ_INT(b.entry_target[0], 6);
    int zero = 0;
    CHECK_EQ_INT(batch_add_row(&bb, a, 0, &first, &err), 2);
    xsa_error_clear(&err);
    CHECK_EQ_INT(batch_add_tree(&bb, p, 3, br, &zero, 1, &pf, bf, &err), 2);
    CHECK_EQ_INT(batch_n_tokens(&bb), 8);
    batch_reset(&bb);
    CHECK_EQ_INT(batch_n_tokens(&bb), 0);
    batch_free(&bb);
}

// A row of documents (batch_add_row_docs): each token's keys start at its document's BOS, so
// a later document's scores do not depend on the earlier one's tokens, and the first document
// scores as a row of its own; positions run over the row.
TEST(docs_row_cuts_attention) {
    for (int si = 0; si < N_SPECS; si++) {
        struct model m;
        random_model_init(&m, &specs[si]);
        struct backend be;
        CHECK(open_cpu(&be, &m, 2, 64) == 0);
        const int32_t BOS = 7;
        int32_t row[13];
        make_tokens(row, 13, m.cfg.vocab_size, 300 + si);
        for (int i = 0; i < 13; i++)
            if (row[i] == BOS) row[i] = BOS + 1;
        row[0] = row[5] = BOS;  // documents [0, 5) and [5, 13)
        float lp[3][12];
        uint8_t gr[12];
        xsa_error err = {0};
        for (int k = 0; k < 3; k++) {
            struct batch_builder bb;
            batch_init(&bb);
            int first;
            if (k == 2) row[2] = row[2] == 3 ? 4 : 3;  // another first document
            CHECK(batch_add_row_docs(&bb, row, 13, BOS, &first, &err) == 0);
            CHECK(batch_add_entries_seq(&bb, first, row, 13, &err) == 0);
            struct score_batch b = batch_view(&bb);
            for (int t = 0; t < 13; t++) {
                CHECK_EQ_INT(b.span0_lo[t], t < 5 ? 0 : 5);
                CHECK_EQ_INT(b.pos[t], t);
            }
            if (k == 1) {  // the first document alone, as a plain row
                batch_reset(&bb);
                CHECK(batch_add_row(&bb, row, 5, &first, &err) == 0);
                CHECK(batch_add_entries_seq(&bb, first, row, 5, &err) == 0);
            }
            CHECK(score(&be, &bb, lp[k], gr) == 0);
            batch_free(&bb);
        }
        CHECK(memcmp(lp[0], lp[1], 4 * sizeof(float)) == 0);       // document 1 as its own row
        CHECK(memcmp(lp[0] + 5, lp[2] + 5, 7 * sizeof(float)) == 0);  // document 2 unmoved by document 1
        CHECK(memcmp(lp[0] + 1, lp[2] + 1, 3 * sizeof(float)) != 0);  // (which did change)
        backend_close(&be);
        random_model_free(&m);
    }
}

// n floats uniform in [-0.5, 0.5) from a 64-bit LCG (*seed advances).
static void fill_uniform(float *x, long n, uint64_t *seed) {
    for (long i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((*seed >> 40) / 16777216.0 - 0.5);
    }
}

// A backend on the GEMM kernel `gemm` scores the same with XSA_CPU_PACK=1 and =0; the device
// description never says "packed weights" without packing, and (strict) always does with it.
static void pack_choice_same_scores(const char *gemm, uint64_t tok_seed, int strict) {
    struct model m;
    random_model_init(&m, &specs[2]);  // tied head, vocab over one chunk
    int32_t toks[40];
    make_tokens(toks, 40, m.cfg.vocab_size, tok_seed);
    float lp[2][39];
    uint8_t gr[2][39];
    char *saved = env_save("XSA_CPU_GEMM");
    setenv("XSA_CPU_GEMM", gemm, 1);
    for (int k = 0; k < 2; k++) {
        setenv("XSA_CPU_PACK", k ? "0" : "1", 1);
        struct backend be;
        CHECK(open_cpu(&be, &m, 2, 40) == 0);
        int packed = strstr(be.device_desc, "packed weights") != NULL;
        if (strict || k) CHECK(packed == (k == 0));
        struct batch_builder bb;
        batch_init(&bb);
        xsa_error err = {0};
        int first;
        batch_add_row(&bb, toks, 40, &first, &err);
        batch_add_entries_seq(&bb, first, toks, 40, &err);
        CHECK(score(&be, &bb, lp[k], gr[k]) == 0);
        batch_free(&bb);
        backend_close(&be);
    }
    unsetenv("XSA_CPU_PACK");
    env_restore("XSA_CPU_GEMM", saved);
    CHECK(memcmp(lp[0], lp[1], sizeof lp[0]) == 0 && memcmp(gr[0], gr[1], sizeof gr[0]) == 0);
    random_model_free(&m);
}

// Weights packed once (cpu_gemm_pack) give the AVX-512 tile the same bits as packing per tile,
// for K across the kernel's 128-k chunks, widths that end inside a 32-column panel, and tiles
// that start at a later column block of a wider weight.
TEST(packed_weights_bit_identical) {
    if (!cpu_gemm_have_avx512()) {
        fprintf(stderr, "  no AVX-512 on this CPU: packed kernel not run\n");
        return;
    }
    static const int Ks[] = {1, 5, 127, 128, 129, 300};
    static const int Ns[] = {1, 17, 32, 33, 100, 256, 300, 600};
    struct cpu_pool *pool = cpu_pool_create(2);
    int bad = 0, cases = 0;
    uint64_t seed = 77;
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
        for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++) {
            int K = Ks[ki], N = Ns[ni];
            float *in = malloc(sizeof(float) * CPU_GEMM_ROWS * K), *w = malloc(sizeof(float) * N * K);
            float *wp = aligned_alloc(64, (cpu_gemm_packed_size(N, K) * sizeof(float) + 63) / 64 * 64);
            float *o1 = malloc(sizeof(float) * CPU_GEMM_ROWS * N), *o2 = malloc(sizeof(float) * CPU_GEMM_ROWS * N);
            fill_uniform(in, (long)CPU_GEMM_ROWS * K, &seed);
            fill_uniform(w, (long)N * K, &seed);
            cpu_gemm_pack(pool, w, N, K, wp);
            for (int c0 = 0; c0 < N; c0 += CPU_GEMM_COLS) {
                int nc = N - c0 < CPU_GEMM_COLS ? N - c0 : CPU_GEMM_COLS;
                cpu_gemm_tile(CPU_GEMM_AVX512, in, w + (long)c0 * K, o1 + c0, N, nc, K);
                cpu_gemm_tile_packed(in, wp + (long)c0 * K, o2 + c0, N, nc, K);
            }
            bad |= memcmp(o1, o2, sizeof(float) * CPU_GEMM_ROWS * N) != 0;
            // And through cpu_gemm_linear with a bias, as the forward calls it.
            float *b = malloc(sizeof(float) * N);
            for (int i = 0; i < N; i++) b[i] = (float)i * 0.01f;
            cpu_gemm_linear(pool, CPU_GEMM_AVX512, in, w, NULL, b, o1, CPU_GEMM_ROWS, K, N);
            cpu_gemm_linear(pool, CPU_GEMM_AVX512, in, w, wp, b, o2, CPU_GEMM_ROWS, K, N);
            bad |= memcmp(o1, o2, sizeof(float) * CPU_GEMM_ROWS * N) != 0;
            if (bad && !cases) fprintf(stderr, "  K %d N %d differs\n", K, N);
            cases++;
            free(in), free(w), free(wp), free(o1), free(o2), free(b);
        }
    cpu_pool_destroy(pool);
    CHECK_MSG(!bad, "packed weights change a GEMM result");
    CHECK_EQ_INT(cases, 48);
}

// XSA_CPU_PACK=1 packs the weights at open, =0 never: the same bits either way, and the
// device description says which.
TEST(packing_choice_same_bits) {
    if (!cpu_gemm_have_avx512()) {
        fprintf(stderr, "  no AVX-512 on this CPU: weights are never packed\n");
        return;
    }
    // Packing applies to the AVX-512 kernel only, so force it: the backend may pick OpenBLAS
    // (where it is batch-invariant, as on a Cooperlake core), or the caller may force another.
    pack_choice_same_scores("avx512", 57, 1);
}

// OpenBLAS's sums by our kernel from packed weights (cpu_gemm_tile_packed_blas): wherever
// cpu_gemm_blas_order_ok accepts a weight's tile shapes, cpu_gemm_linear gives OpenBLAS's bits
// from the packed copy, for K across OpenBLAS's k split (one chunk, q, between q and 2q, several)
// and widths that end inside a panel; and a backend on OpenBLAS scores the same with and
// without packing (XSA_CPU_PACK).
TEST(blas_order_packed_bit_identical) {
    static const int Ks[] = {1, 5, 300, 320, 321, 512, 650, 1024, 1408};
    static const int Ns[] = {17, 32, 100, 256, 300, 600};
    openblas_set_num_threads(1);  // as cpu_backend_open runs it: one thread per tile
    struct cpu_pool *pool = cpu_pool_create(2);
    int bad = 0, used = 0;
    uint64_t seed = 91;
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
        for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++) {
            int K = Ks[ki], N = Ns[ni];
            int shapes[][2] = {{K, N < CPU_GEMM_COLS ? N : CPU_GEMM_COLS}, {K, N % CPU_GEMM_COLS}};
            if (!cpu_gemm_blas_invariant(shapes, 2) || !cpu_gemm_blas_order_ok(shapes, 2)) continue;
            float *in = malloc(sizeof(float) * CPU_GEMM_ROWS * K), *w = malloc(sizeof(float) * N * K);
            float *wp = aligned_alloc(64, (cpu_gemm_packed_size(N, K) * sizeof(float) + 63) / 64 * 64);
            float *o1 = malloc(sizeof(float) * CPU_GEMM_ROWS * N), *o2 = malloc(sizeof(float) * CPU_GEMM_ROWS * N);
            float *b = malloc(sizeof(float) * N);
            fill_uniform(in, (long)CPU_GEMM_ROWS * K, &seed);
            fill_uniform(w, (long)N * K, &seed);
            for (int i = 0; i < N; i++) b[i] = (float)i * 0.01f;
            cpu_gemm_pack(pool, w, N, K, wp);
            cpu_gemm_linear(pool, CPU_GEMM_BLAS, in, w, NULL, b, o1, CPU_GEMM_ROWS, K, N);
            cpu_gemm_linear(pool, CPU_GEMM_BLAS, in, w, wp, b, o2, CPU_GEMM_ROWS, K, N);
            if (memcmp(o1, o2, sizeof(float) * CPU_GEMM_ROWS * N)) {
                if (!bad) fprintf(stderr, "  K %d N %d differs\n", K, N);
                bad = 1;
            }
            used++;
            free(in), free(w), free(wp), free(o1), free(o2), free(b);
        }
    cpu_pool_destroy(pool);
    CHECK_MSG(!bad, "OpenBLAS's sums from packed weights differ from OpenBLAS");
    fprintf(stderr, "  OpenBLAS core %s: its sums reproduced from packed weights for %d of 54 weights\n",
            openblas_get_corename(), used);
    // The backend: forced OpenBLAS, packed (where accepted) or not, the same scores.
    pack_choice_same_scores("blas", 59, 0);
}

// Every GEMM kernel (forced with XSA_CPU_GEMM: blas, avx2, scalar, avx512 where the CPU has
// them) agrees with the others within 1e-5, and our own kernels pass the bit-identity checks
// above on any CPU; unknown or unsupported kernel names fail with code 2.
TEST(every_gemm_kernel) {
    const char *kinds[] = {"blas", "avx2", "scalar", "avx512"};
    struct model m;
    random_model_init(&m, &specs[1]);
    int32_t toks[30];
    make_tokens(toks, 30, m.cfg.vocab_size, 31);
    float lp[4][29];
    uint8_t gr[29];
    int ran = 0;
    char *saved = env_save("XSA_CPU_GEMM");
    for (int k = 0; k < 4; k++) {
        setenv("XSA_CPU_GEMM", kinds[k], 1);
        struct backend be;
        struct backend_options o = {.n_threads = 2, .max_batch_tokens = 30};
        xsa_error err = {0};
        if (backend_open_env(&be, &m, &o, &err)) {
            fprintf(stderr, "  %s: %s (skipped)\n", kinds[k], err.msg);
            memcpy(lp[k], lp[0], sizeof lp[0]);
            continue;
        }
        ran++;
        struct batch_builder bb;
        batch_init(&bb);
        int first;
        batch_add_row(&bb, toks, 30, &first, &err);
        batch_add_entries_seq(&bb, first, toks, 30, &err);
        CHECK(score(&be, &bb, lp[k], gr) == 0);
        for (int p = 0; p < 29; p++) CHECK_NEAR(lp[k][p], lp[0][p], 1e-5);
        backend_close(&be);
        batch_free(&bb);
        if (k > 0) {  // our kernels are position-invariant by construction; OpenBLAS only where picked
            prefix_branches_match_plain_rows();
            batch_composition_bit_identical();
        }
    }
    // Unknown names, and avx512 on a CPU without it, fail with code 2.
    const char *bad[] = {"avx1024", cpu_gemm_have_avx512() ? "sse" : "avx512"};
    for (int i = 0; i < 2; i++) {
        setenv("XSA_CPU_GEMM", bad[i], 1);
        struct backend be;
        struct backend_options o = {.n_threads = 1, .max_batch_tokens = 8};
        xsa_error err = {0};
        CHECK_EQ_INT(backend_open_env(&be, &m, &o, &err), 2);
        CHECK(strstr(err.msg, "XSA_CPU_GEMM=") != NULL);
    }
    env_restore("XSA_CPU_GEMM", saved);
    CHECK(ran >= 2);
    random_model_free(&m);
}

// Both attention kernels (forced with XSA_CPU_ATTN) agree within 1e-5 in logprob and 1e-5 in
// the attention outputs, each passes the bit-identity checks above, and an unknown kernel name
// fails backend_open with code 2.
TEST(every_attention_kernel) {
    const char *kinds[] = {"scalar", "avx2"};
    struct model m;
    random_model_init(&m, &specs[2]);  // hd 6, 3 query heads per kv head, biases
    const struct model_config *c = &m.cfg;
    m.cfg.xsa[1] = 1;
    int T = 70, Q = c->n_head * c->head_dim;
    int32_t toks[70];
    make_tokens(toks, T, c->vocab_size, 41);
    float lp[2][69], *att[2] = {malloc(sizeof(float) * T * Q), malloc(sizeof(float) * T * Q)};
    uint8_t gr[69];
    int ran = 0;
    char *saved = env_save("XSA_CPU_ATTN");
    for (int k = 0; k < 2; k++) {
        setenv("XSA_CPU_ATTN", kinds[k], 1);
        struct backend be;
        struct backend_options o = {.n_threads = 2, .max_batch_tokens = T};
        xsa_error err = {0};
        if (backend_open_env(&be, &m, &o, &err)) {
            fprintf(stderr, "  %s: %s (skipped)\n", kinds[k], err.msg);
            memcpy(lp[k], lp[0], sizeof lp[0]);
            memcpy(att[k], att[0], sizeof(float) * T * Q);
            continue;
        }
        CHECK(strstr(be.device_desc, k ? "AVX2 attention" : "C attention") != NULL);
        ran++;
        struct batch_builder bb;
        batch_init(&bb);
        int first;
        batch_add_row(&bb, toks, T, &first, &err);
        batch_add_entries_seq(&bb, first, toks, T, &err);
        struct score_batch b = batch_view(&bb);
        struct cpu_probe pr = {0, att[k], NULL};
        CHECK(cpu_backend_score_probe(&be, &b, lp[k], gr, &pr, &err) == 0);
        backend_close(&be);
        batch_free(&bb);
        prefix_branches_match_plain_rows();
        batch_composition_bit_identical();
    }
    double worst = 0;
    for (int p = 0; p < T - 1; p++) CHECK_NEAR(lp[1][p], lp[0][p], 1e-5);
    for (long i = 0; i < (long)T * Q; i++) worst = fmax(worst, fabs(att[1][i] - att[0][i]));
    CHECK_MSG(worst < 1e-5, "max |avx2 - scalar| attention output %g", worst);
    CHECK(ran >= 1);
    setenv("XSA_CPU_ATTN", "sse", 1);
    struct backend be;
    struct backend_options o = {.n_threads = 1, .max_batch_tokens = 8};
    xsa_error err = {0};
    CHECK_EQ_INT(backend_open_env(&be, &m, &o, &err), 2);
    CHECK(strstr(err.msg, "XSA_CPU_ATTN=sse") != NULL);
    env_restore("XSA_CPU_ATTN", saved);
    free(att[0]);
    free(att[1]);
    random_model_free(&m);
}

// The AVX2 tile, for every column count and K around its blocks (3 columns, 2, 1; K % 8 tails), equals
// a plain-C model of its arithmetic bit for bit: per output 8 lane sums by fused multiply-add in k
// order, the lanes added ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), then the tail in k order.
// The register blocking may change; these bits may not (they are the model fixtures' numbers).
// The records' bigram rows in their int32 (torch 2.x: (torch.bitwise_xor(36313 * t, 27191 * p) % mod)
// on int32 tensors, and with 51497 * pp for TRIGRAM): past 59,000 token ids the products wrap to a
// negative int32, whose C remainder (a negative row) read before the table.
TEST(bigram_hash_rows_as_torch) {
    static const struct { uint32_t t, p, pp; int32_t mod, bi, tri; } c[] = {
        {60000, 59999, 0, 3071, 1750, 1750},   {65535, 65534, 0, 3071, 2065, 2065}, {100, 200, 0, 3071, 1715, 1715},
        {1023, 1022, 1021, 10239, 2273, 1511}, {70000, 69999, 69998, 4095, 540, 3749}, {50000, 1, 0, 251519, 207897, 207897}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        uint32_t h = 36313u * c[i].t ^ 27191u * c[i].p;
        CHECK_EQ_INT(cpu_hash_row(h, c[i].mod), c[i].bi);
        CHECK_EQ_INT(cpu_hash_row(h ^ 51497u * c[i].pp, c[i].mod), c[i].tri);
    }
}

TEST(avx2_tile_arithmetic) {
    if (!cpu_gemm_have_avx2()) { fprintf(stderr, "  no AVX2 + FMA on this CPU (skipped)\n"); return; }
    const int Ks[] = {1, 7, 8, 9, 16, 23, 64, 77};
    float *in = malloc(sizeof(float) * CPU_GEMM_ROWS * 77), *w = malloc(sizeof(float) * 8 * 77);
    float *out = malloc(sizeof(float) * CPU_GEMM_ROWS * 9);
    uint64_t seed = 5;
    for (int i = 0; i < CPU_GEMM_ROWS * 77; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        in[i] = (float)((int64_t)(seed >> 40) - (1 << 23)) / (1 << 22);
        if (i < 8 * 77) w[i] = (float)((int64_t)(seed >> 20 & 0xffffff) - (1 << 23)) / (1 << 21);
    }
    int bad = 0;
    for (int ki = 0; ki < (int)(sizeof Ks / sizeof Ks[0]); ki++)
        for (int nc = 1; nc <= 8; nc++) {
            int K = Ks[ki], k8 = K / 8 * 8;
            memset(out, 0, sizeof(float) * CPU_GEMM_ROWS * 9);
            cpu_gemm_tile(CPU_GEMM_AVX2, in, w, out, 9, nc, K);
            for (int r = 0; r < CPU_GEMM_ROWS; r++)
                for (int j = 0; j < nc; j++) {
                    const float *a = in + (long)r * K, *b = w + (long)j * K;
                    float l[8] = {0};
                    for (int k = 0; k < k8; k += 8)
                        for (int q = 0; q < 8; q++) l[q] = fmaf(a[k + q], b[k + q], l[q]);
                    float s = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
                    for (int k = k8; k < K; k++) s += a[k] * b[k];
                    bad += memcmp(&s, &out[r * 9 + j], sizeof s) != 0;
                }
        }
    CHECK_MSG(bad == 0, "AVX2 tile differs from its arithmetic's model");
    free(in), free(w), free(out);
}

RUN_TESTS(T(bigram_hash_rows_as_torch), T(avx2_tile_arithmetic), T(weightless_rms_norm_eps_matches_torch), T(packed_weights_bit_identical), T(packing_choice_same_bits), T(blas_order_packed_bit_identical), T(prefix_branches_match_plain_rows),
          T(last_block_on_scored_tokens_bit_identical), T(batch_composition_bit_identical),
          T(xsa_orthogonal_to_own_value), T(logprobs_normalised_over_vocab),
          T(argmax_ties_lowest_id), T(vector_argmax_as_plain_loop), T(swiglu_vector_path), T(leaky_relu2_vector_path), T(rms_norm_rows_as_one_row),
          T(bad_batches_fail_with_code_2), T(backend_open_devices),
          T(batch_builder_spans), T(docs_row_cuts_attention), T(every_gemm_kernel), T(every_attention_kernel))
