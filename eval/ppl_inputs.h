// ppl_inputs.h: the documents `xsa-eval ppl` and `probe` score, from what the command line
// names: one text file (one document), a JSONL file (one document per record), token shards
// (one stream, with how its bytes are counted and the family's document splits), or the
// benchmark tasks' documents (each its context and gold answer).
#ifndef XSA_EVAL_PPL_INPUTS_H
#define XSA_EVAL_PPL_INPUTS_H

#include "common/error.h"
#include "eval/ppl.h"

#define PPL_MAX_TEXT_BYTES ((size_t)1 << 30)  // a text or JSONL file, read whole
#define PPL_DEFAULT_RANKS 8                   // parameter-golf's track: 8 GPUs
#define PPL_DEFAULT_VAL_BATCH 524288          // its VAL_BATCH_TOKENS
#define MNG_DEFAULT_VAL_BATCH 2097152         // modded-nanogpt's val_batch_size (4 * 64 * 1024 * 8)
#define MNG_DEFAULT_VAL_TOKENS 10485760       // and its val_tokens

struct data_options;
struct tokenizer;
struct model;

struct ppl_inputs {                 // exactly one of text, jsonl, shards and tasks
    const char *text;               // --text: the whole file is one document
    const char *jsonl, *field;      // --jsonl: each record's string field is one document
    const char *const *shard;       // --tokens-file: token shards, one stream
    int n_shards;
    const char *const *bytes_file;  // --bytes-file: a CaseOps record's byte sidecar shards
    int n_bytes_files;
    int split_docs, ranks;          // --split-docs; --ranks (0: unset)
    long val_batch_tokens;          // --val-batch-tokens (0: unset)
    long val_tokens;                // --val-tokens (0: unset)
    const char *tasks;              // --tasks: the benchmark documents as texts ...
    int limit;                      // ... the first --limit of each (0: all)
    const struct data_options *data;  // where --tasks' rows come from
};

// The documents into *d, with model m's vocabulary and prefix token (ppl_prefix_token); tk may
// be NULL for shards (then bits per byte are unknown). *bytes_rule says how bytes were counted.
int ppl_inputs_load(const struct ppl_inputs *in, const struct tokenizer *tk, const struct model *m, struct ppl_docs *d,
                    const char **bytes_rule, xsa_error *err);

#endif
