// trend.h: where a results file sits on a training curve: its series (SA or XSA, or a label
// the user gives) and its training step.
#ifndef XSA_EVAL_TREND_H
#define XSA_EVAL_TREND_H

#include "common/error.h"
#include "eval/results.h"

// The step, first found of: the results' own (run --step N); "step" in the checkpoint's
// config.json (when the model path is still there); the digits of a model path component
// step_N, iter_N or ckpt_N ('-' or nothing for '_'; an extension after N is allowed).
// Returns 0 with *step set, or XSA_EBADINPUT saying how to give one.
int trend_step(const struct results *r, const char *results_path, long long *step, xsa_error *err);

// "XSA" when any layer uses XSA, else "SA".
const char *trend_series(const struct results *r);

#endif
