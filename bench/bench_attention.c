// bench_attention.c: CPU attention throughput, side by side in one run:
//   old     the previous kernel (one task per (token, head): scalar dot per key, libm expf,
//           scalar weighted sum of V rows), kept here only as the baseline
//   scalar  cpu_attention with the portable kernel (XSA_CPU_ATTN=scalar)
//   avx2    cpu_attention with the AVX2 + FMA kernel (when the CPU has it)
// on random q/k/v for rows of causal tokens, 1 and 2 threads. Prints milliseconds per call,
// (query head, key) pairs per second, the speed-up over old and max |out - old|.
// Usage: build/bench/bench_attention [min_seconds_per_measurement (default 0.3)]
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench/bench_util.h"
#include "common/xalloc.h"
#include "kernels/cpu/cpu_attention.h"
#include "kernels/cpu/cpu_gemm.h"
#include "kernels/cpu/cpu_pool.h"

// ---- the previous implementation (baseline only) ----
static float old_dot8(const float *a, const float *b, int n) {
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int u = 0; u < 8; u++) acc[u] += a[i + u] * b[i + u];
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

static void old_task(void *ctx, int task, int w) {
    const struct cpu_attention_args *a = ctx;
    int t = task / a->H, h = task % a->H;
    int kvh = h / (a->H / a->Hkv), hd = a->hd;
    long qs = (long)a->H * hd, ks = (long)a->Hkv * hd;
    const float *q = a->q + t * qs + (long)h * hd;
    const float *kb = a->k + (long)kvh * hd, *vb = a->v + (long)kvh * hd;
    float *p = a->scratch + (long)w * a->scratch_stride;
    float *y = a->out + t * qs + (long)h * hd;
    float scale = 1.0f / sqrtf((float)hd);
    int lo[2] = {a->span0_lo[t], a->span1_lo[t]}, hi[2] = {a->span0_hi[t], a->span1_hi[t]};
    float mx = -INFINITY;
    int n = 0;
    for (int s = 0; s < 2; s++)
        for (int j = lo[s]; j < hi[s]; j++) {
            float sc = old_dot8(q, kb + j * ks, hd) * scale;
            p[n++] = sc;
            if (sc > mx) mx = sc;
        }
    float sum = 0;
    for (int i = 0; i < n; i++) {
        p[i] = expf(p[i] - mx);
        sum += p[i];
    }
    float inv = 1.0f / sum;
    for (int d = 0; d < hd; d++) y[d] = 0;
    n = 0;
    for (int s = 0; s < 2; s++)
        for (int j = lo[s]; j < hi[s]; j++) {
            float pj = p[n++] * inv;
            const float *vj = vb + j * ks;
            for (int d = 0; d < hd; d++) y[d] += pj * vj[d];
        }
}

static void old_attention(struct cpu_pool *pool, const struct cpu_attention_args *a) {
    cpu_pool_run(pool, a->T * a->H, old_task, (void *)a);
}

struct shape {
    const char *name;
    int rows, row_len, H, Hkv, hd;
};

int main(int argc, char **argv) {
    double min_s = argc > 1 ? atof(argv[1]) : 0.3;
    const struct shape shapes[] = {
        {"stories260K", 1, 512, 8, 4, 8},
        {"stories260K", 8, 512, 8, 4, 8},    // a 4096-token batch of 8 rows (xsa-eval's default)
        {"stories260K", 64, 64, 8, 4, 8},    // short rows
        {"d768 hd64", 1, 1024, 12, 4, 64},
        {"gpt2 hd64", 2, 512, 12, 12, 64},
        {"d512 hd64", 16, 256, 8, 4, 64},    // 256-token rows
        {"body26m", 40, 100, 8, 4, 64},      // tools/bench/bench_lm_eval.py's 25.9M llama, ~100-token rows
    };
    int have_avx2 = cpu_gemm_have_avx2();
    printf("%-12s %5s %4s %3s %3s %3s | %9s %9s %9s | %8s %8s %8s | %7s %7s | %9s\n", "shape", "rows",
           "len", "H", "Hkv", "thr", "old ms", "scalar ms", "avx2 ms", "old", "scalar", "avx2",
           "scalar/", "avx2/", "max|diff|");
    printf("%-12s %5s %4s %3s %3s %3s | %9s %9s %9s | %8s %8s %8s | %7s %7s | %9s\n", "", "", "", "",
           "", "", "", "", "", "Mpair/s", "Mpair/s", "Mpair/s", "old", "old", "vs old");
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const struct shape *sh = &shapes[si];
        int T = sh->rows * sh->row_len, H = sh->H, Hkv = sh->Hkv, hd = sh->hd, G = H / Hkv;
        long Q = (long)H * hd, KV = (long)Hkv * hd;
        float *q = xsa_malloc(sizeof(float) * T * Q), *k = xsa_malloc(sizeof(float) * T * KV);
        float *v = xsa_malloc(sizeof(float) * T * KV), *kt = xsa_malloc(sizeof(float) * T * KV);
        float *vt = xsa_malloc(sizeof(float) * T * KV);
        float *out[3] = {xsa_malloc(sizeof(float) * T * Q), xsa_malloc(sizeof(float) * T * Q),
                         xsa_malloc(sizeof(float) * T * Q)};
        int32_t *sp = xsa_malloc(sizeof(int32_t) * 4 * T);
        long stride = CPU_ATTN_SCRATCH(G, T);
        float *scratch = xsa_malloc(sizeof(float) * 2 * stride);
        uint64_t s = 42 + si;
        float *fill[3] = {q, k, v};
        long len[3] = {T * Q, T * KV, T * KV};
        for (int b = 0; b < 3; b++)
            for (long i = 0; i < len[b]; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                fill[b][i] = (float)((s >> 40) / 16777216.0 * 4.0 - 2.0);
            }
        double pairs = 0;
        for (int t = 0; t < T; t++) {
            int r0 = t / sh->row_len * sh->row_len;
            sp[t] = r0, sp[T + t] = t + 1, sp[2 * T + t] = t + 1, sp[3 * T + t] = t + 1;
            pairs += (double)(t + 1 - r0) * H;
        }
        for (int nt = 1; nt <= 2; nt++) {
            struct cpu_pool *pool = cpu_pool_create(nt);
            double ms[3] = {NAN, NAN, NAN}, diff[3] = {0, 0, 0};
            for (int kind = 0; kind < 3; kind++) {
                if (kind == 2 && !have_avx2) continue;
                struct cpu_attention_args a = {q, k, v, out[kind], sp, sp + T, sp + 2 * T, sp + 3 * T, T, H, Hkv, hd,
                                               0, kind == 2 ? CPU_ATTN_AVX2 : CPU_ATTN_SCALAR, kt, vt, T,
                                               NULL, 0, scratch, stride, NULL, 0, NULL, 0, NULL, 0, 0};
                int it = 0;
                double t0 = timing_now_s(), el;
                do {
                    if (kind == 0)
                        old_attention(pool, &a);
                    else
                        cpu_attention(pool, &a);
                    it++;
                    el = timing_now_s() - t0;
                } while (el < min_s);
                ms[kind] = el / it * 1e3;
                for (long i = 0; i < T * Q; i++) {
                    double d = fabs((double)out[kind][i] - out[0][i]);
                    if (d > diff[kind]) diff[kind] = d;
                }
            }
            printf("%-12s %5d %4d %3d %3d %3d | %9.3f %9.3f %9.3f | %8.1f %8.1f %8.1f | %7.2f %7.2f | %9.2g\n",
                   sh->name, sh->rows, sh->row_len, H, Hkv, nt, ms[0], ms[1], ms[2], pairs / ms[0] * 1e-3,
                   pairs / ms[1] * 1e-3, pairs / ms[2] * 1e-3, ms[0] / ms[1], ms[0] / ms[2],
                   diff[1] > diff[2] ? diff[1] : diff[2]);
            fflush(stdout);
            cpu_pool_destroy(pool);
        }
        free(q), free(k), free(v), free(kt), free(vt), free(out[0]), free(out[1]), free(out[2]);
        free(sp), free(scratch);
    }
    printf("# pairs: (query head, key) pairs scored per call; rows of causal tokens, no XSA\n");
    return 0;
}
