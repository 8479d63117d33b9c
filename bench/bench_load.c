// bench_load.c: what the load-time NaN/Inf check of the weights costs. Writes a random llama
// (d_model 512, 8 layers, d_ff 1408, vocab 1024, tied head: 26.2M parameters) to a temp folder,
// once as F32 (weights used in place from the file mapping) and once as BF16 (converted into
// the arena), then times model_load, which checks every weight, and the check alone
// (model_first_nonfinite over every loaded weight array, the scan the readers run per tensor).
// The scan is all the check adds to a load: the F32 mapping is read by the file's SHA-256
// anyway, and BF16 values are converted anyway (the loader scans each tensor just after, so
// warmer than here: for BF16 the figure is an upper bound). Prints medians and the check as a
// fraction of the load; never pass/fail.
// Usage: build/bench/bench_load [repeats (default 7)]   (from the repo root)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/vec.h"
#include "model/model.h"
#include "tests/random_model.h"

enum { C = 512, L = 8, F = 1408, V = 1024 };

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Writes dir/model.safetensors: every tensor of the llama above, random values of scale 0.02,
// as F32 (bf16 0) or BF16; the header is padded so the data starts 8-byte aligned.
static int write_checkpoint(const char *dir, int bf16, xsa_error *err) {
    static const char *layer_names[] = {"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                        "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                                        "mlp.down_proj"};
    static const long rows[] = {C, C, C, C, C, C, F, F, C}, cols[] = {0, C, C, C, C, 0, C, C, F};
    size_t es = bf16 ? 2 : 4, off = 0, total = ((size_t)V * C + (size_t)L * (2 * C + 4 * C * C + 3 * (size_t)F * C) + C) * es;
    struct sbuf h = {0};
    sbuf_printf(&h, "{\"model.embed_tokens.weight\":{\"dtype\":\"%s\",\"shape\":[%d,%d],\"data_offsets\":[0,%zu]}",
                bf16 ? "BF16" : "F32", V, C, (off = (size_t)V * C * es));
    for (int l = 0; l < L; l++)
        for (int k = 0; k < 9; k++) {
            size_t n = (size_t)rows[k] * (size_t)(cols[k] ? cols[k] : 1) * es;
            sbuf_printf(&h, ",\"model.layers.%d.%s.weight\":{\"dtype\":\"%s\",\"shape\":[%ld", l, layer_names[k], bf16 ? "BF16" : "F32", rows[k]);
            if (cols[k]) sbuf_printf(&h, ",%ld", cols[k]);
            sbuf_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + n);
            off += n;
        }
    sbuf_printf(&h, ",\"model.norm.weight\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}}",
                bf16 ? "BF16" : "F32", C, off, off + (size_t)C * es);
    while ((8 + h.n) % 8) sbuf_append(&h, " ", 1);
    size_t bytes = 8 + h.n + total;
    unsigned char *buf = malloc(bytes);
    if (!buf) return xsa_fail(err, XSA_ERUNTIME, "out of memory");
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)h.n >> (8 * i));
    memcpy(buf + 8, h.s, h.n);
    uint64_t seed = 42;
    unsigned char *p = buf + 8 + h.n;
    for (size_t i = 0; i < total / es; i++) {
        float f = 0.02f * random_model_uniform(&seed);
        uint32_t u;
        memcpy(&u, &f, 4);
        if (bf16) { uint16_t b = (uint16_t)(u >> 16); memcpy(p + 2 * i, &b, 2); }
        else memcpy(p + 4 * i, &u, 4);
    }
    char path[256];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    int rc = file_write_atomic(path, buf, bytes, err);
    free(buf);
    sbuf_free(&h);
    if (rc) return rc;
    char cfg[512];
    int n = snprintf(cfg, sizeof cfg,
                     "{\"model_type\":\"llama\",\"vocab_size\":%d,\"hidden_size\":%d,\"intermediate_size\":%d,\"num_hidden_layers\":%d,"
                     "\"num_attention_heads\":8,\"max_position_embeddings\":1024,\"tie_word_embeddings\":true}", V, C, F, L);
    snprintf(path, sizeof path, "%s/config.json", dir);
    return file_write_atomic(path, cfg, (size_t)n, err);
}

// The check alone over every weight array of a loaded model (F32: in place in the mapping; BF16:
// the converted arena). Returns the float count; *bad counts arrays with a NaN or an Inf.
static size_t check_all(const struct model *m, size_t *bad) {
    size_t total = 0;
    *bad = 0;
#define SCAN(x, n) do { size_t n_ = (n); *bad += model_first_nonfinite((x), n_) != n_; total += n_; } while (0)
    SCAN(m->tok_emb, (size_t)V * C);
    for (int l = 0; l < L; l++) {
        const struct layer_weights *w = &m->layers[l];
        SCAN(w->attn_norm_w, C);
        SCAN(w->wq, (size_t)C * C);
        SCAN(w->wk, (size_t)C * C);
        SCAN(w->wv, (size_t)C * C);
        SCAN(w->wo, (size_t)C * C);
        SCAN(w->mlp_norm_w, C);
        SCAN(w->w_gate, (size_t)F * C);
        SCAN(w->w_up, (size_t)F * C);
        SCAN(w->w_down, (size_t)C * F);
    }
    SCAN(m->final_norm_w, C);
#undef SCAN
    return total;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1 || reps > 1000) { fprintf(stderr, "usage: bench_load [repeats 1..1000]\n"); return 2; }
    char dir[] = "/tmp/xsa_bench_load_XXXXXX";
    if (!mkdtemp(dir)) { perror("bench_load: mkdtemp"); return 3; }
    double *load = malloc((size_t)reps * sizeof *load), *check = malloc((size_t)reps * sizeof *check);
    xsa_error err = {0};
    int rc = load && check ? 0 : xsa_fail(&err, XSA_ERUNTIME, "out of memory");
    printf("random llama d_model %d, %d layers, d_ff %d, vocab %d, tied; medians of %d loads\n", C, L, F, V, reps);
    printf("%-5s %10s %10s %9s %9s %10s %10s\n", "dtype", "params", "weights MB", "load ms", "check ms", "check GB/s", "check/load");
    for (int bf16 = 0; bf16 <= 1 && !rc; bf16++) {
        if ((rc = write_checkpoint(dir, bf16, &err))) break;
        struct model m;
        size_t floats = 0, bad = 0;
        long long params = 0;
        for (int r = 0; r < reps && !rc; r++) {
            double t0 = now_s();
            if ((rc = model_load(&m, dir, &err))) break;
            double t1 = now_s();
            floats = check_all(&m, &bad);
            double t2 = now_s();
            load[r] = t1 - t0;
            check[r] = t2 - t1;
            params = m.n_params;
            model_free(&m);
        }
        if (rc) break;
        double lm = median(load, reps), cm = median(check, reps);
        printf("%-5s %10lld %10.1f %9.2f %9.2f %10.2f %9.1f%%%s\n", bf16 ? "BF16" : "F32", params,
               (double)floats * (bf16 ? 2 : 4) / 1e6, 1e3 * lm, 1e3 * cm, (double)floats * 4 / cm / 1e9, 100 * cm / lm,
               bad ? "  (a NaN or Inf found?)" : "");
    }
    if (rc) fprintf(stderr, "bench_load: %s\n", err.msg);
    char path[256];
    static const char *files[] = {"model.safetensors", "config.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    free(load);
    free(check);
    return rc;
}
