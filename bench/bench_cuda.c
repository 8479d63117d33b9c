// bench_cuda.c: the CUDA backend on a random ~1B-parameter llama (Llama-3.2-1B's shape: 16
// layers, d_model 2048, 32/8 heads of 64, d_ff 8192, vocabulary 128256, tied head) over
// requests shaped like the nine-task suite (0-shot token lengths, each task's share of docs),
// run as lm-eval's requests would be scheduled here: a multiple-choice context once, its
// continuations as branches. Prints, measured in the same run:
//   gemm     cuBLAS's bf16 GEMM rate (8192^3, bf16 in, fp32 out and accumulation)
//   tokens/s packed tokens through the forward; requests/s (context, continuation) pairs
//   MFU      2 x parameters x packed tokens / time, against the measured GEMM rate
//   GEMM MFU 2 x (non-embedding parameters x tokens + embedding x scored rows) / time
// and the full suite's GPU time extrapolated from the docs run. Needs a GPU (exits 3 without).
// Usage: build/bench/bench_cuda --parity   (device checks against the CPU: PASS/FAIL lines, exit 1 on a FAIL)
//        build/bench/bench_cuda --parity-attention   (the attention kernel checks alone)
//        build/bench/bench_cuda [--small] [--docs N] [--batch-tokens N] [--dump FILE] [--device D]
//   --device cpu --small exercises the request packing without a GPU.
//   --dump FILE writes the requests as JSON lines for tools/bench/hf_gpu_bench.py.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "common/xalloc.h"
#include "kernels/backend.h"
#include "kernels/batch.h"
#include "kernels/cuda/cuda_math.h"
#include "tests/random_model.h"

#define MAX_CHOICES 4

// One task's request shape: docs in the real suite, mean context and continuation tokens,
// choices per doc; separate = 1 when each choice is its own context (winogrande's partial
// evaluation: the continuation is shared, the contexts differ).
struct task_shape {
    const char *name;
    int docs, ctx, cont, choices, separate;
};

static const struct task_shape SHAPES[] = {
    {"hellaswag", 10042, 90, 25, 4, 0}, {"arc_easy", 2376, 30, 5, 4, 0}, {"arc_challenge", 1172, 35, 6, 4, 0},
    {"piqa", 1838, 15, 25, 2, 0},       {"winogrande", 1267, 20, 10, 2, 1}, {"boolq", 3270, 150, 1, 2, 0},
    {"openbookqa", 500, 15, 5, 4, 0},   {"siqa", 1954, 40, 5, 3, 0},       {"lambada", 5153, 75, 2, 1, 0},
};
#define N_SHAPES (int)(sizeof SHAPES / sizeof SHAPES[0])

struct doc {
    int n_ctx, n_cont[MAX_CHOICES], n_choices, separate;
    int32_t *ctx, *cont[MAX_CHOICES];
};

static int around(int mean, uint64_t *s) {  // uniform in [mean / 2, 3 mean / 2], at least 1
    int v = (int)(mean * (1.0f + 0.5f * random_model_uniform(s)) + 0.5f);
    return v < 1 ? 1 : v;
}

static int32_t *random_tokens(int n, int V, uint64_t *s) {
    int32_t *t = xsa_malloc(sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++) t[i] = (int32_t)((random_model_uniform(s) + 1.0f) * 0.5f * (V - 1));
    return t;
}

// Appends doc d (and its scoring entries) to the batch; returns requests added or -1.
static int add_doc(struct batch_builder *bb, const struct doc *d, xsa_error *err) {
    if (d->separate) {
        for (int c = 0; c < d->n_choices; c++) {
            int n = d->n_ctx + d->n_cont[c], first;
            int32_t *row = xsa_malloc(sizeof *row * (size_t)n);
            memcpy(row, d->ctx, sizeof *row * (size_t)d->n_ctx);
            memcpy(row + d->n_ctx, d->cont[c], sizeof *row * (size_t)d->n_cont[c]);
            int rc = batch_add_row(bb, row, n, &first, err);
            for (int k = d->n_ctx; !rc && k < n; k++) rc = batch_add_entry(bb, first + k - 1, row[k], err);
            free(row);
            if (rc) return -1;
        }
        return d->n_choices;
    }
    int pf, bf[MAX_CHOICES];
    const int32_t *br[MAX_CHOICES];
    for (int c = 0; c < d->n_choices; c++) br[c] = d->cont[c];
    if (batch_add_tree(bb, d->ctx, d->n_ctx, br, d->n_cont, d->n_choices, &pf, bf, err)) return -1;
    for (int c = 0; c < d->n_choices; c++) {
        if (batch_add_entry(bb, pf + d->n_ctx - 1, d->cont[c][0], err)) return -1;
        for (int k = 1; k < d->n_cont[c]; k++)
            if (batch_add_entry(bb, bf[c] + k - 1, d->cont[c][k], err)) return -1;
    }
    return d->n_choices;
}

static int doc_tokens(const struct doc *d) {
    int n = d->separate ? 0 : d->n_ctx;
    for (int c = 0; c < d->n_choices; c++) n += d->n_cont[c] + (d->separate ? d->n_ctx : 0);
    return n;
}

static void dump_docs(const char *path, const struct doc *docs, int n) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_cuda: cannot write %s\n", path);
        return;
    }
    for (int i = 0; i < n; i++) {
        const struct doc *d = &docs[i];
        fprintf(f, "{\"ctx\":[");
        for (int k = 0; k < d->n_ctx; k++) fprintf(f, "%s%d", k ? "," : "", d->ctx[k]);
        fprintf(f, "],\"conts\":[");
        for (int c = 0; c < d->n_choices; c++) {
            fprintf(f, "%s[", c ? "," : "");
            for (int k = 0; k < d->n_cont[c]; k++) fprintf(f, "%s%d", k ? "," : "", d->cont[c][k]);
            fprintf(f, "]");
        }
        fprintf(f, "]}\n");
    }
    fclose(f);
}

typedef int (*gemm_rate_fn)(int index, int n, double *tflops, xsa_error *err);

// build/libxsa_cuda.so seen from this program in build/bench.
static void cuda_lib_path(char *path, size_t n) {
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(path, n, "%.4000s/../libxsa_cuda.so", exe);
}

static double measure_gemm_tflops(void) {
    char path[4400];
    const char *env = getenv("XSA_CUDA_LIB");
    if (env) snprintf(path, sizeof path, "%.4000s", env);
    else cuda_lib_path(path, sizeof path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    gemm_rate_fn fn = h ? (gemm_rate_fn)(uintptr_t)dlsym(h, "xsa_cuda_gemm_tflops") : NULL;
    double tf = 0;
    xsa_error err = {0};
    if (!fn || fn(0, 8192, &tf, &err)) fprintf(stderr, "bench_cuda: GEMM rate not measured: %s\n", fn ? err.msg : path);
    return tf;
}


// ---- --parity: device checks against the CPU (tools/gpu-check.sh) ----------------------
static int n_fail;

static void verdict(int ok, const char *what, const char *detail) {
    printf("%s %s: %s\n", ok ? "PASS" : "FAIL", what, detail);
    n_fail += !ok;
}

typedef int (*att_probe_fn)(int index, int T, int H, int Hkv, int hd, int xsa, const float *qkv,
                            const int32_t *spans, float *out, xsa_error *err);

// The attention kernel alone against xsa_attend_serial, and XSA's z . v = 0 on the device.
static void parity_attention(void) {
    char path[4400];
    const char *env = getenv("XSA_CUDA_LIB");
    if (env) snprintf(path, sizeof path, "%.4000s", env);
    else cuda_lib_path(path, sizeof path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    att_probe_fn fn = h ? (att_probe_fn)(uintptr_t)dlsym(h, "xsa_cuda_attention_probe") : NULL;
    if (!fn) {
        verdict(0, "attention probe", path);
        return;
    }
    enum { T = 180, H = 4, HKV = 2 };
    int hds[4] = {24, 64, 128, 200};
    int32_t sp[4 * T];
    // Row 1: prefix 70 + branches 40, 1, 33 (144 tokens); row 2: a plain row of 36.
    int t = 0, bl[3] = {40, 1, 33};
    for (; t < 70; t++) sp[t] = 0, sp[T + t] = t + 1, sp[2 * T + t] = sp[3 * T + t] = 0;
    for (int b = 0; b < 3; b++)
        for (int k = 0, first = t; k < bl[b]; k++, t++) sp[t] = 0, sp[T + t] = 70, sp[2 * T + t] = first, sp[3 * T + t] = t + 1;
    for (int r0 = t; t < T; t++) sp[t] = r0, sp[T + t] = t + 1, sp[2 * T + t] = sp[3 * T + t] = 0;
    uint64_t s = 3;
    for (int i = 0; i < 4; i++)
        for (int xsa = 0; xsa < 2; xsa++) {
            int hd = hds[i], W = (H + 2 * HKV) * hd;
            float *qkv = xsa_malloc(sizeof(float) * T * W), *out = xsa_malloc(sizeof(float) * T * H * hd), y[256];
            for (int j = 0; j < T * W; j++) qkv[j] = 2.0f * random_model_uniform(&s);
            xsa_error err = {0};
            if (fn(0, T, H, HKV, hd, xsa, qkv, sp, out, &err)) {
                verdict(0, "attention probe", err.msg);
                free(qkv), free(out);
                return;
            }
            double worst = 0, ortho = 0;
            for (int tt = 0; tt < T; tt++)
                for (int hh = 0; hh < H; hh++) {
                    int kvh = hh / (H / HKV), lo[2] = {sp[tt], sp[2 * T + tt]}, hi[2] = {sp[T + tt], sp[3 * T + tt]};
                    const float *vb = qkv + (H + HKV) * hd + kvh * hd, *own = vb + (long)tt * W;
                    xsa_attend_serial(qkv + (long)tt * W + hh * hd, qkv + H * hd + kvh * hd, vb, W, hd, lo, hi,
                                      xsa ? own : NULL, y);
                    const float *z = out + ((long)tt * H + hh) * hd;
                    double zv = 0, zz = 0, vv = 0;
                    for (int d = 0; d < hd; d++) {
                        double dd = fabs(z[d] - y[d]);
                        worst = dd > worst ? dd : worst;
                        zv += (double)z[d] * own[d], zz += (double)z[d] * z[d], vv += (double)own[d] * own[d];
                    }
                    double cosv = fabs(zv) / sqrt(zz * vv + 1e-30);
                    if (xsa && cosv > ortho) ortho = cosv;
                }
            char d[200];
            snprintf(d, sizeof d, "head_dim %d xsa %d: max |gpu - serial| %.2e (<= 1e-4)%s", hd, xsa, worst,
                     xsa ? "" : "");
            verdict(worst <= 1e-4, "attention kernel", d);
            if (xsa) {
                snprintf(d, sizeof d, "head_dim %d: max |cos(z, v_own)| %.2e (<= 1e-5)", hd, ortho);
                verdict(ortho <= 1e-5, "xsa orthogonality on the device", d);
            }
            free(qkv), free(out);
        }
}

// Scores docs on the CPU and on the GPU (fp32, bf16) and compares every entry.
static void parity_model(const char *name, const struct random_model_spec *sp, int xsa_all) {
    struct model m;
    random_model_init(&m, sp);
    for (int l = 0; l < m.cfg.n_layer; l++) m.cfg.xsa[l] = (unsigned char)xsa_all;
    int n_docs = 60;
    struct doc *docs = xsa_calloc((size_t)n_docs, sizeof *docs);
    uint64_t s = 99;
    for (int i = 0; i < n_docs; i++) {
        const struct task_shape *ts = &SHAPES[i % N_SHAPES];
        struct doc *d = &docs[i];
        d->n_ctx = around(ts->ctx, &s);
        d->ctx = random_tokens(d->n_ctx, m.cfg.vocab_size, &s);
        d->n_choices = ts->choices;
        d->separate = ts->separate;
        for (int c = 0; c < ts->choices; c++) {
            d->n_cont[c] = ts->cont == 1 ? 1 : around(ts->cont, &s);
            d->cont[c] = random_tokens(d->n_cont[c], m.cfg.vocab_size, &s);
        }
    }
    struct batch_builder bb;
    batch_init(&bb);
    xsa_error err = {0};
    for (int i = 0; i < n_docs; i++) add_doc(&bb, &docs[i], &err);
    struct score_batch b = batch_view(&bb);
    int S = b.n_entries;
    float *lp[3] = {NULL, NULL, NULL};
    uint8_t *gr[3] = {NULL, NULL, NULL};
    const char *dev[3] = {"cpu", "cuda", "cuda"}, *dt[3] = {NULL, "float32", "bfloat16"};
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++) {
        lp[k] = xsa_malloc(sizeof(float) * S), gr[k] = xsa_malloc((size_t)S);
        struct backend be;
        struct backend_options o = {.max_batch_tokens = 256};  // small: the GPU grows or splits the batch
        if (backend_options_from_env(&o, &err) || backend_open_dtype(&be, dev[k], dt[k], &m, &o, &err) || backend_score(&be, &b, lp[k], gr[k], &err)) {
            verdict(0, name, err.msg);
            ok = 0;
        }
        backend_close(&be);
    }
    if (ok) {
        double w32 = 0, w16 = 0, m16 = 0;
        int g32 = 0, g16 = 0;
        for (int e = 0; e < S; e++) {
            double d32 = fabs(lp[1][e] - lp[0][e]), d16 = fabs(lp[2][e] - lp[0][e]);
            w32 = d32 > w32 ? d32 : w32;
            w16 = d16 > w16 ? d16 : w16;
            m16 += d16 / S;
            g32 += gr[1][e] != gr[0][e];
            g16 += gr[2][e] != gr[0][e];
        }
        // Task predictions: per doc, the choice with the highest summed log-probability
        // (entries were added doc by doc, choice by choice).
        int p32 = 0, p16 = 0;
        for (int i = 0, e = 0; i < n_docs; i++) {
            double best[3] = {-INFINITY, -INFINITY, -INFINITY};
            int arg[3] = {0, 0, 0};
            for (int c = 0; c < docs[i].n_choices; c++) {
                double sum[3] = {0, 0, 0};
                for (int k = 0; k < docs[i].n_cont[c]; k++, e++)
                    for (int v = 0; v < 3; v++) sum[v] += lp[v][e];
                for (int v = 0; v < 3; v++)
                    if (sum[v] > best[v]) best[v] = sum[v], arg[v] = c;
            }
            p32 += arg[1] != arg[0];
            p16 += arg[2] != arg[0];
        }
        char d[300];
        snprintf(d, sizeof d, "%d docs: task predictions differing from the cpu's: %d (0)", n_docs, p32);
        char what0[120];
        snprintf(what0, sizeof what0, "%s xsa=%s float32 predictions", name, xsa_all ? "all" : "none");
        verdict(p32 == 0, what0, d);
        printf("info %s xsa=%s bfloat16: %d of %d task predictions differ from the cpu's\n", name, xsa_all ? "all" : "none",
               p16, n_docs);
        snprintf(d, sizeof d, "%d tokens, %d entries: max |gpu - cpu| %.2e (<= 2e-4), greedy mismatches %d (0)", b.n_tokens,
                 S, w32, g32);
        char what[120];
        snprintf(what, sizeof what, "%s xsa=%s float32", name, xsa_all ? "all" : "none");
        verdict(w32 <= 2e-4 && g32 == 0, what, d);
        snprintf(d, sizeof d, "max |gpu - cpu| %.3f (<= 0.25), mean %.4f (<= 0.03), greedy mismatches %d (<= 1%%)", w16, m16,
                 g16);
        snprintf(what, sizeof what, "%s xsa=%s bfloat16", name, xsa_all ? "all" : "none");
        verdict(w16 <= 0.25 && m16 <= 0.03 && g16 * 100 <= S, what, d);
    }
    for (int k = 0; k < 3; k++) free(lp[k]), free(gr[k]);
    batch_free(&bb);
    for (int i = 0; i < n_docs; i++) {
        free(docs[i].ctx);
        for (int c = 0; c < docs[i].n_choices; c++) free(docs[i].cont[c]);
    }
    free(docs);
    random_model_free(&m);
}

static int parity_main(int attention_only) {
    char lib[4400];
    cuda_lib_path(lib, sizeof lib);
    setenv("XSA_CUDA_LIB", lib, 0);
    parity_attention();
    if (attention_only) {
        printf("%d device check(s) failed\n", n_fail);
        return n_fail ? 1 : 0;
    }
    struct random_model_spec specs[3] = {
        {MODEL_ARCH_LLAMA, ROPE_HALF, 3, 8, 2, 32, 256, 704, 1000, 1024, 1, 0, 5},
        {MODEL_ARCH_LLAMA, ROPE_ADJACENT, 2, 4, 4, 48, 192, 512, 777, 1024, 0, 1, 6},
        {MODEL_ARCH_GPT2, ROPE_NONE, 2, 4, 4, 40, 160, 640, 901, 1024, 0, 1, 7},
    };
    const char *names[3] = {"random llama (rotate_half, GQA 8/2, tied)", "random llama (adjacent pairs, biases)",
                            "random gpt2 (head_dim 40)"};
    for (int i = 0; i < 3; i++)
        for (int x = 0; x < 2; x++) parity_model(names[i], &specs[i], x);
    printf("%d device check(s) failed\n", n_fail);
    return n_fail ? 1 : 0;
}

int main(int argc, char **argv) {
    int small = 0, n_docs = 4000, batch_tokens = 8192;
    const char *dump = NULL, *device = "cuda";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small")) small = 1;
        else if (!strcmp(argv[i], "--docs") && i + 1 < argc) n_docs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch-tokens") && i + 1 < argc) batch_tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dump") && i + 1 < argc) dump = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--parity")) return parity_main(0);
        else if (!strcmp(argv[i], "--parity-attention")) return parity_main(1);  // small: for compute-sanitizer
        else {
            fprintf(stderr, "usage: bench_cuda --parity | --parity-attention | [--small] [--docs N] [--batch-tokens N] "
                            "[--dump FILE] [--device D]\n");
            return 2;
        }
    }
    if (n_docs < 1 || n_docs > 1000000 || batch_tokens < 512) {
        fprintf(stderr, "bench_cuda: --docs in [1, 1e6], --batch-tokens >= 512\n");
        return 2;
    }
    struct random_model_spec sp = {MODEL_ARCH_LLAMA, ROPE_HALF, 16, 32, 8, 64, 2048, 8192, 128256, 4096, 1, 0, 1};
    if (small) sp = (struct random_model_spec){MODEL_ARCH_LLAMA, ROPE_HALF, 4, 8, 2, 64, 512, 1536, 32000, 2048, 1, 0, 1};
    struct model m;
    double t0 = timing_now_s();
    random_model_init(&m, &sp);
    const struct model_config *c = &m.cfg;
    long long emb = (long long)c->vocab_size * c->d_model;
    printf("model    random llama: %d layers, d_model %d, heads %d/%d x %d, d_ff %d, vocab %d: %.3fB parameters "
           "(built in %.1f s)\n", c->n_layer, c->d_model, c->n_head, c->n_kv_head, c->head_dim, c->d_ff, c->vocab_size,
           m.n_params / 1e9, timing_now_s() - t0);

    struct backend be;
    struct backend_options o = {.max_batch_tokens = batch_tokens};
    xsa_error err = {0};
    if (backend_options_from_env(&o, &err)) {
        fprintf(stderr, "bench_cuda: %s\n", err.msg);
        return 2;
    }
    t0 = timing_now_s();
    char lib[4400];
    cuda_lib_path(lib, sizeof lib);
    setenv("XSA_CUDA_LIB", lib, 0);  // an XSA_CUDA_LIB already set wins
    if (backend_open_dtype(&be, device, "bfloat16", &m, &o, &err)) {
        fprintf(stderr, "bench_cuda: %s\n", err.msg);
        random_model_free(&m);
        return 3;
    }
    printf("device   %s (weights uploaded in %.1f s)\n", be.device_desc, timing_now_s() - t0);
    double tflops = strcmp(be.name, "cuda") ? 0 : measure_gemm_tflops();
    printf("gemm     cuBLAS bf16 8192^3 (fp32 accumulate): %.1f TFLOP/s\n", tflops);

    // Docs: each task's share of the suite, lengths around its means, random token ids.
    struct doc *docs = xsa_calloc((size_t)n_docs, sizeof *docs);
    int total_docs = 0;
    for (int k = 0; k < N_SHAPES; k++) total_docs += SHAPES[k].docs;
    uint64_t s = 42;
    for (int i = 0, k = 0, ki = 0; docs && i < n_docs; i++) {
        while (k < N_SHAPES - 1 && ki >= (long long)SHAPES[k].docs * n_docs / total_docs) k++, ki = 0;
        const struct task_shape *ts = &SHAPES[k];
        ki++;
        struct doc *d = &docs[i];
        d->n_ctx = around(ts->ctx, &s);
        d->ctx = random_tokens(d->n_ctx, c->vocab_size, &s);
        d->n_choices = ts->choices;
        d->separate = ts->separate;
        for (int ch = 0; ch < ts->choices; ch++) {
            d->n_cont[ch] = ts->cont == 1 ? 1 : around(ts->cont, &s);
            d->cont[ch] = random_tokens(d->n_cont[ch], c->vocab_size, &s);
        }
    }
    if (!docs) return 3;
    if (dump) dump_docs(dump, docs, n_docs);

    // Score: pack whole docs into batches of at most batch_tokens; the first batch is warm-up.
    struct batch_builder bb;
    batch_init(&bb);
    float *lp = xsa_malloc(sizeof(float) * 1000000);
    uint8_t *gr = xsa_malloc(1000000);
    long long tokens = 0, requests = 0, scored = 0, req_tokens = 0, docs_timed = 0;
    double t_score = 0;
    int rc = 0, warm = 0;
    for (int i = 0; !rc && i <= n_docs;) {
        int full = i == n_docs || batch_n_tokens(&bb) + doc_tokens(&docs[i]) > batch_tokens;
        if (full && batch_n_tokens(&bb) > 0) {
            struct score_batch b = batch_view(&bb);
            double t1 = timing_now_s();
            rc = b.n_entries > 1000000 ? -1 : backend_score(&be, &b, lp, gr, &err);
            if (warm) {
                t_score += timing_now_s() - t1;
                tokens += b.n_tokens;
                scored += b.n_entries;
            }
            warm = 1;
            batch_reset(&bb);
        }
        if (i == n_docs) break;
        int r = add_doc(&bb, &docs[i], &err);
        if (r < 0) rc = -1;
        if (warm) {
            docs_timed++;  // docs of the warm-up batch are not timed
            requests += r;
            for (int ch = 0; ch < docs[i].n_choices; ch++) req_tokens += docs[i].n_ctx + docs[i].n_cont[ch];
        }
        i++;
    }
    if (rc) {
        fprintf(stderr, "bench_cuda: scoring failed: %s\n", err.msg);
    } else if (t_score > 0) {
        double flops = 2.0 * m.n_params * tokens / t_score / 1e12;
        double gemm = 2.0 * ((m.n_params - emb) * (double)tokens + emb * (double)scored) / t_score / 1e12;
        printf("score    %lld requests (%lld tokens as lm-eval feeds them) as %lld packed tokens, %lld scored, "
               "in %.3f s\n", requests, req_tokens, tokens, scored, t_score);
        printf("rate     %.0f tokens/s packed, %.0f request tokens/s, %.1f requests/s\n", tokens / t_score,
               req_tokens / t_score, requests / t_score);
        printf("mfu      %.1f%% (2 x params x packed tokens: %.1f TFLOP/s of %.1f measured)\n",
               tflops > 0 ? 100 * flops / tflops : 0.0, flops, tflops);
        printf("gemm mfu %.1f%% (2 x (non-embedding params x tokens + head x scored positions): %.1f TFLOP/s)\n",
               tflops > 0 ? 100 * gemm / tflops : 0.0, gemm);
        printf("suite    all nine tasks (%d docs, 0-shot) extrapolated: %.1f s of GPU time\n", total_docs,
               t_score * total_docs / (double)(docs_timed > 0 ? docs_timed : 1));
        printf("RESULT requests_per_s=%.3f tokens_per_s=%.0f mfu=%.4f\n", requests / t_score, tokens / t_score,
               tflops > 0 ? flops / tflops : 0.0);
    }
    free(lp);
    free(gr);
    batch_free(&bb);
    for (int i = 0; i < n_docs; i++) {
        free(docs[i].ctx);
        for (int ch = 0; ch < docs[i].n_choices; ch++) free(docs[i].cont[ch]);
    }
    free(docs);
    backend_close(&be);
    random_model_free(&m);
    return rc ? 3 : 0;
}
