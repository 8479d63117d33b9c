// test_ppl.c: `ppl`'s engine against PyTorch and parameter-golf (tests/fixtures/ppl, made by
// tools/fixtures/make_ppl_fixtures.py): per-target NLL and KL of the demo SA and XSA checkpoints in
// sliding windows (and of the Gemma fixtures, tools/fixtures/make_gemma_probe_fixtures.py),
// bit-identical across batch sizes; bits per byte of a token shard as
// parameter-golf's eval_val computes it; the shard reader's refusals.
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "eval/ppl.h"
#include "eval/stats.h"
#include "eval/token_shard.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "tests/backend_env.h"
#include "tests/check.h"
#include "tests/fixture_io.h"
#include "tests/random_model.h"
#include "kernels/batch.h"

#define REF "tests/fixtures/ppl/reference.json"
#define GEMMA_REF "tests/fixtures/ppl/gemma_reference.json"  // tools/fixtures/make_gemma_probe_fixtures.py

static int rel_close(double a, double b, double rel, double abs_floor) {
    return fabs(a - b) <= rel * fmax(fabs(b), abs_floor);
}

static void ids_of(const cJSON *arr, struct ivec *out) {
    const cJSON *x;
    cJSON_ArrayForEach(x, arr) ivec_push(out, (int32_t)x->valuedouble);
}

struct two {
    struct model m[2];
    struct backend be[2];
};

static int open_two(struct two *t, int batch_tokens) {
    xsa_error err = {0};
    const char *p[2] = {"demo/sa", "demo/xsa"};
    struct backend_options o = {.max_batch_tokens = batch_tokens};
    for (int i = 0; i < 2; i++) {
        if (model_load(&t->m[i], p[i], &err) || backend_open_batch_invariant(&t->be[i], &t->m[i], &o, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    }
    return 0;
}

static void close_two(struct two *t) {
    for (int i = 0; i < 2; i++) backend_close(&t->be[i]), model_free(&t->m[i]);
}

// The reference documents, tokenized here by xsa-eval's tokenizer: the ids must equal PyTorch's.
static void load_ref_docs(const cJSON *win, struct ppl_docs *d) {
    struct tokenizer *tk = NULL;
    xsa_error err = {0};
    struct model m;
    CHECK(tokenizer_load(&tk, "demo/sa/tokenizer.json", &err) == 0);
    CHECK(model_load(&m, "demo/sa", &err) == 0);
    int pre = ppl_prefix_token(tk, &m);
    model_free(&m);
    const cJSON *doc;
    cJSON_ArrayForEach(doc, cJSON_GetObjectItem(win, "docs")) {
        struct ivec want = {0}, got = {0};
        ids_of(cJSON_GetObjectItem(doc, "tokens"), &want);
        ivec_push(&got, pre);
        const char *text = cJSON_GetObjectItem(doc, "text")->valuestring;
        CHECK(tokenizer_encode(tk, text, strlen(text), 0, &got, &err) == 0);
        CHECK(fixture_ivec_eq(&want, &got));
        CHECK(ppl_docs_add(d, want.v, want.n, &err) == 0);
        ivec_free(&want);
        ivec_free(&got);
    }
    tokenizer_free(tk);
}

TEST(windows_match_pytorch_nll_and_kl) {
    cJSON *ref = fixture_read_json(REF);
    CHECK(ref != NULL);
    const cJSON *win = cJSON_GetObjectItem(ref, "windows");
    int context = cJSON_GetObjectItem(win, "context")->valueint, stride = cJSON_GetObjectItem(win, "stride")->valueint;
    struct ppl_docs d = {0};
    load_ref_docs(win, &d);
    struct two t;
    CHECK(open_two(&t, 0) == 0);
    struct backend *be[2] = {&t.be[0], &t.be[1]};
    struct ppl_scores s[2];
    struct ppl_kl kl = {0};
    xsa_error err = {0};
    CHECK(ppl_score(be, 2, &d, context, stride, s, &kl, NULL, &err) == 0);
    size_t k = 0;
    double worst = 0, worst_kl = 0;
    const cJSON *doc;
    int u = 0;
    cJSON_ArrayForEach(doc, cJSON_GetObjectItem(win, "docs")) {
        const char *keys[] = {"nll_a", "nll_b", "kl", "ctx", "top_a", "top_b"};
        const cJSON *arr[6];
        for (int i = 0; i < 6; i++) arr[i] = cJSON_GetObjectItem(doc, keys[i]);
        int n = cJSON_GetArraySize(arr[0]);
        for (int i = 0; i < n; i++, k++) {
            CHECK(k < s[0].n);
            double ra = cJSON_GetArrayItem(arr[0], i)->valuedouble, rb = cJSON_GetArrayItem(arr[1], i)->valuedouble;
            double rk = cJSON_GetArrayItem(arr[2], i)->valuedouble;
            worst = fmax(worst, fmax(fabs(s[0].nll[k] - ra) / fmax(ra, 1), fabs(s[1].nll[k] - rb) / fmax(rb, 1)));
            worst_kl = fmax(worst_kl, fabs(kl.kl[k] - rk) / fmax(rk, 1e-2));
            CHECK_EQ_INT(s[0].ctx[k], cJSON_GetArrayItem(arr[3], i)->valueint);
            CHECK_EQ_INT(s[0].unit[k], u);
            CHECK_EQ_INT(kl.top_a[k], cJSON_GetArrayItem(arr[4], i)->valueint);
            CHECK_EQ_INT(kl.top_b[k], cJSON_GetArrayItem(arr[5], i)->valueint);
        }
        u++;
    }
    CHECK_EQ_INT((long)k, (long)s[0].n);
    printf("    max relative difference to PyTorch: NLL %.2e, KL %.2e\n", worst, worst_kl);
    CHECK(worst < 1e-5);
    CHECK(worst_kl < 1e-5);
    for (int m = 0; m < 2; m++) ppl_scores_free(&s[m]);
    ppl_kl_free(&kl);
    close_two(&t);
    ppl_docs_free(&d);
    cJSON_Delete(ref);
}

// The Gemma fixtures (attention-logit soft-cap, a sliding-window layer, query_pre_attn_scalar,
// q/k norms, the final soft-cap) under --xsa specs, against transformers' own Gemma classes in
// float64 (tools/fixtures/make_gemma_probe_fixtures.py): per-target NLL, KL(A || B), top-1.
TEST(gemma_windows_match_transformers) {
    cJSON *ref = fixture_read_json(GEMMA_REF);
    CHECK(ref != NULL);
    const cJSON *win = cJSON_GetObjectItem(ref, "ppl"), *pair;
    int context = cJSON_GetObjectItem(win, "context")->valueint, stride = cJSON_GetObjectItem(win, "stride")->valueint;
    double worst = 0, worst_kl = 0;
    cJSON_ArrayForEach(pair, cJSON_GetObjectItem(win, "pairs")) {
        struct two t;
        struct backend_options o = {0};
        xsa_error err = {0};
        for (int i = 0; i < 2; i++) {
            const cJSON *side = cJSON_GetObjectItem(pair, i ? "b" : "a");
            CHECK(model_load(&t.m[i], cJSON_GetObjectItem(side, "model")->valuestring, &err) == 0);
            CHECK(model_apply_xsa_spec(&t.m[i].cfg, cJSON_GetObjectItem(side, "xsa")->valuestring, &err) == 0);
            CHECK(backend_open_batch_invariant(&t.be[i], &t.m[i], &o, &err) == 0);
        }
        struct ppl_docs d = {0};
        const cJSON *doc;
        cJSON_ArrayForEach(doc, cJSON_GetObjectItem(pair, "docs")) {
            struct ivec tok = {0};
            ids_of(cJSON_GetObjectItem(doc, "tokens"), &tok);
            CHECK(ppl_docs_add(&d, tok.v, tok.n, &err) == 0);
            ivec_free(&tok);
        }
        struct backend *be[2] = {&t.be[0], &t.be[1]};
        struct ppl_scores s[2];
        struct ppl_kl kl = {0};
        CHECK(ppl_score(be, 2, &d, context, stride, s, &kl, NULL, &err) == 0);
        size_t k = 0;
        cJSON_ArrayForEach(doc, cJSON_GetObjectItem(pair, "docs")) {
            const char *keys[] = {"nll_a", "nll_b", "kl", "ctx", "top_a", "top_b"};
            const cJSON *arr[6];
            for (int i = 0; i < 6; i++) arr[i] = cJSON_GetObjectItem(doc, keys[i]);
            for (int i = 0; i < cJSON_GetArraySize(arr[0]); i++, k++) {
                CHECK(k < s[0].n);
                for (int m = 0; m < 2; m++)
                    worst = fmax(worst, fabs(s[m].nll[k] - cJSON_GetArrayItem(arr[m], i)->valuedouble));
                worst_kl = fmax(worst_kl, fabs(kl.kl[k] - cJSON_GetArrayItem(arr[2], i)->valuedouble));
                CHECK_EQ_INT(s[0].ctx[k], cJSON_GetArrayItem(arr[3], i)->valueint);
                CHECK_EQ_INT(kl.top_a[k], cJSON_GetArrayItem(arr[4], i)->valueint);
                CHECK_EQ_INT(kl.top_b[k], cJSON_GetArrayItem(arr[5], i)->valueint);
            }
        }
        CHECK_EQ_INT((long)k, (long)s[0].n);
        for (int m = 0; m < 2; m++) ppl_scores_free(&s[m]);
        ppl_kl_free(&kl);
        close_two(&t);
        ppl_docs_free(&d);
    }
    printf("    max absolute difference to transformers: NLL %.2e, KL %.2e\n", worst, worst_kl);
    CHECK(worst < 1e-5);
    CHECK(worst_kl < 1e-5);
    cJSON_Delete(ref);
}

// One window per backend call, or everything in one call: the same bits.
TEST(scores_do_not_depend_on_batching) {
    cJSON *ref = fixture_read_json(REF);
    CHECK(ref != NULL);
    struct ppl_docs d = {0};
    load_ref_docs(cJSON_GetObjectItem(ref, "windows"), &d);
    struct ppl_scores s[2][2];
    struct ppl_kl kl[2] = {{0}, {0}};
    int caps[2] = {32, 4096};
    for (int c = 0; c < 2; c++) {
        struct two t;
        CHECK(open_two(&t, caps[c]) == 0);
        struct backend *be[2] = {&t.be[0], &t.be[1]};
        xsa_error err = {0};
        CHECK(ppl_score(be, 2, &d, 32, 12, s[c], &kl[c], NULL, &err) == 0);
        close_two(&t);
    }
    CHECK(s[0][0].n == s[1][0].n && s[0][0].n > 100);
    for (int m = 0; m < 2; m++) CHECK(!memcmp(s[0][m].nll, s[1][m].nll, s[0][m].n * sizeof(float)));
    CHECK(!memcmp(kl[0].kl, kl[1].kl, s[0][0].n * sizeof(double)));
    for (int c = 0; c < 2; c++) {
        for (int m = 0; m < 2; m++) ppl_scores_free(&s[c][m]);
        ppl_kl_free(&kl[c]);
    }
    ppl_docs_free(&d);
    cJSON_Delete(ref);
}

// Scores a shard with demo/sa as `ppl --tokens-file` does, bytes from the SentencePiece tables.
static void shard_bpb(const char *shard, const char *sp_model, int context, double *loss, double *bpb, long *n) {
    struct tokenizer *tk = NULL;
    xsa_error err = {0};
    struct model m;
    struct backend be;
    struct backend_options o = {0};
    CHECK(model_load(&m, "demo/sa", &err) == 0);
    CHECK(backend_open_env(&be, &m, &o, &err) == 0);
    CHECK(tokenizer_load(&tk, sp_model, &err) == 0);
    struct ppl_docs d = {.stream = 1};
    struct ivec all = {0};
    CHECK(token_shard_read(shard, m.cfg.vocab_size, &all, &err) == 0);
    CHECK(ppl_docs_add(&d, all.v, all.n, &err) == 0);
    CHECK(ppl_docs_sp_bytes(&d, tk, m.cfg.vocab_size, &err) == 0);
    struct backend *bes[1] = {&be};
    struct ppl_scores s;
    struct ppl_summary sum;
    CHECK(ppl_score(bes, 1, &d, context, context, &s, NULL, NULL, &err) == 0);
    CHECK(ppl_summarize(&s, 1, NULL, NULL, 0, context, 0.95, &sum, &err) == 0);
    *loss = sum.nll[0];
    *bpb = sum.bpb[0];
    *n = sum.n;
    ppl_scores_free(&s);
    ppl_docs_free(&d);
    ivec_free(&all);
    tokenizer_free(tk);
    backend_close(&be);
    model_free(&m);
}

// ppl's intervals are stats_cluster_ratio_ci over each bucket's per-unit sums: units of very
// different lengths, a bucket only one unit reaches (no interval, never significant).
TEST(summary_interval_is_per_unit_cluster_t) {
    enum { U = 5 };
    const int len[U] = {40, 3, 17, 2, 9};  // unit 0 alone reaches positions 20 and up
    size_t n = 0;
    for (int u = 0; u < U; u++) n += (size_t)len[u];
    struct ppl_scores s[2];
    ppl_scores_alloc(&s[0], n);
    ppl_scores_alloc(&s[1], n);
    double ua[U] = {0}, ub[U] = {0}, uw[U] = {0}, ba[U] = {0}, bb[U] = {0}, bw[U] = {0};
    size_t t = 0;
    for (int u = 0; u < U; u++)
        for (int j = 0; j < len[u]; j++, t++) {
            float a = 2.0f + 0.01f * (float)((t * 37) % 101), b = a + 0.05f * (float)(u - 2) + 0.003f * (float)(j % 7);
            for (int m = 0; m < 2; m++) {
                s[m].nll[t] = m ? b : a;
                s[m].ctx[t] = j + 1;
                s[m].unit[t] = u;
                s[m].greedy[t] = 0;
                s[m].where[t] = t;
            }
            ua[u] += a, ub[u] += b, uw[u] += 1;
            if (j + 1 < 8) ba[u] += a, bb[u] += b, bw[u] += 1;  // the bucket [1, 8)
        }
    s[0].n_units = s[1].n_units = U;
    s[0].bytes = s[1].bytes = NAN;
    int edges[2] = {8, 20};
    struct ppl_summary sum;
    xsa_error err = {0};
    CHECK(ppl_summarize(s, 2, NULL, edges, 2, 64, 0.9, &sum, &err) == 0);
    struct stats_ratio_ci want;
    CHECK(stats_cluster_ratio_ci(ua, ub, uw, U, 0.9, &want) == 0);
    CHECK_NEAR(sum.delta, want.delta, 1e-12);
    CHECK_NEAR(sum.dlo, want.lo, 1e-12);
    CHECK_NEAR(sum.dhi, want.hi, 1e-12);
    CHECK_NEAR(sum.se, want.se, 1e-12);
    CHECK_NEAR(sum.df, want.df, 1e-12);
    CHECK(sum.df < U - 1);  // unequal units: fewer degrees of freedom than units - 1
    CHECK_EQ_INT(sum.real, sum.dlo > 0 || sum.dhi < 0);
    CHECK_EQ_INT(sum.n_buckets, 3);
    int nb = 0;  // units reaching the first bucket: all of them (positions 1..7)
    for (int u = 0; u < U; u++) nb += bw[u] > 0;
    CHECK(stats_cluster_ratio_ci(ba, bb, bw, nb, 0.9, &want) == 0);
    CHECK_EQ_INT(sum.bucket[0].n_units, nb);
    CHECK_NEAR(sum.bucket[0].dlo, want.lo, 1e-12);
    CHECK_NEAR(sum.bucket[0].dhi, want.hi, 1e-12);
    const struct ppl_bucket *last = &sum.bucket[2];  // positions 20..64: unit 0 only
    CHECK_EQ_INT(last->n_units, 1);
    CHECK(isfinite(last->delta) && isnan(last->dlo) && isnan(last->dhi) && isnan(last->se) && !last->real);
    ppl_scores_free(&s[0]);
    ppl_scores_free(&s[1]);
}

static void check_pg(const cJSON *want, double loss, double bpb, long n) {
    double wl = cJSON_GetObjectItem(want, "val_loss")->valuedouble, wb = cJSON_GetObjectItem(want, "val_bpb")->valuedouble;
    printf("    val_loss %.9f (parameter-golf %.9f), val_bpb %.9f (%.9f)\n", loss, wl, bpb, wb);
    CHECK_EQ_INT(n + 1, cJSON_GetObjectItem(want, "tokens")->valueint);  // eval_val keeps usable + 1 tokens
    CHECK(rel_close(loss, wl, 1e-5, 1));
    CHECK(rel_close(bpb, wb, 1e-5, 1));
}

TEST(shard_bits_per_byte_match_parameter_golf) {
    cJSON *ref = fixture_read_json(REF);
    CHECK(ref != NULL);
    double loss, bpb;
    long n;
    shard_bpb("tests/fixtures/ppl/corpus_sp600.bin", "tests/fixtures/tokenizers/sp_bpe/tokenizer.model", 64, &loss,
              &bpb, &n);
    check_pg(cJSON_GetObjectItem(ref, "bpb_fixture"), loss, bpb, n);
    cJSON_Delete(ref);
}

// The real tokenizer on real text: the shard is rebuilt here from the LAMBADA passages.
TEST(shard_bits_per_byte_real_fineweb_tokenizer) {
    char fw_path[4096], lam[4096];
    const char *p = shared_benchdata("models/parameter_golf_sp1024/fineweb_1024_bpe.model");
    snprintf(fw_path, sizeof fw_path, "%s", p ? p : "");
    p = shared_benchdata("lambada_openai/lambada_test.jsonl");  // (one static buffer)
    snprintf(lam, sizeof lam, "%s", p ? p : "");
    if (!fw_path[0] || !lam[0]) SKIP("../shared/benchdata absent");
    cJSON *ref = fixture_read_json(REF);
    CHECK(ref != NULL);
    const cJSON *want = cJSON_GetObjectItem(ref, "bpb_shared");
    CHECK(want != NULL);
    FILE *f = fopen(lam, "r");
    CHECK(f != NULL);
    struct sbuf text = {0};
    char *line = NULL;
    size_t cap = 0;
    for (int i = 0; i < cJSON_GetObjectItem(want, "n_passages")->valueint && getline(&line, &cap, f) > 0; i++) {
        cJSON *j = cJSON_Parse(line);
        if (i) sbuf_puts(&text, "\n");
        sbuf_puts(&text, cJSON_GetObjectItem(j, "text")->valuestring);
        cJSON_Delete(j);
    }
    free(line);
    fclose(f);
    struct tokenizer *tk = NULL;
    xsa_error err = {0};
    struct ivec ids = {0};
    CHECK(tokenizer_load(&tk, fw_path, &err) == 0);
    CHECK(tokenizer_encode(tk, text.s, text.n, 0, &ids, &err) == 0);
    tokenizer_free(tk);
    char shard[256];
    snprintf(shard, sizeof shard, "/tmp/xsa_test_ppl_%d.bin", (int)getpid());
    FILE *o = fopen(shard, "wb");
    int32_t hdr[256] = {TOKEN_SHARD_MAGIC, 1, (int32_t)ids.n};
    fwrite(hdr, 4, 256, o);
    for (size_t i = 0; i < ids.n; i++) {
        uint16_t t = (uint16_t)ids.v[i];
        fwrite(&t, 2, 1, o);
    }
    fclose(o);
    double loss, bpb;
    long n;
    shard_bpb(shard, fw_path, cJSON_GetObjectItem(want, "seq_len")->valueint, &loss, &bpb, &n);
    check_pg(want, loss, bpb, n);
    remove(shard);
    ivec_free(&ids);
    sbuf_free(&text);
    cJSON_Delete(ref);
}

static int parse_hdr(int32_t magic, int32_t version, int32_t count, size_t payload, int vocab, struct ivec *out,
                     xsa_error *err) {
    size_t len = 1024 + payload;
    uint8_t *buf = xsa_calloc(len, 1);
    int32_t h[3] = {magic, version, count};
    memcpy(buf, h, sizeof h);
    for (size_t i = 0; i < payload; i++) buf[1024 + i] = (uint8_t)(i % 7);
    memset(err, 0, sizeof *err);  // the first error is kept
    int rc = token_shard_parse(buf, len, "x.bin", vocab, out, err);
    free(buf);
    return rc;
}

TEST(shard_reader_refuses_malformed_files) {
    struct ivec out = {0};
    xsa_error err = {0};
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 1, 4, 8, 0, &out, &err) == 0);
    CHECK(out.n == 4 && out.v[0] == 0 + (1 << 8) && out.v[1] == 2 + (3 << 8));
    out.n = 0;
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 2, 2, 8, 0, &out, &err) == 0);  // uint32 tokens
    CHECK(out.n == 2 && out.v[0] == 0x03020100);
    out.n = 0;  // llm.c's Llama 3 shards: their own magic, version 7, uint32 tokens
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC_LLAMA3, 7, 2, 8, 0, &out, &err) == 0);
    CHECK(out.n == 2 && out.v[0] == 0x03020100 && out.v[1] == 0x00060504);
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC_LLAMA3, 1, 4, 8, 0, &out, &err) == XSA_EBADINPUT && strstr(err.msg, "version"));
    CHECK(parse_hdr(1234, 1, 4, 8, 0, &out, &err) == XSA_EBADINPUT && strstr(err.msg, "magic"));
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 3, 4, 8, 0, &out, &err) == XSA_EBADINPUT && strstr(err.msg, "version"));
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 1, 5, 8, 0, &out, &err) == XSA_EBADINPUT && strstr(err.msg, "truncated"));
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 1, 3, 8, 0, &out, &err) == XSA_EBADINPUT);   // trailing bytes
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 1, -1, 8, 0, &out, &err) == XSA_EBADINPUT);  // count 2^32 - 1
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 1, 4, 8, 256, &out, &err) == XSA_EBADINPUT && strstr(err.msg, "vocabulary"));
    CHECK(parse_hdr(TOKEN_SHARD_MAGIC, 1, 4, 8, 257, &out, &err) == XSA_EBADINPUT && strstr(err.msg, "number 1"));
    uint8_t tiny[10] = {0};
    memset(&err, 0, sizeof err);
    CHECK(token_shard_parse(tiny, sizeof tiny, "t.bin", 0, &out, &err) == XSA_EBADINPUT && strstr(err.msg, "header"));
    CHECK_EQ_INT((long)out.n, 2);  // failures append nothing
    ivec_free(&out);
}

// A stream keeps whole windows only (eval_val's `usable`); documents keep every target.
TEST(windows_cover_each_target_once) {
    struct ppl_docs d = {0};
    xsa_error err = {0};
    int32_t tok[23];
    for (int i = 0; i < 23; i++) tok[i] = i % 50;
    CHECK(ppl_docs_add(&d, tok, 23, &err) == 0);
    CHECK(ppl_docs_add(&d, tok, 1, &err) == 0);  // too short: ignored
    CHECK_EQ_INT(d.n_docs, 1);
    struct model m;
    struct backend be;
    struct backend_options o = {0};
    CHECK(model_load(&m, "demo/sa", &err) == 0);
    CHECK(backend_open_env(&be, &m, &o, &err) == 0);
    struct backend *bes[1] = {&be};
    struct ppl_scores s;
    CHECK(ppl_score(bes, 1, &d, 8, 3, &s, NULL, NULL, &err) == 0);
    CHECK_EQ_INT((long)s.n, 22);
    for (size_t t = 0; t < s.n; t++) CHECK_EQ_INT((long)s.where[t], (long)t + 1);
    CHECK_EQ_INT(s.ctx[0], 1);
    CHECK_EQ_INT(s.ctx[7], 8);
    CHECK_EQ_INT(s.ctx[8], 6);  // second window: targets 9..11 after inputs 3..10
    ppl_scores_free(&s);
    d.stream = 1;
    CHECK(ppl_score(bes, 1, &d, 8, 8, &s, NULL, NULL, &err) == 0);
    CHECK_EQ_INT((long)s.n, 16);
    CHECK_EQ_INT(s.n_units, 2);
    ppl_scores_free(&s);
    CHECK(ppl_score(bes, 1, &d, 8, 9, &s, NULL, NULL, &err) == XSA_EBADINPUT);
    backend_close(&be);
    model_free(&m);
    ppl_docs_free(&d);
}

struct dist_rec {       // what the sink saw, per (entry, chunk)
    int V, n_chunks;
    int *calls;          // (S, n_chunks)
    float *lp;           // (S, V)
};

static void rec_chunk(void *ctx, int entry, int v0, int nv, const float *lp) {
    struct dist_rec *r = ctx;
    int c = v0 / BACKEND_DIST_CHUNK;
    if (v0 % BACKEND_DIST_CHUNK || nv < 1 || nv > BACKEND_DIST_CHUNK || v0 + nv > r->V) c = -1;
    if (c >= 0) {
        r->calls[entry * r->n_chunks + c]++;
        memcpy(r->lp + (size_t)entry * r->V + v0, lp, (size_t)nv * sizeof *lp);
    }
}

// The contract's distribution output: each (entry, chunk) once, normalised, the target's value
// the entry's own log-probability bit for bit, the argmax the greedy flag's, and the entries'
// outputs unchanged by asking for it. Rows r0 (5 tokens), r1 (3); entries at fixed positions.
static void check_distribution_contract(struct model *m, const int32_t *r0, const int32_t *r1, const int *tgt) {
    int V = m->cfg.vocab_size, n_chunks = (V + BACKEND_DIST_CHUNK - 1) / BACKEND_DIST_CHUNK;
    struct backend be;
    struct backend_options o = {0};
    xsa_error err = {0};
    CHECK(backend_open_env(&be, m, &o, &err) == 0);
    struct batch_builder bb;
    batch_init(&bb);
    int f0, f1;
    CHECK(batch_add_row(&bb, r0, 5, &f0, &err) == 0);
    CHECK(batch_add_row(&bb, r1, 3, &f1, &err) == 0);
    int idx[6] = {f0, f0 + 2, f0 + 2, f0 + 4, f1, f1 + 2};
    for (int e = 0; e < 6; e++) CHECK(batch_add_entry(&bb, idx[e], tgt[e], &err) == 0);
    struct score_batch b = batch_view(&bb);
    float lp0[6], lp1[6];
    uint8_t g0[6], g1[6];
    CHECK(backend_score(&be, &b, lp0, g0, &err) == 0);
    struct dist_rec r = {V, n_chunks, xsa_calloc((size_t)6 * n_chunks, sizeof(int)), xsa_calloc((size_t)6 * V, sizeof(float))};
    struct backend_dist_sink sink = {rec_chunk, &r};
    b.dist = &sink;
    CHECK(backend_score(&be, &b, lp1, g1, &err) == 0);
    CHECK(!memcmp(lp0, lp1, sizeof lp0) && !memcmp(g0, g1, sizeof g0));
    for (int e = 0; e < 6; e++) {
        for (int c = 0; c < n_chunks; c++) CHECK_EQ_INT(r.calls[e * n_chunks + c], 1);
        const float *x = r.lp + (size_t)e * V;
        double z = 0;
        int am = 0;
        for (int v = 0; v < V; v++) {
            z += exp((double)x[v]);
            if (x[v] > x[am]) am = v;
        }
        CHECK_NEAR(z, 1.0, 1e-5);
        CHECK(x[tgt[e]] == lp0[e]);
        CHECK_EQ_INT(am == tgt[e], g0[e]);
    }
    CHECK(!memcmp(r.lp + V, r.lp + 2 * V, (size_t)V * sizeof(float)));  // same index, same distribution
    free(r.calls);
    free(r.lp);
    batch_free(&bb);
    backend_close(&be);
}

// On a vocabulary of three chunks (the fused decoder's head).
TEST(backend_distribution_chunks) {
    struct random_model_spec sp = {MODEL_ARCH_LLAMA, ROPE_HALF, 2, 4, 2, 8, 32, 48, 9000, 64, 0, 0, 7};
    struct model m;
    random_model_init(&m, &sp);
    int32_t r0[5] = {1, 4500, 8999, 17, 4096}, r1[3] = {8191, 2, 8192};
    int tgt[6] = {4500, 17, 8998, 0, 2, 8191};
    check_distribution_contract(&m, r0, r1, tgt);
    random_model_free(&m);
}

// modded-nanogpt's GPT scores in a forward of its own (cpu_mnanogpt.c), with its own head: it
// must hand over the distributions too, or `ppl --kl` reads uninitialised memory (it did: KL
// 1e-7 and top-1 agreement 0 between two trained checkpoints whose true KL is 0.042).
TEST(backend_distribution_mnanogpt) {
    struct model m;
    xsa_error err = {0};
    CHECK_EQ_INT(model_load(&m, "tests/fixtures/mnanogpt/xsa_gated/state_step000000.pt", &err), 0);
    int32_t r0[5] = {50, 3, 17, 99, 42}, r1[3] = {7, 85, 40};
    int tgt[6] = {3, 99, 42, 0, 85, m.cfg.vocab_size - 1};
    check_distribution_contract(&m, r0, r1, tgt);
    model_free(&m);
}

// Scores every position of `tok` (after `pad` tokens of another row, when pad > 0) with the
// attention statistics on; out (n, L, H, 3). The other row's ids are below `vocab`.
static void probe_row_stats(struct backend *be, const int32_t *tok, int n, int pad, int vocab, float *out, float *lp) {
    struct batch_builder bb;
    batch_init(&bb);
    xsa_error err = {0};
    int first, first_pad;
    int32_t other[40];
    for (int i = 0; i < 40; i++) other[i] = (i * 37 + 5) % 1000 % vocab;
    if (pad) CHECK(batch_add_row(&bb, other, pad, &first_pad, &err) == 0);
    CHECK(batch_add_row(&bb, tok, n, &first, &err) == 0);
    for (int i = 0; i < n; i++) CHECK(batch_add_entry(&bb, first + i, tok[(i + 1) % n], &err) == 0);
    struct score_batch b = batch_view(&bb);
    b.probe = out;
    uint8_t gr[64];
    CHECK(n <= 64 && backend_score(be, &b, lp, gr, &err) == 0);
    batch_free(&bb);
}

// cos(y, v), cos(z, v) and a_ii of every case of the reference file at `path` against PyTorch
// (float64); the same bits whatever else is in the batch; the log-probabilities as without the
// probe. A case's "xsa" is the --xsa spec its model runs under. Returns the largest difference,
// and each statistic's in by[3] (cos_y, cos_z, a_ii).
static double check_probe_reference(const char *path, double by[3]) {
    cJSON *ref = fixture_read_json(path);
    CHECK(ref != NULL);
    const cJSON *c;
    double worst = 0;
    by[0] = by[1] = by[2] = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "cases")) {
        struct model m;
        struct backend be;
        struct backend_options o = {0};
        xsa_error err = {0};
        CHECK(model_load(&m, cJSON_GetObjectItem(c, "model")->valuestring, &err) == 0);
        const cJSON *spec = cJSON_GetObjectItem(c, "xsa");
        if (spec) CHECK(model_apply_xsa_spec(&m.cfg, spec->valuestring, &err) == 0);
        CHECK(backend_open_batch_invariant(&be, &m, &o, &err) == 0);
        struct ivec tok = {0};
        ids_of(cJSON_GetObjectItem(c, "tokens"), &tok);
        int n = (int)tok.n, L = m.cfg.n_layer, H = m.cfg.n_head;
        size_t per = (size_t)L * H * BACKEND_PROBE_STATS;
        float *st = xsa_malloc(n * per * sizeof *st), *st2 = xsa_malloc(n * per * sizeof *st2), lp[64], lp2[64];
        probe_row_stats(&be, tok.v, n, 0, m.cfg.vocab_size, st, lp);
        probe_row_stats(&be, tok.v, n, 13, m.cfg.vocab_size, st2, lp2);
        CHECK(!memcmp(st, st2, n * per * sizeof *st) && !memcmp(lp, lp2, (size_t)n * sizeof *lp));
        struct batch_builder bb;
        batch_init(&bb);
        int first;
        CHECK(batch_add_row(&bb, tok.v, n, &first, &err) == 0);
        for (int i = 0; i < n; i++) CHECK(batch_add_entry(&bb, first + i, tok.v[(i + 1) % n], &err) == 0);
        struct score_batch b = batch_view(&bb);
        uint8_t gr[64];
        CHECK(backend_score(&be, &b, lp2, gr, &err) == 0);
        CHECK(!memcmp(lp, lp2, (size_t)n * sizeof *lp));  // the probe changes no score
        const char *keys[3] = {"cos_y", "cos_z", "a_ii"};
        for (int k = 0; k < 3; k++) {
            const cJSON *arr = cJSON_GetObjectItem(c, keys[k]);
            for (int p = 0; p < n; p++)
                for (int l = 0; l < L; l++)
                    for (int h = 0; h < H; h++) {
                        double want = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetArrayItem(arr, p), l), h)->valuedouble;
                        double got = st[(size_t)p * per + ((size_t)l * H + h) * BACKEND_PROBE_STATS + k];
                        by[k] = fmax(by[k], fabs(got - want));
                    }
        }
        worst = fmax(worst, fmax(by[0], fmax(by[1], by[2])));
        batch_free(&bb);
        free(st);
        free(st2);
        ivec_free(&tok);
        backend_close(&be);
        model_free(&m);
    }
    cJSON_Delete(ref);
    return worst;
}

// transformers' eager attention on the demo SA and XSA llamas; the 2026-03-20 XSA record's own
// GPT (parameter-golf, 4 query heads on 2 KV heads, XSA in the last layer) trained for 600 steps
// (tools/fixtures/make_pgolf_trained_probe.py), whose SA layers have a similarity bias of 0.9
// where the demo's have 0.2 and random weights none: a statistic of the wrong KV head or row shows;
// transformers' Gemma2 and Gemma3 (tools/fixtures/make_gemma_probe_fixtures.py) under --xsa none, all
// and last:1: a_ii is the softmax after the attention-logit soft-cap, within the sliding window.
TEST(probe_statistics_match_pytorch) {
    const char *refs[] = {"tests/fixtures/ppl/probe_reference.json", "tests/fixtures/pgolf/trained_xsa1/probe_reference.json",
                          GEMMA_REF};
    for (int i = 0; i < 3; i++) {
        double by[3], worst = check_probe_reference(refs[i], by);
        printf("    %s: largest difference to PyTorch: %.2e (cos_y %.2e, cos_z %.2e, a_ii %.2e)\n", refs[i], worst, by[0],
               by[1], by[2]);
        CHECK(worst < 1e-5);
    }
}

// A model that gives a token probability 0 (log-probability -inf, from a logit that overflows): the
// token adds nothing to KL(A || B) (0 log 0 = 0), so KL stays finite; a B that gives probability 0
// where A does not has an infinite KL, which is refused rather than reported.
TEST(kl_with_a_zero_probability) {
    struct random_model_spec sp = {MODEL_ARCH_GPT2, ROPE_NONE, 1, 2, 2, 8, 16, 32, 300, 64, 0, 0, 11};
    struct model m[2];
    struct backend be[2];
    struct backend_options o = {0};
    xsa_error err = {0};
    for (int i = 0; i < 2; i++) {
        sp.seed = 11 + (uint64_t)i;
        random_model_init(&m[i], &sp);
    }
    // Model 0: the final norm's output is all ones, and token 7's head row overflows to -inf there.
    for (int c = 0; c < 16; c++) {
        m[0].final_norm_w[c] = 0, m[0].final_norm_b[c] = 1;
        m[0].lm_head[7 * 16 + c] = -3e38f;
    }
    for (int i = 0; i < 2; i++) CHECK(backend_open_env(&be[i], &m[i], &o, &err) == 0);
    struct ppl_docs d = {0};
    int32_t tok[40];
    for (int i = 0; i < 40; i++) tok[i] = 10 + (i * 37) % 250;
    CHECK(ppl_docs_add(&d, tok, 40, &err) == 0);
    struct backend *ab[2] = {&be[0], &be[1]}, *ba[2] = {&be[1], &be[0]};
    struct ppl_scores s[2];
    struct ppl_kl kl = {0};
    CHECK(ppl_score(ab, 2, &d, 16, 8, s, &kl, NULL, &err) == 0);
    CHECK_EQ_INT((long)s[0].n, 39);
    for (size_t t = 0; t < s[0].n; t++) CHECK(isfinite(kl.kl[t]) && kl.kl[t] > 0);
    for (int i = 0; i < 2; i++) ppl_scores_free(&s[i]);
    ppl_kl_free(&kl);
    CHECK(ppl_score(ba, 2, &d, 16, 8, s, &kl, NULL, &err) == XSA_ERUNTIME);
    CHECK(strstr(err.msg, "gives probability 0") != NULL);
    for (int i = 0; i < 2; i++) ppl_scores_free(&s[i]);
    ppl_kl_free(&kl);
    ppl_docs_free(&d);
    for (int i = 0; i < 2; i++) backend_close(&be[i]), random_model_free(&m[i]);
}

// A backend that scores but keeps (some of) its distributions to itself, as modded-nanogpt's
// forward once did: --kl must refuse (exit 3) rather than fold whatever its buffers held.
static int (*real_score)(struct backend *, const struct score_batch *, float *, uint8_t *, xsa_error *);
static const struct backend_dist_sink *real_sink;
static int hand_below;  // only chunks that start below this id are handed over

static void sink_some(void *ctx, int entry, int v0, int nv, const float *lp) {
    (void)ctx;
    if (v0 < hand_below) real_sink->chunk(real_sink->ctx, entry, v0, nv, lp);
}

static int score_keeping_chunks(struct backend *be, const struct score_batch *b, float *lp, uint8_t *gr, xsa_error *err) {
    struct score_batch c = *b;
    struct backend_dist_sink s = {sink_some, NULL};
    real_sink = b->dist;
    c.dist = b->dist ? &s : NULL;
    return real_score(be, &c, lp, gr, err);
}

TEST(kl_refuses_distributions_not_handed_over) {
    // 5000 ids: two chunks, the second a partial one
    struct random_model_spec sp = {MODEL_ARCH_GPT2, ROPE_NONE, 1, 2, 2, 8, 16, 32, 5000, 64, 0, 0, 21};
    struct model m[2];
    struct backend be[2];
    struct backend_options o = {0};
    xsa_error err = {0};
    for (int i = 0; i < 2; i++) {
        sp.seed = 21 + (uint64_t)i;
        random_model_init(&m[i], &sp);
        CHECK(backend_open_env(&be[i], &m[i], &o, &err) == 0);
    }
    struct ppl_docs d = {0};
    int32_t tok[40];
    for (int i = 0; i < 40; i++) tok[i] = (i * 997) % 5000;
    CHECK(ppl_docs_add(&d, tok, 40, &err) == 0);
    struct backend *ab[2] = {&be[0], &be[1]};
    struct ppl_scores s[2];
    struct ppl_kl kl = {0};
    real_score = be[0].score;
    const int below[] = {0, BACKEND_DIST_CHUNK, 5000};  // none, the first chunk only, all
    for (int keeper = 0; keeper < 2; keeper++)
        for (int i = 0; i < 3; i++) {
            hand_below = below[i];
            be[keeper].score = score_keeping_chunks;
            memset(&err, 0, sizeof err);
            int rc = ppl_score(ab, 2, &d, 16, 8, s, &kl, NULL, &err);
            be[keeper].score = real_score;
            if (i < 2) {
                CHECK_EQ_INT(rc, XSA_ERUNTIME);
                CHECK(strstr(err.msg, "vocabulary chunks --kl needs") != NULL);
            } else {
                CHECK_EQ_INT(rc, 0);
                for (size_t t = 0; t < s[0].n; t++) CHECK(isfinite(kl.kl[t]) && kl.kl[t] >= 0);
            }
            for (int k = 0; k < 2; k++) ppl_scores_free(&s[k]);
            ppl_kl_free(&kl);
        }
    ppl_docs_free(&d);
    for (int i = 0; i < 2; i++) backend_close(&be[i]), random_model_free(&m[i]);
}

// A tokenizer.json whose decoder is not ByteLevel (tests/fixtures/ppl/decoded_bpb, written by
// transformers and tokenizers: tools/fixtures/make_decoded_bpb_fixtures.py): each document's
// targets add up to the bytes `tokenizers` decodes its ids to (cut at special tokens), and the
// first --context 64 windows' targets to target_bytes.
TEST(decoded_bytes_match_tokenizers_decode) {
    cJSON *ref = fixture_read_json("tests/fixtures/ppl/decoded_bpb/decoded_bpb.json");
    CHECK(ref != NULL);
    static const char *names[] = {"llama", "reformer", "hf_metaspace"};
    for (size_t k = 0; ref && k < sizeof names / sizeof *names; k++) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(ref, names[k]);
        const cJSON *docs = cJSON_GetObjectItemCaseSensitive(r, "documents");
        struct tokenizer *tk = NULL;
        xsa_error err = {0};
        struct ppl_docs d = {.stream = 1};
        struct ivec all = {0};
        CHECK(tokenizer_load(&tk, cJSON_GetObjectItemCaseSensitive(r, "tokenizer")->valuestring, &err) == 0);
        CHECK(token_shard_read(cJSON_GetObjectItemCaseSensitive(r, "shard")->valuestring, 1024, &all, &err) == 0);
        CHECK(ppl_docs_add(&d, all.v, all.n, &err) == 0);
        CHECK_MSG(ppl_docs_hf_bytes(&d, tk, 1024, &err) == 0, "%s: %s", names[k], err.msg);
        int bos = tokenizer_bos_id(tk) >= 0 ? tokenizer_bos_id(tk) : 1, doc = -1, bad = 0;
        double got = 0, targets = 0;
        long n_targets = (long)cJSON_GetObjectItemCaseSensitive(r, "targets")->valuedouble;
        for (size_t i = 0; d.base_bytes && i <= all.n; i++) {
            if (i == all.n || all.v[i] == bos) {  // a document ends: its bytes
                const cJSON *want = doc >= 0 ? cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(docs, doc), "bytes") : NULL;
                if (doc >= 0 && (!want || got != want->valuedouble) && bad++ < 3)
                    CHECK_MSG(0, "%s document %d: %.0f bytes, tokenizers %.0f", names[k], doc, got, want ? want->valuedouble : -1);
                doc++, got = 0;
                continue;
            }
            got += ppl_target_bytes(&d, i);
            if ((long)i <= n_targets) targets += ppl_target_bytes(&d, i);
        }
        CHECK_MSG(doc == cJSON_GetArraySize(docs), "%s: %d documents", names[k], doc);
        CHECK_MSG(targets == cJSON_GetObjectItemCaseSensitive(r, "target_bytes")->valuedouble, "%s: %.0f target bytes", names[k],
                  targets);
        ppl_docs_free(&d);
        ivec_free(&all);
        tokenizer_free(tk);
    }
    cJSON_Delete(ref);
}

RUN_TESTS(T(decoded_bytes_match_tokenizers_decode), T(probe_statistics_match_pytorch), T(backend_distribution_chunks), T(backend_distribution_mnanogpt), T(windows_match_pytorch_nll_and_kl), T(gemma_windows_match_transformers), T(scores_do_not_depend_on_batching),
          T(shard_bits_per_byte_match_parameter_golf), T(shard_bits_per_byte_real_fineweb_tokenizer),
          T(shard_reader_refuses_malformed_files), T(windows_cover_each_target_once),
          T(kl_with_a_zero_probability), T(kl_refuses_distributions_not_handed_over),
          T(summary_interval_is_per_unit_cluster_t))
