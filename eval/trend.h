// trend.h: where a results file sits on a training curve: its series (SA or XSA, or a label
// the user gives) and its training step.
#ifndef XSA_EVAL_TREND_H
#define XSA_EVAL_TREND_H

#include "common/error.h"
#include "eval/results.h"

// The training step a checkpoint's name reads (at most 2147483647): at its start step_N, iter_N,
// ckpt_N ('-' or nothing for '_') or checkpoint-N (the Hugging Face Trainer's); later in it only
// step, after a byte that is no letter or digit ('=' may also stand before the digits:
// state_step010000.pt of modded-nanogpt, epoch=3-step=1000.ckpt of Lightning, stage1-step1000-
// tokens5B of OLMo's Hub revisions); the digits end the name or come before an extension, OLMo's
// -tokens... or -unsharded; or llm.c's model_%08d.bin. 1 and *step set when it reads one.
int trend_name_step(const char *name, long long *step);

// The training step of the checkpoint at model_path, as run records it when --step is not given:
// "step" in its config.json, else `saved` (the step its torch.save file records; NULL for none),
// else "global_step" of the Hugging Face Trainer's trainer_state.json in it (a file: in its
// folder), else trend_name_step of its name, or for a file of its folder's, in its real path,
// else of `revision` (a Hub model's revision, such as Pythia's step143000; NULL for a local one).
// Returns where it came from ("config.json", "checkpoint", "trainer_state", "path", "revision"), or NULL when
// none gives one; `note` (note_n bytes) names a config.json "step" or a trainer_state.json that
// gives no whole number, and a global_step recorded over a name that reads another step.
// (TREND_NOTE_MAX bytes hold every note whole: a config.json's and a trainer_state.json's, each
// naming a path of up to 4096 bytes.)
#define TREND_NOTE_MAX 9400
const char *trend_checkpoint_step(const char *model_path, const long long *saved, const char *revision, long long *step, char *note,
                                  size_t note_n);

// A results file's step: the one run recorded, else (a file from before run recorded it) the
// trend_name_step rule on the model path it names. Returns 0 with *step set, or XSA_EBADINPUT saying how
// to give one.
int trend_step(const struct results *r, const char *results_path, long long *step, xsa_error *err);

// "XSA" when any layer uses XSA, else "SA".
const char *trend_series(const struct results *r);

// report --trend's series of n files without --series: trend_series, except that XSA files with
// different XSA layers (a checkpoint's own last 2, another run's or --xsa's all) are separate
// series named by their layers, "XSA (layers 2,3)", "XSA (all layers)": one curve never joins
// two architectures. names: n buffers of TREND_SERIES_MAX bytes.
#define TREND_SERIES_MAX 1100
void trend_default_series(const struct results *const *rs, int n, char (*names)[TREND_SERIES_MAX]);

#endif
