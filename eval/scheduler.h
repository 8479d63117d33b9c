// scheduler.h: scores many requests with the least model work, without changing a score.
//
// Identical requests are scored once. With sharing on, the requests of one group (one
// document) run as one row: their longest common input prefix once, and each remainder as a
// branch attending to it (kernels/backend.h). Rows are packed without padding into batches of
// at most `batch_tokens` tokens. Under causal attention the hidden states of a common token
// prefix are identical, so every request gets exactly the score its own row would give.
#ifndef XSA_EVAL_SCHEDULER_H
#define XSA_EVAL_SCHEDULER_H

#include <signal.h>
#include <stdint.h>

#include "common/error.h"
#include "kernels/backend.h"

struct sched_request {
    const int32_t *input;  // (n_input) model input tokens
    int n_input;
    const int32_t *cont;   // (n_cont) continuation: cont[j] is scored at input position n_input - n_cont + j
    int n_cont;
    int group;             // requests of one group may share a prefix (e.g. a document's choices)
};

struct sched_result {
    double logprob;        // sum of the continuation tokens' log-probabilities
    int greedy;            // 1 when every continuation token is the argmax
};

struct sched_options {
    int batch_tokens;      // token budget per backend call (a longer row goes alone)
    int share;             // 1: shared prefixes and branches; 0: one row per request
    // Called after each batch with the number of requests finished so far (may be NULL).
    void (*progress)(void *ctx, long done, long total);
    void *progress_ctx;
    // Called after each batch with the distinct requests it finished (indices into reqs and
    // their results), e.g. to journal them (may be NULL); a non-zero return stops scoring.
    int (*batch_done)(void *ctx, const int *req, const struct sched_result *res, int n, xsa_error *err);
    void *batch_done_ctx;
    // Scoring stops between batches (XSA_EINTERRUPT) once *stop is non-zero (may be NULL).
    const volatile sig_atomic_t *stop;
};

struct sched_stats {
    long long requests;         // requests given
    long long unique_requests;  // after deduplication
    long long tokens_requested; // sum of the requests' input lengths (what lm-eval computes)
    long long tokens_computed;  // tokens actually sent to the backend
    long long rows, batches;
};

int scheduler_score(struct backend *be, const struct sched_request *reqs, int n, const struct sched_options *opt,
                    struct sched_result *out, struct sched_stats *stats, xsa_error *err);

#endif
