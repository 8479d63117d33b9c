// Tests of eval/encode.c: lm-eval's _encode_pair, empty contexts, BOS rules and truncation.
// End-to-end agreement with lm-eval is tests/test_parity.c; these pin each rule on its own.
#include "eval/encode.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

static struct tokenizer *load(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/tokenizers/%s/tokenizer.json", name);
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    CHECK_MSG(tokenizer_load(&t, path, &err) == 0, "%s", err.msg);
    return t;
}

static void enc(const struct tokenizer *t, const char *s, int special, struct ivec *out) {
    xsa_error err = {0};
    out->n = 0;
    CHECK(tokenizer_encode(t, s, strlen(s), special, out, &err) == 0);
}

TEST(test_trailing_space_moves_to_continuation) {
    struct tokenizer *t = load("gpt2");
    if (!t) return;
    struct encode_options o = {.add_special = 1, .prefix_token_id = 0, .bos_id = -1, .max_length = 1000};
    struct ivec ctx = {0}, cont = {0}, whole = {0}, c2 = {0};
    xsa_error err = {0};
    CHECK(encode_pair(t, &o, "Question: why?\nAnswer: ", "because", &ctx, &cont, &err) == 0);
    enc(t, "Question: why?\nAnswer:", 1, &c2);
    enc(t, "Question: why?\nAnswer: because", 1, &whole);
    CHECK_EQ_INT(ctx.n, c2.n);
    CHECK(!memcmp(ctx.v, c2.v, ctx.n * sizeof *ctx.v));
    CHECK_EQ_INT(ctx.n + cont.n, whole.n);
    CHECK(!memcmp(cont.v, whole.v + ctx.n, cont.n * sizeof *cont.v));
    ivec_free(&ctx); ivec_free(&cont); ivec_free(&whole); ivec_free(&c2);
    tokenizer_free(t);
}

TEST(test_empty_context_uses_prefix_token) {
    struct tokenizer *t = load("hf_sp");
    if (!t) return;
    struct encode_options o = {.add_special = 1, .prefix_token_id = 1, .bos_id = 1, .max_length = 1000};
    struct ivec ctx = {0}, cont = {0}, plain = {0};
    xsa_error err = {0};
    CHECK(encode_pair(t, &o, "", " the end", &ctx, &cont, &err) == 0);
    CHECK_EQ_INT(ctx.n, 1);
    CHECK_EQ_INT(ctx.v[0], 1);
    enc(t, " the end", 0, &plain);  // continuation without special tokens
    CHECK_EQ_INT(cont.n, plain.n);
    CHECK(!memcmp(cont.v, plain.v, cont.n * sizeof *cont.v));
    ivec_free(&ctx); ivec_free(&cont); ivec_free(&plain);
    tokenizer_free(t);
}

TEST(test_bos_rules) {
    struct tokenizer *t = load("hf_sp");
    if (!t) return;
    CHECK(tokenizer_adds_bos(t));
    struct sbuf pb = {0};
    struct encode_options o = {.add_special = 1, .prefix_token_id = 1, .bos_id = 1, .max_length = 1000};
    o.prefix_text = encode_prefix_text(t, 1, &pb);
    CHECK_STR(o.prefix_text, "<s>");
    struct ivec ctx = {0}, cont = {0};
    xsa_error err = {0};
    CHECK(encode_pair(t, &o, "Hello there", " friend", &ctx, &cont, &err) == 0);
    CHECK(ctx.n > 1 && ctx.v[0] == 1 && ctx.v[1] != 1);  // tokenizer default: one BOS
    // lm-eval's has_bos_prefix: text that already starts with "<s>" gets no second BOS.
    CHECK(encode_pair(t, &o, "<s>Hello there", " friend", &ctx, &cont, &err) == 0);
    CHECK(ctx.n > 1 && ctx.v[0] == 1 && ctx.v[1] != 1);
    // --add-bos keeps has_bos_prefix (lm-eval 0.4.13 HFLM.tok_encode): still one BOS.
    o.force_bos = 1;
    CHECK(encode_pair(t, &o, "<s>Hello there", " friend", &ctx, &cont, &err) == 0);
    CHECK(ctx.n > 1 && ctx.v[0] == 1 && ctx.v[1] != 1);
    o.force_bos = 0;
    // --no-add-bos
    o.add_special = 0;
    CHECK(encode_pair(t, &o, "Hello there", " friend", &ctx, &cont, &err) == 0);
    CHECK(ctx.n > 0 && ctx.v[0] != 1);
    ivec_free(&ctx); ivec_free(&cont); sbuf_free(&pb);
    tokenizer_free(t);
    // --add-bos on a tokenizer that adds none (GPT-2 style): BOS forced in front.
    t = load("gpt2");
    if (!t) return;
    struct encode_options g = {.add_special = 1, .force_bos = 1, .bos_id = 0, .prefix_token_id = 0, .max_length = 1000};
    struct ivec a = {0}, b = {0};
    CHECK(encode_pair(t, &g, "Hello there", " friend", &a, &b, &err) == 0);
    CHECK(a.n > 1 && a.v[0] == 0);
    g.prefix_text = encode_prefix_text(t, 0, &pb);
    CHECK(encode_pair(t, &g, "<|endoftext|>Hello there", " friend", &a, &b, &err) == 0);
    CHECK(a.n > 1 && a.v[0] == 0 && a.v[1] != 0);
    ivec_free(&a); ivec_free(&b); sbuf_free(&pb);
    tokenizer_free(t);
}

TEST(test_left_truncation) {
    struct tokenizer *t = load("gpt2");
    if (!t) return;
    struct encode_options o = {.add_special = 1, .prefix_token_id = 0, .bos_id = -1, .max_length = 1000};
    const char *ctx = "one two three four five six seven eight nine ten eleven twelve";
    struct encoded_request full, cut;
    xsa_error err = {0};
    CHECK(encode_request(t, &o, ctx, " thirteen fourteen", &full, &err) == 0);
    CHECK(!full.truncated);
    size_t total = full.input.n + 1;  // ctx + cont tokens
    o.max_length = (int)total - 4;
    CHECK(encode_request(t, &o, ctx, " thirteen fourteen", &cut, &err) == 0);
    CHECK(cut.truncated);
    // inp = (ctx + cont)[-(L+1):][:-1]: the last L tokens before the final one.
    CHECK_EQ_INT(cut.input.n, (size_t)o.max_length);
    CHECK(!memcmp(cut.input.v, full.input.v + (full.input.n - cut.input.n), cut.input.n * sizeof *cut.input.v));
    CHECK_EQ_INT(cut.cont.n, full.cont.n);
    encoded_request_free(&cut);
    // A continuation longer than the window is an error, never silently cut.
    o.max_length = 1;
    CHECK(encode_request(t, &o, ctx, " thirteen fourteen", &cut, &err) == XSA_EBADINPUT);
    encoded_request_free(&full);
    tokenizer_free(t);
}

// Real lm-eval's (context_enc, continuation_enc) for pairs the task fixtures never produce
// (tools/fixtures/make_encode_fixtures.py): whitespace-only contexts, an empty context whose
// continuation starts with the prefix token (lm-eval then uses that token as the context),
// Unicode whitespace moved into the continuation. Pairs lm-eval asserts on must be refused.
static void check_lm_eval_pairs(const char *model) {
    cJSON *root = fixture_read_json("tests/fixtures/encode/lm_eval_pairs.json");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, model);
    CHECK(m != NULL);
    if (!m) { cJSON_Delete(root); return; }
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    const char *tp = cJSON_GetObjectItemCaseSensitive(m, "tokenizer")->valuestring;
    CHECK_MSG(tokenizer_load(&t, tp, &err) == 0, "%s", err.msg);
    if (!t) { cJSON_Delete(root); return; }
    // As eval/run.c sets them up: the tokenizer's defaults (lm-eval >= 0.4.9.2), or --add-bos
    // (add_bos_token=True), with the tokenizer_config.json beside the tokenizer when there is one.
    const cJSON *ab = cJSON_GetObjectItemCaseSensitive(m, "add_bos");
    const cJSON *refused = cJSON_GetObjectItemCaseSensitive(m, "refused");
    struct sbuf pb = {0};
    struct encode_options o;
    int rc0 = encode_options_init(&o, t, cJSON_IsTrue(ab) ? 1 : -1, &err);
    if (cJSON_IsString(refused)) {
        CHECK_MSG(rc0 == XSA_EBADINPUT && strstr(err.msg, refused->valuestring), "%s: want a refusal (%s), got %d: %s",
                  model, refused->valuestring, rc0, err.msg);
        tokenizer_free(t);
        cJSON_Delete(root);
        return;
    }
    CHECK_MSG(rc0 == 0, "%s: %s", model, err.msg);
    o.max_length = 1000;
    o.prefix_text = encode_prefix_text(t, o.prefix_token_id, &pb);
    CHECK_EQ_INT(o.prefix_token_id, cJSON_GetObjectItemCaseSensitive(m, "prefix_token_id")->valueint);
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(m, "cases")) {
        const char *ctx = cJSON_GetObjectItemCaseSensitive(c, "context")->valuestring;
        const char *cont = cJSON_GetObjectItemCaseSensitive(c, "continuation")->valuestring;
        const cJSON *want_ctx = cJSON_GetObjectItemCaseSensitive(c, "ctx");
        const cJSON *want_cont = cJSON_GetObjectItemCaseSensitive(c, "cont");
        int asserts = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "lm_eval_asserts"));
        struct encoded_request r;
        memset(&err, 0, sizeof err);
        int rc = encode_request(t, &o, ctx, cont, &r, &err);
        n++;
        if (asserts) {
            CHECK_MSG(rc == XSA_EBADINPUT, "%s case %d: lm-eval asserts, we returned %d", model, n, rc);
            CHECK_MSG(strstr(err.msg, "no tokens") != NULL, "%s case %d: %s", model, n, err.msg);
            continue;
        }
        CHECK_MSG(rc == 0, "%s case %d: %s", model, n, err.msg);
        if (rc) continue;
        // The model input is (ctx + cont)[:-1]; the continuation is scored at its tail.
        int nc = cJSON_GetArraySize(want_ctx), nt = cJSON_GetArraySize(want_cont);
        int same = (int)r.cont.n == nt && (int)r.input.n == nc + nt - 1;
        for (int i = 0; same && i < nt; i++) same = r.cont.v[i] == cJSON_GetArrayItem(want_cont, i)->valueint;
        for (int i = 0; same && i < nc; i++) same = r.input.v[i] == cJSON_GetArrayItem(want_ctx, i)->valueint;
        CHECK_MSG(same, "%s case %d (%s|%s): tokens differ from lm-eval (ctx %d cont %d, ours input %zu cont %zu)",
                  model, n, ctx, cont, nc, nt, r.input.n, r.cont.n);
        encoded_request_free(&r);
    }
    CHECK(n >= 10);
    sbuf_free(&pb);
    tokenizer_free(t);
    cJSON_Delete(root);
}

TEST(test_lm_eval_edge_pairs_gpt2) { check_lm_eval_pairs("gpt2_bpe"); }
TEST(test_lm_eval_edge_pairs_llama_sp) { check_lm_eval_pairs("llama_sp_xsa"); }
// tokenizer_config.json as transformers 5 reads it: lm-eval's prefix token and --add-bos's BOS.
TEST(test_lm_eval_config_bos) {
    static const char *const cases[] = {"gpt2_config", "gpt2_class_default", "gpt2_special_map", "sp_eos_as_bos",
                                        "sp_eos_as_bos_default", "sp_null_bos", "gpt2_codegen_class", "gpt2_unknown_class",
                                        "gpt2_bos_not_in_vocab", "gpt2_model_type_only"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_lm_eval_pairs(cases[i]);
}

RUN_TESTS(T(test_trailing_space_moves_to_continuation), T(test_empty_context_uses_prefix_token), T(test_bos_rules),
          T(test_left_truncation), T(test_lm_eval_edge_pairs_gpt2), T(test_lm_eval_edge_pairs_llama_sp),
          T(test_lm_eval_config_bos))
