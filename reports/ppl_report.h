// ppl_report.h: the Markdown, JSON and SVG of `xsa-eval ppl` (eval/ppl.h computes them).
#ifndef XSA_REPORTS_PPL_REPORT_H
#define XSA_REPORTS_PPL_REPORT_H

#include "common/error.h"
#include "common/jsonw.h"
#include "common/vec.h"
#include "eval/ppl.h"

struct ppl_top {                 // one of the targets where the models disagree most (--kl)
    long target;                 // index among the scored targets
    int unit, ctx;
    double kl, nll_a, nll_b;
    char text[64], top_a[64], top_b[64];  // decoded target and each model's argmax (printable)
};

struct ppl_report {
    const struct ppl_summary *sum;
    const char *label[2], *path[2], *desc[2];  // model names, checkpoints, architecture lines
    const char *xsa[2];          // each model's XSA layers, as results files write xsa_layers
    const char *input;           // what was scored ("--text FILE", "2 shards")
    const char *unit_name;       // "document" | "window" | "chunk": the interval's units
    int unit_bos;                // >= 0: the units are a stream's documents, each from this BOS id
    const char *unit_note;       // why a stream's units are not its documents, or NULL
    int context, stride;
    double level;                // the intervals' (1 - --alpha)
    const char *command;
    const char *bytes_rule;      // how the bytes of bits per byte were counted
    int split, doc_start;        // --split-docs: documents start at token doc_start ...
    int ranks;                   // ... and disjoint windows are eval_val's over ranks (0: sliding)
    long rank_batch;             //     batches of rank_batch tokens
    long val_tokens;             // > 0: modded-nanogpt's val chunks of rank_batch tokens, val_tokens in all
    const char *ttt;             // --ttt: its settings ("TTT_LR=0.002 ..."), or NULL
    int ttt_recipe;              // ... and whose records' code it follows (eval/ttt.h's enum ttt_recipe) ...
    const char *ttt_source;      //     the function it runs (ttt_settings_source)
    int ttt_phases;              //     2026-04-10's recipe: its global SGD phases (0: none)
    const struct ppl_top *top;   // (n_top)
    int n_top;
    const struct ppl_data_src *data;  // (n_data) --tasks: each task's rows, as `run` records them
    int n_data;
};

// The provenance of --tasks documents (ppl and probe reports): a Markdown table row per task,
// and a JSON object "data" keyed by task with the fields a results file's xsa_eval.data has.
void ppl_data_md(struct sbuf *o, const struct ppl_data_src *d, int n);
void ppl_data_json(struct jsonw *w, const struct ppl_data_src *d, int n);

// Markdown to md_path (NULL: stdout) with the chart `<md_path minus .md>_position.svg` beside
// it, and the JSON to json_path (NULL: none), written atomically.
int ppl_write_report(const struct ppl_report *r, const char *md_path, const char *json_path, xsa_error *err);

#endif
