// llama2c.h: Karpathy's llama2.c legacy (version 0) checkpoint format, as llama2.c's run.c reads it.
// 7 int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size (negative: unshared
// classifier), seq_len; then fp32 tensors stacked per kind across layers: token_embedding
// (V,C), rms_att (L,C), wq (L,C,C), wk (L,KV,C), wv (L,KV,C), wo (L,C,C), rms_ffn (L,C),
// w1 (L,F,C), w2 (L,C,F), w3 (L,F,C), rms_final (C), freq_cis_real (T,hd/2),
// freq_cis_imag (T,hd/2), then wcls (V,C) when unshared. w1 = gate, w3 = up, w2 = down.
#ifndef XSA_MODEL_LLAMA2C_H
#define XSA_MODEL_LLAMA2C_H

#include "model/model.h"

#define LLAMA2C_HEADER_BYTES 28

int llama2c_load(struct model *m, const char *path, xsa_error *err);

#endif
