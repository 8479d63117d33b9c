// test_family_batches.c: the decoder families' features keep the scheduler's exactness. For
// each family fixture (sliding windows shorter than the rows, per-layer windows, q/k norms,
// post-norms, parallel residual, partial rotary, fused projections, yarn, olmo's weightless
// LayerNorm and clip_qkv, the Gemma families' scaled embedding, GeGLU, query_pre_attn_scalar,
// gemma2's soft-capped scores and per-layer-type RoPE, stablelm's per-head q/k LayerNorm and
// one-norm parallel residual, smollm3's NoPE layers, granite's multipliers), a prefix with three
// branches scored as one tree gives, bit for bit, what the three plain rows give alone, with
// and without XSA, under both CPU attention kernels (the environment's GEMM kernel, as the
// other batch-invariance tests).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/batch.h"
#include "model/model.h"
#include "tests/check.h"

#define NP 11  // prefix tokens: with a branch, rows of 15..20 tokens, past windows of 6 and 7
static const int blen[3] = {4, 9, 6};

static const char *const models[] = {"mistral_swa", "qwen2_bin", "qwen3_sharded", "olmo2_bf16", "pythia",
                                     "pythia_sequential", "phi3_sharded_bin", "llama_rope_yarn", "olmo", "olmo_clip",
                                     "gemma", "gemma2", "gemma3_text", "phi", "phi_qk_layernorm", "opt", "opt_350m_layout",
                                     "opt_plain",
                                     "stablelm", "stablelm_qk_parallel", "smollm3", "granite"};

// Scores the three rows (prefix + branch i) as one tree (tree = 1) or as plain rows; every
// position after the first is an entry. lp receives them in row order.
static int score_rows(struct backend *be, const int32_t *prefix, int32_t br[3][16], int tree, float *lp, uint8_t *gr) {
    struct batch_builder bb;
    batch_init(&bb);
    xsa_error err = {0};
    int pf, bf[3], rc = 0;
    if (tree) {
        const int32_t *bp[3] = {br[0], br[1], br[2]};
        rc = batch_add_tree(&bb, prefix, NP, bp, blen, 3, &pf, bf, &err);
        for (int i = 0; i < 3 && !rc; i++) {
            // the prefix's own positions once per row, then the branch's
            for (int k = 0; k + 1 < NP && !rc; k++) rc = batch_add_entry(&bb, pf + k, prefix[k + 1], &err);
            if (!rc) rc = batch_add_entry(&bb, pf + NP - 1, br[i][0], &err);
            if (!rc) rc = batch_add_entries_seq(&bb, bf[i], br[i], blen[i], &err);
        }
    } else {
        for (int i = 0; i < 3 && !rc; i++) {
            int32_t row[NP + 16];
            memcpy(row, prefix, sizeof(int32_t) * NP);
            memcpy(row + NP, br[i], sizeof(int32_t) * (size_t)blen[i]);
            int first;
            rc = batch_add_row(&bb, row, NP + blen[i], &first, &err);
            if (!rc) rc = batch_add_entries_seq(&bb, first, row, NP + blen[i], &err);
        }
    }
    struct score_batch b = batch_view(&bb);
    if (!rc) rc = backend_score(be, &b, lp, gr, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    int n = b.n_entries;
    batch_free(&bb);
    return n;
}

TEST(tree_equals_rows_in_every_family) {
    static const char *attn[] = {"avx2", "scalar"};
    int32_t prefix[NP], br[3][16];
    for (int i = 0; i < NP; i++) prefix[i] = (int32_t)(3 + 7 * i % 90);
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < blen[b]; i++) br[b][i] = (int32_t)(5 + 11 * (i + b) % 85);
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/models/%s", models[mi]);
        for (int xsa = 0; xsa < 2; xsa++)
            for (int ai = 0; ai < 2; ai++) {
                struct model m;
                xsa_error err = {0};
                if (model_load(&m, path, &err)) {
                    CHECK_MSG(0, "%s", err.msg);
                    continue;
                }
                CHECK_EQ_INT(model_apply_xsa_spec(&m.cfg, xsa ? "all" : "none", &err), 0);
                struct backend_options o = {.n_threads = 2, .max_batch_tokens = 256};
                struct backend be;
                int rc = backend_options_from_env(&o, &err);
                if (!rc && o.cpu_gemm && !strcmp(o.cpu_gemm, "blas")) o.cpu_gemm = NULL;  // backend_open_batch_invariant's rule
                o.cpu_attn = attn[ai];
                if (!rc) rc = backend_open(&be, "cpu", &m, &o, &err);
                if (rc && ai == 0) {  // a CPU without AVX2
                    model_free(&m);
                    continue;
                }
                CHECK_EQ_INT(rc, 0);
                float lt[3 * (NP + 16)], lr[3 * (NP + 16)];
                uint8_t gt[3 * (NP + 16)], gr[3 * (NP + 16)];
                int nt = score_rows(&be, prefix, br, 1, lt, gt), nr = score_rows(&be, prefix, br, 0, lr, gr);
                CHECK_EQ_INT(nt, nr);
                CHECK_MSG(nt == nr && !memcmp(lt, lr, sizeof(float) * (size_t)nt) && !memcmp(gt, gr, (size_t)nt),
                          "%s (xsa %d, %s attention): the tree differs from the plain rows", models[mi], xsa, attn[ai]);
                backend_close(&be);
                model_free(&m);
            }
    }
}

RUN_TESTS(T(tree_equals_rows_in_every_family))
