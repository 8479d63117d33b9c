// llmc.h: karpathy/llm.c's GPT-2 checkpoints, as train_gpt2.cu writes them every N steps
// (log124M/model_00010000.bin) and train_gpt2.py exports them (gpt2_124M.bin,
// gpt2_124M_bf16.bin). A header of 256 int32 (magic 20240326, version 3 = float32 / 5 = bfloat16,
// max_seq_len, vocab_size, num_layers, num_heads, channels, padded_vocab_size), then the
// parameters in llm.c's order, each stacked across layers: wte (Vp, C), wpe (maxT, C), ln1w,
// ln1b (L, C), qkvw (L, 3C, C), qkvb (L, 3C), attprojw (L, C, C), attprojb, ln2w, ln2b (L, C),
// fcw (L, 4C, C), fcb (L, 4C), fcprojw (L, C, 4C), fcprojb (L, C), lnfw, lnfb (C). The model is
// GPT-2 (tanh GELU, LayerNorm eps 1e-5, head tied to wte) over the first vocab_size rows of wte,
// as llm.c's own loss and its dev/eval/export_hf.py read it. llm.c's other binary files (token
// shards, optimizer state, its Llama 3 export, its decode-only tokenizer) are refused by name.
#ifndef XSA_MODEL_LLMC_H
#define XSA_MODEL_LLMC_H

#include "model/model.h"

#define LLMC_HEADER_BYTES 1024

// What an llm.c file is, from its first int32.
enum llmc_kind { LLMC_NONE = 0, LLMC_MODEL, LLMC_OTHER };

// LLMC_MODEL for a GPT-2 checkpoint, LLMC_OTHER for another llm.c binary file (refused by
// llmc_load with what it is), LLMC_NONE for anything else (or a file that cannot be read).
enum llmc_kind llmc_sniff(const char *path);

int llmc_load(struct model *m, const char *path, xsa_error *err);

#endif
