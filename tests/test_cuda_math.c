// test_cuda_math.c: the arithmetic of the CUDA kernels (kernels/cuda/cuda_math.h, compiled
// here as plain C) against straightforward double references and against the CPU backend's
// own functions: bf16 rounding, activations, norms, RoPE in both pair conventions, the tiled
// online-softmax attention with its XSA epilogue, and the chunked logsumexp + argmax with ties.
// Runs on any machine: no GPU is involved.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/batch.h"
#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_pool.h"
#include "kernels/cuda/cuda_math.h"
#include "tests/check.h"

static float urand(uint64_t *s) {  // splitmix64 -> [-1, 1)
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((double)(z >> 11) / 4503599627370496.0 - 1.0);
}

TEST(bf16_rounding) {
    CHECK_EQ_INT(xsa_f32_to_bf16(1.0f), 0x3f80);
    CHECK_EQ_INT(xsa_f32_to_bf16(-2.0f), 0xc000);
    // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
    CHECK(xsa_bf16_round(1.0f + 0x1p-8f) == 1.0f);
    // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
    CHECK(xsa_bf16_round(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);
    CHECK(xsa_bf16_round(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);  // above halfway: up
    CHECK(isinf(xsa_bf16_round(INFINITY)) && xsa_bf16_round(-INFINITY) < 0);
    CHECK(isnan(xsa_bf16_round(NAN)));
    CHECK(isinf(xsa_bf16_round(FLT_MAX)));  // rounds past the largest bf16, as torch does
    CHECK(xsa_bf16_round(0.0f) == 0.0f && signbit(xsa_bf16_round(-0.0f)));
    // Random values: the result is a bf16 and the nearest one (double reference).
    uint64_t s = 7;
    for (int i = 0; i < 100000; i++) {
        float x = urand(&s) * powf(2.0f, (float)(i % 60 - 30));
        float r = xsa_bf16_round(x);
        CHECK((xsa_f32_bits(r) & 0xffffu) == 0);
        int e;
        frexp(x, &e);
        double ulp = ldexp(1.0, e - 8);  // bf16 keeps 8 significant bits
        if (!(fabs((double)r - x) <= ulp / 2)) {
            CHECK_MSG(0, "bf16(%a) = %a is not the nearest", x, r);
            break;
        }
    }
}

TEST(activations_match_cpu) {
    uint64_t s = 11;
    for (int i = 0; i < 10000; i++) {
        float v = 8.0f * urand(&s), u = 4.0f * urand(&s), g = v, c = v;
        cpu_gelu_tanh(&c, 1);
        double ref = 0.5 * v * (1.0 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * (double)v * v * v)));
        CHECK_NEAR(xsa_gelu_tanh(v), c, 1e-6 * (1 + fabs(c)));
        CHECK_NEAR(xsa_gelu_tanh(v), ref, 1e-5 * (1 + fabs(ref)));
        float e = v;
        cpu_gelu_erf(&e, 1);
        CHECK_NEAR(xsa_gelu_erf(v), e, 1e-6 * (1 + fabs(e)));
        CHECK_NEAR(xsa_gelu_erf(v), 0.5 * v * (1.0 + erf(v / sqrt(2.0))), 1e-5 * (1 + fabs(e)));
        cpu_swiglu(&g, &u, 1);
        CHECK_NEAR(xsa_swiglu(v, u), g, 1e-6 * (1 + fabs(g)));
        CHECK_NEAR(xsa_swiglu(v, u), v / (1.0 + exp(-(double)v)) * u, 1e-5 * (1 + fabs(g)));
    }
}

// The norm kernel's arithmetic for one row: double sums, then the helpers.
static void norm_row_like_kernel(const float *x, float *out, int C, const float *w, const float *b, float eps) {
    float mean = 0, rstd;
    if (b) {
        double sum = 0, var = 0;
        for (int i = 0; i < C; i++) sum += x[i];
        double mu = sum / C;
        for (int i = 0; i < C; i++) var += (x[i] - mu) * (x[i] - mu);
        rstd = xsa_ln_rstd(var / C, eps);
        mean = (float)mu;
    } else {
        double ss = 0;
        for (int i = 0; i < C; i++) ss += (double)x[i] * x[i];
        rstd = xsa_rms_rstd((float)(ss / C), eps);
    }
    for (int i = 0; i < C; i++) out[i] = xsa_norm_apply(x[i], mean, rstd, w[i], b ? b[i] : 0.0f, b != NULL);
}

TEST(norm_rows_match_cpu) {
    enum { C = 197 };
    float x[C], w[C], b[C], got[C], want[C];
    uint64_t s = 3;
    for (int rep = 0; rep < 50; rep++) {
        for (int i = 0; i < C; i++) {
            x[i] = 3.0f * urand(&s) + 0.5f;
            w[i] = 1.0f + 0.2f * urand(&s);
            b[i] = 0.1f * urand(&s);
        }
        for (int ln = 0; ln < 2; ln++) {
            norm_row_like_kernel(x, got, C, w, ln ? b : NULL, 1e-5f);
            cpu_norm_rows(x, want, 1, C, w, ln ? b : NULL, 1e-5f);
            double mu = 0, ms = 0, var = 0;
            for (int i = 0; i < C; i++) mu += x[i], ms += (double)x[i] * x[i];
            mu /= C;
            for (int i = 0; i < C; i++) var += (x[i] - mu) * (x[i] - mu);
            for (int i = 0; i < C; i++) {
                CHECK(got[i] == want[i]);  // same operations in the same order as the CPU backend
                double ref = ln ? (x[i] - mu) / sqrt(var / C + 1e-5) * w[i] + b[i] : x[i] / sqrt(ms / C + 1e-5) * w[i];
                CHECK_NEAR(got[i], ref, 1e-5 * (1 + fabs(ref)));
            }
        }
    }
}

TEST(rope_both_conventions_match_cpu) {
    enum { T = 5, H = 3, HD = 16 };
    int32_t pos[T] = {0, 1, 7, 100, 2047};
    float x[T * H * HD], y[T * H * HD], cs[T * HD / 2], sn[T * HD / 2];
    uint64_t s = 5;
    for (int half = 0; half < 2; half++) {
        for (int i = 0; i < T * H * HD; i++) x[i] = y[i] = urand(&s);
        struct model_config c = {.head_dim = HD, .rope_theta = 10000.0f};
        cpu_rope_table(pos, T, &c, cs, sn);
        cpu_rope_apply(y, T, H * HD, H, HD, HD, half, cs, sn);
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++) {
                float *v = x + (t * H + h) * HD;
                double n0 = 0, n1 = 0;
                for (int d = 0; d < HD; d++) n0 += (double)v[d] * v[d];
                for (int p = 0; p < HD / 2; p++) {
                    int a, b;
                    xsa_rope_pair(p, HD, half, &a, &b);
                    CHECK(half ? (a == p && b == p + HD / 2) : (a == 2 * p && b == 2 * p + 1));
                    float ang = xsa_rope_angle(pos[t], p, HD, 10000.0f);
                    double ref = pos[t] * pow(10000.0, -2.0 * p / HD);
                    CHECK_NEAR(ang, ref, 1e-6 * (1 + ref));
                    xsa_rope_rotate(&v[a], &v[b], cosf(ang), sinf(ang));
                }
                for (int d = 0; d < HD; d++) n1 += (double)v[d] * v[d];
                CHECK_NEAR(n1, n0, 1e-5 * n0);  // a rotation keeps the norm
            }
        for (int i = 0; i < T * H * HD; i++) CHECK(x[i] == y[i]);
    }
}

// Partial rotary (the first rd of hd dims) with yarn's scaled cos and sin: the rope kernel's
// steps (pairs over rd, the host inverse-frequency table, cos and sin times the factor) give
// the CPU backend's bits, and the dims past rd pass through.
TEST(rope_partial_and_scaled_match_cpu) {
    enum { T = 4, H = 2, HD = 16, RD = 4 };
    int32_t pos[T] = {0, 3, 50, 999};
    float x[T * H * HD], y[T * H * HD], cs[T * RD / 2], sn[T * RD / 2];
    uint64_t s = 11;
    struct model_config c = {.head_dim = HD, .rope_dims = RD, .rope_theta = 10000.0f, .rope_scaling = ROPE_SCALE_YARN,
                             .rope_factor = 4, .rope_orig_ctx = 16, .rope_beta_fast = 8, .rope_beta_slow = 1,
                             .rope_truncate = 1, .rope_attn_factor = 1.1386294f};
    for (int i = 0; i < T * H * HD; i++) x[i] = y[i] = urand(&s);
    cpu_rope_table(pos, T, &c, cs, sn);
    cpu_rope_apply(y, T, H * HD, H, HD, RD, 1, cs, sn);
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {
            float *v = x + (t * H + h) * HD;
            for (int p = 0; p < RD / 2; p++) {
                int a, b;
                xsa_rope_pair(p, RD, 1, &a, &b);
                float ang = xsa_rope_angle_inv(pos[t], xsa_rope_inv_freq_cfg(&c, p)), f = xsa_rope_cos_scale(&c);
                xsa_rope_rotate(&v[a], &v[b], cosf(ang) * f, sinf(ang) * f);
            }
        }
    for (int i = 0; i < T * H * HD; i++) CHECK(x[i] == y[i]);
    uint64_t s2 = 11;
    for (int i = 0; i < T * H * HD; i++) {
        float orig = urand(&s2);
        if (i % HD >= RD) CHECK(y[i] == orig);  // not rotated
    }
}

TEST(online_softmax_merge) {
    uint64_t s = 9;
    for (int rep = 0; rep < 200; rep++) {
        int n = 1 + rep % 97;
        float sc[97];
        double mx = -INFINITY, sum = 0;
        for (int i = 0; i < n; i++) {
            sc[i] = 20.0f * urand(&s);
            if (sc[i] > mx) mx = sc[i];
        }
        for (int i = 0; i < n; i++) sum += exp(sc[i] - mx);
        // Tile by tile, as the kernel folds tiles, and as merged partial states.
        float m = -INFINITY, l = 0, m2 = -INFINITY, l2 = 0;
        for (int j0 = 0; j0 < n; j0 += 7) {
            float tmax = -INFINITY, pm = -INFINITY, pl = 0;
            for (int j = j0; j < n && j < j0 + 7; j++) tmax = sc[j] > tmax ? sc[j] : tmax;
            float mn, f = xsa_online_rescale(m, tmax, &mn), ps = 0;
            for (int j = j0; j < n && j < j0 + 7; j++) ps += xsa_online_weight(sc[j], mn);
            l = l * f + ps;
            m = mn;
            for (int j = j0; j < n && j < j0 + 7; j++) pl += xsa_online_weight(sc[j], tmax);
            pm = tmax;
            xsa_online_merge(&m2, &l2, pm, pl);
        }
        CHECK_NEAR(m, mx, 0);
        CHECK_NEAR(m2, mx, 0);
        CHECK_NEAR(l, sum, 1e-5 * sum);
        CHECK_NEAR(l2, sum, 1e-5 * sum);
    }
    float m = -INFINITY, l = 0;
    xsa_online_merge(&m, &l, -INFINITY, 0);  // empty with empty stays empty
    CHECK(m == -INFINITY && l == 0);
}

// Spans of a row with a prefix of np tokens and branches of the given lengths, packed at 0.
static int tree_spans(int np, const int *bl, int nb, int32_t *l0, int32_t *h0, int32_t *l1, int32_t *h1) {
    int t = 0;
    for (; t < np; t++) l0[t] = 0, h0[t] = t + 1, l1[t] = h1[t] = 0;
    for (int b = 0; b < nb; b++) {
        int first = t;
        for (int k = 0; k < bl[b]; k++, t++) l0[t] = 0, h0[t] = np, l1[t] = first, h1[t] = t + 1;
    }
    return t;
}

TEST(attention_tiles_and_xsa_match_cpu) {
    enum { TMAX = 160, H = 4, HKV = 2, HD = 24 };
    static float q[TMAX * H * HD], k[TMAX * HKV * HD], v[TMAX * HKV * HD], got[H * HD], want[TMAX * H * HD];
    int32_t l0[TMAX], h0[TMAX], l1[TMAX], h1[TMAX];
    int bl[3] = {40, 1, 33};  // branches longer than a tile, and a single token
    int T = tree_spans(70, bl, 3, l0, h0, l1, h1);
    uint64_t s = 13;
    for (int i = 0; i < T * H * HD; i++) q[i] = 2.0f * urand(&s);
    for (int i = 0; i < T * HKV * HD; i++) k[i] = 2.0f * urand(&s), v[i] = urand(&s);
    for (int i = 0; i < HD; i++) v[(T - 1) * HKV * HD + i] = 0;  // a zero own value vector: XSA is a no-op
    struct cpu_pool *pool = cpu_pool_create(1);
    long stride = CPU_ATTN_SCRATCH(H / HKV, TMAX);
    float *scratch = malloc(sizeof(float) * (size_t)stride);
    float *kt = malloc(sizeof(float) * HKV * HD * TMAX), *vt = malloc(sizeof(float) * HKV * HD * TMAX);
    CHECK(pool && scratch && kt && vt);
    static float probe[TMAX * H * BACKEND_PROBE_STATS];
    int32_t prow[TMAX];
    for (int t = 0; t < TMAX; t++) prow[t] = t;
    for (int xsa = 0; xsa < 2; xsa++) {
        struct cpu_attention_args a = {
            .q = q, .k = k, .v = v, .out = want, .span0_lo = l0, .span0_hi = h0, .span1_lo = l1, .span1_hi = h1,
            .T = T, .H = H, .Hkv = HKV, .hd = HD, .xsa = xsa, .kind = (enum cpu_attn_kind)cpu_attention_pick(NULL),
            .kt = kt, .vt = vt, .ldt = TMAX, .scratch = scratch, .scratch_stride = stride,
            .probe = probe, .probe_stride = H * BACKEND_PROBE_STATS, .probe_row = prow,  // (the CPU's statistics)
        };
        memset(probe, 0, sizeof probe);
        cpu_attention(pool, &a);
        double worst = 0, worst_stat = 0;
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++) {
                int kvh = h / (H / HKV), lo[2] = {l0[t], l1[t]}, hi[2] = {h0[t], h1[t]};
                const float *vo = v + (long)t * HKV * HD + kvh * HD, *own = xsa ? vo : NULL;
                float stats[BACKEND_PROBE_STATS];
                xsa_attend_serial_stats(q + (t * H + h) * HD, k + kvh * HD, v + kvh * HD, HKV * HD, HD, lo, hi, vo, xsa,
                                        got + h * HD, stats);
                for (int j = 0; j < BACKEND_PROBE_STATS; j++) {  // the kernel's statistics: the CPU backend's
                    double e = fabs(stats[j] - probe[(t * H + h) * BACKEND_PROBE_STATS + j]);
                    worst_stat = e > worst_stat ? e : worst_stat;
                }
                double zv = 0, vv = 0;
                for (int d = 0; d < HD; d++) {
                    double dd = fabs(got[h * HD + d] - want[(t * H + h) * HD + d]);
                    worst = dd > worst ? dd : worst;
                    if (own) zv += (double)got[h * HD + d] * own[d], vv += (double)own[d] * own[d];
                }
                if (own) CHECK_NEAR(zv, 0, 1e-5 * (1 + vv));  // XSA: orthogonal to the own value
            }
        CHECK_MSG(worst <= 2e-6, "xsa=%d: worst |tiled - cpu| %.3g", xsa, worst);
        CHECK_MSG(worst_stat <= 2e-6, "xsa=%d: worst probe statistic |tiled - cpu| %.3g", xsa, worst_stat);
        if (xsa) CHECK_NEAR(probe[(T - 1) * H * BACKEND_PROBE_STATS + BACKEND_PROBE_COS_Y], 0, 0);  // (a zero own v: cos 0)
    }
    cpu_pool_destroy(pool);
    free(scratch);
    free(kt);
    free(vt);
}

// The logits kernels' schedule on the host: chunks of nv ids; per chunk LANES "threads" push
// strided ids, then a tree merge; chunk states merged in increasing id order.
static struct xsa_lse lse_like_kernel(const float *x, int V, int nv) {
    enum { LANES = 8 };
    struct xsa_lse row = xsa_lse_empty();
    for (int v0 = 0; v0 < V; v0 += nv) {
        int n = V - v0 < nv ? V - v0 : nv;
        struct xsa_lse sh[LANES];
        for (int t = 0; t < LANES; t++) {
            sh[t] = xsa_lse_empty();
            for (int j = t; j < n; j += LANES) xsa_lse_push(&sh[t], x[v0 + j], v0 + j);
        }
        for (int k = LANES / 2; k > 0; k >>= 1)
            for (int t = 0; t < k; t++) xsa_lse_merge(&sh[t], sh[t + k]);
        xsa_lse_merge(&row, sh[0]);
    }
    return row;
}

TEST(logsumexp_chunks_and_argmax_ties) {
    enum { V = 1000 };
    float x[V];
    uint64_t s = 17;
    for (int rep = 0; rep < 30; rep++) {
        for (int i = 0; i < V; i++) x[i] = 10.0f * urand(&s);
        int a = (int)((urand(&s) + 1) * 400), b = a + 1 + rep * 17 % (V - 1 - a);  // tie a < b < V
        x[a] = x[b] = 12.0f;
        if (rep % 3 == 0) x[V - 1] = 12.0f;
        double lse = 0;
        for (int i = 0; i < V; i++) lse += exp((double)x[i] - 12.0);
        lse = 12.0 + log(lse);
        int chunks[4] = {V, 64, 333, 7};
        for (int c = 0; c < 4; c++) {
            struct xsa_lse st = lse_like_kernel(x, V, chunks[c]);
            CHECK_EQ_INT(st.argmax, a);
            CHECK(st.max == 12.0f);
            for (int tg = 0; tg < V; tg += 97) CHECK_NEAR(xsa_lse_logprob(x[tg], st), x[tg] - lse, 2e-5);
        }
    }
    // All ties: the lowest id wins however the merge tree pairs states.
    for (int i = 0; i < V; i++) x[i] = -3.0f;
    CHECK_EQ_INT(lse_like_kernel(x, V, 64).argmax, 0);
    CHECK_NEAR(xsa_lse_logprob(-3.0f, lse_like_kernel(x, V, 100)), -log((double)V), 1e-5);
    struct xsa_lse e = xsa_lse_empty(), one = xsa_lse_empty();
    xsa_lse_push(&one, 5.0f, 42);
    xsa_lse_merge(&e, one);  // merging into an empty state copies
    CHECK(e.max == 5.0f && e.argmax == 42 && e.sum == 1.0f);
    xsa_lse_merge(&e, xsa_lse_empty());  // merging an empty state changes nothing
    CHECK(e.max == 5.0f && e.argmax == 42 && e.sum == 1.0f);
}

TEST(xsa_coefficient) {
    CHECK(xsa_xsa_coef(3.0f, 0.0f) == 0.0f);  // v == 0: y unchanged, no division by zero
    CHECK_NEAR(xsa_xsa_coef(3.0f, 2.0f), 1.5, 0);
}


// cuBLAS semantics, literally: C (m, n; ldc) = op(A) (m, k) op(B) (k, n) + beta C, all column-major.
static void gemm_colmajor_ref(struct xsa_gemm_cm p, const float *A, const float *B, float beta, float *C) {
    for (int j = 0; j < p.n; j++)
        for (int i = 0; i < p.m; i++) {
            double acc = 0;
            for (int l = 0; l < p.k; l++) {
                double a = p.transa ? A[l + (long)i * p.lda] : A[i + (long)l * p.lda];
                double b = p.transb ? B[j + (long)l * p.ldb] : B[l + (long)j * p.ldb];
                acc += a * b;
            }
            C[i + (long)j * p.ldc] = (float)(acc + beta * C[i + (long)j * p.ldc]);
        }
}

TEST(gemm_params_column_major) {
    // Shapes of the forward's calls (odd sizes, M = 1, ldy wider than N as for a logits chunk
    // read out of a wider buffer) and beta 0 / 1 (the residual add).
    int shapes[][4] = {{5, 7, 3, 3}, {1, 32, 48, 48}, {13, 24, 40, 40}, {6, 9, 5, 11}, {64, 3, 1, 1}};
    uint64_t s = 21;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int M = shapes[c][0], K = shapes[c][1], N = shapes[c][2], ldy = shapes[c][3];
        float *x = malloc(sizeof(float) * M * K), *w = malloc(sizeof(float) * N * K);
        float *y = malloc(sizeof(float) * M * ldy), *y0 = malloc(sizeof(float) * M * ldy);
        CHECK(x && w && y && y0);
        for (int i = 0; i < M * K; i++) x[i] = urand(&s);      // (M, K) row-major activations
        for (int i = 0; i < N * K; i++) w[i] = urand(&s);      // (N, K) row-major (OUT, IN) weight
        for (int i = 0; i < M * ldy; i++) y0[i] = urand(&s);   // (M, ldy) residual
        struct xsa_gemm_cm p = xsa_gemm_params(M, K, N, ldy);
        CHECK(xsa_gemm_params_valid(p));
        for (int beta = 0; beta < 2; beta++) {
            memcpy(y, y0, sizeof(float) * M * ldy);
            gemm_colmajor_ref(p, w, x, (float)beta, y);  // cu_gemm: A = weight, B = activations
            for (int r = 0; r < M; r++)
                for (int o = 0; o < ldy; o++) {
                    double want = y0[r * ldy + o];
                    if (o < N) {
                        double d = 0;
                        for (int i = 0; i < K; i++) d += (double)x[r * K + i] * w[o * K + i];
                        want = d + beta * want;
                    }
                    // Columns past N (another chunk's part of the row) stay untouched.
                    CHECK_NEAR(y[r * ldy + o], want, 1e-5 * (1 + fabs(want)));
                }
        }
        free(x), free(w), free(y), free(y0);
    }
    // cuBLAS's own checks reject a row stride smaller than the row (the class of bug where lda
    // and ldc are swapped or taken from the wrong dimension).
    struct xsa_gemm_cm p = xsa_gemm_params(4, 8, 16, 16);
    CHECK(xsa_gemm_params_valid(p));
    p.ldc = 15;
    CHECK(!xsa_gemm_params_valid(p));
    p = xsa_gemm_params(4, 8, 16, 16);
    p.lda = 4;
    CHECK(!xsa_gemm_params_valid(p));
}

TEST(rope_inverse_frequencies_match_cpu) {
    // Llama-3's theta and head_dim 64, positions to 8191: the host table times the position is
    // the CPU backend's angle exactly (the GPU's rope kernel reads this table).
    enum { T = 6, HD = 64, H2 = HD / 2 };
    int32_t pos[T] = {0, 1, 2, 255, 4095, 8191};
    float cs[T * H2], sn[T * H2];
    for (int th = 0; th < 2; th++) {
        float theta = th ? 500000.0f : 10000.0f;
        struct model_config c = {.head_dim = HD, .rope_theta = theta};
        cpu_rope_table(pos, T, &c, cs, sn);
        for (int t = 0; t < T; t++)
            for (int i = 0; i < H2; i++) {
                float a = xsa_rope_angle_inv(pos[t], xsa_rope_inv_freq(i, HD, theta));
                CHECK(a == xsa_rope_angle(pos[t], i, HD, theta));
                CHECK(cosf(a) == cs[t * H2 + i] && sinf(a) == sn[t * H2 + i]);
            }
    }
}

// The sliding window both backends apply to a token's spans: the last w keys stay, span 0
// shrinks first, an emptied span 0 hands over to span 1; the serial attention over the cut
// spans of a branch token equals the plain row's over its last w keys (to rounding).
TEST(sliding_window_spans) {
    static const struct { int lo0, hi0, lo1, hi1, w, want[4]; } cases[] = {
        {0, 10, 10, 10, 0, {0, 10, 10, 10}},   // no window
        {0, 10, 10, 10, 10, {0, 10, 10, 10}},  // exactly the window
        {0, 10, 10, 10, 4, {6, 10, 10, 10}},   // one span, cut
        {2, 8, 20, 25, 7, {6, 8, 20, 25}},     // span 0 shrinks
        {2, 8, 20, 25, 5, {20, 25, 25, 25}},   // span 0 gone exactly
        {2, 8, 20, 25, 3, {22, 25, 25, 25}},   // into span 1
        {3, 3, 20, 25, 2, {23, 25, 25, 25}},   // empty span 0
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int lo[2] = {cases[i].lo0, cases[i].lo1}, hi[2] = {cases[i].hi0, cases[i].hi1};
        xsa_window_spans(lo, hi, cases[i].w);
        int n = hi[0] - lo[0] + hi[1] - lo[1], want_n = cases[i].want[1] - cases[i].want[0] + cases[i].want[3] - cases[i].want[2];
        CHECK_MSG(lo[0] == cases[i].want[0] && hi[0] == cases[i].want[1] && n == want_n && (hi[1] == lo[1] || lo[1] == cases[i].want[2]),
                  "case %zu: [%d,%d)+[%d,%d)", i, lo[0], hi[0], lo[1], hi[1]);
    }
    enum { HD = 8, T = 40 };
    float q[HD], k[T * HD], v[T * HD], y1[HD], y2[HD];
    uint64_t s = 5;
    for (int i = 0; i < HD; i++) q[i] = urand(&s);
    for (int i = 0; i < T * HD; i++) k[i] = urand(&s), v[i] = urand(&s);
    for (int i = 0; i < 9 * HD; i++) k[(30 + i / HD) * HD + i % HD] = k[(2 + i / HD) * HD + i % HD], v[(30 + i / HD) * HD + i % HD] = v[(2 + i / HD) * HD + i % HD];
    // Keys 2..6 (prefix) + 7..10 (branch) are the plain row 30..38 copied; window 6.
    for (int i = 0; i < 4 * HD; i++) k[(20 + i / HD) * HD + i % HD] = k[(7 + i / HD) * HD + i % HD], v[(20 + i / HD) * HD + i % HD] = v[(7 + i / HD) * HD + i % HD];
    int lo[2] = {2, 20}, hi[2] = {7, 24}, plo[2] = {30 + 3, 39}, phi[2] = {39, 39};
    xsa_window_spans(lo, hi, 6);
    xsa_attend_serial(q, k, v, HD, HD, lo, hi, NULL, y1);
    xsa_attend_serial(q, k, v, HD, HD, plo, phi, NULL, y2);
    for (int i = 0; i < HD; i++) CHECK_NEAR(y1[i], y2[i], 1e-6);  // tiles restart per span: rounding only
}

// Checks every sub-batch of a packed batch: whole rows, keys inside it, at most cap tokens.
static void check_cuts(const struct score_batch *b, int cap, int expect_ok) {
    int T = b->n_tokens;
    int32_t *cut = malloc(sizeof(int32_t) * (T + 1));
    CHECK(cut != NULL);
    xsa_cut_min_fill(b->span0_lo, b->span0_hi, b->span1_lo, T, cut);
    int t0 = 0, ok = 1, parts = 0;
    while (t0 < T) {
        int t1 = xsa_cut_end(cut, t0, T, cap);
        if (t1 == t0) {
            ok = 0;
            break;
        }
        CHECK(t1 - t0 <= cap);
        parts++;
        for (int t = t0; t < t1; t++) {
            // The rebased spans of cuda_backend.c's score_part lie inside [0, t1 - t0).
            int lo[2] = {b->span0_lo[t], b->span1_lo[t]}, hi[2] = {b->span0_hi[t], b->span1_hi[t]};
            for (int k = 0; k < 2; k++)
                if (lo[k] < hi[k]) CHECK_MSG(lo[k] >= t0 && hi[k] <= t1, "token %d span [%d,%d) outside [%d,%d)", t, lo[k], hi[k], t0, t1);
        }
        t0 = t1;
    }
    CHECK_EQ_INT(ok, expect_ok);
    if (expect_ok) CHECK(parts >= (T + cap - 1) / cap);
    free(cut);
}

TEST(sub_batch_cuts_keep_rows_whole) {
    struct batch_builder bb;
    batch_init(&bb);
    xsa_error err = {0};
    int32_t toks[64];
    for (int i = 0; i < 64; i++) toks[i] = i;
    // Rows: a tree (prefix 20, branches 5, 1, 9 = 35 tokens), a plain row of 12, a tree
    // (prefix 3, one branch of 30 = 33), a plain row of 1, a plain row of 40.
    const int32_t *br[3] = {toks + 20, toks + 30, toks + 40};
    int bl[3] = {5, 1, 9}, pf, bf[3], first;
    CHECK(batch_add_tree(&bb, toks, 20, br, bl, 3, &pf, bf, &err) == 0);
    CHECK(batch_add_row(&bb, toks, 12, &first, &err) == 0);
    int bl2[1] = {30};
    CHECK(batch_add_tree(&bb, toks, 3, br, bl2, 1, &pf, bf, &err) == 0);
    CHECK(batch_add_row(&bb, toks, 1, &first, &err) == 0);
    CHECK(batch_add_row(&bb, toks, 40, &first, &err) == 0);
    struct score_batch b = batch_view(&bb);
    CHECK_EQ_INT(b.n_tokens, 121);
    for (int cap = 40; cap <= 130; cap++) check_cuts(&b, cap, 1);  // every row fits
    check_cuts(&b, 39, 0);  // the last row (40 tokens) cannot be cut
    check_cuts(&b, 34, 0);  // nor the first tree (35)
    // One part exactly when everything fits; cuts fall on row boundaries only.
    int32_t cut[122];
    xsa_cut_min_fill(b.span0_lo, b.span0_hi, b.span1_lo, b.n_tokens, cut);
    CHECK_EQ_INT(xsa_cut_end(cut, 0, b.n_tokens, 121), 121);
    CHECK_EQ_INT(xsa_cut_end(cut, 0, b.n_tokens, 50), 47);   // after the tree and the row of 12
    CHECK_EQ_INT(xsa_cut_end(cut, 47, b.n_tokens, 50), 81);  // the second tree and the row of 1
    batch_free(&bb);
}

RUN_TESTS(T(bf16_rounding), T(activations_match_cpu), T(norm_rows_match_cpu), T(rope_both_conventions_match_cpu), T(rope_partial_and_scaled_match_cpu),
          T(online_softmax_merge), T(attention_tiles_and_xsa_match_cpu), T(logsumexp_chunks_and_argmax_ties),
          T(xsa_coefficient), T(gemm_params_column_major), T(rope_inverse_frequencies_match_cpu),
          T(sub_batch_cuts_keep_rows_whole), T(sliding_window_spans))
