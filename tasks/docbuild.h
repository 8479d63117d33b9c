// docbuild.h: shared pieces of the per-task row -> doc builders (tasks/*.c): typed field
// access with "file:line: field 'x' ..." errors, and filling a task_doc's requests.
#ifndef XSA_TASKS_DOCBUILD_H
#define XSA_TASKS_DOCBUILD_H

#include <stddef.h>

#include "common/vec.h"
#include "tasks/task.h"

// A string field that is present, a JSON string, and valid UTF-8.
int row_get_string(const cJSON *row, const char *field, const char *where, const char **out,
                   xsa_error *err);
// An array field whose items are all valid UTF-8 strings; *n_out may be 0.
int row_get_string_array(const cJSON *row, const char *field, const char *where,
                         const cJSON **arr, int *n_out, xsa_error *err);
// An integer field (a JSON number with an integral value in int range).
int row_get_int(const cJSON *row, const char *field, const char *where, int *out, xsa_error *err);

// Allocates d's n_requests request slots (zeroed); gold starts at -100.
int doc_alloc(struct task_doc *d, int doc_id, int n_requests, xsa_error *err);
// Sets request i to (ctx[0..ctx_n), delim + cont[0..cont_n)); choice_len[i] = len(choice)
// in code points, where the choice is `cont` for multiple choice (no delimiter).
void doc_set_request(struct task_doc *d, int i, const char *ctx, size_t ctx_n, const char *delim,
                     const char *cont, size_t cont_n, double choice_len);
// Frees a partly built doc and returns `rc` (for error paths).
int doc_fail(struct task_doc *d, int rc);

// lm-eval's gold for an int target: kept when 0 <= gold < n, else -100 (always wrong).
int doc_gold_in_range(long long gold, int n);

// Python's int(s) on a str (surrounding whitespace, sign, ASCII digits, single '_' between
// digits). Returns 1 and sets *out when it parses and fits in a long long, else 0.
int py_parse_int(const char *s, size_t n, long long *out);

// The per-task builders (one file per task family).
int arc_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);
int boolq_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);
int hellaswag_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);
int lambada_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);
int openbookqa_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);
int piqa_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);
int siqa_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);
int winogrande_doc_from_row(const cJSON *row, int doc_id, struct task_doc *out, const char *where, xsa_error *err);

// ARC and OpenBookQA: requests (ctx, " " + choices.text[i]); gold = choices.label.index(key),
// which must exist (lm-eval raises ValueError otherwise), -100 when past the text list.
int mc_labeled_doc(const cJSON *row, int doc_id, struct task_doc *out, const char *where,
                   const char *ctx, size_t ctx_n, const char *key, size_t key_n, xsa_error *err);

// HellaSwag's utils.preprocess (strip, " [title]" -> ". ", drop [..], one "  " -> " " pass).
// Appends to `out`.
void hellaswag_preprocess(const char *s, size_t n, struct sbuf *out);

#endif
