// run.h: `xsa-eval run`: score one or two checkpoints on a set of tasks, write results JSON
// (docs/results-format.md), per-sample logs, and for two models the comparison report.
#ifndef XSA_EVAL_RUN_H
#define XSA_EVAL_RUN_H

#include "data/data.h"
#include "eval/results.h"
#include "model/hub_cache.h"

#define RUN_MAX_MODELS 2

struct run_options {
    const char *models[RUN_MAX_MODELS];        // checkpoint paths
    const struct hub_model *hub[RUN_MAX_MODELS];  // where a model was named by repo id, else NULL
    int n_models;
    const char *tasks;        // --tasks LIST
    const char *device;       // auto | cpu | cuda[:N]
    const char *dtype;        // GPU weights: bfloat16 (default) | float32
    const char *xsa;          // --xsa SPEC (NULL: the checkpoint's own)
    const char *tokenizer;    // --tokenizer FILE (NULL: found beside the checkpoint)
    const char *config;       // --config FILE: a bare state-dict .pt's config.json (NULL: beside it)
    int num_fewshot;
    int has_step, step;       // --step N: the checkpoint's training step
    int limit;                // -1: all docs
    double limit_fraction;    // in (0, 1): --limit as a fraction, ceil(n * f) docs per task (lm-eval); else 0
    const char *output;       // results folder
    int log_samples;
    int batch_tokens;         // --batch-tokens; 0: the backend's default for its device
    int share;                // 0 with --no-share
    int quiet;
    int add_bos;              // -1 tokenizer default, 0 --no-add-bos, 1 --add-bos
    int threads;
    int max_length;           // 0: the model's context length
    const char *command;      // the command line, for the results
    int resume;               // 1: take what a killed run's journal holds (0 with --no-resume)
    const char *cache_requests;  // --cache-requests DIR, or NULL
    struct data_options data;
    // What the caller shows as results come (may be NULL): each model's results once written,
    // and for two models both, to write their comparison.
    void (*model_done)(void *ctx, const struct results *r, const char *path);
    int (*pair_done)(void *ctx, const struct results *a, const char *path_a, const struct results *b,
                     const char *path_b, xsa_error *err);
    void *done_ctx;
};

int run_evaluate(const struct run_options *opt, xsa_error *err);

#endif
