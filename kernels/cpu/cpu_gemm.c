// cpu_gemm.c: tiled single-threaded GEMM calls spread over the worker pool, the choice
// between OpenBLAS and our kernels (cpu_gemm_kernel.c, cpu_gemm_avx512.c), and packing
// weights for the AVX-512 kernel.
#include "common/xalloc.h"
#include "kernels/cpu/cpu_gemm.h"

#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void cpu_gemm_tile_avx2(const float *in, const float *w, float *out, int ldo, int nc, int K);
void cpu_gemm_tile_scalar(const float *in, const float *w, float *out, int ldo, int nc, int K);
void cpu_gemm_tile_avx512(const float *in, const float *w, float *out, int ldo, int nc, int K);

int cpu_gemm_pad_rows(int n) { return (n + CPU_GEMM_ROWS - 1) / CPU_GEMM_ROWS * CPU_GEMM_ROWS; }

const char *cpu_gemm_kind_name(enum cpu_gemm_kind kind) {
    return kind == CPU_GEMM_BLAS     ? "OpenBLAS sgemm"
           : kind == CPU_GEMM_AVX2   ? "own AVX2 kernel"
           : kind == CPU_GEMM_AVX512 ? "own AVX-512 kernel"
                                     : "own C kernel";
}

void cpu_gemm_tile(enum cpu_gemm_kind kind, const float *in, const float *w, float *out, int ldo,
                   int nc, int K) {
    if (kind == CPU_GEMM_AVX512)
        cpu_gemm_tile_avx512(in, w, out, ldo, nc, K);
    else if (kind == CPU_GEMM_AVX2)
        cpu_gemm_tile_avx2(in, w, out, ldo, nc, K);
    else if (kind == CPU_GEMM_SCALAR)
        cpu_gemm_tile_scalar(in, w, out, ldo, nc, K);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, CPU_GEMM_ROWS, nc, K, 1.0f, in, K, w, K,
                    0.0f, out, ldo);
}

// OpenBLAS's k split (GEMM_Q, GEMM_UNROLL_M) as found by blas_order_find; 0 until found.
static int blas_q, blas_u;

void cpu_gemm_tile_w(enum cpu_gemm_kind kind, const float *in, const float *w, const float *wp, int c0,
                     float *out, int ldo, int nc, int K) {
    if (wp && kind == CPU_GEMM_AVX512)
        cpu_gemm_tile_packed(in, wp + (size_t)c0 * K, out, ldo, nc, K);
    else if (wp && kind == CPU_GEMM_BLAS)  // packed only after cpu_gemm_blas_order_ok
        cpu_gemm_tile_packed_blas(in, wp + (size_t)c0 * K, out, ldo, nc, K, blas_q, blas_u);
    else
        cpu_gemm_tile(kind, in, w + (size_t)c0 * K, out, ldo, nc, K);
}

// Does OpenBLAS give a row the same bits wherever it sits in a (K, nc) tile? Tries shifts of a
// pseudo-random tile (all small ones, to catch kernels that cycle over a few rows).
static int blas_is_position_invariant(int K, int nc, float *in, float *in2, float *w, float *o1,
                                      float *o2) {
    static const int shifts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 24, 32, 48, 63};
    uint32_t s = 12345u;
    for (long i = 0; i < (long)CPU_GEMM_ROWS * K; i++) in[i] = (float)((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (long i = 0; i < (long)nc * K; i++) w[i] = (float)((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    cpu_gemm_tile(CPU_GEMM_BLAS, in, w, o1, nc, nc, K);
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        int sh = shifts[i];
        memset(in2, 0, sizeof(float) * (size_t)sh * K);
        memcpy(in2 + (long)sh * K, in, sizeof(float) * (size_t)(CPU_GEMM_ROWS - sh) * K);
        cpu_gemm_tile(CPU_GEMM_BLAS, in2, w, o2, nc, nc, K);
        if (memcmp(o1, o2 + (long)sh * nc, sizeof(float) * (size_t)(CPU_GEMM_ROWS - sh) * nc)) return 0;
    }
    return 1;
}

// OpenBLAS cores without AVX kernels. A DYNAMIC_ARCH build that does not know the CPU (0.3.21
// on Sapphire Rapids picks Prescott) runs SSE3 code, slower than our AVX2 kernel.
static int blas_core_is_sse_only(void) {
    static const char *old[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom",
                                "Opteron", "Opteron(SSE3)", "Barcelona", "Bobcat", "Nano",
                                "Katmai", "Coppermine", "Northwood", "Banias", "Athlon"};
    const char *core = openblas_get_corename();
    for (size_t i = 0; core && i < sizeof old / sizeof old[0]; i++)
        if (!strcmp(core, old[i])) return 1;
    return 0;
}

const char *cpu_gemm_blas_core_to_force(void) {
    if (!blas_core_is_sse_only()) return NULL;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    return cpu_gemm_have_avx2() ? "Haswell" : NULL;
}

// Our fastest kernel on this CPU.
static int own_best_kind(void) {
    return cpu_gemm_have_avx512() ? CPU_GEMM_AVX512 : cpu_gemm_have_avx2() ? CPU_GEMM_AVX2 : CPU_GEMM_SCALAR;
}

int cpu_gemm_blas_invariant(const int (*shapes)[2], int n) {
    int kmax = 1;
    for (int i = 0; i < n; i++) kmax = shapes[i][0] > kmax ? shapes[i][0] : kmax;
    size_t tile = (size_t)CPU_GEMM_ROWS * kmax, wsz = (size_t)CPU_GEMM_COLS * kmax,
           osz = (size_t)CPU_GEMM_ROWS * CPU_GEMM_COLS;
    float *buf = xsa_malloc(sizeof(float) * (2 * tile + wsz + 2 * osz));
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        if (shapes[i][1] < 1 || shapes[i][1] > CPU_GEMM_COLS || shapes[i][0] < 1) continue;
        ok = blas_is_position_invariant(shapes[i][0], shapes[i][1], buf, buf + tile, buf + 2 * tile,
                                        buf + 2 * tile + wsz, buf + 2 * tile + wsz + osz);
    }
    free(buf);
    return ok;
}

// Fills a 64-row tile and nc rows of weights (K each) with pseudo-random values in [-0.5, 0.5).
static void fill_tile(float *in, float *w, int K, int nc, uint32_t s) {
    for (long i = 0; i < (long)CPU_GEMM_ROWS * K; i++) in[i] = (float)((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (long i = 0; i < (long)nc * K; i++) w[i] = (float)((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
}

// Does cpu_gemm_tile_packed_blas with split (q, u) give OpenBLAS's bits on a (K, nc) tile?
// buf: room for the tile, the weights, their packed copy and two outputs.
static int blas_order_matches(int K, int nc, int q, int u, float *buf) {
    float *in = buf, *w = in + (size_t)CPU_GEMM_ROWS * K, *wp = w + (size_t)CPU_GEMM_COLS * K;
    float *o1 = wp + cpu_gemm_packed_size(CPU_GEMM_COLS, K), *o2 = o1 + (size_t)CPU_GEMM_ROWS * CPU_GEMM_COLS;
    for (uint32_t seed = 1; seed <= 2; seed++) {
        fill_tile(in, w, K, nc, seed * 7919u + (uint32_t)K);
        for (int p = 0; p * CPU_GEMM_PANEL < nc; p++) cpu_gemm_pack_panel(w, nc, K, p, wp);
        cpu_gemm_tile(CPU_GEMM_BLAS, in, w, o1, nc, nc, K);
        cpu_gemm_tile_packed_blas(in, wp, o2, nc, nc, K, q, u);
        if (memcmp(o1, o2, sizeof(float) * (size_t)CPU_GEMM_ROWS * nc)) return 0;
    }
    return 1;
}

// 64-byte aligned, as the packed panels are read (each part's size is a multiple of 64 bytes);
// NULL when out of memory (the check is optional: OpenBLAS then runs).
static float *blas_order_buf(int K) {
    size_t n = (size_t)CPU_GEMM_ROWS * K + (size_t)CPU_GEMM_COLS * K + cpu_gemm_packed_size(CPU_GEMM_COLS, K) +
               2 * (size_t)CPU_GEMM_ROWS * CPU_GEMM_COLS;
    return aligned_alloc(64, n * sizeof(float));
}

// OpenBLAS's k split, found once per process (its core is): the first (GEMM_Q, GEMM_UNROLL_M)
// whose chunks give its bits on probes whose k spans 2 to 4 chunks of each. The SkylakeX and
// Cooperlake cores of 0.3.21 use (320, 16); a core with other sums matches none (q stays 0).
static void blas_order_find(void) {
    static const int qs[] = {320, 384, 256, 448, 512, 640, 192, 768, 128}, us[] = {16, 8, 32, 4, 64};
    static const int probe_k[] = {1400, 1100, 650};
    float *buf = cpu_gemm_have_avx512() ? blas_order_buf(1400) : NULL;
    for (size_t i = 0; buf && i < sizeof qs / sizeof *qs && !blas_q; i++)
        for (size_t j = 0; j < sizeof us / sizeof *us && !blas_q; j++) {
            int ok = 1;
            for (size_t p = 0; p < sizeof probe_k / sizeof *probe_k && ok; p++)
                ok = blas_order_matches(probe_k[p], CPU_GEMM_PANEL, qs[i], us[j], buf);
            if (ok) blas_q = qs[i], blas_u = us[j];
        }
    free(buf);
}

int cpu_gemm_blas_order_ok(const int (*shapes)[2], int n) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, blas_order_find);
    if (!blas_q) return 0;
    int kmax = 1, ok = 1;
    for (int i = 0; i < n; i++) kmax = shapes[i][0] > kmax ? shapes[i][0] : kmax;
    float *buf = blas_order_buf(kmax);
    ok = buf != NULL;
    for (int i = 0; i < n && ok; i++)
        if (shapes[i][1] >= 1 && shapes[i][1] <= CPU_GEMM_COLS && shapes[i][0] >= 1)
            ok = blas_order_matches(shapes[i][0], shapes[i][1], blas_q, blas_u, buf);
    free(buf);
    return ok;
}

int cpu_gemm_pick(const int (*shapes)[2], int n) {
    if (cpu_gemm_have_avx2() && blas_core_is_sse_only()) return own_best_kind();
    return cpu_gemm_blas_invariant(shapes, n) ? CPU_GEMM_BLAS : own_best_kind();
}

struct gemm_job {
    enum cpu_gemm_kind kind;
    const float *in, *w, *wp, *b;
    float *out;
    int K, N, n_col_blocks, n_row_tiles;
    cpu_gemm_epilogue epi;
    void *epi_ctx;
};

static void gemm_task(void *ctx, int i, int w) {
    (void)w;
    const struct gemm_job *j = ctx;
    // Column block outermost: consecutive tasks (and so each thread's next task) reuse one
    // block of weights from L2 while the 64-row input tiles stream past it.
    int r0 = (i % j->n_row_tiles) * CPU_GEMM_ROWS;
    int c0 = (i / j->n_row_tiles) * CPU_GEMM_COLS;
    int nc = j->N - c0 < CPU_GEMM_COLS ? j->N - c0 : CPU_GEMM_COLS;
    cpu_gemm_tile_w(j->kind, j->in + (size_t)r0 * j->K, j->w, j->wp, c0, j->out + (size_t)r0 * j->N + c0, j->N,
                    nc, j->K);
    if (j->b)
        for (int r = r0; r < r0 + CPU_GEMM_ROWS; r++) {
            float *o = j->out + (size_t)r * j->N;
            for (int c = c0; c < c0 + nc; c++) o[c] += j->b[c];
        }
    if (j->epi) j->epi(j->epi_ctx, j->out + (size_t)r0 * j->N + c0, j->N, r0, c0, nc);
}

void cpu_gemm_linear_then(struct cpu_pool *pool, enum cpu_gemm_kind kind, const float *in, const float *w,
                          const float *wp, const float *b, float *out, int M, int K, int N,
                          cpu_gemm_epilogue epi, void *epi_ctx) {
    struct gemm_job j = {kind, in, w, wp, b, out, K, N,
                         (N + CPU_GEMM_COLS - 1) / CPU_GEMM_COLS, M / CPU_GEMM_ROWS, epi, epi_ctx};
    cpu_pool_run(pool, (M / CPU_GEMM_ROWS) * j.n_col_blocks, gemm_task, &j);
}

void cpu_gemm_linear(struct cpu_pool *pool, enum cpu_gemm_kind kind, const float *in,
                     const float *w, const float *wp, const float *b, float *out, int M, int K, int N) {
    cpu_gemm_linear_then(pool, kind, in, w, wp, b, out, M, K, N, NULL, NULL);
}

struct pack_job {
    const float *w;
    float *wp;
    int N, K;
};

static void pack_task(void *ctx, int i, int w) {
    (void)w;
    const struct pack_job *j = ctx;
    cpu_gemm_pack_panel(j->w, j->N, j->K, i, j->wp);
}

void cpu_gemm_pack(struct cpu_pool *pool, const float *w, int N, int K, float *wp) {
    struct pack_job j = {w, wp, N, K};
    cpu_pool_run(pool, (N + CPU_GEMM_PANEL - 1) / CPU_GEMM_PANEL, pack_task, &j);
}
