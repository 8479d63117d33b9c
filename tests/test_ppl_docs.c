// test_ppl_docs.c: `ppl --tokens-file` against parameter-golf records' own evals on the committed
// shard of authored documents (tests/fixtures/ppl/docs_*, made by
// tools/fixtures/make_pgolf_eval_fixtures.py): with --split-docs, the records that cut attention
// at each BOS (2026-04-10 on): eval_val over 8 and 2 ranks (a rank's last partial batch dropped),
// eval_val_sliding and the CaseOps byte sidecar; without it, 2026-04-01's eval_val_sliding.
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "eval/ppl.h"
#include "eval/token_shard.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "tests/backend_env.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define DIR "tests/fixtures/ppl/"

static int rel_close(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(b), 1); }

struct scored {
    double loss, bpb, bytes;
    long n;
};

// One fixture scored as `ppl --tokens-file docs_sp1024.bin --split-docs` with the case's layout.
// Bytes from the sidecar (caseops), or from the SentencePiece tables when sp_model is given.
static void score_case(const cJSON *c, const char *sp_model, int split, struct scored *out) {
    char path[512];
    snprintf(path, sizeof path, "tests/fixtures/pgolf/%s/final_model.pt", cJSON_GetObjectItem(c, "fixture")->valuestring);
    const char *kind = cJSON_GetObjectItem(c, "eval")->valuestring;
    int context = cJSON_GetObjectItem(c, "seq_len")->valueint, stride = cJSON_GetObjectItem(c, "stride")->valueint;
    xsa_error err = {0};
    struct model m;
    struct backend be;
    struct backend_options o = {0};
    CHECK(model_load(&m, path, &err) == 0);
    CHECK(backend_open_env(&be, &m, &o, &err) == 0);
    struct ppl_docs d = {.stream = 1, .split = split, .doc_start = m.cfg.bos_id,
                         .ranks = cJSON_GetObjectItem(c, "world_size")->valueint,
                         .rank_batch = cJSON_GetObjectItem(c, "val_batch_tokens")->valueint / 8};
    struct ivec all = {0}, bytes = {0};
    CHECK(token_shard_read(DIR "docs_sp1024.bin", m.cfg.vocab_size, &all, &err) == 0);
    CHECK(ppl_docs_add(&d, all.v, all.n, &err) == 0);
    if (!strcmp(kind, "eval_val_caseops")) {
        CHECK(token_shard_read(DIR "docs_sp1024_bytes.bin", 0, &bytes, &err) == 0);
        CHECK_EQ_INT((long)bytes.n, (long)all.n);
        d.target_bytes = xsa_malloc(bytes.n * sizeof *d.target_bytes);
        memcpy(d.target_bytes, bytes.v, bytes.n * sizeof *d.target_bytes);
    } else if (sp_model) {
        struct tokenizer *tk = NULL;
        CHECK(tokenizer_load(&tk, sp_model, &err) == 0);
        CHECK(ppl_docs_sp_bytes(&d, tk, m.cfg.vocab_size, &err) == 0);
        tokenizer_free(tk);
    }
    struct backend *bes[1] = {&be};
    struct ppl_scores s;
    struct ppl_summary sum;
    int rc = ppl_score(bes, 1, &d, context, stride, &s, NULL, NULL, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    CHECK(rc == 0);
    CHECK(ppl_summarize(&s, 1, NULL, NULL, 0, context, 0.95, &sum, &err) == 0);
    *out = (struct scored){sum.nll[0], sum.bpb[0], s.bytes, sum.n};
    ppl_scores_free(&s);
    ppl_docs_free(&d);
    ivec_free(&all);
    ivec_free(&bytes);
    backend_close(&be);
    model_free(&m);
}

static int split_of(const cJSON *c) { return cJSON_IsTrue(cJSON_GetObjectItem(c, "split")); }

static const char *case_name(const cJSON *c) {
    static char name[160];
    snprintf(name, sizeof name, "%s %s over %d", cJSON_GetObjectItem(c, "fixture")->valuestring,
             cJSON_GetObjectItem(c, "eval")->valuestring, cJSON_GetObjectItem(c, "world_size")->valueint);
    return name;
}

// Loss and scored tokens of every case, with or without the tokenizer; the sidecar's bits per byte.
TEST(split_documents_match_the_records_eval) {
    cJSON *ref = fixture_read_json(DIR "docs_reference.json");
    CHECK(ref != NULL);
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "cases")) {
        struct scored g;
        score_case(c, NULL, split_of(c), &g);
        double wl = cJSON_GetObjectItem(c, "val_loss")->valuedouble;
        printf("    %-40s val_loss %.9f (record %.9f), %ld targets\n", case_name(c), g.loss, wl, g.n);
        CHECK_EQ_INT(g.n, cJSON_GetObjectItem(c, "tokens")->valueint);
        CHECK(rel_close(g.loss, wl, 1e-6));
        if (!strcmp(cJSON_GetObjectItem(c, "eval")->valuestring, "eval_val_caseops")) {
            double wb = cJSON_GetObjectItem(c, "val_bpb")->valuedouble;
            printf("    %-40s val_bpb %.9f (record %.9f)\n", "", g.bpb, wb);
            CHECK(g.bytes == cJSON_GetObjectItem(c, "bytes")->valuedouble);
            CHECK(rel_close(g.bpb, wb, 1e-6));
        }
        n++;
    }
    CHECK(n >= 6);
    cJSON_Delete(ref);
}

// With the cut toggled, every case scores differently: the reference tells them apart.
TEST(toggled_split_differs) {
    cJSON *ref = fixture_read_json(DIR "docs_reference.json");
    CHECK(ref != NULL);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "cases")) {
        struct scored g;
        score_case(c, NULL, !split_of(c), &g);
        CHECK(!rel_close(g.loss, cJSON_GetObjectItem(c, "val_loss")->valuedouble, 1e-5));
    }
    cJSON_Delete(ref);
}

// Bits per byte with the family's tokenizer (../shared/benchdata): eval_val's byte tables.
TEST(split_documents_bits_per_byte) {
    const char *sp = shared_benchdata("models/parameter_golf_sp1024/fineweb_1024_bpe.model");
    if (!sp) SKIP("../shared/benchdata absent");
    char sp_path[4096];
    snprintf(sp_path, sizeof sp_path, "%s", sp);
    cJSON *ref = fixture_read_json(DIR "docs_reference.json");
    CHECK(ref != NULL);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "cases")) {
        struct scored g;
        score_case(c, sp_path, split_of(c), &g);
        double wb = cJSON_GetObjectItem(c, "val_bpb")->valuedouble;
        printf("    %-40s val_bpb %.9f (record %.9f)\n", case_name(c), g.bpb, wb);
        CHECK(g.bytes == cJSON_GetObjectItem(c, "bytes")->valuedouble);
        CHECK(rel_close(g.bpb, wb, 1e-6));
    }
    cJSON_Delete(ref);
}

// Scores never depend on the batch: one backend call per window or all in one.
TEST(split_documents_batch_invariant) {
    xsa_error err = {0};
    struct model m;
    CHECK(model_load(&m, "tests/fixtures/pgolf/gates_0416/final_model.pt", &err) == 0);
    struct ivec all = {0};
    CHECK(token_shard_read(DIR "docs_sp1024.bin", m.cfg.vocab_size, &all, &err) == 0);
    float *nll[2] = {0};
    size_t n[2];
    int sizes[2] = {33, 4096};
    for (int k = 0; k < 2; k++) {
        struct backend be;
        struct backend_options o = {.max_batch_tokens = sizes[k]};
        CHECK(backend_open_batch_invariant(&be, &m, &o, &err) == 0);
        struct ppl_docs d = {.stream = 1, .split = 1, .doc_start = m.cfg.bos_id, .ranks = 8, .rank_batch = 128};
        CHECK(ppl_docs_add(&d, all.v, all.n, &err) == 0);
        struct backend *bes[1] = {&be};
        struct ppl_scores s;
        CHECK(ppl_score(bes, 1, &d, 32, 32, &s, NULL, NULL, &err) == 0);
        n[k] = s.n;
        nll[k] = xsa_malloc(s.n * sizeof(float));
        memcpy(nll[k], s.nll, s.n * sizeof(float));
        ppl_scores_free(&s);
        ppl_docs_free(&d);
        backend_close(&be);
    }
    CHECK_EQ_INT((long)n[0], (long)n[1]);
    CHECK(memcmp(nll[0], nll[1], n[0] * sizeof(float)) == 0);
    free(nll[0]);
    free(nll[1]);
    ivec_free(&all);
    model_free(&m);
}

// The layout's refusals: text documents, a rank batch shorter than a window.
TEST(split_documents_refusals) {
    xsa_error err = {0};
    struct model m;
    struct backend be;
    struct backend_options o = {0};
    CHECK(model_load(&m, "tests/fixtures/pgolf/lanes_0410/final_model.pt", &err) == 0);
    CHECK(backend_open_env(&be, &m, &o, &err) == 0);
    int32_t tok[40];
    for (int i = 0; i < 40; i++) tok[i] = i % 7 ? 5 + i : 1;
    struct ppl_docs d = {.split = 1, .doc_start = 1, .ranks = 8, .rank_batch = 16};
    CHECK(ppl_docs_add(&d, tok, 40, &err) == 0);
    struct backend *bes[1] = {&be};
    struct ppl_scores s;
    CHECK(ppl_score(bes, 1, &d, 8, 8, &s, NULL, NULL, &err) == XSA_EBADINPUT);  // not a stream
    CHECK(strstr(err.msg, "token stream") != NULL);
    d.stream = 1, d.rank_batch = 4;
    err = (xsa_error){0};
    CHECK(ppl_score(bes, 1, &d, 8, 8, &s, NULL, NULL, &err) == XSA_EBADINPUT);
    CHECK(strstr(err.msg, "holds no window of 8") != NULL);
    // A window of a sliding pass is cut at each BOS in it: its targets keep their window, every
    // target once, its context never reaching back past the BOS before it.
    d.rank_batch = 16;
    CHECK(ppl_score(bes, 1, &d, 8, 3, &s, NULL, NULL, &err) == 0);
    CHECK_EQ_INT((long)s.n, (40 - 1) / 8 * 8);
    for (size_t t = 0; t < s.n; t++) {
        long j = (long)s.where[t], b = j - s.ctx[t];
        CHECK_EQ_INT(j, (long)t + 1);
        for (long i = b + 1; i < j; i++) CHECK(tok[i] != 1);
    }
    ppl_scores_free(&s);
    ppl_docs_free(&d);
    backend_close(&be);
    model_free(&m);
}

RUN_TESTS(T(split_documents_match_the_records_eval), T(toggled_split_differs), T(split_documents_bits_per_byte),
          T(split_documents_batch_invariant), T(split_documents_refusals))
