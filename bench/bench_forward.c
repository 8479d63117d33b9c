// bench_forward.c: CPU forward throughput on random llama models (~10M and ~100M parameters),
// sequence lengths 256 and 1024, 1 and 2 threads. Prints tokens/s of the forward (one row of
// T tokens, 8 scored positions) and, side by side on the same GEMM shapes in the same run:
//   plain  one cblas_sgemm per weight with M = T rows, OpenBLAS threaded over n threads
//   tiled  our fixed-shape tiles (cpu_gemm_linear, 64-row tiles over our pool)
//   fwd    GEMM FLOPs of the forward / forward wall time (everything else counted as overhead)
//   avx2   the same tiles on our own AVX2+FMA kernel, avx512 on our AVX-512F kernel (0 when
//          the CPU lacks it); ours are used when OpenBLAS's kernel is not row-position
//          invariant or is a pre-AVX core (see cpu_gemm.h)
// First, single tiles (64 x 256 x K, one thread) on each kernel, GFLOP/s side by side: the
// AVX-512 tile packing its own panels (as without XSA_CPU_PACK) and from weights packed once
// (avx512p, as at load), beside one core's peak FMA rate (independent 16-lane FMA chains).
// Usage: build/bench/bench_forward [min_seconds_per_measurement (default 0.3)]
#include <cblas.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench/bench_util.h"
#include "common/xalloc.h"
#include "kernels/backend.h"
#include "kernels/batch.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_pool.h"
#include "kernels/cpu/cpu_state.h"

#include "tests/random_model.h"

struct shape {
    int K, N;
};

// The seven projections of one llama layer (q, k, v, o, gate, up, down) as (K in, N out).
static int layer_shapes(const struct model_config *c, struct shape *s) {
    int C = c->d_model, Q = c->n_head * c->head_dim, KV = c->n_kv_head * c->head_dim, F = c->d_ff;
    struct shape t[7] = {{C, Q}, {C, KV}, {C, KV}, {Q, C}, {C, F}, {C, F}, {F, C}};
    for (int i = 0; i < 7; i++) s[i] = t[i];
    return 7;
}

static const float *layer_weight(const struct layer_weights *w, int i) {
    const float *p[7] = {w->wq, w->wk, w->wv, w->wo, w->w_gate, w->w_up, w->w_down};
    return p[i];
}

// Runs every layer's projections once on `in` (T, maxK) -> `out` (T, maxN).
static void gemm_pass(const struct model *m, int T, const float *in, float *out, struct cpu_pool *pool,
                      enum cpu_gemm_kind kind) {
    struct shape s[7];
    int ns = layer_shapes(&m->cfg, s);
    for (int l = 0; l < m->cfg.n_layer; l++)
        for (int i = 0; i < ns; i++) {
            const float *w = layer_weight(&m->layers[l], i);
            if (pool)
                cpu_gemm_linear(pool, kind, in, w, NULL, NULL, out, cpu_gemm_pad_rows(T), s[i].K, s[i].N);
            else
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, s[i].N, s[i].K, 1.0f, in,
                            s[i].K, w, s[i].K, 0.0f, out, s[i].N);
        }
}

static double layer_flops(const struct model *m, int T) {
    struct shape s[7];
    int ns = layer_shapes(&m->cfg, s);
    double f = 0;
    for (int i = 0; i < ns; i++) f += 2.0 * T * s[i].K * s[i].N;
    return f * m->cfg.n_layer;
}

// Seconds per call, repeated until min_s have passed (after one warm-up call unless min_s is 0:
// then one timed call).
#define TIME_IT(min_s, secs, ...)                                   \
    do {                                                            \
        if ((min_s) > 0) { __VA_ARGS__; }                           \
        int it_ = 0;                                                \
        double t0_ = timing_now_s(), el_;                                  \
        do {                                                        \
            __VA_ARGS__;                                            \
            it_++;                                                  \
            el_ = timing_now_s() - t0_;                                    \
        } while (el_ < (min_s));                                    \
        secs = el_ / it_;                                           \
    } while (0)

// n rounds of 12 independent 16-lane FMA chains: what one core's FMA units can do at most
// (12 chains cover the latency of two FMA ports). Returns a sum so that nothing is elided.
__attribute__((target("avx512f,fma"), noinline)) static float peak_fma(long n) {
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2), a3 = _mm512_set1_ps(3);
    __m512 a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5), a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7);
    __m512 a8 = _mm512_set1_ps(8), a9 = _mm512_set1_ps(9), a10 = _mm512_set1_ps(10), a11 = _mm512_set1_ps(11);
    for (long r = 0; r < n; r++) {
#define F(x) x = _mm512_fmadd_ps(x, m, c)
        F(a0); F(a1); F(a2); F(a3); F(a4); F(a5); F(a6); F(a7); F(a8); F(a9); F(a10); F(a11);
#undef F
        // Keeps every chain's FMA in the loop: the compiler may not fold rounds together.
        __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7),
                         "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

// One 64 x 256 x K tile on one thread, for K = 512 and 2048, on each kernel this CPU runs.
static void bench_tiles(double min_s) {
    enum cpu_gemm_kind kinds[4] = {CPU_GEMM_BLAS, CPU_GEMM_SCALAR, CPU_GEMM_AVX2, CPU_GEMM_AVX512};
    int have[5] = {1, 1, cpu_gemm_have_avx2(), cpu_gemm_have_avx512(), cpu_gemm_have_avx512()};
    printf("%-6s %9s %9s %9s %9s %9s   (GFLOP/s, one 64x%d tile, 1 thread)\n", "K", "blas", "scalar", "avx2",
           "avx512", "avx512p", CPU_GEMM_COLS);
    openblas_set_num_threads(1);
    for (int K = 512; K <= 2048; K *= 4) {
        float *in = xsa_malloc(sizeof(float) * CPU_GEMM_ROWS * K), *w = xsa_malloc(sizeof(float) * CPU_GEMM_COLS * K);
        float *out = xsa_malloc(sizeof(float) * CPU_GEMM_ROWS * CPU_GEMM_COLS);  // (ROWS, COLS)
        for (long i = 0; i < (long)CPU_GEMM_ROWS * K; i++) in[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
        for (long i = 0; i < (long)CPU_GEMM_COLS * K; i++) w[i] = (float)((i * 104729) % 997) * 1e-3f - 0.5f;
        float *wp = aligned_alloc(64, sizeof(float) * cpu_gemm_packed_size(CPU_GEMM_COLS, K));  // the kernel loads panels aligned
        for (int p = 0; p < CPU_GEMM_COLS / CPU_GEMM_PANEL; p++) cpu_gemm_pack_panel(w, CPU_GEMM_COLS, K, p, wp);
        printf("%-6d", K);
        for (int q = 0; q < 5; q++) {
            double t = 0;
            if (have[q] && q < 4) TIME_IT(min_s, t, cpu_gemm_tile(kinds[q], in, w, out, CPU_GEMM_COLS, CPU_GEMM_COLS, K));
            else if (have[q]) TIME_IT(min_s, t, cpu_gemm_tile_packed(in, wp, out, CPU_GEMM_COLS, CPU_GEMM_COLS, K));
            printf(" %9.1f", have[q] ? 2.0 * CPU_GEMM_ROWS * CPU_GEMM_COLS * K / t * 1e-9 : 0.0);
        }
        printf("\n");
        free(in);
        free(w);
        free(wp);
        free(out);
    }
    if (cpu_gemm_have_avx512()) {
        long n = 1 << 20;
        volatile float sink = 0;
        double t = 0;
        TIME_IT(min_s, t, sink += peak_fma(n));
        printf("peak   %9.1f   (GFLOP/s, AVX-512 FMA, 1 thread)\n", 2.0 * 16 * 12 * n / t * 1e-9);
        (void)sink;
    }
}

int main(int argc, char **argv) {
    double min_s = argc > 1 ? atof(argv[1]) : 0.3;
    bench_tiles(min_s);
    struct random_model_spec specs[2] = {
        {MODEL_ARCH_LLAMA, ROPE_HALF, 6, 6, 2, 64, 384, 1024, 8192, 1024, 1, 0, 1},
        {MODEL_ARCH_LLAMA, ROPE_HALF, 12, 12, 4, 64, 768, 2048, 32000, 1024, 1, 0, 2},
    };
    int seqs[2] = {256, 1024}, threads[2] = {1, 2};
    int have512 = cpu_gemm_have_avx512();
    enum cpu_gemm_kind own = cpu_gemm_have_avx2() ? CPU_GEMM_AVX2 : CPU_GEMM_SCALAR;
    printf("%-6s %5s %3s %10s %9s %9s %9s %9s %9s %7s %7s\n", "model", "T", "thr", "tok/s", "plain", "tiled",
           "avx2", "avx512", "fwd", "tiled/", "fwd/");
    printf("%-6s %5s %3s %10s %9s %9s %9s %9s %9s %7s %7s\n", "", "", "", "forward", "GFLOP/s", "GFLOP/s",
           "GFLOP/s", "GFLOP/s", "GFLOP/s", "plain", "plain");
    for (int mi = 0; mi < 2; mi++) {
        struct model m;
        random_model_init(&m, &specs[mi]);
        m.cfg.xsa[m.cfg.n_layer - 1] = 1;  // XSA in the last layer, as parameter-golf does
        const char *name = mi == 0 ? "10M" : "100M";
        long maxw = m.cfg.d_ff > m.cfg.d_model ? m.cfg.d_ff : m.cfg.d_model;
        float *in = xsa_calloc((size_t)cpu_gemm_pad_rows(1024) * maxw, sizeof(float));
        float *out = xsa_calloc((size_t)cpu_gemm_pad_rows(1024) * maxw, sizeof(float));
        for (long i = 0; i < (long)cpu_gemm_pad_rows(1024) * maxw; i++) in[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
        for (int si = 0; si < 2; si++) {
            int T = seqs[si];
            int32_t *toks = xsa_malloc(sizeof(int32_t) * T);
            for (int i = 0; i < T; i++) toks[i] = (int32_t)((i * 2654435761u) % (unsigned)m.cfg.vocab_size);
            struct batch_builder bb;
            batch_init(&bb);
            xsa_error err = {0};
            int first;
            batch_add_row(&bb, toks, T, &first, &err);
            for (int k = T - 9; k < T - 1; k++) batch_add_entry(&bb, first + k, toks[k + 1], &err);
            struct score_batch b = batch_view(&bb);
            float lp[8];
            uint8_t gr[8];
            double mm = (mi == 1 && T == 1024) ? 0 : min_s;  // the big case: one timed call
            for (int ti = 0; ti < 2; ti++) {
                int nt = threads[ti];
                double t_plain, t_tiled, t_own, t_512 = 0, t_fwd;
                struct backend be;
                struct backend_options o = {.n_threads = nt, .max_batch_tokens = T};
                if (backend_options_from_env(&o, &err) || backend_open(&be, "cpu", &m, &o, &err)) {
                    fprintf(stderr, "bench_forward: %s\n", err.msg);
                    return 3;
                }
                enum cpu_gemm_kind kind = ((const struct cpu_state *)be.impl)->gemm;
                if (mi == 0 && si == 0 && ti == 0) printf("# %s\n", be.device_desc);
                openblas_set_num_threads(nt);
                TIME_IT(mm, t_plain, gemm_pass(&m, T, in, out, NULL, kind));
                openblas_set_num_threads(1);
                struct cpu_pool *pool = cpu_pool_create(nt);
                TIME_IT(mm, t_tiled, gemm_pass(&m, T, in, out, pool, kind));
                TIME_IT(mm, t_own, gemm_pass(&m, T, in, out, pool, own));
                if (have512) TIME_IT(mm, t_512, gemm_pass(&m, T, in, out, pool, CPU_GEMM_AVX512));
                cpu_pool_destroy(pool);
                int rc = 0;
                TIME_IT(mm, t_fwd, rc |= backend_score(&be, &b, lp, gr, &err));
                backend_close(&be);
                if (rc) {
                    fprintf(stderr, "bench_forward: %s\n", err.msg);
                    return 3;
                }
                double f = layer_flops(&m, T);
                printf("%-6s %5d %3d %10.0f %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f\n", name, T, nt, T / t_fwd,
                       f / t_plain * 1e-9, f / t_tiled * 1e-9, f / t_own * 1e-9, have512 ? f / t_512 * 1e-9 : 0.0,
                       f / t_fwd * 1e-9,
                       t_plain / t_tiled, t_plain / t_fwd);
                fflush(stdout);
            }
            batch_free(&bb);
            free(toks);
        }
        printf("# %s: %.1fM parameters (d %d, layers %d, heads %d/%d, ff %d, vocab %d, tied)\n", name,
               m.n_params / 1e6, m.cfg.d_model, m.cfg.n_layer, m.cfg.n_head, m.cfg.n_kv_head, m.cfg.d_ff,
               m.cfg.vocab_size);
        free(in);
        free(out);
        random_model_free(&m);
    }
    printf("# plain: one threaded cblas_sgemm per weight (M = T); tiled: 64x%d tiles on our pool\n"
           "# with the kernel the backend picked; avx2, avx512: the tiles on our kernels;\n"
           "# fwd: the 7 projections' FLOPs over the whole forward's time (attention, norms, logits as overhead)\n",
           CPU_GEMM_COLS);
    return 0;
}
