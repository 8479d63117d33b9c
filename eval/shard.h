// shard.h: a task's requests dealt to the ranks of a data-parallel run (eval/dist.h), and
// the bytes they travel as. Dealing never changes a score (scores do not depend on which
// requests share a batch); it only decides which rank computes what.
#ifndef XSA_EVAL_SHARD_H
#define XSA_EVAL_SHARD_H

#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"
#include "eval/scheduler.h"

// owner (n): the rank of each request. A group (a run of consecutive requests with the same
// group, one document) stays on one rank, so that its shared prefix is computed once. Groups
// go, costliest first, to the rank with the least cost so far (ties: the lowest rank), with
// cost = tokens + tokens^2 / (12 d_model): the GEMMs' work per token against attention's per
// pair of tokens; with share, a group's common prefix counts once. Deterministic.
void shard_assign(const struct sched_request *req, int n, int share, int d_model, int n_ranks, int *owner);

// Requests as bytes: int32 count, then per request n_input, n_cont, group, input, cont.
// pack: req[idx[i]] for i < n (idx NULL: req[0..n)).
void shard_pack_requests(const struct sched_request *req, const int *idx, int n, struct sbuf *out);
// *reqs (n) point into *tokens; both malloc'ed, caller frees. A malformed buffer is an error.
int shard_unpack_requests(const char *buf, size_t len, struct sched_request **reqs, int32_t **tokens, int *n,
                          xsa_error *err);

// Results as bytes: int32 count, int64 tokens computed, then per result logprob (double) and
// an int32 of flags: bit 0 greedy, bit 1 taken from the rank's journal (reused: (n) or NULL).
void shard_pack_results(const struct sched_result *res, const uint8_t *reused, int n, long long tokens_computed,
                        struct sbuf *out);
// Exactly `n` results into res (and their reused flags, when reused is not NULL); a buffer of
// another size, or other flags, is an error.
int shard_unpack_results(const char *buf, size_t len, struct sched_result *res, uint8_t *reused, int n,
                         long long *tokens_computed, xsa_error *err);

#endif
