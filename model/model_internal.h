// model_internal.h: what the checkpoint readers share; not for use outside model/.
#ifndef XSA_MODEL_MODEL_INTERNAL_H
#define XSA_MODEL_MODEL_INTERNAL_H

#include "model/model.h"

// Lays out every weight that m->cfg implies in one 64-byte-aligned arena and points the
// struct's arrays into it (layers included); sets n_params. Biases: gpt2 has all of them;
// llama has q/k/v/o biases when attn_bias and gate/up/down biases when mlp_bias.
// The tied head aliases tok_emb. The arena is uninitialised.
int model_alloc_weights(struct model *m, int attn_bias, int mlp_bias, xsa_error *err);

// Refuses non-finite weights: 0 when x[0..n) are all finite, else XSA_EBADINPUT with a message
// naming `path`, `tensor`, the first bad element and how many there are.
int model_check_finite(const float *x, size_t n, const char *path, const char *tensor, xsa_error *err);

// Hugging Face checkpoint directory (config.json + safetensors) -> m.
int hf_checkpoint_load(struct model *m, const char *dir, xsa_error *err);

#endif
