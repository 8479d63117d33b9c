// mnanogpt.h: modded-nanogpt's state_step*.pt of the gated-XSA record's GPT and those after it (model/mnanogpt.c).
// Not for use outside model/.
#ifndef XSA_MODEL_MNANOGPT_H
#define XSA_MODEL_MNANOGPT_H

#include "model/model.h"

// Loads the state dict (the "model" entry of the saved dict, or the dict itself) at `path`, with
// the schedule settings of the JSON file `arch_path` (FAMILY "modded-nanogpt"; NULL: the record's).
int mnanogpt_load(struct model *m, const char *path, const char *arch_path, xsa_error *err);

#endif
