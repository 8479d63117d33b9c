// config.h: Hugging Face config.json -> struct model_config, for model_type gpt2 and llama.
// Settings that would change the forward pass in ways xsa-eval does not implement (another
// activation, rope_scaling) are refused with a message naming them, never ignored.
#ifndef XSA_MODEL_CONFIG_H
#define XSA_MODEL_CONFIG_H

#include "model/model.h"

#define HF_CONFIG_MAX_BYTES (4u << 20)

struct hf_config {
    struct model_config cfg;
    int attn_bias;  // llama attention_bias: q/k/v/o projections carry biases (gpt2: always)
    int mlp_bias;   // llama mlp_bias: gate/up/down carry biases (gpt2: always)
    int has_xsa;    // config.json declared "xsa_layers"
};

// Parses config.json text; `path` is only used in messages.
int hf_config_parse_text(struct hf_config *hc, const char *text, const char *path, xsa_error *err);

// Reads and parses the file at `path`.
int hf_config_parse_file(struct hf_config *hc, const char *path, xsa_error *err);

#endif
