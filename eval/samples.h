// samples.h: --log-samples: one JSONL line per document with every request's strings, token
// counts, log-probability and greedy flag, the prediction and the gold index.
#ifndef XSA_EVAL_SAMPLES_H
#define XSA_EVAL_SAMPLES_H

#include "common/error.h"
#include "eval/encode.h"
#include "eval/fewshot.h"
#include "eval/results.h"
#include "eval/scheduler.h"
#include "tasks/task.h"

// enc/res: (total requests); first_req[d]: index of doc d's first request; fs: the few-shot
// prefixes (NULL for 0-shot), so each context is logged as the model saw it.
int samples_write(const char *path, const struct task_def *t, const struct task_doc *docs, int n_docs,
                  const struct fewshot *fs,
                  const struct encoded_request *enc, const struct sched_result *res, const int *first_req,
                  const struct task_result *tr, xsa_error *err);

#endif
