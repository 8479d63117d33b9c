// tokenizer_hf.c: placeholder until the tokenizer issue lands.
#include "model/tokenizer_impl.h"

int tokenizer_hf_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err) {
    (void)t;
    (void)data;
    (void)len;
    return xsa_fail(err, XSA_EBADINPUT, "%s: this tokenizer kind is not supported yet", path);
}
