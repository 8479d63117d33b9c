// config.h: Hugging Face config.json -> struct model_config, for model_type gpt2, llama,
// mistral, ministral, qwen2, qwen3, olmo, olmo2, gpt_neox, phi3, gemma, gemma2 and gemma3_text: each family's keys and fixed choices become
// the one decoder's feature flags.
// Settings that would change the forward pass in ways xsa-eval does not implement (another
// activation, rope_scaling) are refused with a message naming them, never ignored.
#ifndef XSA_MODEL_CONFIG_H
#define XSA_MODEL_CONFIG_H

#include "model/model_internal.h"

#define HF_CONFIG_MAX_BYTES (4u << 20)

struct hf_config {
    struct model_config cfg;
    struct weight_spec ws;  // the optional weights the family and its keys imply
    int head_dim_default;  // config.json has no head_dim and the family's config class gives one (qwen3, gemma)
    int has_xsa;    // config.json declared "xsa_layers"
    double partial_rotary;  // partial_rotary_factor / rotary_pct (1: every dim rotates), in double as
                            // transformers reads it
};

// Parses config.json text; `path` is only used in messages.
int hf_config_parse_text(struct hf_config *hc, const char *text, const char *path, xsa_error *err);

// Reads and parses the file at `path`.
int hf_config_parse_file(struct hf_config *hc, const char *path, xsa_error *err);

#endif
