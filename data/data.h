// data.h: benchmark rows for a task, from the cache, a local folder or the network.
// Online by default (download, verify, cache once), offline on demand, never a partial
// dataset: see data/cache.h for the layout and the commit rule.
#ifndef XSA_DATA_DATA_H
#define XSA_DATA_DATA_H

#include <cJSON.h>

#include "common/error.h"
#include "tasks/task.h"

#define DATA_DEFAULT_DATASETS_SERVER "https://datasets-server.huggingface.co"
#define DATA_DEFAULT_HF_ENDPOINT "https://huggingface.co"
#define DATA_DEFAULT_SOURCES "viewer,hub,original"

struct data_options {             // zero-initialise, then set what the command line gave
    const char *cache_dir;        // --cache-dir; NULL: $XDG_CACHE_HOME/xsa-eval or ~/.cache/xsa-eval
    const char *data_dir;         // --data-dir: local files (benchdata layout or cache layout); no network
    int offline;                  // --offline: never touch the network
    const char *datasets_server;  // --datasets-server; NULL: the public viewer API
    const char *hf_endpoint;      // --hf-endpoint; NULL: $HF_ENDPOINT, else https://huggingface.co
    const char *originals_mirror; // --originals-mirror BASE: fetch author URLs as BASE/<host>/<path>
    const char *sources;          // --source LIST: subset/order of viewer,hub,original; NULL: all
    const char *ca_bundle;        // --ca-bundle: PEM CAs to trust (verification is always on)
    int allow_data_change;        // --allow-data-change: row count / member digest mismatches warn only
    int strict_data;              // --strict-data: canonical rows that differ from the registry's pin are an error
    int quiet;                    // --quiet: no progress bar, no notes
    int force;                    // download again even when a valid copy is cached
};

// What the results record of a task's rows: their digest, where they really came from, and
// whether they are the registry's pinned rows.
struct data_provenance {
    char sha256[65];     // of the canonical JSONL (tasks/rows.h)
    char source[512];    // "viewer:URL", "hub:URL", "original:URL" (the first URL), "local:PATH"
    char dataset[160];   // Hugging Face id the rows came from ("" for --data-dir files)
    char revision[128];  // upstream revision: viewer X-Revision, Hub X-Repo-Commit ("" when unknown)
    int preprocessed;    // rows came already preprocessed (HellaSwag text file)
    int pinned;          // data_pinned(t, sha256): 1 the pinned rows, 0 other rows, -1 no pin known
};

// Rows of `t`'s evaluated split, in dataset order (free with data_rows_free), and their
// provenance (`prov` may be NULL). Exit codes: 2 for a bad --data-dir file or bad options, 3 for
// network failures, data that does not match the registry's pins, or missing data offline.
int data_load_task(const struct task_def *t, const struct data_options *opt, cJSON ***rows, int *n_rows,
                   struct data_provenance *prov, xsa_error *err);

// Rows of another split of `t` (the few-shot split): from --data-dir (DIR/<task>/<split>.jsonl or
// .parquet, canonical rows), else from the cache, downloaded, verified and cached on first use like
// the evaluated split (from the viewer or the Hub's Parquet files). Freed as data_load_task's.
int data_load_split(const struct task_def *t, const char *split, const struct data_options *opt, cJSON ***rows,
                    int *n_rows, char source[512], xsa_error *err);

// With opt->offline (and no data_dir): fails when any task of `list` has no valid cached copy,
// with one message naming them all and the exact `xsa-eval download` command that fetches
// them. Otherwise (or when all are cached) returns 0 without touching the network.
int data_check_offline(const struct task_def *const *list, int n, const struct data_options *opt, xsa_error *err);

// Makes sure `split` of `t` (NULL: the evaluated one; else the few-shot split) is in the cache
// (downloading it when needed). *was_cached says whether it already was; *rows_out and sha256
// describe the cached copy.
int data_download_task(const struct task_def *t, const char *split, const struct data_options *opt, int *was_cached,
                       long *rows_out, char sha256[65], char source[512], xsa_error *err);

struct cache_entry;
// Reads the cache state of `t` without touching the network: *cached = 1 with `e` filled
// when a valid copy exists; else *cached = 0 and `why` says what is missing.
int data_cache_status(const struct task_def *t, const char *cache_dir, int *cached, struct cache_entry *e,
                      char *why, size_t whyn, xsa_error *err);

// Whether rows of `t`'s evaluated split with canonical digest `sha256` are the registry's pinned
// content: 1 equal, 0 different, -1 when the registry has no pin for the task. A different digest
// is a warning (the rows are used; results record it) unless --strict-data makes it an error.
int data_pinned(const struct task_def *t, const char *sha256);

// The sources `t` has, in the order they are tried, as text for `tasks`: "viewer" (the dataset
// viewer's datasets), "hub" (the repository file) and "original" (the authors' files); "" when a
// source has nothing for the task.
struct data_sources_desc {
    char viewer[256], hub[512], original[512];
};
void data_task_sources(const struct task_def *t, struct data_sources_desc *d);

// Releases rows returned by data_load_task.
void data_rows_free(cJSON **rows, int n);

// The names of n rows from `source` (a provenance's source), "<source>:<row from 1>", for the
// messages task_docs_from_rows writes about a row; free with data_row_names_free.
char **data_row_names(const char *source, int n);
void data_row_names_free(char **names, int n);

// The warning (on stderr, under --quiet too) that rows from a third party's preprocessed text
// (HellaSwag's) are not lm-eval's contexts; nothing when prov says they are the dataset's own.
void data_warn_preprocessed(const struct task_def *t, const struct data_provenance *prov);

#endif
