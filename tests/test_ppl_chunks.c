// test_ppl_chunks.c: `ppl --tokens-file --split-docs` on modded-nanogpt checkpoints (the gated-XSA
// record's and its SA baseline's, 07-17's MUDD, the root's gates, 2026-04-22 MuddFormer's) against each one's own validation loop (tests/fixtures/mnanogpt/val, made by
// tools/fixtures/make_mnanogpt_val_fixture.py): flat chunks of val_batch_size / 8 tokens, each
// one row with attention cut at BOS_ID, smear, bigram hash and key offset reading across the
// cut; the loss of every target.
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "eval/ppl.h"
#include "eval/token_shard.h"
#include "model/model.h"
#include "tests/backend_env.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define DIR "tests/fixtures/mnanogpt/val/"
#define MODEL "tests/fixtures/mnanogpt/xsa_gated/state_step000000.pt"

static int rel_close(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(b), 1); }

static void load_model(struct model *m, const char *path) {
    xsa_error err = {0};
    model_set_arch_file(DIR "xsa_eval.json");
    int rc = model_load(m, path, &err);
    model_set_arch_file(NULL);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    CHECK(rc == 0);
}

// The stream scored with the case's layout (split: PPL_SPLIT_CHUNKS, or none: disjoint windows of
// a chunk's length) by a backend whose batches hold batch_tokens.
static int score(struct model *m, long val_batch, long val_tokens, int split, int batch_tokens,
                 struct ppl_scores *s, xsa_error *err) {
    struct backend be;
    struct backend_options o = {.max_batch_tokens = batch_tokens};
    CHECK(backend_open_batch_invariant(&be, m, &o, err) == 0);
    struct ppl_docs d = {.stream = 1, .split = split, .doc_start = m->cfg.bos_id, .rank_batch = val_batch / 8,
                         .val_tokens = val_tokens};
    struct ivec all = {0};
    CHECK(token_shard_read(DIR "docs.bin", m->cfg.vocab_size, &all, err) == 0);
    CHECK(ppl_docs_add(&d, all.v, all.n, err) == 0);
    struct backend *bes[1] = {&be};
    int rc = ppl_score(bes, 1, &d, (int)(val_batch / 8), (int)(val_batch / 8), s, NULL, NULL, err);
    ppl_docs_free(&d);
    ivec_free(&all);
    backend_close(&be);
    return rc;
}

static double mean(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s / (double)n;
}

// val_loss, each chunk's mean and the first chunks' every target, as the record's loop gives them.
TEST(chunks_match_the_records_val_loss) {
    cJSON *ref = fixture_read_json(DIR "reference.json");
    CHECK(ref != NULL);
    const cJSON *c;
    int n_cases = 0, n_sa = 0, n_dense = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "cases")) {
        struct model m;
        load_model(&m, cJSON_GetObjectItem(c, "model")->valuestring);
        CHECK_EQ_INT(m.cfg.bos_id, cJSON_GetObjectItem(ref, "bos")->valueint);
        n_sa += model_xsa_count(&m.cfg) == 0 && !m.mng->mudd_w1, n_dense += m.mng->mudd_dense;
        long vb = cJSON_GetObjectItem(c, "val_batch_size")->valueint, vt = cJSON_GetObjectItem(c, "val_tokens")->valueint;
        long L = vb / 8;
        xsa_error err = {0};
        struct ppl_scores s;
        int rc = score(&m, vb, vt, PPL_SPLIT_CHUNKS, 0, &s, &err);
        if (rc) fprintf(stderr, "%s\n", err.msg);
        CHECK(rc == 0);
        CHECK_EQ_INT((long)s.n, vt);
        double wl = cJSON_GetObjectItem(c, "val_loss")->valuedouble, got = mean(s.nll, s.n), worst = 0;
        const cJSON *cl = cJSON_GetObjectItem(c, "chunk_loss"), *nll = cJSON_GetObjectItem(c, "nll");
        CHECK_EQ_INT(cJSON_GetArraySize(cl), vt / L);
        CHECK_EQ_INT(s.n_units, vt / L);
        for (long k = 0; k < vt / L; k++) {
            double w = cJSON_GetArrayItem(cl, (int)k)->valuedouble, g = mean(s.nll + k * L, (size_t)L);
            CHECK(rel_close(g, w, 1e-6));
            CHECK_EQ_INT(s.unit[k * L], k);
        }
        for (int i = 0; i < cJSON_GetArraySize(nll); i++) {
            double d = fabs(s.nll[i] - cJSON_GetArrayItem(nll, i)->valuedouble);
            if (d > worst) worst = d;
        }
        printf("    %s, chunks of %ld, %ld tokens: val_loss %.10f (record %.10f); max |nll - record| %.2g over %d targets\n",
               m.mng->gate_w1 ? "XSA with MUDD gates" : m.mng->mudd_dense ? "SA with MUDD (2026-04-22)" : m.mng->mudd_w1 ? "XSA with MUDD"
               : model_xsa_count(&m.cfg) ? "XSA" : "SA (master)", L, vt, got, wl, worst, cJSON_GetArraySize(nll));
        CHECK(rel_close(got, wl, 1e-6));
        // Each target within float32's rounding of the record's: 2e-5, and for the MUDD fixtures
        // the scoring tolerance of tests/test_model_exact.c (their random MUDD coefficients make
        // the norms sensitive: the GEMM kernels alone move a target by up to 4e-5 there).
        CHECK(worst < (m.mng->mudd_w1 ? 1e-4 : 2e-5));
        // every target once, in stream order
        for (size_t t = 0; t < s.n; t++) CHECK_EQ_INT((long)s.where[t], (long)t + 1);
        ppl_scores_free(&s);
        model_free(&m);
        n_cases++;
    }
    CHECK(n_cases >= 6);
    CHECK_EQ_INT(n_sa, 1);     // the record's SA baseline, by its own code
    CHECK_EQ_INT(n_dense, 1);  // 2026-04-22 MuddFormer's (SA, MUDD's dense_w1/w2/bs), by its own code
    cJSON_Delete(ref);
}

// Without the record's layout (disjoint windows of a chunk's length, attention across BOS), the
// targets after a document's start move: the reference tells the layouts apart.
TEST(chunks_unsplit_differ) {
    cJSON *ref = fixture_read_json(DIR "reference.json");
    CHECK(ref != NULL);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "cases")) {
        struct model m;
        load_model(&m, cJSON_GetObjectItem(c, "model")->valuestring);
        long vb = cJSON_GetObjectItem(c, "val_batch_size")->valueint;
        xsa_error err = {0};
        struct ppl_scores s;
        CHECK(score(&m, vb, 0, PPL_SPLIT_NONE, 0, &s, &err) == 0);
        const cJSON *nll = cJSON_GetObjectItem(c, "nll");
        double worst = 0;
        for (int i = 0; i < cJSON_GetArraySize(nll); i++) worst = fmax(worst, fabs(s.nll[i] - cJSON_GetArrayItem(nll, i)->valuedouble));
        printf("    chunks of %ld without the layout: max |nll - record| %.2g\n", vb / 8, worst);
        CHECK(worst > 1e-2);
        ppl_scores_free(&s);
        model_free(&m);
    }
    cJSON_Delete(ref);
}

// The same bits with one chunk per backend call or sixteen (5120 tokens: the forward's MLP then
// runs in two tiles of rows, 4096 and 1024).
TEST(chunks_batch_invariant) {
    struct model m;
    load_model(&m, MODEL);
    float *nll[2] = {0};
    int sizes[2] = {1, 16 * 320};
    for (int k = 0; k < 2; k++) {
        xsa_error err = {0};
        struct ppl_scores s;
        CHECK(score(&m, 2560, 10240, PPL_SPLIT_CHUNKS, sizes[k], &s, &err) == 0);
        CHECK_EQ_INT((long)s.n, 10240);
        nll[k] = xsa_malloc(s.n * sizeof(float));
        memcpy(nll[k], s.nll, s.n * sizeof(float));
        ppl_scores_free(&s);
    }
    CHECK(memcmp(nll[0], nll[1], 10240 * sizeof(float)) == 0);
    free(nll[0]);
    free(nll[1]);
    model_free(&m);
}

// A stream shorter than the loop reads, chunks that are not a multiple of 16, a context that is
// not the chunk's.
TEST(chunks_refusals) {
    struct model m;
    load_model(&m, MODEL);
    xsa_error err = {0};
    struct ppl_scores s;
    CHECK(score(&m, 2560, 12800, PPL_SPLIT_CHUNKS, 0, &s, &err) == XSA_EBADINPUT);
    CHECK(strstr(err.msg, "the shards hold 10300 tokens") != NULL);
    CHECK(strstr(err.msg, "reads 12802") != NULL);
    err = (xsa_error){0};
    CHECK(score(&m, 2568, 2568, PPL_SPLIT_CHUNKS, 0, &s, &err) == XSA_EBADINPUT);
    CHECK(strstr(err.msg, "a multiple of 16") != NULL);
    struct backend be;
    struct backend_options o = {0};
    CHECK(backend_open_env(&be, &m, &o, &err) == 0);
    int32_t tok[40] = {1, 5, 6};
    struct ppl_docs d = {.stream = 1, .split = PPL_SPLIT_CHUNKS, .doc_start = 1, .rank_batch = 16, .val_tokens = 16};
    CHECK(ppl_docs_add(&d, tok, 40, &err) == 0);
    struct backend *bes[1] = {&be};
    err = (xsa_error){0};
    CHECK(ppl_score(bes, 1, &d, 8, 8, &s, NULL, NULL, &err) == XSA_EBADINPUT);
    CHECK(strstr(err.msg, "scored whole (context 16)") != NULL);
    ppl_docs_free(&d);
    backend_close(&be);
    model_free(&m);
}

RUN_TESTS(T(chunks_match_the_records_val_loss), T(chunks_unsplit_differ), T(chunks_batch_invariant),
          T(chunks_refusals))
