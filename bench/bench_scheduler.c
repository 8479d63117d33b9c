// bench_scheduler.c: what the request scheduler saves, measured side by side in one run.
//
// For each model and task, the task's requests are encoded as `xsa-eval run` encodes them
// (lm-eval's _encode_pair + truncation) and scored on the CPU backend twice: with shared
// prefixes (one row per document: common prefix once, each choice's remainder a branch) and with
// --no-share (one row per distinct request). Printed per task and in total, for both:
//   requests, unique requests (after dedupe), tokens requested (the sum of the inputs: what
//   scoring each request alone costs, as lm-eval's HFLM does, except that HFLM also reuses one
//   forward for requests with equal contexts and one-token continuations, e.g. BoolQ's yes/no),
//   tokens computed, sharing ratio (requested / computed), wall time of
//   scoring, tokens/s (requested tokens per second: lm-eval-equivalent throughput), computed
//   tokens/s, requests/s, and the largest log-likelihood difference between the two modes.
//
// Models: stories260K (../shared/benchdata, llama2.c) and a random-weight llama of ~26M
// parameters (d 512, 8 layers, 8 heads / 4 KV heads, MLP 1536, vocab 700, context 1024, built in
// memory) with the GPT-2 byte-level tokenizer fixture; or one checkpoint given with --model.
// Data: the real files of ../shared/benchdata (nine tasks, HellaSwag from its text dump), or the
// synthetic rows of tests/fixtures/data when ../shared is absent.
//
// Usage: build/bench/bench_scheduler [--limit N] [--limit-big N] [--tasks LIST] [--threads N]
//            [--batch-tokens N] [--data-dir DIR] [--model PATH [--tokenizer FILE]] [--no-random]
//   --limit N      docs per task for stories260K / --model (default 0: every doc, full size)
//   --limit-big N  docs per task for the random ~26M llama (default 8; 0: every doc)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench/bench_util.h"
#include "data/data.h"
#include "common/xalloc.h"
#include "eval/encode.h"
#include "eval/scheduler.h"
#include "kernels/backend.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "tasks/task.h"
#include "tests/random_model.h"

#define MAX_TASKS 16

struct opts {
    const char *data_dir, *tasks, *model, *tokenizer;
    int limit, limit_big, threads, batch_tokens, random;
};

struct task_set {  // one task's docs, shared by every model
    const struct task_def *def;
    struct task_doc *docs;  // (n_docs)
    int n_docs;
};

struct mode_figures {  // one scheduler_score call
    struct sched_stats st;
    double wall_s;
};

struct totals {
    long long requests, unique, requested, computed[2];
    double wall[2];
};

static const char *shared_path(const char *rel, char *buf, size_t n) {
    const char *root = getenv("XSA_SHARED");  // as tests/check.c: ../shared beside the checkout
    snprintf(buf, n, "%s/benchdata/%s", root ? root : "../shared", rel);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

static int load_tasks(const struct opts *o, struct task_set *ts, int *n_ts, xsa_error *err) {
    const struct task_def *defs[MAX_TASKS];
    int n = 0;
    int rc = task_expand_list(o->tasks, defs, MAX_TASKS, &n, err);
    struct data_options d = {.data_dir = o->data_dir, .offline = 1, .quiet = 1, .allow_data_change = 1};
    *n_ts = 0;
    for (int i = 0; i < n && !rc; i++) {
        cJSON **rows = NULL;
        int n_rows = 0;
        struct data_provenance prov;
        rc = data_load_task(defs[i], &d, &rows, &n_rows, &prov, err);
        if (rc) break;
        ts[i].def = defs[i];
        rc = task_docs_from_rows(defs[i], rows, NULL, n_rows, 0, &ts[i].docs, &ts[i].n_docs, err);
        data_rows_free(rows, n_rows);
        if (!rc) *n_ts = i + 1;
    }
    return rc;
}

// Encodes the first `limit` docs (0: all) of a task as run.c does; req/enc are (*n_req).
// A doc whose request cannot be encoded (e.g. its continuation is longer than the context) is
// left out and counted in *skipped.
static int encode_docs(const struct task_set *ts, int limit, const struct tokenizer *tok, const struct model *m,
                       struct encoded_request **enc_out, struct sched_request **req_out, int *n_req, int *skipped,
                       xsa_error *err) {
    int n_docs = limit > 0 && limit < ts->n_docs ? limit : ts->n_docs, n = 0;
    for (int d = 0; d < n_docs; d++) n += ts->docs[d].n_requests;
    struct encoded_request *enc = xsa_calloc((size_t)n, sizeof *enc);
    struct sched_request *req = xsa_calloc((size_t)n, sizeof *req);
    *enc_out = enc;
    *req_out = req;
    *n_req = 0;
    struct encode_options eo;
    xsa_error e0 = {0};
    encode_options_init(&eo, tok, -1, &e0);  // the tokenizer's default never fails
    eo.max_length = m->cfg.max_seq_len;
    for (int d = 0; d < n_docs; d++) {
        const struct task_doc *doc = &ts->docs[d];
        int first = *n_req;
        for (int c = 0; c < doc->n_requests; c++) {
            int k = *n_req;
            int rc = encode_request(tok, &eo, doc->req[c].context, doc->req[c].continuation, &enc[k], err);
            if (rc == XSA_EBADINPUT) {  // e.g. a continuation longer than the context: lm-eval refuses it too
                fprintf(stderr, "%s doc %d skipped: %s\n", ts->def->name, d, err->msg);
                xsa_error_clear(err);
                encoded_request_free(&enc[k]);
                for (int j = first; j < k; j++) encoded_request_free(&enc[j]);
                *n_req = first;
                (*skipped)++;
                break;
            }
            if (rc) return rc;
            *n_req = k + 1;
            for (size_t i = 0; i < enc[k].input.n; i++)
                if (enc[k].input.v[i] < 0 || enc[k].input.v[i] >= m->cfg.vocab_size)
                    return xsa_fail(err, XSA_EBADINPUT, "%s: token id %d outside the model's vocabulary",
                                    tokenizer_path(tok), enc[k].input.v[i]);
            req[k] = (struct sched_request){.input = enc[k].input.v, .n_input = (int)enc[k].input.n,
                                            .cont = enc[k].cont.v, .n_cont = (int)enc[k].cont.n, .group = d};
        }
    }
    return 0;
}

static void print_header(void) {
    printf("| model | task | mode | requests | unique | tokens requested | tokens computed | sharing ratio | wall s "
           "| tokens/s | computed tok/s | requests/s | speedup | max abs dll |\n");
    printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
}

static void print_pair(const char *model, const char *task, long long requests, long long unique, long long requested,
                       const long long computed[2], const double wall[2], double max_diff) {
    static const char *mode[2] = {"share", "no-share"};
    for (int s = 0; s < 2; s++) {
        double w = wall[s] > 0 ? wall[s] : 1e-9;
        char sp[32] = "", dd[32] = "";
        if (s == 0) {
            snprintf(sp, sizeof sp, "%.2fx", wall[1] / w);
            snprintf(dd, sizeof dd, "%.1e", max_diff);
        }
        printf("| %s | %s | %s | %lld | %lld | %lld | %lld | %.2f | %.2f | %.0f | %.0f | %.1f | %s | %s |\n",
               s == 0 ? model : "", s == 0 ? task : "", mode[s], requests, unique, requested, computed[s],
               computed[s] > 0 ? (double)requested / (double)computed[s] : 0.0, wall[s], requested / w, computed[s] / w,
               requests / w, sp, dd);
    }
    fflush(stdout);
}

// Scores every task with one model, both modes, and prints the rows and the model's total.
static int bench_model(const char *name, const struct model *m, const struct tokenizer *tok, const struct task_set *ts,
                       int n_ts, int limit, const struct opts *o, xsa_error *err) {
    struct backend be;
    struct backend_options bo = {.n_threads = o->threads, .max_batch_tokens = o->batch_tokens};
    int rc = backend_options_from_env(&bo, err);
    if (!rc) rc = backend_open(&be, "cpu", m, &bo, err);
    if (rc) return rc;
    fprintf(stderr, "%s: %lld parameters, %s\n", name, (long long)m->n_params, be.device_desc);
    struct totals tot = {0};
    double enc_s = 0, worst = 0;
    int skipped = 0;
    for (int i = 0; i < n_ts && !rc; i++) {
        struct encoded_request *enc = NULL;
        struct sched_request *req = NULL;
        int n = 0;
        double t0 = timing_now_s();
        rc = encode_docs(&ts[i], limit, tok, m, &enc, &req, &n, &skipped, err);
        enc_s += timing_now_s() - t0;
        struct sched_result *res[2] = {xsa_calloc((size_t)n, sizeof **res), xsa_calloc((size_t)n, sizeof **res)};
        struct mode_figures f[2];
        for (int s = 0; s < 2 && !rc; s++) {
            struct sched_options so = {.batch_tokens = o->batch_tokens, .share = s == 0};
            t0 = timing_now_s();
            rc = scheduler_score(&be, req, n, &so, res[s], &f[s].st, err);
            f[s].wall_s = timing_now_s() - t0;
        }
        if (!rc) {
            double diff = 0;
            int same_pred = 1;
            for (int r = 0; r < n; r++) {
                double d = fabs(res[0][r].logprob - res[1][r].logprob);
                if (d > diff) diff = d;
                if (res[0][r].greedy != res[1][r].greedy) same_pred = 0;
            }
            if (!same_pred) fprintf(stderr, "%s %s: greedy flags differ between the modes\n", name, ts[i].def->name);
            if (diff > worst) worst = diff;
            long long comp[2] = {f[0].st.tokens_computed, f[1].st.tokens_computed};
            double wall[2] = {f[0].wall_s, f[1].wall_s};
            print_pair(name, ts[i].def->name, f[0].st.requests, f[0].st.unique_requests, f[0].st.tokens_requested, comp,
                       wall, diff);
            tot.requests += f[0].st.requests;
            tot.unique += f[0].st.unique_requests;
            tot.requested += f[0].st.tokens_requested;
            for (int s = 0; s < 2; s++) tot.computed[s] += comp[s], tot.wall[s] += wall[s];
        }
        for (int k = 0; enc && k < n; k++) encoded_request_free(&enc[k]);
        free(enc);
        free(req);
        free(res[0]);
        free(res[1]);
    }
    if (!rc) {
        print_pair(name, "**total**", tot.requests, tot.unique, tot.requested, tot.computed, tot.wall, worst);
        fprintf(stderr, "%s: encoding took %.2f s (not in the wall times); %d docs skipped\n", name, enc_s, skipped);
    }
    backend_close(&be);
    return rc;
}

static int bench_checkpoint(const char *path, const char *tok_path, const struct task_set *ts, int n_ts, int limit,
                            const struct opts *o, xsa_error *err) {
    struct model m;
    int rc = model_load(&m, path, err);
    if (rc) return rc;
    char tp[4096];
    struct tokenizer *tok = NULL;
    if (tok_path) snprintf(tp, sizeof tp, "%s", tok_path);
    else rc = tokenizer_find(path, tp, sizeof tp, err);
    if (!rc) rc = tokenizer_load(&tok, tp, err);
    const char *base = strrchr(path, '/');
    if (!rc) rc = bench_model(base && base[1] ? base + 1 : path, &m, tok, ts, n_ts, limit, o, err);
    tokenizer_free(tok);
    model_free(&m);
    return rc;
}

static int bench_random(const struct task_set *ts, int n_ts, const struct opts *o, xsa_error *err) {
    struct random_model_spec sp = {.arch = MODEL_ARCH_LLAMA, .rope = ROPE_HALF, .n_layer = 8, .n_head = 8,
                                   .n_kv_head = 4, .head_dim = 64, .d_model = 512, .d_ff = 1536, .vocab_size = 700,
                                   .max_seq_len = 1024, .seed = 25};
    struct model m;
    random_model_init(&m, &sp);
    struct tokenizer *tok = NULL;
    int rc = tokenizer_load(&tok, "tests/fixtures/tokenizers/gpt2/tokenizer.json", err);
    if (!rc) rc = bench_model("random-llama-26M", &m, tok, ts, n_ts, o->limit_big, o, err);
    tokenizer_free(tok);
    random_model_free(&m);
    return rc;
}

static int parse_int(const char *flag, const char *v, int lo, int *out, xsa_error *err) {
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < lo || x > 1 << 24) return xsa_fail(err, XSA_EBADINPUT, "%s: expects an integer >= %d", flag, lo);
    *out = (int)x;
    return 0;
}

int main(int argc, char **argv) {
    char buf[4096], data[4096], model[4096], tok[4096];
    struct opts o = {.tasks = "all", .limit = 0, .limit_big = 8, .batch_tokens = 4096, .random = 1};
    xsa_error err = {0};
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--limit")) rc = parse_int(a, v, 0, &o.limit, &err), i++;
        else if (!strcmp(a, "--limit-big")) rc = parse_int(a, v, 0, &o.limit_big, &err), i++;
        else if (!strcmp(a, "--threads")) rc = parse_int(a, v, 0, &o.threads, &err), i++;
        else if (!strcmp(a, "--batch-tokens")) rc = parse_int(a, v, 1, &o.batch_tokens, &err), i++;
        else if (!strcmp(a, "--tasks") && v) o.tasks = v, i++;
        else if (!strcmp(a, "--data-dir") && v) o.data_dir = v, i++;
        else if (!strcmp(a, "--model") && v) o.model = v, i++;
        else if (!strcmp(a, "--tokenizer") && v) o.tokenizer = v, i++;
        else if (!strcmp(a, "--no-random")) o.random = 0;
        else rc = xsa_fail(&err, XSA_EBADINPUT, "%s: unknown flag or missing value; see the comment at the top of bench/bench_scheduler.c", a);
    }
    int real = 0;
    if (!rc && !o.data_dir) {
        if (shared_path("arc_easy", buf, sizeof buf)) {
            snprintf(data, sizeof data, "%s", shared_path("", buf, sizeof buf));
            real = 1;
        } else {
            snprintf(data, sizeof data, "tests/fixtures/data");
        }
        o.data_dir = data;
    }
    struct task_set ts[MAX_TASKS] = {{0}};
    int n_ts = 0;
    if (!rc) rc = load_tasks(&o, ts, &n_ts, &err);
    if (!rc) {
        printf("data: %s%s; --batch-tokens %d; threads %d (0: all cores); wall = scheduler + CPU backend only\n\n",
               o.data_dir, real ? " (real files)" : "", o.batch_tokens, o.threads);
        print_header();
    }
    if (!rc && o.model) {
        rc = bench_checkpoint(o.model, o.tokenizer, ts, n_ts, o.limit, &o, &err);
    } else if (!rc) {
        if (shared_path("models/stories260K/stories260K.bin", buf, sizeof buf)) {
            snprintf(model, sizeof model, "%s", buf);
            snprintf(tok, sizeof tok, "%s", shared_path("models/stories260K/tok512.bin", buf, sizeof buf) ? buf : "");
            rc = bench_checkpoint(model, tok[0] ? tok : NULL, ts, n_ts, o.limit, &o, &err);
        } else {
            fprintf(stderr, "stories260K: ../shared/benchdata absent, skipped\n");
        }
        if (!rc && o.random) rc = bench_random(ts, n_ts, &o, &err);
    }
    for (int i = 0; i < n_ts; i++) task_docs_free(ts[i].docs, ts[i].n_docs);
    if (rc) fprintf(stderr, "bench_scheduler: %s\n", err.msg);
    return rc;
}
