// test_pgolf_formats.c: the parameter-golf compressions and quantization types give exactly the
// weights of the same values stored otherwise, checked as bit-identical log-probabilities of every
// position of one row (fixtures: tools/fixtures/make_pgolf_brotli_fixtures.py). Brotli with the
// 2026-03-31 record's BSHF shuffle against the zstd original of tests/fixtures/pgolf/xsa_record;
// on a 2-block model: int5 entries (brotli, the 2026-04 records' 1-byte BSHF) against the same
// values typed int6 (zlib), BSHF under zlib and xz, and the 2026-04 records' "gptq (int6)" string
// meta (brotli, 1-byte BSHF) against the same values typed int6.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/batch.h"
#include "model/model.h"
#include "tests/backend_env.h"
#include "tests/check.h"

#define N_TOK 24

// Log-probabilities [N_TOK - 1] of a fixed row under the model at `path`; 0 on success.
static int score_row(const char *path, int vocab, float *lp) {
    struct model m;
    xsa_error err = {0};
    if (model_load(&m, path, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return 1;
    }
    int32_t ids[N_TOK];
    for (int i = 0; i < N_TOK; i++) ids[i] = (int32_t)((i * 37 + 11) % vocab);
    struct batch_builder bb;
    batch_init(&bb);
    int first;
    CHECK_EQ_INT(batch_add_row(&bb, ids, N_TOK, &first, &err), 0);
    CHECK_EQ_INT(batch_add_entries_seq(&bb, first, ids, N_TOK, &err), 0);
    struct score_batch b = batch_view(&bb);
    struct backend be;
    struct backend_options o = {.n_threads = 2, .max_batch_tokens = N_TOK};
    uint8_t gr[N_TOK];
    int rc = backend_open_batch_invariant(&be, &m, &o, &err);
    CHECK_MSG(!rc, "%s", err.msg);
    if (!rc) {
        rc = backend_score(&be, &b, lp, gr, &err);
        CHECK_MSG(!rc, "%s", err.msg);
        backend_close(&be);
    }
    batch_free(&bb);
    model_free(&m);
    return rc;
}

static void check_same_scores(const char *want_path, const char *got_path, int vocab) {
    float want[N_TOK], got[N_TOK];
    if (score_row(want_path, vocab, want) || score_row(got_path, vocab, got)) return;
    for (int p = 0; p + 1 < N_TOK; p++) {
        CHECK_MSG(isfinite(got[p]) && got[p] <= 0, "%s pos %d: log-probability %g", got_path, p + 1, got[p]);
        CHECK_MSG(!memcmp(&want[p], &got[p], sizeof want[p]), "%s pos %d: %.9g vs %.9g from %s", got_path, p + 1, got[p], want[p], want_path);
    }
}

TEST(brotli_bshf_record_equals_zstd_original) {
    check_same_scores("tests/fixtures/pgolf/xsa_record/final_model.int6.ptz", "tests/fixtures/pgolf_brotli/record/final_model.int6.ptz", 1024);
}

TEST(int5_entries_equal_same_values_as_int6) {
    check_same_scores("tests/fixtures/pgolf_brotli/tiny/as_int6.int6.ptz", "tests/fixtures/pgolf_brotli/tiny/mixed.int6.ptz", 64);
}

TEST(bshf_under_zlib_and_xz_equals_unshuffled) {
    check_same_scores("tests/fixtures/pgolf_brotli/tiny/as_int6.int6.ptz", "tests/fixtures/pgolf_brotli/tiny/zlib_bshf.int6.ptz", 64);
    check_same_scores("tests/fixtures/pgolf_brotli/tiny/as_int6.int6.ptz", "tests/fixtures/pgolf_brotli/tiny/xz_bshf.int6.ptz", 64);
}

TEST(gptq_string_meta_equals_int_types) {
    check_same_scores("tests/fixtures/pgolf_brotli/tiny/as_int6.int6.ptz", "tests/fixtures/pgolf_brotli/tiny/gptq.int6.ptz", 64);
}

// int8 restored to float16 (the root's dequantize_state_dict_int8 with a "float16" dtypes entry),
// subnormals included, against torch's own rounding stored as float16 tensors; a compiled or DDP
// model's prefixed names against the plain ones (tools/fixtures/make_pgolf_variant_fixtures.py).
TEST(int8_restored_to_float16_equals_torch_rounding) {
    check_same_scores("tests/fixtures/pgolf_variants/as_f16.pt", "tests/fixtures/pgolf_variants/f16.int8.ptz", 64);
}

TEST(compiled_and_ddp_prefixes_equal_plain_names) {
    check_same_scores("tests/fixtures/pgolf_variants/plain.pt", "tests/fixtures/pgolf_variants/orig_mod.pt", 64);
    check_same_scores("tests/fixtures/pgolf_variants/plain.pt", "tests/fixtures/pgolf_variants/module.pt", 64);
}

TEST(int7_entries_equal_same_values_as_int6) {
    check_same_scores("tests/fixtures/pgolf_brotli/tiny/as_int6.int6.ptz", "tests/fixtures/pgolf_brotli/tiny/gptq_int7.int6.ptz", 64);
}

RUN_TESTS(T(brotli_bshf_record_equals_zstd_original), T(int5_entries_equal_same_values_as_int6), T(bshf_under_zlib_and_xz_equals_unshuffled),
          T(gptq_string_meta_equals_int_types), T(int7_entries_equal_same_values_as_int6),
          T(int8_restored_to_float16_equals_torch_rounding), T(compiled_and_ddp_prefixes_equal_plain_names))
