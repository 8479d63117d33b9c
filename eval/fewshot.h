// fewshot.h: lm-eval v0.4's few-shot contexts (ContextSampler with random.Random(1234)).
// For each evaluated doc, in doc order, `rnd.sample(pool, k)` draws examples from the
// few-shot split (k + 1 for tasks evaluated on a validation split, dropping the rows equal
// to the doc's and keeping the first k; should that leave fewer than k, v0.4.13 draws k again
// from the pool without them); each example is doc_to_text + target_delimiter + gold
// target + "\n\n" (build_qa_turn: an empty target, a WinoGrande sentence ending at its blank,
// gets neither delimiter), and the block precedes the doc's own context. Few-shot examples
// whose label is outside their choices are an error (lm-eval raises IndexError on them).
#ifndef XSA_EVAL_FEWSHOT_H
#define XSA_EVAL_FEWSHOT_H

#include "common/error.h"
#include "common/vec.h"
#include "data/data.h"
#include "tasks/task.h"

struct fewshot {
    int n_docs;
    char **prefix;  // (n_docs) the few-shot block that precedes doc d's context
    char sha256[65], source[512];  // the few-shot split's canonical digest and where it came from
                                   // ("" when it is the evaluated split: its digest is the task's)
};

// docs/n_all: every doc of the evaluated split (the pool when the few-shot split is the
// evaluated one); the first n_eval are evaluated; row_json[d]: doc d's row as
// fewshot_row_json serializes it (lm-eval's `x != doc` compares whole rows). Other few-shot
// splits are read from <data_dir>/<task>/<split>.jsonl (canonical rows).
int fewshot_prepare(struct fewshot *fs, const struct task_def *t, const struct task_doc *docs, char *const *row_json,
                    int n_all, int n_eval, int k, const struct data_options *data, xsa_error *err);
// Each canonical row serialized (keys in the schema's order, so equal rows give equal strings);
// free with fewshot_row_json_free.
char **fewshot_row_json(cJSON *const *rows, int n);
void fewshot_row_json_free(char **row_json, int n);
int fewshot_context(const struct fewshot *fs, int doc, struct sbuf *out, xsa_error *err);
void fewshot_free(struct fewshot *fs);

#endif
