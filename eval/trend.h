// trend.h: where a results file sits on a training curve: its series (SA or XSA, or a label
// the user gives) and its training step.
#ifndef XSA_EVAL_TREND_H
#define XSA_EVAL_TREND_H

#include "common/error.h"
#include "eval/results.h"

// The training step of the checkpoint at model_path, as run records it when --step is not given:
// "step" in its config.json, else the digits of its name, or for a file its folder's, that read
// step_N, iter_N or ckpt_N in its real path ('-' or nothing for '_'; an extension after N is
// allowed; at most 2147483647). Returns where it came from ("config.json", "path"), or NULL when
// neither gives one; `note` (note_n bytes) names a config.json "step" that is not a whole number.
const char *trend_checkpoint_step(const char *model_path, long long *step, char *note, size_t note_n);

// A results file's step: the one run recorded, else (a file from before run recorded it) the
// step_N rule on the model path it names. Returns 0 with *step set, or XSA_EBADINPUT saying how
// to give one.
int trend_step(const struct results *r, const char *results_path, long long *step, xsa_error *err);

// "XSA" when any layer uses XSA, else "SA".
const char *trend_series(const struct results *r);

#endif
