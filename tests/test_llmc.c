// Tests of llm.c's GPT-2 checkpoints (model/llmc.c). The files and their references are written
// by tools/fixtures/make_llmc_fixtures.py with llm.c's own train_gpt2.py (its GPT class and
// write_model); tests/test_model_exact.c scores them against those references. Here: what the
// loader makes of the header and the parameters, and every refusal.
#include <stdint.h>
#include <unistd.h>

#include "common/fileio.h"
#include "model/llmc.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "tests/check.h"

#define DIR "tests/fixtures/llmc/"

static unsigned char *slurp(const char *path, size_t *n) {
    char *d = NULL;
    xsa_error err = {0};
    if (file_read_all(path, 16u << 20, &d, n, &err)) return NULL;
    return (unsigned char *)d;
}

static void spit(const char *path, const unsigned char *d, size_t n) {
    xsa_error err = {0};
    CHECK_MSG(file_write_atomic(path, d, n, &err) == 0, "%s", err.msg);
}

TEST(test_llmc_header_and_dtype) {
    struct model m;
    xsa_error err = {0};
    int rc = model_load(&m, DIR "model_f32.bin", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return;
    CHECK_STR(m.format, "llmc");
    CHECK_STR(m.dtype, "F32");
    CHECK(m.cfg.arch == MODEL_ARCH_GPT2 && m.cfg.n_layer == 2 && m.cfg.d_model == 32 && m.cfg.n_head == 4);
    CHECK(m.cfg.vocab_size == 703 && m.cfg.max_seq_len == 256 && m.cfg.d_ff == 128 && m.cfg.tied_head);
    // the padding rows (703..767) are not parameters of the model
    CHECK_EQ_INT((int)m.n_params, 703 * 32 + 256 * 32 + 2 * (12 * 32 * 32 + 13 * 32) + 2 * 32);
    struct model b;
    rc = model_load(&b, DIR "model_bf16.bin", &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        CHECK_STR(b.dtype, "BF16");
        CHECK_EQ_INT((int)b.n_params, (int)m.n_params);
        // the same weights, rounded to bfloat16: within half a bf16 step of the float32 ones
        int close = 1;
        for (int i = 0; i < 703 * 32 && close; i++)
            close = fabsf(b.tok_emb[i] - m.tok_emb[i]) <= fabsf(m.tok_emb[i]) * (1.0f / 256) + 1e-30f;
        for (int i = 0; i < 32 * 32 && close; i++)
            close = fabsf(b.layers[1].wo[i] - m.layers[1].wo[i]) <= fabsf(m.layers[1].wo[i]) * (1.0f / 256) + 1e-30f;
        CHECK(close);
        model_free(&b);
    }
    model_free(&m);
}

// Each bad file is refused with exit 2 and a message naming it and the problem.
TEST(test_llmc_refusals) {
    static const struct {
        const char *file, *want;
    } cases[] = {
        {"version4.bin", "an llm.c GPT-2 checkpoint of version 4; xsa-eval reads versions 3 (float32) and 5 (bfloat16)"},
        {"padded_below_vocab.bin", "padded_vocab_size 640 is below vocab_size 703"},
        {"heads_not_dividing.bin", "channels 32 is not a multiple of num_heads 5"},
        {"short_header.bin", "512 bytes is too short for an llm.c checkpoint header"},
        {"state.bin", "llm.c's optimizer state (state_*.bin), not the model"},
        {"shard.bin", "an llm.c token shard (GPT-2 tokens), not a model; score it with xsa-eval ppl --tokens-file"},
        {"tokenizer.bin", "llm.c's tokenizer file (gpt2_tokenizer.bin), not a model"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[256];
        snprintf(path, sizeof path, DIR "bad/%s", cases[i].file);
        struct model m;
        xsa_error err = {0};
        int rc = model_load(&m, path, &err);
        CHECK_MSG(rc == XSA_EBADINPUT && strstr(err.msg, cases[i].want) && strstr(err.msg, path) == err.msg,
                  "%s: rc %d '%s'", cases[i].file, rc, err.msg);
        if (!rc) model_free(&m);
    }
}

// Variants of model_f32.bin made here: cut short, with bytes after it, with a NaN weight.
TEST(test_llmc_damaged_files) {
    size_t n = 0;
    unsigned char *good = slurp(DIR "model_f32.bin", &n);
    CHECK(good != NULL && n == 233984);
    if (!good) return;
    char dir[] = "/tmp/xsa_llmc_XXXXXX", path[128];
    CHECK(mkdtemp(dir) != NULL);
    struct model m;
    xsa_error err = {0};

    snprintf(path, sizeof path, "%s/truncated.bin", dir);
    spit(path, good, n - 4);
    CHECK_EQ_INT(model_load(&m, path, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "file is 233980 bytes but its llm.c header (version 3, max_seq_len 256, vocab_size 703, "
                              "num_layers 2, num_heads 4, channels 32, padded_vocab_size 768) implies 233984; the file is truncated"),
              "%s", err.msg);
    unlink(path);

    unsigned char *more = malloc(n + 4);
    memcpy(more, good, n);
    memset(more + n, 0, 4);
    snprintf(path, sizeof path, "%s/trailing.bin", dir);
    spit(path, more, n + 4);
    xsa_error_clear(&err);
    CHECK_EQ_INT(model_load(&m, path, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "implies 233984; the file has bytes after the parameters"), "%s", err.msg);
    unlink(path);

    // layer 1's attention projection, nn.Linear (C, C) row 2, column 3 (wte 768 rows, wpe 256, ...)
    size_t at = 1024 + 4 * (size_t)(768 * 32 + 256 * 32 + 2 * 2 * 32 + 2 * 3 * 32 * 32 + 2 * 3 * 32 + 32 * 32 + 2 * 32 + 3);
    memcpy(more, good, n);
    float nan = NAN;
    memcpy(more + at, &nan, 4);
    snprintf(path, sizeof path, "%s/nan.bin", dir);
    spit(path, more, n);
    xsa_error_clear(&err);
    CHECK_EQ_INT(model_load(&m, path, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "transformer.h.1.attn.c_proj.weight") && strstr(err.msg, "NaN"), "%s", err.msg);
    unlink(path);
    rmdir(dir);
    free(more);
    free(good);
}

// The tokenizer: tokenizer.json beside the file, else a message naming GPT-2's; llm.c's own
// tokenizer file only decodes and is refused as a tokenizer.
TEST(test_llmc_tokenizer) {
    char out[512];
    xsa_error err = {0};
    CHECK_EQ_INT(llmc_sniff(DIR "model_bf16.bin"), LLMC_MODEL);
    CHECK_EQ_INT(llmc_sniff(DIR "bad/state.bin"), LLMC_OTHER);
    CHECK_EQ_INT(llmc_sniff("tests/fixtures/tokenizers/llama2c_tok512/tokenizer.bin"), LLMC_NONE);
    CHECK_EQ_INT(tokenizer_find(DIR "model_f32.bin", out, sizeof out, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "an llm.c checkpoint and no tokenizer.json beside it; pass --tokenizer FILE"), "%s", err.msg);
    char dir[] = "/tmp/xsa_llmc_XXXXXX", model[128], tok[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(model, sizeof model, "%s/model_00000100.bin", dir);
    snprintf(tok, sizeof tok, "%s/tokenizer.json", dir);
    CHECK(symlink("/dev/null", tok) == 0);
    size_t n = 0;
    unsigned char *good = slurp(DIR "model_f32.bin", &n);
    if (good) spit(model, good, n);
    free(good);
    xsa_error_clear(&err);
    CHECK_MSG(tokenizer_find(model, out, sizeof out, &err) == 0 && !strcmp(out, tok), "%s / %s", out, err.msg);
    unlink(model);
    unlink(tok);
    rmdir(dir);
    struct tokenizer *t = NULL;
    xsa_error_clear(&err);
    CHECK_EQ_INT(tokenizer_load(&t, DIR "bad/tokenizer.bin", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "llm.c's tokenizer file, which only decodes"), "%s", err.msg);
}

RUN_TESTS(T(test_llmc_header_and_dtype), T(test_llmc_refusals), T(test_llmc_damaged_files), T(test_llmc_tokenizer))
