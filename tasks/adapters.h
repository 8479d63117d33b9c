// adapters.h: original-author data files (laid out as docs/data-dir.md describes) turned
// into canonical rows (data/load.c reads a --data-dir through them).
#ifndef XSA_TASKS_ADAPTERS_H
#define XSA_TASKS_ADAPTERS_H

#include <cJSON.h>

#include "common/error.h"
#include "tasks/task.h"

// The benchdata folder name of a task: arc_easy, arc_challenge, boolq, hellaswag,
// lambada_openai, openbookqa, piqa, siqa (for social_iqa), winogrande.
const char *task_original_dirname(const struct task_def *t);

// Reads the original files in `dir` and calls emit once per canonical row, in file order;
// emit takes ownership of `row` and returns 0 or an error code (which stops the walk).
// `where` names the source line ("file:line"). *preprocessed is set to 1 when the rows
// carry text already preprocessed by a third party (HellaSwag's text dump), else 0.
//   arc_*:      ARC-{Easy,Challenge}-Test.jsonl  {id, question:{stem, choices[{text,label}]}, answerKey}
//   openbookqa: test.jsonl                       same layout, stem -> question_stem
//   boolq:      val.jsonl (SuperGLUE, preferred) or dev.jsonl (Google: passage = title + " -- " + passage)
//   hellaswag:  hellaswag_val.jsonl (original) or hellaswag_val_full.txt.bz2 (6 lines per item)
//   lambada:    lambada_test.jsonl ({text}, already canonical)
//   piqa:       valid.jsonl + valid-labels.lst
//   siqa:       dev.jsonl + dev-labels.lst (label kept as the line's text, "1".."3")
//   winogrande: dev.jsonl ("answer", or dev-labels.lst when absent)
int task_adapt_original_dir(const struct task_def *t, const char *dir,
                            int (*emit)(void *ctx, cJSON *row, const char *where, xsa_error *err),
                            void *ctx, int *preprocessed, xsa_error *err);

#endif
