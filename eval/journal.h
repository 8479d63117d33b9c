// journal.h: what one model's run has already scored, so that nothing is scored twice:
//   the journal   <output>/<model>/journal_<scope>.xsaj: every finished batch's requests,
//                 found again by a rerun with the same model, data and settings after a kill
//                 (resume), removed when the run's results are written;
//   the cache     --cache-requests DIR: <DIR>/<model scope>.xsar, shared by every run of the
//                 same model numerics (e.g. a later run that adds a task), never removed.
// Both are request stores (reqstore.h). A request's record is keyed by its tokens; the
// scopes hold everything else a score depends on (journal_scopes).
#ifndef XSA_EVAL_JOURNAL_H
#define XSA_EVAL_JOURNAL_H

#include <stdint.h>

#include "common/error.h"
#include "eval/reqstore.h"
#include "eval/scheduler.h"
#include "model/model.h"

struct run_journal {
    struct reqstore journal, cache;
    int have_journal, have_cache;
    char journal_path[4200];
    long reused;  // requests answered from the journal or the cache
};

// model_scope: SHA-256 (hex) of the weights digest, every configuration field (XSA layers
// included) and the backend's numerics; run_scope: of model_scope and `settings` (the data
// digests and every option that changes a request's tokens or which requests run).
int journal_scopes(const struct model *m, const char *numerics, const char *settings, char model_scope[65],
                   char run_scope[65], xsa_error *err);

// Opens the journal in `dir` (resume 0: an existing one is discarded first) and, when
// cache_dir is set, the request cache. A journal held by a concurrent run of the same
// command is left to it (this run keeps none; said on stderr unless quiet). rank: 0 for one
// process and rank 0 of a data-parallel run (docs/distributed.md); a rank r > 0 keeps its own
// journal_<scope>.rank<r>.xsaj of the batches it scored, found again by a rerun with any
// number of ranks (a record answers for its tokens wherever they are dealt).
int journal_open(struct run_journal *j, const char *dir, const char *cache_dir, const char model_scope[65],
                 const char run_scope[65], int rank, int resume, int quiet, xsa_error *err);

// Removes the journals of ranks r > 0 of this run scope in `dir` (once rank 0 has written the
// results: also those of ranks a rerun with fewer ranks no longer has). Returns how many.
int journal_remove_ranks(const char *dir, const char run_scope[65]);

// A run keeps, beside each model's results, a mark that they are written:
// `journal_<scope>.done` names the results file, the launch (`launch`: the version and the
// command line) and the writer's process (pid, start time, boot: outdir_pid_identity). A rerun
// of the same command after a later model failed or was interrupted, or after a kill between a
// results file and the run's end, takes the model's results from that file instead of scoring
// it again; the marks go once the whole run (a comparison too) is written.
int journal_mark_done(const char *dir, const char run_scope[65], const char *launch, const char *results_path,
                      xsa_error *err);
// 1 and the results file's path in out when a mark of run_scope, written by the same launch
// in a process no longer running (on this host: another host's counts as gone), names a
// results file in dir.
int journal_done_results(const char *dir, const char run_scope[65], const char *launch, char *out, size_t n);
void journal_forget_done(const char *dir, const char run_scope[65]);
// Removes the journals of run_scope in `dir` (rank 0's unless a live run holds it, and those of
// ranks r > 0): results read back by a mark are written, so a journal that a kill between the
// commit and journal_close left would otherwise stay for good (nothing opens it again).
void journal_discard(const char *dir, const char run_scope[65]);

// 1 and *out filled when the journal or the cache has scored this key.
int journal_lookup(struct run_journal *j, const uint8_t key[16], struct sched_result *out);

// Records n scored requests (their keys and results) in the journal and the cache.
int journal_record(struct run_journal *j, const uint8_t (*keys)[16], const struct sched_result *res, int n,
                   xsa_error *err);

// Closes both; success: the run's results are written, so the journal is removed. So is a
// journal that holds no request (a run that failed or stopped before its first batch ended):
// there is nothing to resume from, and its folder can go too.
void journal_close(struct run_journal *j, int success);

#endif
