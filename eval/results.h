// results.h: one evaluation's results in memory, and their JSON form
// (docs/results-format.md: lm-evaluation-harness v0.4's layout plus the `xsa_eval` block).
#ifndef XSA_EVAL_RESULTS_H
#define XSA_EVAL_RESULTS_H

#include "common/error.h"
#include "model/model.h"
#include "common/vec.h"

#define RESULTS_MAX_METRICS 4

struct task_result {
    char name[64];                 // lm-eval task name
    double version;                // lm-eval task version
    int n_docs;                    // effective (after --limit)
    int n_docs_original;           // rows in the split
    int n_metrics;
    char metric[RESULTS_MAX_METRICS][24];   // lm-eval order, e.g. "acc", "acc_norm"; "perplexity", "acc"
    double value[RESULTS_MAX_METRICS];      // aggregated value
    double stderr_[RESULTS_MAX_METRICS];    // NAN when lm-eval writes "N/A"
    int higher_is_better[RESULTS_MAX_METRICS];
    char preferred_metric[24];     // acc_norm where defined, else acc (LAMBADA: acc)
    int *doc_id;                   // (n_docs)
    double *per_doc[RESULTS_MAX_METRICS];   // (n_docs) per metric: 0/1, or summed ll for perplexity
    char data_sha256[65];          // canonical JSONL digest
    char data_source[512];         // where the rows came from ("viewer:URL", "local:PATH", ...)
    char fewshot_sha256[65];       // --num-fewshot: the few-shot split's digest ("" with none)
    char fewshot_source[512];      // ... and where it came from
    char data_dataset[160];        // Hugging Face dataset id the rows came from ("" for local files)
    char data_revision[128];       // its revision (viewer X-Revision, Hub X-Repo-Commit; "" unknown)
    int data_pinned;               // 1: the registry's pinned rows; 0: other rows; -1: no pin known
    char split[32];
    int preprocessed;              // rows came already preprocessed (HellaSwag text file)
    int truncated_requests;        // requests left-truncated to the context window
};

struct model_info {
    char path[4096], name[256], format[16], arch[16], dtype[8];
    char weights_sha256[65], tokenizer[4096], tokenizer_sha256[65];
    char xsa_layers[1024], xsa_source[16];
    long long n_params;
    int n_layer, d_model, n_head, n_kv_head, vocab_size, max_length;
    int add_bos;
    char hub_repo[200], hub_revision[128], hub_commit[41];  // a model named by repo id ("" otherwise)
    char weights_prefix[64];       // the wrapper's name dropped from every tensor name ("" none)
};

struct results {
    char version[16];              // xsa-eval version that wrote it
    char *command;                 // the exact command line, whole (heap; NULL when none)
    struct model_info model;
    char device[32], device_desc[256];
    int threads;
    int batch_tokens;              // scheduler token budget per backend call
    int limit;                     // -1 when none
    double limit_fraction;         // in (0, 1) for a fractional --limit (then limit is -1); else 0
    int num_fewshot;
    int has_step, step;            // training step of the checkpoint, when has_step
    char step_source[16];          // where run found it: "--step", "config.json", "checkpoint", "trainer_state", "path", "revision"
    int share_prefixes;
    double start_time, end_time;   // Unix seconds
    double load_s, tokenize_s, score_s, total_s;
    long long requests, tokens_scored, tokens_computed;
    long long requests_reused, tokens_reused;  // of those, taken from the journal or the request cache
    int n_tasks;
    struct task_result *tasks;     // (n_tasks)
};

// Fills r->model from a loaded checkpoint: its path and folder name, format, architecture,
// digests (the tokenizer's read from tokenizer_path), XSA layers and shape. max_length and
// add_bos are the run's and stay to the caller.
int results_set_model(struct results *r, const struct model *m, const char *path, const char *name,
                      const char *tokenizer_path, xsa_error *err);

// Writes `r` atomically to `path` (temp file, fsync, rename).
int results_write_json(const struct results *r, const char *path, xsa_error *err);
// Reads a results file written by xsa-eval (lm-eval's files lack the xsa_eval block: error).
int results_read_json(struct results *r, const char *path, xsa_error *err);
void results_free(struct results *r);

const struct task_result *results_find_task(const struct results *r, const char *name);
// Index of `metric` in t->metric, or -1.
int results_metric_index(const struct task_result *t, const char *metric);

// The JSON text of `r` (what results_write_json writes) into `out` (caller frees).
int results_to_json(const struct results *r, struct sbuf *out, xsa_error *err);
// t->preferred_metric when set and present, else acc_norm when present, else "acc".
const char *results_preferred_metric(const struct task_result *t);
// 1 for the XSA paper's eight tasks (arc_easy boolq hellaswag lambada_openai openbookqa piqa
// social_iqa winogrande), else 0.
int results_is_paper_task(const char *name);
// "none", "400" or "0.1" (a fractional limit) into buf.
const char *results_limit_text(const struct results *r, char *buf, size_t cap);

#endif
