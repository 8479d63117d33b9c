// tokenizer_impl.h: what each tokenizer kind implements; private to model/tokenizer*.c.
#ifndef XSA_MODEL_TOKENIZER_IMPL_H
#define XSA_MODEL_TOKENIZER_IMPL_H

#include <cJSON.h>

#include "model/tokenizer.h"

struct tokenizer_ops {
    int (*encode)(const void *impl, const char *text, size_t len, int add_special, struct ivec *out,
                  xsa_error *err);
    int (*decode)(const void *impl, const int32_t *ids, size_t n, struct sbuf *out, xsa_error *err);
    void (*destroy)(void *impl);
};

struct tokenizer {
    enum tokenizer_kind kind;
    const struct tokenizer_ops *ops;
    void *impl;
    int vocab_size;
    int bos_id, eos_id;  // -1 when none
    int adds_bos;        // encode(add_special=1) prepends bos_id
    int caseops;         // text is rewritten by the CaseOps transform before encoding (model/caseops.h)
    // The special tokens transformers 5 names for a tokenizer.json (tokenizer_config.c): has_config
    // when it names any (a tokenizer_config.json or special_tokens_map.json beside it, or a
    // family class), its BOS and EOS (cfg_bos_tok / cfg_eos_tok, "" for none) and their ids
    // (-1: none); cfg_bos_name: the BOS when the vocabulary has no such token (or the class whose
    // default is not known); cfg_bos_new: the BOS was added past the vocabulary of tokenizer.json.
    int has_config, cfg_bos_id, cfg_eos_id, cfg_bos_new;
    char cfg_bos_tok[256], cfg_eos_tok[256], cfg_bos_name[256];
    char tf_class[128];    // the class transformers 5 builds it as ("TokenizersBackend": as written)
    char class_note[400];  // what tokenizer_class_rebuild changed, for the user ("" when nothing)
    char path[4096];
};

// Each loader fills t->ops, t->impl, vocab_size, bos_id, eos_id, adds_bos from `data`
// (the whole file, NUL-terminated) and returns 0, or an error naming `path`.
int tokenizer_hf_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err);
// The tokenizer.json `root` (once tokenizer_class_rebuild has run) built as tokenizer_hf_load does;
// root is left to the caller.
int tokenizer_hf_load_root(struct tokenizer *t, const cJSON *root, const char *path, xsa_error *err);
// A folder's GPT-2-style vocab.json (at vocab_path) and the merges.txt beside it, as transformers 5
// builds them (tokenizer_vocab_files.c): loaded as a tokenizer.json of kind TOKENIZER_HF_JSON.
int tokenizer_vocab_files_load(struct tokenizer *t, const char *vocab_path, xsa_error *err);
// merges.txt's bytes as the `tokenizers` library reads them (lines, "#version" skipped, each "a b"):
// a JSON array of [a, b] pairs in *out, or XSA_EBADINPUT naming path and the line.
int tokenizer_merges_txt_parse(const char *data, size_t len, cJSON **out, const char *path, xsa_error *err);
int tokenizer_sp_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err);
// The id of a token string of a tokenizer.json (an added token, else the model's vocabulary), -1 when none.
int32_t tokenizer_hf_token_id(const struct tokenizer *t, const char *s, size_t len);
// A tokenizer.json (its JSON `root`, at `path`; `byte_level`: its text holds "ByteLevel") as
// transformers 5's AutoTokenizer builds it (tokenizer_config.c): the family classes it picks by
// tokenizer_class or config.json's model_type (Qwen2Tokenizer, GPT2Tokenizer, GPTNeoXTokenizer,
// LlamaTokenizer) keep only its vocabulary, merges, added tokens and (but for GPT-NeoX)
// post-processor, under their own normalizer, pre-tokenizer and decoder: `root` is changed to
// that, and the special tokens the class and the configs name are added to it. Fills t's
// tf_class, class_note (a line for the user when the pipeline changed), has_config and the BOS
// and EOS names.
int tokenizer_class_rebuild(struct tokenizer *t, cJSON *root, const char *path, int byte_level, xsa_error *err);
// The ids of those BOS and EOS, once the tokenizer is built.
void tokenizer_config_ids(struct tokenizer *t);
int tokenizer_llama2c_load(struct tokenizer *t, const char *path, const char *data, size_t len,
                           xsa_error *err);

#endif
