// run.c: the evaluation pipeline of `xsa-eval run`:
// data -> docs -> token ids (lm-eval _encode_pair) -> scheduler + backend -> metrics ->
// results JSON, samples JSONL, a table on stdout, and for two models the comparison report.
#include "eval/run_internal.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/signals.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "eval/dist.h"
#include "eval/encode.h"
#include "eval/fewshot.h"
#include "eval/journal.h"
#include "eval/outdir.h"
#include "eval/results.h"
#include "eval/samples.h"
#include "eval/scheduler.h"
#include "eval/shard.h"
#include "eval/task_metrics.h"
#include "eval/trend.h"
#include "kernels/backend.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "tasks/task.h"

#define RUN_MAX_TASKS 32


static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int load_task_data(const struct run_options *opt, const struct task_def *t, struct task_data *td,
                          xsa_error *err) {
    memset(td, 0, sizeof *td);
    td->def = t;
    cJSON **rows = NULL;
    int n_rows = 0;
    int rc = data_load_task(t, &opt->data, &rows, &n_rows, &td->prov, err);
    if (rc) return rc;
    td->n_rows = n_rows;
    char **where = data_row_names(td->prov.source, n_rows);
    int n_all = 0;
    if (!rc) rc = task_docs_from_rows(t, rows, where, n_rows, 0, &td->docs, &n_all, err);
    td->n_rows = n_all;
    if (!rc && opt->num_fewshot > 0) td->row_json = fewshot_row_json(rows, n_rows);
    td->n_docs = opt->limit > 0 && opt->limit < n_all ? opt->limit : n_all;
    if (opt->limit_fraction > 0 && opt->limit_fraction < 1)  // lm-eval: int(math.ceil(len(docs) * limit))
        td->n_docs = (int)ceil((double)n_all * opt->limit_fraction);
    data_row_names_free(where, n_rows);
    data_rows_free(rows, n_rows);
    int bad_gold = 0;
    for (int d = 0; !rc && t->output != TASK_LOGLIKELIHOOD && d < td->n_docs; d++) bad_gold += td->docs[d].gold < 0;
    // Warnings about the data, so --quiet (no progress line) keeps them.
    if (bad_gold)
        fprintf(stderr, "xsa-eval: %s: %d documents have a label outside their choices; like lm-eval, they count as wrong\n",
                t->name, bad_gold);
    if (!rc) data_warn_preprocessed(t, &td->prov);
    return rc;
}

struct progress_ctx {
    const char *model, *task;
    double t0;
    int tty;
};

static void progress_line(void *ctx, long done, long total) {
    struct progress_ctx *p = ctx;
    if (!p->tty) return;
    double el = now_s() - p->t0;
    double rate = el > 0 ? done / el : 0;
    fprintf(stderr, "\r%s  %-15s %6ld/%-6ld requests  %7.1f req/s  ETA %4.0fs ", p->model, p->task, done, total,
            rate, rate > 0 ? (total - done) / rate : 0.0);
    if (done == total) fputc('\n', stderr);
}


void run_model_close(struct model_run *mr) {
    if (mr->be_open) backend_close(&mr->be);
    tokenizer_free(mr->tok);
    if (mr->loaded) model_free(&mr->m);
    memset(mr, 0, sizeof *mr);
}

// The checkpoint (with --config and --xsa) into *m, *loaded set once it is, and its tokenizer
// (--tokenizer, else the one beside it) into *tok from tpath.
static int load_model_files(const struct run_options *opt, const char *path, struct model *m, int *loaded,
                            struct tokenizer **tok, char *tpath, size_t tpath_n, xsa_error *err) {
    int rc = model_load_config(m, path, opt->config, err);
    if (rc) return rc;
    *loaded = 1;
    if (!opt->quiet) model_print_notes(m);
    if (opt->xsa && (rc = model_apply_xsa_spec(&m->cfg, opt->xsa, err))) return rc;
    if (opt->xsa) snprintf(m->xsa_source, sizeof m->xsa_source, "--xsa");
    // Found now, not at the first long request after other tasks were scored.
    int plim = model_position_limit(&m->cfg);
    if (plim && opt->max_length > plim)
        return xsa_fail(err, XSA_EBADINPUT, "--max-length %d: %s encodes positions below %d only (%s); give --max-length "
                        "%d or less, or leave it out", opt->max_length, path, plim,
                        m->cfg.arch == MODEL_ARCH_GPT2 || m->cfg.learned_pos ? "its learned position table" : "dynamic RoPE scaling", plim);
    if (opt->tokenizer)
        snprintf(tpath, tpath_n, "%s", opt->tokenizer);
    else if ((rc = tokenizer_find(path, tpath, tpath_n, err)))
        return rc;
    return tokenizer_load(tok, tpath, err);
}

int run_model_open(const struct run_options *opt, const char *path, const struct hub_model *hub, const char *name,
                      struct model_run *mr,
                      struct results *r, xsa_error *err) {
    memset(mr, 0, sizeof *mr);
    double t0 = now_s();
    char tpath[4096];
    int rc = load_model_files(opt, path, &mr->m, &mr->loaded, &mr->tok, tpath, sizeof tpath, err);
    const char *note = rc || opt->tokenizer ? NULL : tokenizer_parity_note(path, tpath);
    if (note) fprintf(stderr, "xsa-eval: note: %s: %s\n", path, note);
    if (rc) return rc;
    if (tokenizer_class_note(mr->tok) && !opt->quiet)
        fprintf(stderr, "xsa-eval: note: %s: %s\n", tpath, tokenizer_class_note(mr->tok));
    if (tokenizer_vocab_size(mr->tok) > mr->m.cfg.vocab_size)
        fprintf(stderr, "xsa-eval: note: %s has %d tokens but the model's vocabulary is %d; ids past it are refused\n",
                tpath, tokenizer_vocab_size(mr->tok), mr->m.cfg.vocab_size);
    struct backend_options bo = {.n_threads = opt->threads, .max_batch_tokens = opt->batch_tokens, .quiet = opt->quiet};
    if ((rc = backend_options_from_env(&bo, err))) return rc;
    if ((rc = backend_open_dtype(&mr->be, opt->device, opt->dtype, &mr->m, &bo, err))) return rc;
    mr->be_open = 1;

    if ((rc = results_set_model(r, &mr->m, path, name, tpath, err))) return rc;
    long long step;
    char step_note[TREND_NOTE_MAX] = "";
    const char *step_from = r->has_step ? NULL : trend_checkpoint_step(path, mr->m.has_train_step ? &mr->m.train_step : NULL,
                                                                         hub ? hub->revision : NULL, &step, step_note, sizeof step_note);
    if (step_note[0] && !opt->quiet) fprintf(stderr, "xsa-eval: note: %s\n", step_note);
    if (step_from) {  // recorded now: report --trend must not read a checkpoint folder that has moved on
        r->has_step = 1, r->step = (int)step;
        snprintf(r->step_source, sizeof r->step_source, "%s", step_from);
    }
    if (hub) {
        snprintf(r->model.hub_repo, sizeof r->model.hub_repo, "%s", hub->repo);
        snprintf(r->model.hub_revision, sizeof r->model.hub_revision, "%s", hub->revision);
        snprintf(r->model.hub_commit, sizeof r->model.hub_commit, "%s", hub->commit);
    }
    r->model.max_length = opt->max_length > 0 ? opt->max_length : mr->m.cfg.max_seq_len;
    struct encode_options eo;  // --add-bos refused here, before any data is read, where lm-eval adds none
    if (encode_options_init(&eo, mr->tok, opt->add_bos, err)) return XSA_EBADINPUT;
    r->model.add_bos = opt->add_bos == 0 ? 0 : (tokenizer_adds_bos(mr->tok) || opt->add_bos == 1);
    snprintf(r->device, sizeof r->device, "%s", mr->be.name);
    snprintf(r->device_desc, sizeof r->device_desc, "%s", mr->be.device_desc);
    // --batch-tokens, else what the backend's device is sized for (every backend sets it)
    r->batch_tokens = opt->batch_tokens > 0 ? opt->batch_tokens : mr->be.batch_tokens;
    r->load_s = now_s() - t0;
    return 0;
}

// Encodes every request of a task; req/enc are (n_req); first_req (n_docs).
static int encode_task(const struct run_options *opt, const struct task_data *td, struct model_run *mr,
                       const struct fewshot *fs, struct encoded_request *enc, struct sched_request *req,
                       int *first_req, int *truncated, xsa_error *err) {
    struct encode_options eo;
    if (encode_options_init(&eo, mr->tok, opt->add_bos, err)) return XSA_EBADINPUT;
    eo.max_length = opt->max_length > 0 ? opt->max_length : mr->m.cfg.max_seq_len;
    struct sbuf ctx = {0}, prefix = {0};
    eo.prefix_text = encode_prefix_text(mr->tok, eo.prefix_token_id, &prefix);
    int k = 0, rc = 0;
    *truncated = 0;
    for (int d = 0; d < td->n_docs && !rc; d++) {
        const struct task_doc *doc = &td->docs[d];
        first_req[d] = k;
        for (int c = 0; c < doc->n_requests && !rc; c++, k++) {
            ctx.n = 0;
            if (fs && (rc = fewshot_context(fs, d, &ctx, err))) break;
            sbuf_puts(&ctx, doc->req[c].context);
            rc = encode_request(mr->tok, &eo, ctx.s, doc->req[c].continuation, &enc[k], err);
            if (rc) {
                char msg[sizeof err->msg];
                snprintf(msg, sizeof msg, "%s", err->msg);
                err->code = 0;
                rc = xsa_fail(err, rc, "%s: %s doc %d request %d: %s", td->prov.source, td->def->name, doc->doc_id, c, msg);
                break;
            }
            rc = encode_check_vocab(&enc[k], mr->m.cfg.vocab_size, tokenizer_path(mr->tok), err);
            *truncated += enc[k].truncated;
            req[k] = (struct sched_request){
                .input = enc[k].input.v, .n_input = (int)enc[k].input.n,
                .cont = enc[k].cont.v, .n_cont = (int)enc[k].cont.n, .group = d,
            };
        }
    }
    sbuf_free(&ctx);
    sbuf_free(&prefix);
    return rc;
}

// What the scheduler saved and how fast the backend went, on stderr (not with --quiet).
// Of the requests scored in this launch: those the journal or the request cache gave back are
// neither work done nor shared prefixes (evaluate_model says how many there were).
static void print_throughput(const struct results *r, const struct run_options *opt) {
    long long req = r->requests - r->requests_reused, tok = r->tokens_scored - r->tokens_reused;
    if (opt->quiet || req <= 0) return;
    double s = r->score_s > 0 ? r->score_s : 1e-9;
    fprintf(stderr, "xsa-eval: %s: %lld requests, %lld tokens requested, %lld computed (%.2fx fewer, %s); "
            "scored in %.2f s: %.0f requests/s, %.0f computed tokens/s (%s, %d-token batches)\n",
            r->model.name, req, tok, r->tokens_computed, r->tokens_computed > 0 ? (double)tok / (double)r->tokens_computed : 0.0,
            opt->share ? "shared prefixes" : "--no-share", r->score_s, (double)req / s, (double)r->tokens_computed / s,
            r->device, r->batch_tokens);
}


static void task_work_free(struct task_work *w) {
    for (int k = 0; w->enc && k < w->n_req; k++) encoded_request_free(&w->enc[k]);
    if (w->have_fs) fewshot_free(&w->fs);
    free(w->enc);
    free(w->req);
    free(w->res);
    free(w->first_req);
    memset(w, 0, sizeof *w);
}

static int task_work_encode(const struct run_options *opt, const struct task_data *td, struct model_run *mr,
                            struct task_work *w, int *truncated, xsa_error *err) {
    memset(w, 0, sizeof *w);
    for (int d = 0; d < td->n_docs; d++) w->n_req += td->docs[d].n_requests;
    w->enc = xsa_calloc((size_t)w->n_req + 1, sizeof *w->enc);
    w->req = xsa_calloc((size_t)w->n_req + 1, sizeof *w->req);
    w->res = xsa_calloc((size_t)w->n_req + 1, sizeof *w->res);
    w->first_req = xsa_calloc((size_t)td->n_docs + 1, sizeof *w->first_req);
    if (opt->num_fewshot > 0) {
        int rc = fewshot_prepare(&w->fs, td->def, td->docs, td->row_json, td->n_rows, td->n_docs, opt->num_fewshot,
                                 &opt->data, err);
        if (rc) return rc;
        w->have_fs = 1;
    }
    return encode_task(opt, td, mr, w->have_fs ? &w->fs : NULL, w->enc, w->req, w->first_req, truncated, err);
}


// A log-likelihood that is not finite is an error, never a score (it would make the first
// choice win every document).
int run_check_finite(const struct task_scoring *ts, int k, double logprob, xsa_error *err) {
    if (isfinite(logprob)) return 0;
    int d = 0;
    while (d + 1 < ts->td->n_docs && ts->w->first_req[d + 1] <= k) d++;
    return xsa_fail(err, XSA_ERUNTIME, "%s doc %d request %d: the model's log-likelihood is %g: its forward pass "
                    "overflowed or its weights are damaged, so there is no score to report (no results were written)",
                    ts->td->def->name, ts->td->docs[d].doc_id, k - ts->w->first_req[d], logprob);
}

static int on_batch_done(void *ctx, const int *req, const struct sched_result *res, int n, xsa_error *err) {
    struct task_scoring *ts = ctx;
    for (int i = 0; i < n; i++) {
        int k = ts->todo[req[i]], rc = run_check_finite(ts, k, res[i].logprob, err);
        if (rc) return rc;
        memcpy(ts->bkeys[i], ts->keys[k], 16);
    }
    return journal_record(ts->jn, (const uint8_t (*)[16])ts->bkeys, res, n, err);
}

// Scores a task's requests into w->res: those the journal or the request cache holds are
// taken from it (their bits are what scoring them gives: scores never depend on the batch),
// the rest go to the scheduler, and every finished batch is journaled. With several ranks, the
// other ranks' shares (shard_assign) are sent before this rank scores its own, then gathered.
static int score_task(struct model_run *mr, const struct task_data *td, struct task_work *w, struct run_journal *jn,
                      struct sched_options *so, struct sched_stats *st, long long reused[2], xsa_error *err) {
    size_t n = (size_t)w->n_req + 1;
    uint8_t (*keys)[16] = xsa_malloc(n * 16), (*bkeys)[16] = xsa_malloc(n * 16);
    int *todo = xsa_malloc(n * sizeof *todo);
    struct sched_request *sub = xsa_malloc(n * sizeof *sub);
    struct sched_result *sub_res = xsa_malloc(n * sizeof *sub_res);
    int *owner = xsa_malloc(n * sizeof *owner), *remote = xsa_malloc(n * sizeof *remote);  // (n_req), (n_remote)
    shard_assign(w->req, w->n_req, so->share, mr->m.cfg.d_model, dist_size(), owner);  // all 0 with one rank
    int rc = 0;
    int n_todo = 0, n_remote = 0;
    long long reused_tokens = 0;
    for (int k = 0; !rc && k < w->n_req; k++) {
        reqstore_key(&w->req[k], keys[k]);
        if (journal_lookup(jn, keys[k], &w->res[k])) {
            reused_tokens += w->req[k].n_input;
            continue;
        }
        if (owner[k]) {  // another rank's share (data-parallel runs, below)
            remote[n_remote++] = k;
            continue;
        }
        todo[n_todo] = k;
        sub[n_todo++] = w->req[k];
    }
    struct task_scoring ts = {td, w, todo, keys, bkeys, jn};
    so->batch_done = on_batch_done;
    so->batch_done_ctx = &ts;
    if (n_remote) rc = run_ranks_send_shares(w, owner, remote, n_remote, err);
    if (!rc) rc = scheduler_score(&mr->be, sub, n_todo, so, sub_res, st, err);
    for (int i = 0; !rc && i < n_todo; i++) w->res[todo[i]] = sub_res[i];
    reused[0] = w->n_req - n_todo - n_remote, reused[1] = reused_tokens;  // (requests, tokens) from rank 0's journal or cache
    if (!rc && n_remote) rc = run_ranks_gather_shares(&ts, owner, remote, n_remote, st, reused, err);
    st->requests += w->n_req - n_todo;  // as an uninterrupted run counts them
    st->tokens_requested += reused_tokens;
    free(keys), free(bkeys), free(todo), free(sub), free(sub_res), free(owner), free(remote);
    return rc;
}

// The run settings a journal is valid for, besides the model (journal_scopes): the tokenizer,
// every option that changes a request's tokens or which documents run, and the data digests.
static void run_settings(const struct run_options *opt, const struct results *r, const struct task_data *tds,
                         int n_tasks, struct sbuf *out) {
    sbuf_printf(out, "tokenizer %s\nadd_bos %d\nmax_length %d\nnum_fewshot %d\nlimit %d %.17g\n",
                r->model.tokenizer_sha256, r->model.add_bos, r->model.max_length, opt->num_fewshot, opt->limit,
                opt->limit_fraction);
    for (int i = 0; i < n_tasks; i++) sbuf_printf(out, "task %s %s\n", tds[i].def->name, tds[i].prov.sha256);
}

// XSA_TEST_KILL_AT=<point>, for tests only: the process kills itself (SIGKILL) at that point,
// so that a test reaches a window between two writes without racing a timer.
static void test_kill_point(const char *point) {
    const char *at = getenv("XSA_TEST_KILL_AT");
    if (at && !strcmp(at, point)) raise(SIGKILL);
}

// SIGINT / SIGTERM: scoring stops after the batch in flight; the journal keeps what was done.
volatile sig_atomic_t run_stop_requested;
static void on_stop_signal(int sig) {
    (void)sig;
    run_stop_requested = 1;
}

// Scores every task with one model and writes its results; *out_path receives the file and
// run_scope the run's scope (journal_scopes). Results that an interrupted launch of the same
// command wrote (journal_mark_done) are read back instead.
static int evaluate_model(const struct run_options *opt, int model_index, const char *path, const struct hub_model *hub,
                          const char *name, struct task_data *tds, int n_tasks, const char *stamp, struct results *r,
                          char *out_path, size_t out_n, char run_scope[65], int *was_reused, xsa_error *err) {
    memset(r, 0, sizeof *r);
    snprintf(r->version, sizeof r->version, "%s", XSA_EVAL_VERSION);
    r->command = xsa_strdup(opt->command ? opt->command : "");
    r->limit = opt->limit;
    r->limit_fraction = opt->limit_fraction;
    r->num_fewshot = opt->num_fewshot;
    r->has_step = opt->has_step;
    r->step = opt->step;
    if (opt->has_step) snprintf(r->step_source, sizeof r->step_source, "--step");
    r->share_prefixes = opt->share;
    r->start_time = now_s();
    struct model_run mr;
    int rc = run_model_open(opt, path, hub, name, &mr, r, err);
    // What runs: the CPU backend caps --threads at what it can start.
    r->threads = mr.be_open && mr.be.n_threads > 0 ? mr.be.n_threads
                 : opt->threads > 0                 ? opt->threads
                                                    : (int)sysconf(_SC_NPROCESSORS_ONLN);
    r->tasks = xsa_calloc((size_t)n_tasks, sizeof *r->tasks);
    char dir[4096];
    if (!rc) {
        snprintf(dir, sizeof dir, "%s/%s", opt->output, r->model.name);
        rc = outdir_prepare_dir("--output", dir, err);
    }
    if (!rc) outdir_sweep(dir);  // what killed runs left behind (their journals stay)
    struct run_journal jn = {0};
    struct sbuf settings = {0};
    char model_scope[65];
    int have_jn = 0, reused = 0;
    run_scope[0] = '\0';
    if (!rc) run_settings(opt, r, tds, n_tasks, &settings);
    if (!rc) rc = journal_scopes(&mr.m, mr.be.numerics, settings.s, model_scope, run_scope, err);
    sbuf_free(&settings);
    if (!rc && !opt->resume) journal_forget_done(dir, run_scope);
    // The launch a mark must match: this version and this command line, whole (--step,
    // --log-samples and the other model included).
    struct sbuf launch = {0};
    int marks = opt->command != NULL;
    if (marks) sbuf_printf(&launch, "xsa-eval %s\n%s", XSA_EVAL_VERSION, opt->command);
    char prev[4200];
    if (!rc && marks && journal_done_results(dir, run_scope, launch.s, prev, sizeof prev) && strlen(prev) < out_n) {
        struct results old;
        xsa_error rerr = {0};
        if (results_read_json(&old, prev, &rerr)) {
            fprintf(stderr, "xsa-eval: note: %s; scoring %s again\n", rerr.msg, r->model.name);  // (msg names prev)
        } else {
            reused = 1;
            journal_discard(dir, run_scope);  // (left by a kill after the mark: of no further use)
            results_free(r);
            *r = old;
            memcpy(out_path, prev, strlen(prev) + 1);
            if (!opt->quiet)
                fprintf(stderr, "xsa-eval: %s: an earlier launch of this command, stopped before its end, wrote its "
                        "results (%s): read back, not scored again\n", r->model.name, prev);
        }
    }
    char (*samples)[4096] = xsa_calloc((size_t)n_tasks + 1, sizeof *samples);  // (n_tasks) final samples paths
    // Encode every task before scoring any, so that a request lm-eval would refuse (a
    // continuation longer than the context window) stops the run before hours of scoring.
    struct task_work *tw = xsa_calloc((size_t)n_tasks + 1, sizeof *tw);
    for (int ti = 0; ti < n_tasks && !rc && !reused; ti++) {
        const struct task_data *td = &tds[ti];
        struct task_result *tr = &r->tasks[ti];
        r->n_tasks = ti + 1;
        snprintf(tr->name, sizeof tr->name, "%s", td->def->name);
        tr->version = td->def->version;
        tr->n_docs = td->n_docs;
        tr->n_docs_original = td->n_rows;
        snprintf(tr->data_sha256, sizeof tr->data_sha256, "%s", td->prov.sha256);
        snprintf(tr->data_source, sizeof tr->data_source, "%s", td->prov.source);
        snprintf(tr->split, sizeof tr->split, "%s", td->def->split);
        tr->preprocessed = td->prov.preprocessed;
        snprintf(tr->data_dataset, sizeof tr->data_dataset, "%s", td->prov.dataset);
        snprintf(tr->data_revision, sizeof tr->data_revision, "%s", td->prov.revision);
        tr->data_pinned = td->prov.pinned;
        double t0 = now_s();
        rc = task_work_encode(opt, td, &mr, &tw[ti], &tr->truncated_requests, err);
        r->tokenize_s += now_s() - t0;
        if (!rc && tw[ti].have_fs) {  // (LAMBADA draws from its evaluated split: the task's digest)
            const struct fewshot *fs = &tw[ti].fs;
            snprintf(tr->fewshot_sha256, sizeof tr->fewshot_sha256, "%s", fs->sha256[0] ? fs->sha256 : td->prov.sha256);
            snprintf(tr->fewshot_source, sizeof tr->fewshot_source, "%s", fs->sha256[0] ? fs->source : td->prov.source);
        }
    }
    if (!rc && !reused) rc = journal_open(&jn, dir, opt->cache_requests, model_scope, run_scope, 0, opt->resume, opt->quiet, err);
    have_jn = !rc && !reused;
    if (!rc && !reused) rc = run_ranks_model_begin(model_index, run_scope, &mr, model_scope, err);
    for (int ti = 0; ti < n_tasks && !rc && !reused; ti++) {
        const struct task_data *td = &tds[ti];
        struct task_result *tr = &r->tasks[ti];
        struct task_work *w = &tw[ti];
        struct progress_ctx pc = {.model = r->model.name, .task = td->def->name, .t0 = now_s(),
                                  .tty = !opt->quiet && isatty(2)};
        struct sched_options so = {.batch_tokens = r->batch_tokens, .share = opt->share,
                                   .progress = progress_line, .progress_ctx = &pc, .stop = &run_stop_requested};
        struct sched_stats st;
        double t0 = now_s();
        long long reused_rt[2] = {0, 0};
        rc = score_task(&mr, td, w, &jn, &so, &st, reused_rt, err);
        r->score_s += now_s() - t0;
        r->requests_reused += reused_rt[0];
        r->tokens_reused += reused_rt[1];
        r->requests += st.requests;
        r->tokens_scored += st.tokens_requested;
        r->tokens_computed += st.tokens_computed;
        if (!rc) rc = task_metrics_compute(td->def, td->docs, td->n_docs, w->res, w->first_req, opt->threads, tr, err);
        for (int k = 0; !rc && k < tr->n_metrics; k++)
            if (!isfinite(tr->value[k]))
                rc = xsa_fail(err, XSA_ERUNTIME, "%s: %s is %g: not a score to report (no results were written)",
                              td->def->name, tr->metric[k], tr->value[k]);
        for (int k = 0; !rc && k < tr->n_metrics; k++)  // (lm-eval's math.exp would raise there)
            if (tr->n_docs > 1 && isnan(tr->stderr_[k]))
                fprintf(stderr, "xsa-eval: warning: %s: %s %.4g has no standard error (N/A): a bootstrap resample's "
                        "perplexity passes the largest double\n", td->def->name, tr->metric[k], tr->value[k]);
        if (!rc && opt->log_samples) {  // written pending, committed with the results file
            char sp[4200];
            if (snprintf(samples[ti], sizeof samples[ti], "%s/samples_%s_%s.jsonl", dir, td->def->name, stamp) >=
                (int)sizeof samples[ti])
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: output path too long", dir);
            if (!rc) rc = outdir_pending_path(samples[ti], sp, sizeof sp, err);
            if (!rc &&
                samples_write(sp, td->def, td->docs, td->n_docs, w->have_fs ? &w->fs : NULL, w->enc, w->res,
                              w->first_req, tr, err))
                rc = outdir_write_failed(samples[ti], sp, err);
        }
        if (!rc && tr->truncated_requests && !opt->quiet)
            fprintf(stderr, "xsa-eval: %s: %d requests were longer than the context window and left-truncated as lm-eval does\n",
                    td->def->name, tr->truncated_requests);
        task_work_free(w);  // scored: free its encodings early
    }
    for (int ti = 0; tw && ti < n_tasks; ti++) task_work_free(&tw[ti]);
    free(tw);
    if (!reused) {
        r->end_time = now_s();
        r->total_s = r->end_time - r->start_time;
    }
    // Commit: samples first, the results file last, none replacing another run's file.
    char pending[4200];
    if (!rc && !reused && snprintf(out_path, out_n, "%s/results_%s.json", dir, stamp) >= (int)out_n)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: output path too long", dir);
    if (!rc && !reused) rc = outdir_pending_path(out_path, pending, sizeof pending, err);
    if (!rc && !reused && results_write_json(r, pending, err)) rc = outdir_write_failed(out_path, pending, err);
    int committed = 0;  // samples files committed; removed again if the results file is not
    for (int ti = 0; !rc && !reused && ti < n_tasks; ti++) {
        if (samples[ti][0]) rc = outdir_commit(samples[ti], err);
        if (!rc) committed = ti + 1;
    }
    // Until the whole run is written, a rerun reads these results back (run_pipeline drops the
    // mark). The mark goes first: it counts only once the file it names exists, so a kill right
    // after the commit cannot leave results that a rerun scores again beside a second copy.
    xsa_error merr = {0};
    int marked = 0;
    if (!rc && !reused && marks) {
        if (journal_mark_done(dir, run_scope, launch.s, out_path, &merr))
            fprintf(stderr, "xsa-eval: note: %s (a rerun would score %s again)\n", merr.msg, r->model.name);
        else marked = 1;
    }
    if (marked) test_kill_point("mark-written");
    if (!rc && !reused) rc = outdir_commit(out_path, err);
    if (!rc && !reused) test_kill_point("results-committed");
    if (rc && marked) journal_forget_done(dir, run_scope);
    for (int ti = 0; rc && ti < committed; ti++)
        if (samples[ti][0]) unlink(samples[ti]);
    if (!rc && !reused) rc = run_ranks_model_end(dir, run_scope, err);
    if (rc) {
        for (int ti = 0; samples && ti < n_tasks; ti++)
            if (samples[ti][0]) outdir_discard(samples[ti]);
        outdir_discard(out_path);
    }
    if (rc == XSA_EINTERRUPT && have_jn) {
        err->code = 0;
        if (jn.journal.n == 0)  // journal_close removes an empty journal
            xsa_fail(err, XSA_EINTERRUPT, "interrupted before any request was scored; nothing is kept");
        else
            xsa_fail(err, XSA_EINTERRUPT, "interrupted; the requests scored so far are kept in %.900s: rerun the same "
                     "command to resume (--no-resume starts over)", jn.journal_path);
    }
    if (!rc && !reused && r->requests_reused && !opt->quiet)  // (every rank's journal counted)
        fprintf(stderr, "xsa-eval: %s: %lld requests (a repeated one counted each time) came from the journal or "
                "the request cache\n", r->model.name, r->requests_reused);
    if (have_jn) journal_close(&jn, rc == 0);
    *was_reused = reused;
    sbuf_free(&launch);
    free(samples);
    run_model_close(&mr);
    return rc;
}

// Each model's output folder name.
void run_model_names(const struct run_options *opt, char names[RUN_MAX_MODELS][256]) {
    for (int m = 0; m < opt->n_models; m++) {
        // A repo id names its folder after the repo (its snapshot folder is a commit hash).
        outdir_model_name(opt->hub[m] ? opt->hub[m]->repo : opt->models[m], names[m], 256);
        if (m > 0 && !strcmp(names[m], names[0])) strncat(names[m], "_2", 256 - strlen(names[m]) - 1);
    }
}

// With several models, each after the first is loaded (with its tokenizer) and dropped before
// the first is scored: a damaged second checkpoint stops the run before hours of scoring and
// before the first model's results are written.
static int check_later_models(const struct run_options *opt, xsa_error *err) {
    int rc = 0;
    for (int m = 1; m < opt->n_models && !rc; m++) {
        struct model mdl;
        memset(&mdl, 0, sizeof mdl);
        struct tokenizer *tok = NULL;
        char tpath[4096];
        int loaded = 0;
        rc = load_model_files(opt, opt->models[m], &mdl, &loaded, &tok, tpath, sizeof tpath, err);
        if (tok) tokenizer_free(tok);
        if (loaded) model_free(&mdl);
    }
    return rc;
}

// The whole run on one process, or rank 0's part of a data-parallel run.
static int run_pipeline(const struct run_options *opt, xsa_error *err) {
    const struct task_def *defs[RUN_MAX_TASKS];
    int n_tasks = 0;
    int rc = task_expand_list(opt->tasks, defs, RUN_MAX_TASKS, &n_tasks, err);
    if (rc) return rc;
    if (!opt->output || !*opt->output)
        return xsa_fail(err, XSA_EBADINPUT, "--output '': empty path; name a folder (default: results)");
    // A mistyped checkpoint path is reported before any data is read or downloaded.
    for (int m = 0; m < opt->n_models; m++)
        if (!file_exists(opt->models[m]) && !dir_exists(opt->models[m]))
            return xsa_fail(err, XSA_EBADINPUT, "%s: no such checkpoint (a directory with config.json, or a llama2.c .bin)",
                            opt->models[m]);
    // --offline: name every missing task at once, with the download command (data/data.h).
    if ((rc = data_check_offline(defs, n_tasks, &opt->data, err))) return rc;
    if ((rc = check_later_models(opt, err))) return rc;
    // --output before the data: a folder this run cannot write in is said before any work.
    char made_top[4096];  // the outermost folder of --output that this run creates, removed again if empty
    int made_output = file_first_missing(opt->output, made_top, sizeof made_top);
    rc = outdir_prepare_dir("--output", opt->output, err);
    // And --cache-requests: a file or read-only folder there is the user's to change, said now.
    if (!rc && opt->cache_requests) rc = outdir_prepare_dir("--cache-requests", opt->cache_requests, err);
    struct task_data tds[RUN_MAX_TASKS];
    int loaded = 0;
    for (int i = 0; i < n_tasks && !rc; i++) {
        rc = load_task_data(opt, defs[i], &tds[i], err);
        if (!rc) loaded++;
    }
    char stamp[64];
    outdir_stamp(stamp, sizeof stamp);
    struct results res[RUN_MAX_MODELS];
    char paths[RUN_MAX_MODELS][4096];
    int n_done = 0;
    char names[RUN_MAX_MODELS][256];
    run_model_names(opt, names);
    struct sigaction old_sig[2];
    run_stop_requested = 0;
    // With several ranks a signal ends the rank at once: the launcher's SIGTERM after a
    // failure must not leave it writing; every finished batch is in its journal already.
    signals_catch(dist_size() > 1 ? SIG_DFL : on_stop_signal, old_sig);
    char scopes[RUN_MAX_MODELS][65];
    for (int m = 0; m < opt->n_models && !rc; m++) {
        int reused = 0;
        rc = evaluate_model(opt, m, opt->models[m], opt->hub[m], names[m], tds, n_tasks, stamp, &res[m], paths[m],
                            sizeof paths[m], scopes[m], &reused, err);
        n_done = m + 1;
        if (!rc && opt->model_done) opt->model_done(opt->done_ctx, &res[m], paths[m]);
        if (!rc && !reused) print_throughput(&res[m], opt);
    }
    signals_restore(old_sig);
    if (!rc && opt->n_models == 2 && opt->pair_done)
        rc = opt->pair_done(opt->done_ctx, &res[0], paths[0], &res[1], paths[1], err);
    char sub[4400];
    for (int m = 0; !rc && m < opt->n_models; m++)  // the whole run is written
        if (snprintf(sub, sizeof sub, "%s/%s", opt->output, names[m]) < (int)sizeof sub) journal_forget_done(sub, scopes[m]);
    for (int m = 0; m < n_done; m++) results_free(&res[m]);
    for (int i = 0; i < loaded; i++) {
        task_docs_free(tds[i].docs, tds[i].n_rows);
        fewshot_row_json_free(tds[i].row_json, tds[i].n_rows);
    }
    if (rc && made_output) {  // only what is empty: a journal to resume from stays
        for (int m = 0; m < opt->n_models; m++)
            if (snprintf(sub, sizeof sub, "%s/%s", opt->output, names[m]) < (int)sizeof sub) rmdir(sub);
        file_rmdirs_upto(opt->output, made_top);
    }
    return rc;
}

int run_evaluate(const struct run_options *opt, xsa_error *err) {
    int rc = dist_start(err);
    if (rc) return rc;
    if (dist_size() == 1) {  // no launcher (MPI never started), or MPI found one rank
        rc = run_pipeline(opt, err);
        dist_stop();
        return rc;
    }
    // Several ranks: each takes its own GPU, or its share of the CPUs.
    struct run_options o = *opt;
    if (!opt->device || strncmp(opt->device, "cuda", 4))  // a GPU rank needs no CPU share
        o.threads = dist_env_threads(opt->threads, dist_local_size());
    rc = dist_env_pick_gpu(opt->device, dist_local_rank(), dist_local_size(), err);
    if (!rc && dist_rank() > 0) {
        rc = run_ranks_worker(&o, err);
    } else if (!rc) {
        rc = run_pipeline(&o, err);
        if (!rc) rc = run_ranks_quit(err);
    }
    if (rc) return dist_fail(rc, err->msg);  // ends every rank
    dist_stop();
    return 0;
}
