// tokenizer_impl.h: what each tokenizer kind implements; private to model/tokenizer*.c.
#ifndef XSA_MODEL_TOKENIZER_IMPL_H
#define XSA_MODEL_TOKENIZER_IMPL_H

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
    char path[4096];
};

// Each loader fills t->ops, t->impl, vocab_size, bos_id, eos_id, adds_bos from `data`
// (the whole file, NUL-terminated) and returns 0, or an error naming `path`.
int tokenizer_hf_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err);
int tokenizer_sp_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err);
int tokenizer_llama2c_load(struct tokenizer *t, const char *path, const char *data, size_t len,
                           xsa_error *err);

#endif
