// sources.h: where rows come from, tried in order: the Hugging Face dataset viewer API
// (source_viewer.c), Parquet and JSON Lines files in the Hub repository (source_hub.c), the original
// authors' files (source_original.c). Internal to data/.
#ifndef XSA_DATA_SOURCES_H
#define XSA_DATA_SOURCES_H

#include <cJSON.h>
#include <string.h>

#include "common/error.h"
#include "data/cache.h"
#include "data/data.h"
#include "data/http.h"
#include "tasks/task.h"

struct source_ctx {
    const struct task_def *t;
    const struct data_options *opt;
    struct http_client *http;
    const char *cache_root;       // where the viewer streams its rows (cache_writer)
    const char *raw_dir;          // cache root/raw/<task>: downloads, laid out like benchdata/<dir>
    const char *datasets_server;  // resolved base URLs, no trailing slash
    const char *hf_endpoint;
    int parallel;                 // transfers in flight at once (viewer pages held in memory)
};

struct source_result {
    cJSON **rows;                 // (n) in dataset order, owned; NULL when streamed
    int n;
    size_t cap;                   // rows allocated (common/grow.h)
    int streamed;                 // the rows are in `jsonl` (checked, canonical), not in rows
    struct cache_writer jsonl;    // streamed: the finished temp file, committed by the caller
    char sha256[65];              // streamed: digest of the canonical JSONL
    int bad_data;                 // on failure: the data is wrong (not the network)
    int store_failed;             // on failure: the cache could not be written
    char url[512];                // where the rows came from (first URL)
    char dataset[160];            // Hugging Face id the rows came from; "": the task's hf_dataset
    char config[64];              // with dataset: its config
    char revision[128];           // upstream revision when known
    char raw_sha256[65];          // over the raw downloaded bytes, in order
    int preprocessed;             // rows are already lm-eval-preprocessed (adapter says)
    int unavailable;              // this source has nothing for the task (not an error)
    const struct task_def *task;  // for source_result_emit_hf
};

// Copies s into d (size n), truncating; always NUL-terminated.
static inline void str_copy(char *d, size_t n, const char *s) {
    size_t m = strlen(s);
    if (m >= n) m = n - 1;
    memcpy(d, s, m);
    d[m] = '\0';
}

// 0 when t stands for another split of a registry task (the few-shot split), else 1.
static inline int source_is_evaluated_split(const struct task_def *t) {
    const struct task_def *reg = task_find(t->name);
    return !reg || !strcmp(reg->split, t->split);
}

int source_viewer_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err);
int source_hub_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err);
// The Parquet file of t's evaluated split in its Hub repository: *dataset and *path on main;
// 0 when the task has none there.
int source_hub_parquet_file(const struct task_def *t, const char **dataset, const char **path);
int source_original_fetch(struct source_ctx *c, struct source_result *r, xsa_error *err);
// What each source would fetch for t, one line for `tasks` ("" when the source has nothing):
// the Hub file (and its fallback), the original files' names.
void source_hub_describe(const struct task_def *t, char *out, size_t n);
void source_original_describe(const struct task_def *t, char *out, size_t n);

// Appends a row (takes ownership); the adapters' emit callback. ctx is a struct source_result.
int source_result_emit(void *ctx, cJSON *row, const char *where, xsa_error *err);
// Brings a Hugging Face row (viewer, Hub file or a local JSONL/Parquet copy) to the original-author
// adapters' canonical form where the two differ only in form, so the canonical digest does not
// depend on the source: the schema's key order (tasks/rows.h), and the social_i_qa loader
// script kept each label line's "\n".
void source_canonical_row(const struct task_def *t, cJSON *row);
// source_result_emit after source_canonical_row; ctx is a struct source_result whose `task` is set.
int source_result_emit_hf(void *ctx, cJSON *row, const char *where, xsa_error *err);
void source_result_free(struct source_result *r);

// Builds the doc of each row with the task's own parser (what `run` does), so rows `run` would
// refuse never reach the cache. rows[i] is row first+i of the split; errors (XSA_ERUNTIME)
// name the source and the row: "viewer row 43 (URL): field 'question_stem' missing".
int source_validate_rows(const struct task_def *t, cJSON *const *rows, int n, long first, const char *source,
                         const char *url, xsa_error *err);

// Runs the tasks engineer's adapter over a folder laid out like benchdata/<dir>.
// Errors keep the adapter's code; the caller decides what a bad file means.
int source_adapt_dir(const struct task_def *t, const char *dir, struct source_result *r, xsa_error *err);

#endif
