// cache.h: the on-disk dataset cache. Layout under the root ($XDG_CACHE_HOME/xsa-eval,
// else ~/.cache/xsa-eval, or --cache-dir):
//   <task>/<split>.jsonl          canonical rows: cJSON_PrintUnformatted(row) + "\n", dataset order
//   <task>/<split>.manifest.json  source, URL, revision, rows, SHA-256 of raw and canonical, time
//   <task>/.lock                  flock()ed by the process that downloads the task
//   raw/<task>/<file>             raw downloads (<file>.part while incomplete; after a failure kept
//                                 only when the connection dropped, for the next run's Range resume)
// The manifest is written after the JSONL and is the commit point: a copy is valid only when
// the JSONL's digest and line count equal the manifest's. Both are written in full (temp file,
// fsync) before the old copy is touched, so a failed write (full disk) keeps the old copy valid.
#ifndef XSA_DATA_CACHE_H
#define XSA_DATA_CACHE_H

#include <cJSON.h>
#include <stddef.h>

#include "common/error.h"
#include "tasks/task.h"

#define CACHE_MAX_FILE ((size_t)1 << 30)  // refuse cache files over 1 GiB

struct cache_entry {          // one manifest
    char task[64];
    char split[32];
    char dataset[160];        // Hugging Face id, e.g. allenai/ai2_arc
    char config[64];
    char source[16];          // viewer | hub | original | local
    char url[512];            // first URL the data came from
    char revision[128];       // upstream revision when known ("" otherwise)
    long rows;
    char raw_sha256[65];      // over the raw bytes downloaded, in order
    char sha256[65];          // of the canonical JSONL
    char time[32];            // ISO 8601 UTC
    char version[16];         // xsa-eval version that wrote it
    int preprocessed;         // rows carry third-party-preprocessed text (HellaSwag dump)
};

// Resolves the cache root: `opt_dir` when given, else $XDG_CACHE_HOME/xsa-eval, else $HOME/.cache/xsa-eval.
int cache_root_dir(const char *opt_dir, char *out, size_t n, xsa_error *err);
// mkdir -p.
int cache_mkdirs(const char *path, xsa_error *err);

// Checks the cached copy of `t`: *valid = 1 when the manifest exists and the JSONL's digest and
// line count equal it; else *valid = 0 and `why` says what is missing or wrong. With `buf` not
// NULL the verified file contents are returned (malloc'd) for parsing.
int cache_verify(const char *root, const struct task_def *t, struct cache_entry *e, int *valid, char *why,
                 size_t whyn, char **buf, size_t *len, xsa_error *err);

// Atomically replaces the task's JSONL and then its manifest (the commit point).
int cache_commit(const char *root, const struct task_def *t, const char *jsonl, size_t len,
                 const struct cache_entry *e, xsa_error *err);

// The task's JSONL written piece by piece (rows as they arrive) into its temp file
// <task>/<split>.jsonl.tmp.<pid>, digested and counted on the way, bounded by CACHE_MAX_FILE;
// then committed like cache_commit. Call with the task's lock held.
struct evp_md_ctx_st;
struct cache_writer {
    int fd;
    int is_open;                // fd is open (between open and finish)
    int has_temp;               // the temp file exists (until committed or discarded)
    char path[4200];            // the temp file
    struct evp_md_ctx_st *md;   // SHA-256 of the bytes added
    size_t bytes;
    long rows;                  // newlines added
};
int cache_writer_open(const char *root, const struct task_def *t, struct cache_writer *w, xsa_error *err);
int cache_writer_add(struct cache_writer *w, const char *data, size_t len, xsa_error *err);
// fsync, close and the SHA-256 of everything added.
int cache_writer_finish(struct cache_writer *w, char sha256[65], xsa_error *err);
// Renames the finished temp file into place, then writes the manifest `e` (the commit point).
int cache_commit_writer(const char *root, const struct task_def *t, struct cache_writer *w,
                        const struct cache_entry *e, xsa_error *err);
// Closes and removes what was not committed; safe on a zeroed or committed writer.
void cache_writer_discard(struct cache_writer *w);

// Takes the task's download lock (waiting, with a note on stderr unless quiet, when another
// process holds it) and removes the temp files of the task's JSONL and manifest that a killed
// writer left. cache_unlock releases it.
int cache_lock(const char *root, const struct task_def *t, int quiet, int *fd, xsa_error *err);
void cache_unlock(int fd);
// Removes from `dir` the temp files "<base>.tmp.<pid>" (file_temp_path's names) of the given
// base names whose writer process is gone; nothing else, whatever its name.
void cache_remove_stale_temps(const char *dir, const char *const *bases, int n);
// The same for the canonical copy of a task's split: what a killed writer of the copy left,
// when its lock is free at once (else nothing: a writer may be at work), also when the copy is
// valid and only read.
void cache_sweep_task(const char *root, const struct task_def *t);

// Splits JSONL into rows (objects). `where` names the source for errors ("file" -> "file:line").
int cache_rows_parse_jsonl(const char *buf, size_t len, const char *where, int code, cJSON ***rows, int *n, xsa_error *err);
// (The canonical serialization, whose SHA-256 is the dataset digest, is tasks/rows.h's
// task_rows_serialize_array: one for the cache and the task loaders.) Rows are freed by
// data.h's data_rows_free.

// Current time as ISO 8601 UTC ("2025-01-31T12:00:00Z").
void cache_time_now(char out[32]);

#endif
