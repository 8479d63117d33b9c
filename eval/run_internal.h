// run_internal.h: what eval/run.c (the pipeline: the whole run on one process, rank 0's part
// of a data-parallel run) and eval/run_ranks.c (the other ranks, and rank 0's side of their
// protocol) share. Nothing outside those two files includes it.
#ifndef XSA_EVAL_RUN_INTERNAL_H
#define XSA_EVAL_RUN_INTERNAL_H

#include <signal.h>
#include <stdint.h>

#include "eval/encode.h"
#include "eval/fewshot.h"
#include "eval/journal.h"
#include "eval/results.h"
#include "eval/run.h"
#include "eval/scheduler.h"
#include "kernels/backend.h"
#include "model/model.h"
#include "tasks/task.h"

struct task_data {  // one task's documents, shared by every model of the run
    const struct task_def *def;
    struct task_doc *docs;  // (n_rows) every doc of the split; the first n_docs are evaluated
    int n_docs, n_rows;
    struct data_provenance prov;  // digest, source, revision, pin state of the rows
    char **row_json;        // (n_rows) with --num-fewshot: each row as serialized, for the sampler's `x != doc`
};

struct model_run {  // one model's loaded state
    struct model m;
    struct tokenizer *tok;
    struct backend be;
    int loaded, be_open;
};

// One task's requests for one model: encodings, scheduler requests and results.
struct task_work {
    int n_req;
    struct encoded_request *enc;   // (n_req)
    struct sched_request *req;     // (n_req)
    struct sched_result *res;      // (n_req)
    int *first_req;                // (n_docs) index of each doc's first request
    struct fewshot fs;
    int have_fs;
};

// One task's requests being scored, as the scheduler's batch callback sees them: to name the
// request of a non-finite score, and to journal what each batch finished.
struct task_scoring {
    const struct task_data *td;
    const struct task_work *w;
    const int *todo;        // (n_todo) request index of each scheduled request
    uint8_t (*keys)[16];    // (n_req) request keys (reqstore_key)
    uint8_t (*bkeys)[16];   // (n_todo) scratch: the keys of one batch's requests
    struct run_journal *jn;
};

// SIGINT / SIGTERM set it: scoring stops after the batch in flight.
extern volatile sig_atomic_t run_stop_requested;

// The pipeline's steps the ranks reuse (run.c).
void run_model_names(const struct run_options *opt, char names[RUN_MAX_MODELS][256]);
int run_model_open(const struct run_options *opt, const char *path, const struct hub_model *hub, const char *name,
                   struct model_run *mr, struct results *r, xsa_error *err);
void run_model_close(struct model_run *mr);
int run_check_finite(const struct task_scoring *ts, int k, double logprob, xsa_error *err);

// Rank 0's side of the protocol (run_ranks.c); with one rank each does nothing.
int run_ranks_model_begin(int model_index, const char run_scope[65], const struct model_run *mr,
                          const char model_scope[65], xsa_error *err);
int run_ranks_model_end(const char *dir, const char run_scope[65], xsa_error *err);
int run_ranks_send_shares(const struct task_work *w, const int *owner, const int *remote, int n_remote, xsa_error *err);
// reused_rt: (requests, tokens) the other ranks took from their own journals, added to.
int run_ranks_gather_shares(const struct task_scoring *ts, const int *owner, const int *remote, int n_remote,
                            struct sched_stats *st, long long reused_rt[2], xsa_error *err);
int run_ranks_quit(xsa_error *err);
// A rank other than 0: rank 0's commands until the run is over.
int run_ranks_worker(const struct run_options *opt, xsa_error *err);

#endif
