// run_ranks.c: data-parallel runs of `xsa-eval run` (docs/distributed.md). Rank 0 runs the
// pipeline (run.c); every other rank runs run_ranks_worker, driven by rank 0's commands: MODEL
// (open model i and its rank journal), SCORE (a share of one task's requests, answered with
// their results), MODEL_END (the results are written: drop the journal), QUIT.
// With one rank no message is ever sent and the functions below do nothing.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "eval/dist.h"
#include "eval/reqstore.h"
#include "eval/run_internal.h"
#include "eval/shard.h"

enum { TAG_CMD = 1, TAG_REQS = 2, TAG_RES = 3 };
enum { CMD_MODEL = 1, CMD_SCORE, CMD_MODEL_END, CMD_QUIT };

struct rank_cmd {
    int32_t kind, model;
    char run_scope[65];
    char numerics[128];     // rank 0's backend numerics (CMD_MODEL): every rank must score the same bits
    char model_scope[65];   // rank 0's model (CMD_MODEL, journal_scopes): weights, configuration, numerics
    char weights[65];       // rank 0's weights sha256, to name in a refusal
};

static int ranks_command(int to, int kind, int model, const char *run_scope, const struct model_run *mr,
                         const char *model_scope, xsa_error *err) {
    struct rank_cmd c = {.kind = kind, .model = model};
    if (run_scope) memcpy(c.run_scope, run_scope, sizeof c.run_scope);
    if (mr) snprintf(c.numerics, sizeof c.numerics, "%s", mr->be.numerics);
    if (mr) snprintf(c.weights, sizeof c.weights, "%s", mr->m.weights_sha256);
    if (model_scope) memcpy(c.model_scope, model_scope, sizeof c.model_scope);
    int rc = 0;
    for (int r = to < 0 ? 1 : to; !rc && r < (to < 0 ? dist_size() : to + 1); r++)
        rc = dist_send(r, TAG_CMD, &c, sizeof c, err);
    return rc;
}

int run_ranks_model_begin(int model_index, const char run_scope[65], const struct model_run *mr,
                             const char model_scope[65], xsa_error *err) {
    return ranks_command(-1, CMD_MODEL, model_index, run_scope, mr, model_scope, err);
}

// The results are written: the other ranks drop their journals, and so does rank 0 for ranks
// an earlier launch of the run had and this one has not.
int run_ranks_model_end(const char *dir, const char run_scope[65], xsa_error *err) {
    int rc = ranks_command(-1, CMD_MODEL_END, 0, NULL, NULL, NULL, err);
    // (one process too: a rerun without mpirun leaves no earlier launch's rank journals behind)
    if (!rc) journal_remove_ranks(dir, run_scope);
    return rc;
}

// Each other rank's share of the requests (remote: those not in rank 0's journal), in order.
int run_ranks_send_shares(const struct task_work *w, const int *owner, const int *remote, int n_remote, xsa_error *err) {
    int *idx = xsa_malloc(((size_t)n_remote + 1) * sizeof *idx), rc = 0;
    for (int r = 1; !rc && r < dist_size(); r++) {
        int n = 0;
        for (int i = 0; i < n_remote; i++)
            if (owner[remote[i]] == r) idx[n++] = remote[i];
        struct sbuf b = {0};
        shard_pack_requests(w->req, idx, n, &b);
        rc = ranks_command(r, CMD_SCORE, 0, NULL, NULL, NULL, err);
        if (!rc) rc = dist_send(r, TAG_REQS, b.s, b.n, err);
        sbuf_free(&b);
    }
    free(idx);
    return rc;
}

// The other ranks' results into w->res, checked and journaled as this rank's own batches are.
int run_ranks_gather_shares(const struct task_scoring *ts, const int *owner, const int *remote, int n_remote,
                            struct sched_stats *st, long long reused_rt[2], xsa_error *err) {
    int *idx = xsa_malloc(((size_t)n_remote + 1) * sizeof *idx), rc = 0;
    struct sched_result *res = xsa_malloc(((size_t)n_remote + 1) * sizeof *res);
    uint8_t *from_journal = xsa_malloc((size_t)n_remote + 1);
    for (int r = 1; !rc && r < dist_size(); r++) {
        int n = 0;
        for (int i = 0; i < n_remote; i++)
            if (owner[remote[i]] == r) idx[n++] = remote[i];
        char *buf;
        size_t len;
        long long computed = 0;
        rc = dist_recv(r, TAG_RES, &buf, &len, err);
        if (!rc) rc = shard_unpack_results(buf, len, res, from_journal, n, &computed, err);
        free(buf);
        for (int i = 0; !rc && i < n; i++) {
            int k = idx[i];
            rc = run_check_finite(ts, k, res[i].logprob, err);
            ts->w->res[k] = res[i];
            memcpy(ts->bkeys[i], ts->keys[k], 16);
            st->tokens_requested += ts->w->req[k].n_input;  // (requests: score_task counts every one)
            if (from_journal[i]) reused_rt[0]++, reused_rt[1] += ts->w->req[k].n_input;
        }
        st->tokens_computed += computed;
        if (!rc) rc = journal_record(ts->jn, (const uint8_t (*)[16])ts->bkeys, res, n, err);
    }
    free(idx);
    free(res);
    free(from_journal);
    return rc;
}

// A worker rank's state: its model, its own journal, the keys of the share being scored,
// and a test-only failure.
struct worker {
    const struct run_options *opt;
    struct model_run mr;
    struct results r;      // what open_model fills (the batch size); never written
    struct run_journal jn;
    int open, have_jn;
    uint8_t (*keys)[16];   // (n_todo) keys of the requests given to the scheduler
    uint8_t (*bkeys)[16];  // (n_todo) scratch: one batch's keys
    long fail_after;       // see test_fail_after; -1: never
    long batches;
};

// XSA_TEST_FAIL_RANK=R[:B], for tests of the failure path only: rank R (>= 1) fails after
// journaling its B-th batch (default 1), as a GPU error or an OOM would.
static long test_fail_after(void) {
    const char *s = getenv("XSA_TEST_FAIL_RANK");
    if (!s || *s < '0' || *s > '9') return -1;
    char *end;
    long r = strtol(s, &end, 10), b = 1;
    if (*end == ':') b = strtol(end + 1, &end, 10);
    return r == dist_rank() && b >= 1 ? b : -1;
}

static int worker_batch_done(void *ctx, const int *req, const struct sched_result *res, int n, xsa_error *err) {
    struct worker *wk = ctx;
    // A non-finite score goes back to rank 0, which names its document; it is never journaled.
    int finite = 1;
    for (int i = 0; i < n; i++) {
        finite &= isfinite(res[i].logprob) != 0;
        memcpy(wk->bkeys[i], wk->keys[req[i]], 16);
    }
    int rc = finite && wk->have_jn ? journal_record(&wk->jn, (const uint8_t (*)[16])wk->bkeys, res, n, err) : 0;
    if (!rc && ++wk->batches == wk->fail_after)
        rc = xsa_fail(err, XSA_ERUNTIME, "failing on purpose after %ld batches (XSA_TEST_FAIL_RANK=%s, a test setting)",
                      wk->batches, getenv("XSA_TEST_FAIL_RANK"));
    return rc;
}

static void worker_close(struct worker *wk, int success) {
    if (wk->have_jn) journal_close(&wk->jn, success);
    if (wk->open) run_model_close(&wk->mr);
    results_free(&wk->r);
    memset(&wk->r, 0, sizeof wk->r);
    wk->have_jn = wk->open = 0;
}

// CMD_MODEL: the model, and this rank's journal beside rank 0's (of rank 0's run scope), so
// that a rerun of the same command resumes it.
static int worker_open(struct worker *wk, const struct rank_cmd *c, xsa_error *err) {
    const struct run_options *opt = wk->opt;
    if (c->model < 0 || c->model >= opt->n_models || !memchr(c->run_scope, 0, sizeof c->run_scope) ||
        !memchr(c->numerics, 0, sizeof c->numerics) || !memchr(c->model_scope, 0, sizeof c->model_scope) ||
        !memchr(c->weights, 0, sizeof c->weights))
        return xsa_fail(err, XSA_ERUNTIME, "rank 0 sent a malformed model command (were all ranks started from the "
                        "same xsa-eval binary and command line?)");
    char names[RUN_MAX_MODELS][256], dir[4096], no_cache[65] = "";
    run_model_names(opt, names);
    int rc = run_model_open(opt, opt->models[c->model], opt->hub[c->model], names[c->model], &wk->mr, &wk->r, err);
    wk->open = 1;
    // Other kernels (another CPU, a forced XSA_CPU_*) could score other last bits.
    if (!rc && strcmp(wk->mr.be.numerics, c->numerics))
        rc = xsa_fail(err, XSA_EBADINPUT, "this rank's backend computes as \"%s\" but rank 0's as \"%s\", so their "
                      "scores could differ in the last bits; give every rank the same kernels (XSA_CPU_GEMM, "
                      "XSA_CPU_ATTN) or the same kind of machine", wk->mr.be.numerics, c->numerics);
    // The same model on every rank: a stale node-local copy or another command line would mix
    // two models' scores into one results file (and into rank 0's journal).
    char model_scope[65], run_scope[65];
    if (!rc) rc = journal_scopes(&wk->mr.m, wk->mr.be.numerics, "", model_scope, run_scope, err);
    if (!rc && strcmp(model_scope, c->model_scope))
        rc = xsa_fail(err, XSA_EBADINPUT, "this rank's %s is not the model rank 0 loaded (%s): every rank must read "
                      "the same checkpoint with the same flags", opt->models[c->model],
                      strcmp(wk->mr.m.weights_sha256, c->weights) ? "other weights" : "the same weights, another "
                      "configuration or --xsa/--max-length");
    snprintf(dir, sizeof dir, "%s/%s", opt->output, names[c->model]);
    if (!rc) rc = file_mkdirs(dir, "choose a writable --output folder", err);
    if (!rc) rc = journal_open(&wk->jn, dir, NULL, no_cache, c->run_scope, dist_rank(), opt->resume, 1, err);
    wk->have_jn = !rc;
    if (!rc && wk->jn.have_journal && wk->jn.journal.n && !opt->quiet)
        fprintf(stderr, "xsa-eval: rank %d: resuming from %s: %zu distinct requests already scored\n", dist_rank(),
                wk->jn.journal_path, wk->jn.journal.n);
    return rc;
}

// CMD_SCORE: one share of a task's requests; what this rank's journal holds is taken from it,
// the rest is scored with the scheduler, exactly as one process would; all go back to rank 0.
static int worker_score(struct worker *wk, xsa_error *err) {
    char *buf;
    size_t len;
    struct sched_request *reqs = NULL, *sub = NULL;
    int32_t *tokens = NULL;
    int n = 0, rc = dist_recv(0, TAG_REQS, &buf, &len, err);
    if (!rc && !wk->open) rc = xsa_fail(err, XSA_ERUNTIME, "rank 0 sent requests before a model");
    if (!rc) rc = shard_unpack_requests(buf, len, &reqs, &tokens, &n, err);
    free(buf);
    size_t cap = (size_t)n + 1;
    struct sched_result *res = xsa_calloc(cap, sizeof *res), *sub_res = xsa_calloc(cap, sizeof *sub_res);
    uint8_t *from_journal = xsa_calloc(cap, 1);  // (n) answered from this rank's journal
    int *todo = xsa_malloc(cap * sizeof *todo), n_todo = 0;
    sub = xsa_malloc(cap * sizeof *sub);
    wk->keys = xsa_malloc(cap * 16);
    wk->bkeys = xsa_malloc(cap * 16);
    for (int i = 0; !rc && i < n; i++) {
        uint8_t key[16];
        reqstore_key(&reqs[i], key);
        if (journal_lookup(&wk->jn, key, &res[i])) {
            from_journal[i] = 1;
            continue;
        }
        memcpy(wk->keys[n_todo], key, 16);
        todo[n_todo] = i;
        sub[n_todo++] = reqs[i];
    }
    struct sched_options so = {.batch_tokens = wk->r.batch_tokens, .share = wk->opt->share,
                               .batch_done = worker_batch_done, .batch_done_ctx = wk, .stop = &run_stop_requested};
    struct sched_stats st = {0};
    if (!rc) rc = scheduler_score(&wk->mr.be, sub, n_todo, &so, sub_res, &st, err);
    for (int i = 0; !rc && i < n_todo; i++) res[todo[i]] = sub_res[i];
    struct sbuf out = {0};
    if (!rc) shard_pack_results(res, from_journal, n, st.tokens_computed, &out);
    if (!rc) rc = dist_send(0, TAG_RES, out.s, out.n, err);
    sbuf_free(&out);
    free(reqs), free(tokens), free(sub), free(res), free(sub_res), free(todo), free(wk->keys), free(wk->bkeys);
    free(from_journal);
    wk->keys = wk->bkeys = NULL;
    return rc;
}

// A rank other than 0: rank 0's commands until CMD_QUIT.
int run_ranks_worker(const struct run_options *opt, xsa_error *err) {
    struct worker wk = {.opt = opt, .fail_after = test_fail_after()};
    int rc = 0;
    for (;;) {
        char *buf;
        size_t len;
        struct rank_cmd c = {0};
        if ((rc = dist_recv(0, TAG_CMD, &buf, &len, err))) break;
        if (len == sizeof c) memcpy(&c, buf, sizeof c);
        free(buf);
        if (c.kind == CMD_QUIT) break;
        if (c.kind == CMD_MODEL) {
            worker_close(&wk, 0);
            rc = worker_open(&wk, &c, err);
        } else if (c.kind == CMD_SCORE) {
            rc = worker_score(&wk, err);
        } else if (c.kind == CMD_MODEL_END) {
            worker_close(&wk, 1);
        } else {
            rc = xsa_fail(err, XSA_ERUNTIME, "rank 0 sent an unknown command (%d): were all ranks started from the same "
                          "xsa-eval binary?", (int)c.kind);
        }
        if (rc) break;
    }
    worker_close(&wk, 0);
    return rc;
}

// The run is over: every other rank ends.
int run_ranks_quit(xsa_error *err) { return ranks_command(-1, CMD_QUIT, 0, NULL, NULL, NULL, err); }
