// model_internal.h: what the checkpoint readers share; not for use outside model/.
#ifndef XSA_MODEL_MODEL_INTERNAL_H
#define XSA_MODEL_MODEL_INTERNAL_H

#include "model/model.h"

// Which optional weights a checkpoint carries (m->cfg says the rest: qk_norm, the MLP's gate).
struct weight_spec {
    int norm_bias;          // LayerNorm gains and biases (gpt2, gpt_neox); else RMSNorm gains only
    int qkv_bias, o_bias;   // q/k/v projection biases; output projection bias
    int mlp_bias;           // gate/up/down biases
    int no_pre_norm;        // no norms before attention and MLP (olmo2)
    int post_norm;          // RMSNorm on the attention and MLP outputs (olmo2)
    int norm_unit;          // LayerNorms without weight or bias (olmo): their gains (ones) and biases
                            // (zeros) are made at load, not read, and not counted as parameters
    int norm_plus_one;      // RMSNorm gains stored as w and applied as (1 + w) (gemma): 1 is added at load
    int shared_norm;        // one pre-norm per layer, feeding attention and MLP both (phi, stablelm's parallel residual):
                            // the MLP's norm pointers alias the attention's, nothing is laid out for them
    int qk_norm_bias;       // the q/k norms are LayerNorms with biases (phi's qk_layernorm)
    int head_bias;          // the head has a bias (phi's lm_head)
    int no_final_norm;      // no norm before the head (opt post-LN, _remove_final_layer_norm)
};

// Lays out every weight that m->cfg and ws imply in one 64-byte-aligned arena and points the
// struct's arrays into it (layers included); sets n_params. gpt2 has every bias whatever ws
// says. The tied head aliases tok_emb. The arena is uninitialised.
int model_alloc_weights(struct model *m, const struct weight_spec *ws, xsa_error *err);

// Refuses non-finite weights: 0 when x[0..n) are all finite, else XSA_EBADINPUT with a message
// naming `path`, `tensor`, the first bad element and how many there are.
int model_check_finite(const float *x, size_t n, const char *path, const char *tensor, xsa_error *err);

// A tensor's shape as messages print it: "[4, 32]".
void model_fmt_shape(char *out, size_t n, int ndim, const int64_t *shape);

// Hugging Face checkpoint directory (config.json + safetensors or pytorch_model.bin) -> m;
// `config` (NULL: none): the config.json of a folder of weights that has none (accelerate's).
int hf_checkpoint_load(struct model *m, const char *dir, const char *config, xsa_error *err);

// The weights of `st` (opened by the caller; taken over and closed, also on failure) named as
// in a Hugging Face checkpoint of config `hc` -> m. `where` names the checkpoint in messages.
struct hf_config;
struct safetensors;
int hf_checkpoint_build(struct model *m, const char *where, const struct hf_config *hc, struct safetensors *st, xsa_error *err);

// A torch.save file: nanoGPT's ckpt.pt (model_args + model), or a bare state dict with its
// config.json at `config` (NULL: beside the file) -> m.
int torch_model_load(struct model *m, const char *path, const char *config, xsa_error *err);

#endif
