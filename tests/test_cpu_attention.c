// test_cpu_attention.c: the CPU attention kernels on random q/k/v against a float64
// reference: AVX2 and scalar agree to float rounding, a token's output is bit-identical
// however its keys are split into prefix + branch spans and whatever the keys outside its
// spans hold (NaN there never leaks in), the output does not change with thread count, and the
// vector exp is accurate to 1.5 ulp with the documented edge cases. Tokens scored as a group
// equal each token scored alone, bit for bit.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_gemm.h"
#include "tests/check.h"

static float urand(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*s >> 40) / 16777216.0 * 2.0 - 1.0);
}

// One attention problem: T tokens of H heads (Hkv kv heads) of hd dims, with caller-set spans.
struct prob {
    int T, H, Hkv, hd;
    float *q, *k, *v, *kt, *vt, *out, *scratch;
    int32_t *sp;  // (4, T): span0_lo, span0_hi, span1_lo, span1_hi
    long stride;
    int window;   // sliding window (0: none)
};

static void prob_init(struct prob *p, int T, int H, int Hkv, int hd, uint64_t seed) {
    p->T = T, p->H = H, p->Hkv = Hkv, p->hd = hd, p->window = 0;
    long Q = (long)T * H * hd, KV = (long)T * Hkv * hd;
    p->q = malloc(sizeof(float) * Q), p->out = malloc(sizeof(float) * Q);
    p->k = malloc(sizeof(float) * KV), p->v = malloc(sizeof(float) * KV);
    p->kt = malloc(sizeof(float) * KV), p->vt = malloc(sizeof(float) * KV);
    p->stride = CPU_ATTN_SCRATCH(H / Hkv, T);
    p->scratch = malloc(sizeof(float) * 3 * p->stride);
    p->sp = malloc(sizeof(int32_t) * 4 * T);
    for (long i = 0; i < Q; i++) p->q[i] = 2.5f * urand(&seed);
    for (long i = 0; i < KV; i++) p->k[i] = 2.5f * urand(&seed), p->v[i] = urand(&seed);
    for (int t = 0; t < T; t++) p->sp[t] = 0, p->sp[T + t] = t + 1, p->sp[2 * T + t] = p->sp[3 * T + t] = t + 1;
}

static void prob_free(struct prob *p) {
    free(p->q), free(p->k), free(p->v), free(p->kt), free(p->vt), free(p->out), free(p->scratch), free(p->sp);
}

static void prob_run(struct prob *p, enum cpu_attn_kind kind, int threads, int xsa) {
    struct cpu_pool *pool = cpu_pool_create(threads);
    struct cpu_attention_args a = {p->q, p->k, p->v, p->out, p->sp, p->sp + p->T, p->sp + 2 * p->T,
                                   p->sp + 3 * p->T, p->T, p->H, p->Hkv, p->hd, xsa, kind, p->kt, p->vt,
                                   p->T, NULL, 0, p->scratch, p->stride, NULL, p->window, NULL, 0, NULL, 0, 0};
    cpu_attention(pool, &a);
    cpu_pool_destroy(pool);
}

// float64 softmax(q.k / sqrt(hd)) @ v of token t, head h, over its spans.
static void ref_head(const struct prob *p, int t, int h, double *y) {
    int hd = p->hd, kvh = h / (p->H / p->Hkv), T = p->T;
    const float *q = p->q + ((long)t * p->H + h) * hd;
    double mx = -INFINITY, sum = 0, sc[512];
    int n = 0, idx[512];
    for (int s = 0; s < 2; s++)
        for (int j = p->sp[2 * s * T + t]; j < p->sp[(2 * s + 1) * T + t]; j++) idx[n++] = j;
    for (int i = 0; i < n; i++) {
        const float *k = p->k + ((long)idx[i] * p->Hkv + kvh) * hd;
        double d = 0;
        for (int e = 0; e < hd; e++) d += (double)q[e] * k[e];
        sc[i] = d / sqrt((double)hd);
        if (sc[i] > mx) mx = sc[i];
    }
    for (int e = 0; e < hd; e++) y[e] = 0;
    for (int i = 0; i < n; i++) {
        double w = exp(sc[i] - mx);
        sum += w;
        const float *v = p->v + ((long)idx[i] * p->Hkv + kvh) * hd;
        for (int e = 0; e < hd; e++) y[e] += w * v[e];
    }
    for (int e = 0; e < hd; e++) y[e] /= sum;
}

static int kinds(enum cpu_attn_kind *k) {
    int n = 0;
    k[n++] = CPU_ATTN_SCALAR;
    if (cpu_gemm_have_avx2()) k[n++] = CPU_ATTN_AVX2;
    else fprintf(stderr, "  no AVX2 on this CPU: scalar kernel only\n");
    return n;
}

// Shapes: stories260K (GQA, hd 8), odd hd (scalar tails of 8-dim groups), hd 64 MHA.
static const int shapes[][3] = {{8, 4, 8}, {6, 2, 12}, {4, 4, 64}, {3, 1, 5}};

// Causal rows of every length from 1 to 70: both kernels within 2e-6 of float64, and of
// each other within 1e-6.
TEST(kernels_match_float64) {
    enum cpu_attn_kind kk[2];
    int nk = kinds(kk);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        struct prob p;
        int T = 70, H = shapes[si][0], Hkv = shapes[si][1], hd = shapes[si][2];
        prob_init(&p, T, H, Hkv, hd, 7 + si);
        float *got[2] = {malloc(sizeof(float) * T * H * hd), malloc(sizeof(float) * T * H * hd)};
        for (int ki = 0; ki < nk; ki++) {
            prob_run(&p, kk[ki], 2, 0);
            memcpy(got[ki], p.out, sizeof(float) * T * H * hd);
        }
        double worst = 0, worst_pair = 0, y[64];
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++) {
                ref_head(&p, t, h, y);
                for (int e = 0; e < hd; e++) {
                    long i = ((long)t * H + h) * hd + e;
                    for (int ki = 0; ki < nk; ki++) worst = fmax(worst, fabs(got[ki][i] - y[e]));
                    if (nk == 2) worst_pair = fmax(worst_pair, fabs(got[0][i] - got[1][i]));
                }
            }
        CHECK_MSG(worst < 2e-6, "shape %zu: max |kernel - float64| = %g", si, worst);
        CHECK_MSG(worst_pair < 1e-6, "shape %zu: max |scalar - avx2| = %g", si, worst_pair);
        free(got[0]), free(got[1]);
        prob_free(&p);
    }
}

// A branch token: span0 = prefix [a, a+n0), span1 = its branch [b, b+n1) after unrelated keys
// that hold NaN. Its output equals, bit for bit, the same keys as one contiguous span; NaN in
// keys or values outside its spans never reaches it; 1 or 3 threads give the same bits.
TEST(spans_split_anywhere_bit_identical) {
    enum cpu_attn_kind kk[2];
    int nk = kinds(kk);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int H = shapes[si][0], Hkv = shapes[si][1], hd = shapes[si][2], KV = Hkv * hd;
        for (int ki = 0; ki < nk; ki++) {
            int bad = 0, leaked = 0, threads_differ = 0;
            for (int n0 = 0; n0 <= 19 && !bad; n0++)
                for (int n1 = n0 ? 0 : 1; n1 <= 19 && !bad; n1++) {
                    // Layout: [3 NaN][prefix n0][5 NaN][branch n1][2 NaN] then the plain row
                    // [prefix n0][branch n1]; the last token of each is compared.
                    int a = 3, b = a + n0 + 5, e = b + n1 + 2, T = e + n0 + n1;
                    struct prob p;
                    prob_init(&p, T, H, Hkv, hd, 1000 + 37 * n0 + n1);
                    for (int i = 0; i < n0 + n1; i++) {  // copy the plain row's keys into the spans
                        int src = e + i, dst = i < n0 ? a + i : b + i - n0;
                        memcpy(p.k + (long)dst * KV, p.k + (long)src * KV, sizeof(float) * KV);
                        memcpy(p.v + (long)dst * KV, p.v + (long)src * KV, sizeof(float) * KV);
                    }
                    int nan_rows[] = {0, 1, 2, a + n0, a + n0 + 1, a + n0 + 2, a + n0 + 3, a + n0 + 4, b + n1, b + n1 + 1};
                    for (size_t r = 0; r < sizeof nan_rows / sizeof nan_rows[0]; r++)
                        for (int c = 0; c < KV; c++) p.k[(long)nan_rows[r] * KV + c] = p.v[(long)nan_rows[r] * KV + c] = NAN;
                    int tb = n1 ? b + n1 - 1 : a + n0 - 1, tp = T - 1;  // the branch token; the plain one
                    memcpy(p.q + (long)tb * H * hd, p.q + (long)tp * H * hd, sizeof(float) * H * hd);
                    for (int t = 0; t < T; t++)  // every token sees just itself, except the two
                        p.sp[t] = t, p.sp[T + t] = t + 1, p.sp[2 * T + t] = p.sp[3 * T + t] = t + 1;
                    p.sp[tb] = a, p.sp[T + tb] = a + n0, p.sp[2 * T + tb] = b, p.sp[3 * T + tb] = b + n1;
                    p.sp[tp] = e, p.sp[T + tp] = T, p.sp[2 * T + tp] = p.sp[3 * T + tp] = T;
                    prob_run(&p, kk[ki], 1, 0);
                    float one[64 * 8], three[64 * 8];
                    memcpy(one, p.out + (long)tb * H * hd, sizeof(float) * H * hd);
                    bad |= memcmp(one, p.out + (long)tp * H * hd, sizeof(float) * H * hd) != 0;
                    for (int i = 0; i < H * hd; i++) leaked |= !isfinite(one[i]);
                    prob_run(&p, kk[ki], 3, 0);
                    memcpy(three, p.out + (long)tb * H * hd, sizeof(float) * H * hd);
                    threads_differ |= memcmp(one, three, sizeof(float) * H * hd) != 0;
                    if (bad) fprintf(stderr, "  n0 %d n1 %d differs\n", n0, n1);
                    prob_free(&p);
                }
            CHECK_MSG(!bad, "shape %zu kernel %s: split spans are not bit-identical to one span", si,
                      cpu_attention_kind_name(kk[ki]));
            CHECK_MSG(!leaked, "shape %zu kernel %s: NaN outside the spans reached the output", si,
                      cpu_attention_kind_name(kk[ki]));
            CHECK(!threads_differ);
        }
    }
}

// Tokens grouped by cpu_attn_tokens_avx2 (scores of up to 4 tokens computed together) give the
// same bits as each token alone, for prefix tokens and branch tokens whose span boundary falls
// anywhere in a key block; NaN in the keys and values of later tokens, group mates included,
// never reaches a token.
TEST(grouped_tokens_bit_identical_to_single) {
    if (!cpu_gemm_have_avx2()) {
        fprintf(stderr, "  no AVX2 on this CPU: grouped kernel not run\n");
        return;
    }
    static const int gshapes[][3] = {{8, 4, 8}, {6, 2, 12}, {8, 2, 64}, {3, 3, 5}, {8, 1, 16}, {10, 2, 13}};
    int bad = 0, leaked = 0, cases = 0;
    for (size_t si = 0; si < sizeof gshapes / sizeof gshapes[0]; si++) {
        int H = gshapes[si][0], Hkv = gshapes[si][1], hd = gshapes[si][2], G = H / Hkv, KV = Hkv * hd;
        for (int np = 1; np <= 41; np += 4)
            for (int fk = 0; fk < 36; fk++) {
                // Row: prefix [0, np), then one branch of 40 from np; tokens first.. grouped by
                // 1..4, first at the row's start, around the branch point and deep in the branch.
                int T = np + 40, ld = T + 3;
                int first = fk < 12 ? fk : fk < 20 ? np - 4 + (fk - 12) : fk < 28 ? np + 16 + (fk - 20) : np + 29 + (fk - 28);
                if (first < 0) continue;
                struct prob p;
                prob_init(&p, T, H, Hkv, hd, 500 + si * 97 + np * 13 + first);
                float *kt = malloc(sizeof(float) * KV * ld), *vt = malloc(sizeof(float) * KV * ld);
                float *pbuf = malloc(sizeof(float) * CPU_ATTN_SCRATCH(G, T)), *y1 = malloc(sizeof(float) * 4 * G * hd);
                float *k0 = malloc(sizeof(float) * T * KV), *v0 = malloc(sizeof(float) * T * KV);
                memcpy(k0, p.k, sizeof(float) * T * KV), memcpy(v0, p.v, sizeof(float) * T * KV);
                for (int n_tok = 1; n_tok <= 4; n_tok++) {
                    int t0 = first, t1 = t0 + n_tok;
                    memcpy(p.k, k0, sizeof(float) * T * KV), memcpy(p.v, v0, sizeof(float) * T * KV);
                    if (t1 > T) continue;
                    int branch = t0 >= np;  // prefix tokens see [0, t+1); branch tokens [0, np) + [np, t+1)
                    if (!branch && t1 > np) continue;  // a group never mixes the two
                    for (int t = t1; t < T; t++)  // later tokens: NaN
                        for (int c = 0; c < KV; c++) p.k[(long)t * KV + c] = p.v[(long)t * KV + c] = NAN;
                    for (int c = 0; c < KV; c++)
                        for (int t = 0; t < T; t++) kt[(long)c * ld + t] = p.k[(long)t * KV + c], vt[(long)c * ld + t] = p.v[(long)t * KV + c];
                    for (int kvh = 0; kvh < Hkv; kvh++) {
                        struct cpu_attn_token tk[4];
                        long pst = CPU_ATTN_SCRATCH(G, T) / (4L * G);
                        for (int j = 0; j < n_tok; j++) {
                            int t = t0 + j;
                            tk[j] = (struct cpu_attn_token){
                                .q = p.q + ((long)t * H + kvh * G) * hd, .kt = kt + (long)kvh * hd * ld,
                                .vt = vt + (long)kvh * hd * ld, .ld = ld, .k = p.k + kvh * hd, .v = p.v + kvh * hd,
                                .ks = KV, .G = G, .hd = hd, .scale = 1.0f / sqrtf((float)hd),
                                .p = pbuf + (long)j * G * pst, .pstride = pst, .y = y1 + (long)j * G * hd};
                            tk[j].lo[0] = 0, tk[j].hi[0] = branch ? np : t + 1;
                            tk[j].lo[1] = branch ? np : t + 1, tk[j].hi[1] = t + 1;
                        }
                        // The group's first token with NaN in every later token's keys and
                        // values (its group mates' included): it must never read them.
                        if (n_tok > 1) {
                            float keep_k[64 * 8], keep_v[64 * 8], first[8 * 64], alone[8 * 64];
                            for (int t = t0 + 1; t < t1; t++)
                                for (int c = 0; c < hd; c++) {
                                    long at = (long)(kvh * hd + c) * ld + t;
                                    keep_k[(t - t0 - 1) * hd + c] = kt[at], keep_v[(t - t0 - 1) * hd + c] = vt[at];
                                    kt[at] = vt[at] = NAN;
                                }
                            cpu_attn_tokens_avx2(tk, n_tok);
                            memcpy(first, tk[0].y, sizeof(float) * G * hd);
                            struct cpu_attn_token one = tk[0];
                            one.p = pbuf + 3L * G * pst, one.y = alone;
                            cpu_attn_token_avx2(&one);
                            for (int i = 0; i < G * hd; i++) leaked |= !isfinite(first[i]);
                            bad |= memcmp(first, alone, sizeof(float) * G * hd) != 0;
                            for (int t = t0 + 1; t < t1; t++)
                                for (int c = 0; c < hd; c++) {
                                    long at = (long)(kvh * hd + c) * ld + t;
                                    kt[at] = keep_k[(t - t0 - 1) * hd + c], vt[at] = keep_v[(t - t0 - 1) * hd + c];
                                }
                        }
                        cpu_attn_tokens_avx2(tk, n_tok);
                        for (int j = 0; j < n_tok; j++) {
                            float single[8 * 64];
                            struct cpu_attn_token one = tk[j];
                            one.p = pbuf, one.y = single;
                            for (int i = 0; i < G * hd; i++) leaked |= !isfinite(tk[j].y[i]);
                            float grouped[8 * 64];
                            memcpy(grouped, tk[j].y, sizeof(float) * G * hd);
                            cpu_attn_token_avx2(&one);
                            bad |= memcmp(grouped, single, sizeof(float) * G * hd) != 0;
                            cases++;
                        }
                    }
                }
                free(kt), free(vt), free(pbuf), free(y1), free(k0), free(v0);
                prob_free(&p);
            }
    }
    CHECK_MSG(!bad, "a grouped token differs from the same token alone");
    CHECK_MSG(!leaked, "NaN in later tokens reached a grouped token");
    CHECK(cases > 1000);
}

// Sliding window W: every token of a plain causal row, and a branch token (prefix span +
// branch span, the window cutting into either), gives the same bits as the same token with
// explicit spans holding only its last W keys, for each kernel and thread count; the windowed
// row is within 2e-6 of float64 over those keys. Tokens group (AVX2) only as their cut spans allow.
TEST(sliding_window_equals_cut_spans) {
    enum cpu_attn_kind kk[2];
    int nk = kinds(kk), bad = 0, far = 0, cases = 0;
    static const int windows[] = {1, 2, 5, 8, 9, 16};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int H = shapes[si][0], Hkv = shapes[si][1], hd = shapes[si][2], KV = Hkv * hd, Q = H * hd;
        for (int ki = 0; ki < nk; ki++)
            for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; wi++) {
                int W = windows[wi], T = 45;
                struct prob p;
                prob_init(&p, T, H, Hkv, hd, 300 + 11 * si + wi);
                p.window = W;
                prob_run(&p, kk[ki], 3, 0);
                float *win = malloc(sizeof(float) * T * Q);
                memcpy(win, p.out, sizeof(float) * T * Q);
                p.window = 0;
                for (int t = 0; t < T; t++) p.sp[t] = t + 1 > W ? t + 1 - W : 0;
                prob_run(&p, kk[ki], 1, 0);
                bad |= memcmp(win, p.out, sizeof(float) * T * Q) != 0;
                double y[64];
                for (int t = 0; t < T; t++)
                    for (int h = 0; h < H; h++) {
                        ref_head(&p, t, h, y);
                        for (int e = 0; e < hd; e++) far |= fabs(win[((long)t * H + h) * hd + e] - y[e]) > 2e-6;
                    }
                free(win);
                prob_free(&p);
                // Branch token: [a, a+n0) + [b, b+n1) against the plain row [e, e+n0+n1).
                for (int n0 = 0; n0 <= 12; n0++)
                    for (int n1 = n0 ? 0 : 1; n1 <= 12; n1++) {
                        int a = 2, b = a + n0 + 3, e = b + n1 + 1, Tb = e + n0 + n1, n = n0 + n1;
                        prob_init(&p, Tb, H, Hkv, hd, 7000 + 31 * n0 + n1);
                        for (int i = 0; i < n; i++) {
                            int src = e + i, dst = i < n0 ? a + i : b + i - n0;
                            memcpy(p.k + (long)dst * KV, p.k + (long)src * KV, sizeof(float) * KV);
                            memcpy(p.v + (long)dst * KV, p.v + (long)src * KV, sizeof(float) * KV);
                        }
                        int tb = n1 ? b + n1 - 1 : a + n0 - 1, tp = Tb - 1;
                        memcpy(p.q + (long)tb * Q, p.q + (long)tp * Q, sizeof(float) * Q);
                        for (int t = 0; t < Tb; t++) p.sp[t] = t, p.sp[Tb + t] = t + 1, p.sp[2 * Tb + t] = p.sp[3 * Tb + t] = t + 1;
                        p.sp[tb] = a, p.sp[Tb + tb] = a + n0, p.sp[2 * Tb + tb] = b, p.sp[3 * Tb + tb] = b + n1;
                        p.sp[tp] = e + (n > W ? n - W : 0), p.sp[Tb + tp] = Tb, p.sp[2 * Tb + tp] = p.sp[3 * Tb + tp] = Tb;
                        prob_run(&p, kk[ki], 2, 0);  // the plain token, cut by hand
                        float want[64 * 8];
                        memcpy(want, p.out + (long)tp * Q, sizeof(float) * Q);
                        p.window = W;
                        p.sp[tp] = e;  // now the window cuts it
                        prob_run(&p, kk[ki], 2, 0);
                        bad |= memcmp(want, p.out + (long)tb * Q, sizeof(float) * Q) != 0;
                        bad |= memcmp(want, p.out + (long)tp * Q, sizeof(float) * Q) != 0;
                        cases++;
                        prob_free(&p);
                    }
            }
    }
    CHECK_MSG(!bad, "a windowed token differs from the same keys cut by hand");
    CHECK_MSG(!far, "a windowed row is more than 2e-6 from float64");
    CHECK(cases > 100);
}

// XSA: each head's output is orthogonal to the token's own value vector (both kernels).
TEST(xsa_epilogue_orthogonal) {
    enum cpu_attn_kind kk[2];
    int nk = kinds(kk);
    for (int ki = 0; ki < nk; ki++) {
        struct prob p;
        int T = 33, H = 8, Hkv = 4, hd = 8;
        prob_init(&p, T, H, Hkv, hd, 99);
        prob_run(&p, kk[ki], 2, 1);
        double worst = 0;
        for (int t = 1; t < T; t++)
            for (int h = 0; h < H; h++) {
                const float *z = p.out + ((long)t * H + h) * hd, *v = p.v + ((long)t * Hkv + h / 2) * hd;
                double zv = 0, zz = 0, vv = 0;
                for (int e = 0; e < hd; e++) zv += (double)z[e] * v[e], zz += (double)z[e] * z[e], vv += (double)v[e] * v[e];
                worst = fmax(worst, fabs(zv) / sqrt(zz * vv));
            }
        CHECK_MSG(worst < 1e-5, "%s: max |cos(z, v)| = %g", cpu_attention_kind_name(kk[ki]), worst);
        prob_free(&p);
    }
}

static double ulps(float got, double want) {
    double ulp = ldexp(1.0, (int)floor(log2(fabs(want))) - 23);
    return fabs(got - want) / ulp;
}

// exp: <= 1.5 ulp on [-87.3, 88] (normal results), 0 below -87.5, exp(0) == 1, NaN stays NaN.
TEST(exp_accuracy_and_edges) {
    enum { N = 200001 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) x[i] = -87.3f + (float)i * (175.3f / (N - 1));
    x[N - 1] = 88.0f;
    for (int path = 0; path < 2; path++) {
        if (path == 1 && !cpu_gemm_have_avx2()) break;
        void (*fn)(const float *, float *, int) = path ? cpu_attn_exp_avx2 : cpu_attn_exp_scalar;
        fn(x, y, N - 3);  // an odd count: the AVX2 tail path too
        fn(x + N - 3, y + N - 3, 3);
        double worst = 0;
        for (int i = 0; i < N; i++) worst = fmax(worst, ulps(y[i], exp((double)x[i])));
        CHECK_MSG(worst <= 1.5, "path %d: max error %.2f ulp", path, worst);
        float e[7] = {0.0f, -87.6f, -1000.0f, -INFINITY, NAN, -1e-30f, 1.0f}, r[7];
        fn(e, r, 7);
        CHECK(r[0] == 1.0f);
        CHECK(r[1] == 0.0f && r[2] == 0.0f && r[3] == 0.0f);
        CHECK(isnan(r[4]));
        CHECK(r[5] == 1.0f);
        CHECK(fabs(r[6] - 2.718281828) < 1e-6);
    }
    free(x), free(y);
}

TEST(pick_kernel) {
    CHECK_EQ_INT(cpu_attention_pick("scalar"), CPU_ATTN_SCALAR);
    CHECK_EQ_INT(cpu_attention_pick("sse"), -1);
    CHECK_EQ_INT(cpu_attention_pick(NULL), cpu_gemm_have_avx2() ? CPU_ATTN_AVX2 : CPU_ATTN_SCALAR);
    CHECK_EQ_INT(cpu_attention_pick("avx2"), cpu_gemm_have_avx2() ? CPU_ATTN_AVX2 : -1);
}

RUN_TESTS(T(kernels_match_float64), T(spans_split_anywhere_bit_identical),
          T(grouped_tokens_bit_identical_to_single), T(sliding_window_equals_cut_spans), T(xsa_epilogue_orthogonal),
          T(exp_accuracy_and_edges), T(pick_kernel))
