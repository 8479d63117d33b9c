// task.h: the nine benchmarks as lm-evaluation-harness v0.4 defines them.
// A task turns a canonical row (the Hugging Face dataset schema lm-eval reads, one JSON object
// per line) into a doc: its (context, continuation) requests, gold index and choice lengths.
#ifndef XSA_TASKS_TASK_H
#define XSA_TASKS_TASK_H

#include <cJSON.h>

#include "common/error.h"

enum task_output {
    TASK_MULTIPLE_CHOICE = 1,  // one request per choice: (context, " " + choice)
    TASK_LOGLIKELIHOOD = 2,    // one request: (context, target) (LAMBADA)
    TASK_MULTIPLE_INPUT = 3,   // one request per context, same continuation (WinoGrande)
};

struct task_request {
    char *context;       // UTF-8, owned by the doc
    char *continuation;  // UTF-8, owned by the doc (delimiter included)
};

#define TASK_MAX_CHOICES 64  // requests (choices, contexts) of one document; doc_alloc refuses more

struct task_doc {
    int doc_id;                 // position in the evaluated split (0-based)
    int n_requests;             // MC: choices; MI: contexts; LL: 1
    struct task_request *req;   // (n_requests)
    int gold;                   // index of the right request; -100 when the label is invalid
    double *choice_len;         // (n_requests) Unicode code points of each choice, for acc_norm
};

struct task_def {
    const char *name;            // lm-eval task name, e.g. "arc_easy"
    const char *groups;          // comma list of groups it belongs to: "all,paper"
    enum task_output output;
    const char *hf_dataset;      // e.g. "allenai/ai2_arc"
    const char *hf_config;       // e.g. "ARC-Easy" ("default" when none)
    const char *split;           // the evaluated split, e.g. "test"
    const char *fewshot_split;   // split few-shot examples are drawn from
    int n_docs;                  // expected rows of the evaluated split
    const char *metrics;         // comma list in lm-eval order, e.g. "acc,acc_norm"
    const char *preferred_metric;// acc_norm where lm-eval defines it, else acc
    double version;              // lm-eval task version
    const char *canonical_sha256;// digest of the canonical JSONL when pinned, else NULL
    // The keys of a canonical row in the Hugging Face schema's order, which the digest is
    // taken in; "choices(text,label)" orders a nested object's keys too.
    const char *schema;
    // Builds the doc of one canonical row. `where` names the row for errors ("file:line").
    int (*doc_from_row)(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                        xsa_error *err);
    // Added: another Hugging Face copy of the same rows, for when the first is not served
    // (social_iqa: lighteval/siqa, which lm-eval uses after v0.4.12); NULL when none.
    const char *hf_alt_dataset;
    const char *hf_alt_config;
};

// The registry (tasks/registry.c).
const struct task_def *task_registry(int *n);
const struct task_def *task_find(const char *name);
// 1 when task `name` belongs to `group` ("all", "paper"), else 0.
int task_in_group(const char *name, const char *group);
// How many tasks a group ("all", "paper") has.
int task_group_size(const char *group);
// Expands "all", "paper" and comma-separated names into a list without duplicates, in
// registry order. Unknown names are an error listing the valid ones.
int task_expand_list(const char *spec, const struct task_def **out, int max, int *n_out, xsa_error *err);

// Frees what a doc owns (not the struct itself) and zeroes it.
void task_doc_free(struct task_doc *d);

// Builds docs [0, n) from canonical rows (row i is doc i; where[i] names it for
// errors); n_docs = min(n_rows, limit) when limit > 0. On error nothing is left allocated.
int task_docs_from_rows(const struct task_def *t, cJSON *const *rows, char *const *where,
                        int n_rows, int limit, struct task_doc **docs, int *n_docs, xsa_error *err);
void task_docs_free(struct task_doc *docs, int n);

#endif
