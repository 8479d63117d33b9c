// fuzz_encode.c: the input as text, encoded by every fixture tokenizer (FUZZ_FIXTURES, default
// tests/fixtures/tokenizers) with and without specials; the ids must be in the vocabulary and
// decode without error.
#include <stdint.h>

#include "model/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

static struct tokenizer *toks[16];
static int ntoks;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    static const char *const files[] = {
        "gpt2/tokenizer.json", "llama3/tokenizer.json", "hf_sp/tokenizer.json", "hf_metaspace/tokenizer.json",
        "norm_mix/tokenizer.json", "split_mix/tokenizer.json", "sp_bpe/tokenizer.model",
        "sp_bpe_llama/tokenizer.model", "sp_bpe_raw/tokenizer.model", "sp_bpe_unused/tokenizer.model",
        "llama2c_synth/tokenizer.bin",
    };
    const char *dir = getenv("FUZZ_FIXTURES") ? getenv("FUZZ_FIXTURES") : "tests/fixtures/tokenizers";
    const char *only = getenv("FUZZ_ONLY");  // a substring of one fixture path, to fuzz just that one
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (only && !strstr(files[i], only)) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        xsa_error err = {0};
        if (tokenizer_load(&toks[ntoks], path, &err)) {
            fprintf(stderr, "fuzz_encode: %s\n", err.msg);
            exit(1);
        }
        ntoks++;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int k = 0; k < ntoks; k++) {
        for (int special = 0; special < 2; special++) {
            struct ivec ids = {0};
            xsa_error err = {0};
            int rc = tokenizer_encode(toks[k], (const char *)data, size, special, &ids, &err);
            fuzz_check_error(rc, &err);
            if (rc) {
                fprintf(stderr, "%s: encode failed: %s\n", tokenizer_path(toks[k]), err.msg);
                abort();
            }
            for (size_t i = 0; i < ids.n; i++)
                if (ids.v[i] < 0 || ids.v[i] >= tokenizer_vocab_size(toks[k])) abort();
            struct sbuf s = {0};
            xsa_error e2 = {0};
            if (tokenizer_decode(toks[k], ids.v, ids.n, &s, &e2)) {
                fprintf(stderr, "%s: decode failed: %s\n", tokenizer_path(toks[k]), e2.msg);
                abort();
            }
            sbuf_free(&s);
            ivec_free(&ids);
        }
    }
    return 0;
}
