// task_metrics.h: one task's metrics (lm-eval's names and order: the task's `metrics` list)
// from the scores of its requests: per-document values (acc, acc_norm, the perplexity item)
// and their aggregates with standard errors (eval/metrics.h does the arithmetic).
#ifndef XSA_EVAL_TASK_METRICS_H
#define XSA_EVAL_TASK_METRICS_H

#include "common/error.h"
#include "eval/results.h"
#include "eval/scheduler.h"
#include "tasks/task.h"

// docs (n); res: every request's score, doc d's first at first_req[d] (n). Fills tr's metric
// names, per-document arrays (allocated here), values, stderrs and preferred metric.
int task_metrics_compute(const struct task_def *t, const struct task_doc *docs, int n, const struct sched_result *res,
                         const int *first_req, int n_threads, struct task_result *tr, xsa_error *err);

#endif
