// bench_safety.c: what "nothing silently wrong, nothing lost" costs on a random 26.2M llama
// (d_model 512, 8 layers, d_ff 1408, vocab 1024, tied head), written to a temp folder:
//  - the load-time NaN/Inf check of every weight: model_load (which checks) timed against the
//    check alone (model_first_nonfinite over every weight array, the scan the readers run per
//    tensor), F32 (in place in the mapping) and BF16 (converted into the arena; the loader
//    scans each tensor just after converting it, warmer than here: an upper bound);
//  - the run journal: the same synthetic requests (docs of two choices, PIQA-like lengths)
//    scored by the scheduler on the CPU backend, alternately without and with what the run
//    adds (a key per request, the lookup, each finished batch appended to a journal file with
//    the finiteness check and an fsync every REQSTORE_SYNC_S seconds, as eval/run.c does);
//  - both as a fraction of a full run (load + scoring).
// Prints medians; never pass/fail.
// Usage: build/bench/bench_safety [repeats (default 3)] [documents (default 100)]   (from the repo root)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "common/fileio.h"
#include "common/vec.h"
#include "common/xalloc.h"
#include "eval/reqstore.h"
#include "eval/scheduler.h"
#include "kernels/backend.h"
#include "model/model.h"
#include "bench/random_checkpoint.h"
#include "tests/random_model.h"


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

// Synthetic requests: n_docs documents of two choices sharing a context (40-80 tokens), each
// continuation 5-35 tokens. toks holds every request's input. reqs (2 n_docs).
static int32_t *make_requests(int n_docs, struct sched_request *reqs) {
    uint64_t seed = 7;
    int32_t *toks = xsa_calloc((size_t)n_docs * 2 * 120, sizeof *toks);
    int32_t *t = toks;
    for (int d = 0; d < n_docs; d++) {
        int ctx = 40 + (int)((random_model_uniform(&seed) + 1) * 20);
        int32_t c[80];
        for (int i = 0; i < ctx; i++) c[i] = (int32_t)((random_model_uniform(&seed) + 1) * 0.5f * (V - 1));
        for (int k = 0; k < 2; k++) {
            int cont = 5 + (int)((random_model_uniform(&seed) + 1) * 15);
            memcpy(t, c, sizeof(int32_t) * (size_t)ctx);
            for (int i = 0; i < cont; i++) t[ctx + i] = (int32_t)((random_model_uniform(&seed) + 1) * 0.5f * (V - 1));
            reqs[2 * d + k] = (struct sched_request){t, ctx + cont, t + ctx, cont, d};
            t += ctx + cont;
        }
    }
    return toks;
}

struct journal_bench {
    const struct sched_request *reqs;
    uint8_t (*keys)[16], (*bkeys)[16];
    struct reqstore store;
    double spent;  // seconds inside the journal's own work
};

static int journal_batch(void *ctx, const int *req, const struct sched_result *res, int n, xsa_error *err) {
    struct journal_bench *j = ctx;
    double t0 = timing_now_s();
    for (int i = 0; i < n; i++) {
        if (!isfinite(res[i].logprob)) return xsa_fail(err, XSA_ERUNTIME, "non-finite score");
        memcpy(j->bkeys[i], j->keys[req[i]], 16);
    }
    int rc = reqstore_append(&j->store, (const uint8_t (*)[16])j->bkeys, res, n, err);
    j->spent += timing_now_s() - t0;
    return rc;
}

// One scoring of every request: without (journal 0) or with the journal's work. Returns seconds;
// *spent (journal 1) the part of them inside the journal's own work.
static double score_once(struct backend *be, const struct sched_request *reqs, int n, int journal, const char *dir,
                         struct sched_result *res, double *spent, xsa_error *err) {
    struct journal_bench j = {reqs, xsa_malloc((size_t)n * 16), xsa_malloc((size_t)n * 16), {.fd = -1}, 0};
    struct sched_options so = {.batch_tokens = 4096, .share = 1};
    struct sched_stats st;
    char path[256], scope[65];
    snprintf(path, sizeof path, "%s/journal.xsaj", dir);
    memset(scope, 'a', 64);
    scope[64] = '\0';
    double t0 = timing_now_s();
    int rc = 0;
    if (journal) {
        unlink(path);
        rc = reqstore_open(&j.store, path, scope, 1, NULL, err);
        double t1 = timing_now_s();
        for (int k = 0; !rc && k < n; k++) {
            struct sched_result r;
            reqstore_key(&reqs[k], j.keys[k]);
            if (reqstore_find(&j.store, j.keys[k], &r)) rc = xsa_fail(err, XSA_ERUNTIME, "unexpected journal hit");
        }
        j.spent += timing_now_s() - t1;
        so.batch_done = journal_batch;
        so.batch_done_ctx = &j;
    }
    if (!rc) rc = scheduler_score(be, reqs, n, &so, res, &st, err);
    if (journal) {
        double t1 = timing_now_s();
        reqstore_close(&j.store);  // the last fsync
        j.spent += timing_now_s() - t1;
        unlink(path);
    }
    double t = timing_now_s() - t0;
    if (spent) *spent = j.spent;
    free(j.keys);
    free(j.bkeys);
    return rc ? -1 : t;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 3, n_docs = argc > 2 ? atoi(argv[2]) : 100;
    if (reps < 1 || reps > 1000 || n_docs < 1 || n_docs > 100000) {
        fprintf(stderr, "usage: bench_safety [repeats 1..1000] [documents 1..100000]\n");
        return 2;
    }
    char dir[] = "/tmp/xsa_bench_safety_XXXXXX";
    if (!mkdtemp(dir)) { perror("bench_safety: mkdtemp"); return 3; }
    double *load = xsa_calloc((size_t)reps, sizeof *load), *check = xsa_calloc((size_t)reps, sizeof *check);
    double *plain = xsa_calloc((size_t)reps, sizeof *plain), *journ = xsa_calloc((size_t)reps, sizeof *journ);
    double *spent = xsa_calloc((size_t)reps, sizeof *spent);
    double load_f32 = 0, check_f32 = 0;
    xsa_error err = {0};
    int rc = 0;
    printf("random llama d_model %d, %d layers, d_ff %d, vocab %d, tied; medians of %d loads\n", C, L, F, V, reps);
    printf("%-5s %10s %10s %9s %9s %10s %10s\n", "dtype", "params", "weights MB", "load ms", "check ms", "check GB/s", "check/load");
    for (int bf16 = 0; bf16 <= 1 && !rc; bf16++) {
        if ((rc = random_checkpoint_write(dir, bf16, &err))) break;
        struct model m;
        size_t floats = 0, bad = 0;
        long long params = 0;
        for (int r = 0; r < reps && !rc; r++) {
            double t0 = timing_now_s();
            if ((rc = model_load(&m, dir, &err))) break;
            double t1 = timing_now_s();
            floats = check_all(&m, &bad);
            double t2 = timing_now_s();
            load[r] = t1 - t0;
            check[r] = t2 - t1;
            params = m.n_params;
            model_free(&m);
        }
        if (rc) break;
        double lm = bench_median(load, reps), cm = bench_median(check, reps);
        if (!bf16) load_f32 = lm, check_f32 = cm;
        printf("%-5s %10lld %10.1f %9.2f %9.2f %10.2f %9.1f%%%s\n", bf16 ? "BF16" : "F32", params,
               (double)floats * (bf16 ? 2 : 4) / 1e6, 1e3 * lm, 1e3 * cm, (double)floats * 4 / cm / 1e9, 100 * cm / lm,
               bad ? "  (a NaN or Inf found?)" : "");
    }
    // The journal, on the F32 checkpoint (the check above is part of its load).
    struct model m;
    struct backend be;
    int n = 2 * n_docs, have_model = 0, have_be = 0;
    struct sched_request *reqs = xsa_calloc((size_t)n, sizeof *reqs);
    struct sched_result *r0 = xsa_calloc((size_t)n, sizeof *r0), *r1 = xsa_calloc((size_t)n, sizeof *r1);
    int32_t *toks = make_requests(n_docs, reqs);
    if (!rc && !(rc = random_checkpoint_write(dir, 0, &err)) && !(rc = model_load(&m, dir, &err))) have_model = 1;
    struct backend_options bo = {.n_threads = 0, .max_batch_tokens = 4096};
    if (!rc) rc = backend_options_from_env(&bo, &err);
    if (!rc && !(rc = backend_open(&be, "cpu", &m, &bo, &err))) have_be = 1;
    for (int r = 0; r < reps && !rc; r++) {
        plain[r] = score_once(&be, reqs, n, 0, dir, r0, NULL, &err);
        journ[r] = plain[r] < 0 ? -1 : score_once(&be, reqs, n, 1, dir, r1, &spent[r], &err);
        if (plain[r] < 0 || journ[r] < 0) rc = err.code ? err.code : XSA_ERUNTIME;
        for (int k = 0; !rc && k < n; k++)
            if (r0[k].logprob != r1[k].logprob || r0[k].greedy != r1[k].greedy)
                rc = xsa_fail(&err, XSA_ERUNTIME, "the journal changed the score of request %d", k);
    }
    if (!rc) {
        double sp = bench_median(plain, reps), sj = bench_median(journ, reps), js = bench_median(spent, reps), run = load_f32 + sp;
        printf("\n%d requests (%d documents), CPU backend (%s), medians of %d alternating runs\n", n, n_docs,
               be.device_desc, reps);
        printf("  scoring without the journal %8.3f s\n  scoring with the journal    %8.3f s  (difference %+.2f%%: "
               "within this machine's noise when small)\n", sp, sj, 100 * (sj - sp) / sp);
        printf("  time inside the journal's own work (keys, lookups, appends, fsyncs) %.2f ms\n", 1e3 * js);
        printf("  full run (F32 load + scoring) %.3f s: the NaN/Inf check is %.3f%% of it, the journal %.3f%%\n", run,
               100 * check_f32 / run, 100 * js / run);
    }
    if (have_be) backend_close(&be);
    if (have_model) model_free(&m);
    free(reqs), free(r0), free(r1), free(toks), free(plain), free(journ), free(spent);
    if (rc) fprintf(stderr, "bench_safety: %s\n", err.msg);
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
