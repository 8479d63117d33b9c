// Tests of model loading: HF safetensors checkpoints (gpt2, llama, bf16, sharded), llama2.c
// .bin files, config.json rules, XSA layer specs, and the errors of corrupt inputs.
// Expected values come from tools/fixtures/make_model_fixtures.py and tools/references/llama2c_reference.py
// (reference.json: n_params and weights_sample in nn.Linear (OUT, IN) layout).
#include <cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/vec.h"
#include "model/config.h"
#include "model/model.h"
#include "model/safetensors.h"
#include "tests/check.h"

#define FIX "tests/fixtures/models/"

static cJSON *read_json(const char *path) {
    char *text = NULL;
    xsa_error err = {0};
    if (file_read_all(path, 16u << 20, &text, NULL, &err)) {
        fprintf(stderr, "  %s\n", err.msg);
        return NULL;
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    return j;
}

// Compares 4 loaded floats with reference.json's weights_sample[key], exactly: the reference
// holds the float32 (or bf16) values themselves.
static void check_sample(const cJSON *ref, const char *key, const float *got) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ref, "weights_sample"), key);
    CHECK_MSG(cJSON_GetArraySize(a) == 4, "weights_sample.%s missing", key);
    if (cJSON_GetArraySize(a) != 4 || !got) return;
    for (int i = 0; i < 4; i++)
        CHECK_MSG(got[i] == (float)cJSON_GetArrayItem(a, i)->valuedouble, "%s[%d]: %.9g vs %.9g", key, i,
                  (double)got[i], cJSON_GetArrayItem(a, i)->valuedouble);
}

static long long ref_n_params(const cJSON *ref) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(ref, "n_params");
    return cJSON_IsNumber(n) ? (long long)n->valuedouble : -1;
}

static int make_tmpdir(char *dir) {  // dir: buffer holding "/tmp/xsa_model_XXXXXX"
    strcpy(dir, "/tmp/xsa_model_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static void rm_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int write_file(const char *dir, const char *name, const void *data, size_t n) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    xsa_error err = {0};
    return file_write_atomic(p, data, n, &err);
}

// Copies fixture file `src` into dir/name, keeping the first `keep` bytes (SIZE_MAX: all).
static int copy_file(const char *src, const char *dir, const char *name, size_t keep) {
    char *data = NULL;
    size_t n = 0;
    xsa_error err = {0};
    if (file_read_all(src, 64u << 20, &data, &n, &err)) return -1;
    int rc = write_file(dir, name, data, n < keep ? n : keep);
    free(data);
    return rc;
}

static void load_ok(struct model *m, const char *path) {
    xsa_error err = {0};
    int rc = model_load(m, path, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
}

TEST(test_gpt2_tiny) {
    struct model m;
    load_ok(&m, FIX "gpt2_tiny");
    cJSON *ref = read_json(FIX "gpt2_tiny/reference.json");
    CHECK(ref != NULL);
    const struct model_config *c = &m.cfg;
    CHECK_EQ_INT(c->arch, MODEL_ARCH_GPT2);
    CHECK_EQ_INT(c->rope, ROPE_NONE);
    CHECK_EQ_INT(c->n_layer, 2);
    CHECK_EQ_INT(c->n_head, 4);
    CHECK_EQ_INT(c->n_kv_head, 4);
    CHECK_EQ_INT(c->head_dim, 8);
    CHECK_EQ_INT(c->d_model, 32);
    CHECK_EQ_INT(c->d_ff, 128);  // n_inner null -> 4 * n_embd
    CHECK_EQ_INT(c->vocab_size, 300);
    CHECK_EQ_INT(c->max_seq_len, 64);
    CHECK_NEAR(c->norm_eps, 1e-5, 1e-12);
    CHECK_EQ_INT(c->tied_head, 1);
    CHECK_EQ_INT(c->bos_id, 0);
    CHECK_EQ_INT(model_xsa_count(c), 0);
    CHECK_STR(m.format, "safetensors");
    CHECK_STR(m.dtype, "F32");
    CHECK_STR(m.xsa_source, "none");
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    CHECK(m.lm_head == m.tok_emb);
    CHECK(m.pos_emb && m.final_norm_b && m.layers[1].bq && m.layers[1].b_down && m.layers[0].attn_norm_b);
    CHECK(m.layers[0].w_gate == NULL);
    check_sample(ref, "tok_emb", m.tok_emb);
    check_sample(ref, "layer0_wq", m.layers[0].wq);                // c_attn transposed, q part
    check_sample(ref, "layer0_wk_row1", m.layers[0].wk + 1 * 32);  // k part, row 1
    check_sample(ref, "layer0_wv_row2", m.layers[0].wv + 2 * 32);
    check_sample(ref, "layer0_bv", m.layers[0].bv);
    check_sample(ref, "layer0_w_up_row3", m.layers[0].w_up + 3 * 32);
    check_sample(ref, "pos_emb_row5", m.pos_emb + 5 * 32);
    char hex[65];
    xsa_error err = {0};
    CHECK(sha256_file_hex(FIX "gpt2_tiny/model.safetensors", hex, &err) == 0);
    CHECK_STR(m.weights_sha256, hex);
    cJSON_Delete(ref);
    model_free(&m);
    CHECK(m.arena == NULL && m.layers == NULL);
}

// Every weight array of a and b (same config) holds the same bytes; some may point into a
// file mapping, others into the arena.
static int same_weights(const struct model *a, const struct model *b) {
    const struct model_config *c = &a->cfg;
    if (memcmp(c, &b->cfg, sizeof *c)) return 0;
    size_t C = (size_t)c->d_model, V = (size_t)c->vocab_size, F = (size_t)c->d_ff;
    size_t Q = (size_t)c->n_head * c->head_dim, KV = (size_t)c->n_kv_head * c->head_dim;
#define SAME(x, y, n) ((!(x) && !(y)) || ((x) && (y) && !memcmp((x), (y), (n) * sizeof(float))))
    int ok = SAME(a->tok_emb, b->tok_emb, V * C) && SAME(a->lm_head, b->lm_head, V * C) &&
             SAME(a->pos_emb, b->pos_emb, (size_t)c->max_seq_len * C) &&
             SAME(a->final_norm_w, b->final_norm_w, C) && SAME(a->final_norm_b, b->final_norm_b, C);
    for (int l = 0; l < c->n_layer && ok; l++) {
        const struct layer_weights *x = &a->layers[l], *y = &b->layers[l];
        ok = SAME(x->attn_norm_w, y->attn_norm_w, C) && SAME(x->attn_norm_b, y->attn_norm_b, C) &&
             SAME(x->wq, y->wq, Q * C) && SAME(x->bq, y->bq, Q) && SAME(x->wk, y->wk, KV * C) &&
             SAME(x->bk, y->bk, KV) && SAME(x->wv, y->wv, KV * C) && SAME(x->bv, y->bv, KV) &&
             SAME(x->wo, y->wo, C * Q) && SAME(x->bo, y->bo, C) && SAME(x->mlp_norm_w, y->mlp_norm_w, C) &&
             SAME(x->mlp_norm_b, y->mlp_norm_b, C) && SAME(x->w_gate, y->w_gate, F * C) &&
             SAME(x->b_gate, y->b_gate, F) && SAME(x->w_up, y->w_up, F * C) && SAME(x->b_up, y->b_up, F) &&
             SAME(x->w_down, y->w_down, C * F) && SAME(x->b_down, y->b_down, C);
    }
#undef SAME
    return ok;
}

TEST(test_gpt2_sharded_equals_unsharded) {
    struct model a, b;
    load_ok(&a, FIX "gpt2_tiny");
    load_ok(&b, FIX "gpt2_tiny_sharded");  // Hub names (no transformer. prefix), 3 shards
    CHECK_EQ_INT(a.arena_bytes, b.arena_bytes);
    CHECK_EQ_INT(a.n_params, b.n_params);
    CHECK(same_weights(&a, &b));
    // Documented identity: sha256 of the concatenated per-shard hex digests, sorted by name.
    char cat[3 * 64 + 1] = "", hex[65], path[256];
    xsa_error err = {0};
    for (int i = 1; i <= 3; i++) {
        snprintf(path, sizeof path, FIX "gpt2_tiny_sharded/model-%05d-of-00003.safetensors", i);
        CHECK(sha256_file_hex(path, hex, &err) == 0);
        strcat(cat, hex);
    }
    CHECK(sha256_hex(cat, 192, hex, &err) == 0);
    CHECK_STR(b.weights_sha256, hex);
    CHECK(strcmp(a.weights_sha256, b.weights_sha256) != 0);
    model_free(&a);
    model_free(&b);
}

TEST(test_llama_gqa) {
    struct model m;
    load_ok(&m, FIX "llama_gqa");
    cJSON *ref = read_json(FIX "llama_gqa/reference.json");
    const struct model_config *c = &m.cfg;
    CHECK_EQ_INT(c->arch, MODEL_ARCH_LLAMA);
    CHECK_EQ_INT(c->rope, ROPE_HALF);
    CHECK_NEAR(c->rope_theta, 10000.0, 0);
    CHECK_EQ_INT(c->n_layer, 3);
    CHECK_EQ_INT(c->n_head, 4);
    CHECK_EQ_INT(c->n_kv_head, 2);
    CHECK_EQ_INT(c->head_dim, 8);
    CHECK_EQ_INT(c->d_ff, 64);
    CHECK_EQ_INT(c->max_seq_len, 128);
    CHECK_EQ_INT(c->tied_head, 0);
    CHECK_EQ_INT(c->bos_id, 1);
    CHECK_EQ_INT(c->eos_id, 2);
    CHECK_NEAR(c->norm_eps, 1e-5, 1e-12);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    CHECK(m.lm_head != m.tok_emb);
    CHECK(m.pos_emb == NULL && m.final_norm_b == NULL && m.layers[0].bq == NULL && m.layers[0].b_gate == NULL);
    CHECK(m.layers[2].w_gate && m.layers[2].w_up && m.layers[2].w_down);
    check_sample(ref, "tok_emb", m.tok_emb);
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer0_wk_row1", m.layers[0].wk + 32);
    check_sample(ref, "layer0_w_gate_row3", m.layers[0].w_gate + 3 * 32);
    check_sample(ref, "final_norm", m.final_norm_w);
    check_sample(ref, "lm_head_row7", m.lm_head + 7 * 32);
    cJSON_Delete(ref);
    model_free(&m);
}

TEST(test_llama_bf16_converted) {
    struct model m;
    load_ok(&m, FIX "llama_bf16");
    cJSON *ref = read_json(FIX "llama_bf16/reference.json");
    CHECK_STR(m.dtype, "BF16");
    CHECK_EQ_INT(m.cfg.tied_head, 1);
    CHECK(m.lm_head == m.tok_emb);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    check_sample(ref, "tok_emb", m.tok_emb);
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer0_w_gate_row3", m.layers[0].w_gate + 3 * 32);
    // bf16 -> fp32 is exact: every loaded value has a zero low half.
    uint32_t u;
    memcpy(&u, &m.layers[2].w_down[17], 4);
    CHECK_EQ_INT(u & 0xffff, 0);
    cJSON_Delete(ref);
    model_free(&m);
}

TEST(test_stories260K) {
    const char *bin = shared_benchdata("models/stories260K/stories260K.bin");
    if (!bin) SKIP("../shared/benchdata/models/stories260K absent");
    struct model m;
    load_ok(&m, bin);
    cJSON *ref = read_json("tests/fixtures/stories260K_reference.json");
    const struct model_config *c = &m.cfg;
    CHECK_EQ_INT(c->d_model, 64);
    CHECK_EQ_INT(c->d_ff, 172);
    CHECK_EQ_INT(c->n_layer, 5);
    CHECK_EQ_INT(c->n_head, 8);
    CHECK_EQ_INT(c->n_kv_head, 4);
    CHECK_EQ_INT(c->head_dim, 8);
    CHECK_EQ_INT(c->vocab_size, 512);
    CHECK_EQ_INT(c->max_seq_len, 512);
    CHECK_EQ_INT(c->rope, ROPE_ADJACENT);
    CHECK_EQ_INT(c->tied_head, 1);
    CHECK_EQ_INT(c->bos_id, 1);
    CHECK_STR(m.format, "llama2c");
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    check_sample(ref, "tok_emb", m.tok_emb);
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer1_wk_row1", m.layers[1].wk + 64);
    check_sample(ref, "layer0_w_gate_row3", m.layers[0].w_gate + 3 * 64);
    check_sample(ref, "final_norm", m.final_norm_w);
    cJSON_Delete(ref);
    model_free(&m);
}

// A synthetic llama2.c file whose float k holds k: checks where each tensor lands.
static size_t write_llama2c(const char *dir, const char *name, int unshared, size_t drop) {
    int32_t h[7] = {8, 12, 2, 2, 1, unshared ? -10 : 10, 4};  // C 8, F 12, L 2, H 2, Hkv 1 (KV 4), V 10, T 4
    size_t C = 8, F = 12, L = 2, KV = 4, V = 10, T = 4, hd = 4;
    size_t n = V * C + L * (C + C * C + 2 * KV * C + C * C + C + 3 * F * C) + C + 2 * T * hd / 2 + (unshared ? V * C : 0);
    size_t bytes = 28 + 4 * n;
    unsigned char *buf = malloc(bytes);
    memcpy(buf, h, 28);
    for (size_t k = 0; k < n; k++) {
        float f = (float)k;
        memcpy(buf + 28 + 4 * k, &f, 4);
    }
    write_file(dir, name, buf, bytes - drop);
    free(buf);
    return n;
}

TEST(test_llama2c_layout) {
    char dir[64], path[128];
    CHECK(make_tmpdir(dir) == 0);
    size_t n = write_llama2c(dir, "m.bin", 1, 0);
    snprintf(path, sizeof path, "%s/m.bin", dir);
    struct model m;
    load_ok(&m, path);
    if (m.arena) {
        size_t C = 8, F = 12, L = 2, KV = 4, V = 10;
        size_t o = V * C;  // rms_att
        CHECK(m.tok_emb[0] == 0 && m.tok_emb[V * C - 1] == (float)(V * C - 1));
        CHECK(m.layers[1].attn_norm_w[0] == (float)(o + C));
        o += L * C;  // wq
        CHECK(m.layers[1].wq[0] == (float)(o + C * C));
        o += L * C * C;  // wk
        CHECK(m.layers[0].wk[5] == (float)(o + 5));
        o += L * KV * C;  // wv
        CHECK(m.layers[1].wv[0] == (float)(o + KV * C));
        o += L * KV * C + L * C * C;  // rms_ffn
        CHECK(m.layers[0].mlp_norm_w[0] == (float)o);
        o += L * C;  // w1 = gate
        CHECK(m.layers[0].w_gate[0] == (float)o);
        o += L * F * C;  // w2 = down
        CHECK(m.layers[1].w_down[0] == (float)(o + C * F));
        o += L * C * F;  // w3 = up
        CHECK(m.layers[0].w_up[1] == (float)(o + 1));
        o += L * F * C;  // rms_final
        CHECK(m.final_norm_w[0] == (float)o);
        CHECK(m.lm_head != m.tok_emb);
        CHECK(m.lm_head[V * C - 1] == (float)(n - 1));  // wcls is last
        CHECK_EQ_INT(m.cfg.tied_head, 0);
        CHECK_EQ_INT(m.n_params, (long long)(n - 2 * 4 * 2));  // freq_cis not counted
    }
    model_free(&m);
    // One byte short, and a file too short for a header.
    write_llama2c(dir, "short.bin", 0, 1);
    snprintf(path, sizeof path, "%s/short.bin", dir);
    xsa_error err = {0};
    CHECK_EQ_INT(model_load(&m, path, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "short.bin") && strstr(err.msg, "implies"));
    write_file(dir, "tiny.bin", "abc", 3);
    snprintf(path, sizeof path, "%s/tiny.bin", dir);
    xsa_error_clear(&err);
    CHECK_EQ_INT(model_load(&m, path, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "3 bytes is too short") != NULL);
    int32_t bad[7] = {8, 12, 2, 3, 1, 10, 4};  // 8 not divisible by 3 heads
    write_file(dir, "bad.bin", bad, sizeof bad);
    snprintf(path, sizeof path, "%s/bad.bin", dir);
    xsa_error_clear(&err);
    CHECK_EQ_INT(model_load(&m, path, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "n_heads 3") != NULL);
    rm_dir(dir);
}

TEST(test_xsa_spec) {
    struct model_config c = {.n_layer = 3};
    xsa_error err = {0};
    char s[64];
    CHECK(model_apply_xsa_spec(&c, "all", &err) == 0);
    CHECK_EQ_INT(model_xsa_count(&c), 3);
    model_xsa_describe(&c, s, sizeof s);
    CHECK_STR(s, "all");
    CHECK(model_apply_xsa_spec(&c, "none", &err) == 0);
    CHECK_EQ_INT(model_xsa_count(&c), 0);
    model_xsa_describe(&c, s, sizeof s);
    CHECK_STR(s, "none");
    CHECK(model_apply_xsa_spec(&c, "last:2", &err) == 0);
    CHECK(!c.xsa[0] && c.xsa[1] && c.xsa[2]);
    model_xsa_describe(&c, s, sizeof s);
    CHECK_STR(s, "1,2");
    CHECK(model_apply_xsa_spec(&c, "0,2", &err) == 0);
    CHECK(c.xsa[0] && !c.xsa[1] && c.xsa[2]);
    model_xsa_describe(&c, s, sizeof s);
    CHECK_STR(s, "0,2");
    CHECK(model_apply_xsa_spec(&c, "last:0", &err) == 0);  // no layer, same as none
    CHECK_EQ_INT(model_xsa_count(&c), 0);
    CHECK(model_apply_xsa_spec(&c, "2,0", &err) == 0);
    // Errors leave the config as it was.
    CHECK_EQ_INT(model_apply_xsa_spec(&c, "7", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "layer 7") && strstr(err.msg, "3 layers"), "%s", err.msg);
    static const char *bad[] = {"", "last:4", "last:", "last:-1", "a", "1,,2", "-1", "1,", "0x1", " 1", "all,1", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        xsa_error_clear(&err);
        CHECK_MSG(model_apply_xsa_spec(&c, bad[i], &err) == XSA_EBADINPUT, "spec '%s' accepted", bad[i]);
        CHECK(err.msg[0] != '\0');
    }
    CHECK(c.xsa[0] && !c.xsa[1] && c.xsa[2]);
    // Long lists are cut with "..." and never overflow.
    struct model_config big = {.n_layer = 200};
    CHECK(model_apply_xsa_spec(&big, "last:150", &err) == 0);
    CHECK_EQ_INT(model_xsa_count(&big), 150);
    CHECK(!big.xsa[49] && big.xsa[50] && big.xsa[199]);
    memset(big.xsa, 0, sizeof big.xsa);
    for (int l = 0; l < 200; l += 2) big.xsa[l] = 1;
    char small[20];
    model_xsa_describe(&big, small, sizeof small);
    CHECK(strlen(small) < sizeof small && strstr(small, "...") != NULL);
}

// A temporary checkpoint: gpt2_tiny's weights with the given config.json text.
static int gpt2_with_config(char *dir, const char *config) {
    if (make_tmpdir(dir)) return -1;
    if (copy_file(FIX "gpt2_tiny/model.safetensors", dir, "model.safetensors", SIZE_MAX)) return -1;
    return write_file(dir, "config.json", config, strlen(config));
}

#define GPT2_BASE "\"model_type\":\"gpt2\",\"vocab_size\":300,\"n_embd\":32,\"n_layer\":2,\"n_head\":4"

static void expect_load_error(const char *dir, const char *want1, const char *want2) {
    struct model m;
    xsa_error err = {0};
    int rc = model_load(&m, dir, &err);
    CHECK_EQ_INT(rc, XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, want1) && (!want2 || strstr(err.msg, want2)), "got: %s", err.msg);
    CHECK(m.arena == NULL && m.layers == NULL);
}

TEST(test_config_xsa_layers) {
    char dir[64];
    CHECK(gpt2_with_config(dir, "{" GPT2_BASE ",\"n_positions\":64,\"xsa_layers\":[1]}") == 0);
    struct model m;
    load_ok(&m, dir);
    CHECK_EQ_INT(m.cfg.xsa[0], 0);
    CHECK_EQ_INT(m.cfg.xsa[1], 1);
    CHECK_STR(m.xsa_source, "config");
    model_free(&m);
    CHECK(write_file(dir, "config.json", "{" GPT2_BASE ",\"n_positions\":64,\"xsa_layers\":\"all\"}", strlen("{" GPT2_BASE ",\"n_positions\":64,\"xsa_layers\":\"all\"}")) == 0);
    load_ok(&m, dir);
    CHECK_EQ_INT(model_xsa_count(&m.cfg), 2);
    model_free(&m);
    const char *bad = "{" GPT2_BASE ",\"n_positions\":64,\"xsa_layers\":[2]}";
    CHECK(write_file(dir, "config.json", bad, strlen(bad)) == 0);
    expect_load_error(dir, "config.json", "layer 2");
    const char *frac = "{" GPT2_BASE ",\"n_positions\":64,\"xsa_layers\":[1.5]}";
    CHECK(write_file(dir, "config.json", frac, strlen(frac)) == 0);
    expect_load_error(dir, "config.json", "entries must be integer layer indices");
    rm_dir(dir);
}

TEST(test_config_refusals) {
    struct hf_config hc;
    xsa_error err = {0};
    static const struct { const char *json, *want; } cases[] = {
        {"{\"model_type\":\"bert\"}", "model_type \"bert\" is not supported (supported: gpt2, llama, mistral, ministral, qwen2, qwen3, olmo, olmo2, gpt_neox, phi, phi3, gemma, gemma2, gemma3_text, opt, stablelm, smollm3, granite)"},
        {"{\"vocab_size\":3}", "\"model_type\" is missing"},
        {"[1]", "not a JSON object"},
        {"{" GPT2_BASE ",\"activation_function\":\"relu\"}", "activation_function \"relu\""},
        {"{\"model_type\":\"gpt2\",\"vocab_size\":300,\"n_embd\":32,\"n_layer\":2,\"n_head\":5}", "not a multiple"},
        {"{\"model_type\":\"gpt2\",\"vocab_size\":300,\"n_layer\":2,\"n_head\":4}", "\"n_embd\" is missing"},
        {"{\"model_type\":\"gpt2\",\"vocab_size\":300,\"n_embd\":32,\"n_layer\":100000,\"n_head\":4}", "\"n_layer\" must be an integer"},
        {"{\"model_type\":\"gpt2\",\"vocab_size\":300,\"n_embd\":32.5,\"n_layer\":2,\"n_head\":4}", "\"n_embd\" must be an integer"},
        {"{\"model_type\":\"gpt2\",\"vocab_size\":\"300\",\"n_embd\":32,\"n_layer\":2,\"n_head\":4}", "\"vocab_size\" must be an integer"},
        {"{\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":2,\"rope_scaling\":{\"rope_type\":\"longrope\",\"factor\":4}}", "rope_scaling type \"longrope\" is not supported (xsa-eval implements default, linear, dynamic, llama3 and yarn)"},
        {"{\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":2,\"rope_parameters\":{\"rope_type\":\"llama3\"}}", "rope_parameters of type llama3 needs low_freq_factor and high_freq_factor"},
        {"{\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":2,\"hidden_act\":\"gelu\"}", "hidden_act \"gelu\""},
        {"{\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":2,\"num_key_value_heads\":3}", "not a multiple of num_key_value_heads"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xsa_error_clear(&err);
        CHECK_EQ_INT(hf_config_parse_text(&hc, cases[i].json, "cfg.json", &err), XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, cases[i].want) && strstr(err.msg, "cfg.json"), "case %zu: got: %s", i, err.msg);
    }
    // Llama defaults and the accepted spellings.
    xsa_error_clear(&err);
    const char *ok = "{\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,\"num_hidden_layers\":1,"
                     "\"num_attention_heads\":2,\"rope_scaling\":null,\"rope_theta\":500000,\"eos_token_id\":[7,8],\"attention_bias\":true}";
    CHECK(hf_config_parse_text(&hc, ok, "cfg.json", &err) == 0);
    CHECK_EQ_INT(hc.cfg.n_kv_head, 2);
    CHECK_EQ_INT(hc.cfg.head_dim, 4);
    CHECK_NEAR(hc.cfg.rope_theta, 500000.0, 0);
    CHECK_EQ_INT(hc.cfg.eos_id, 7);
    CHECK_EQ_INT(hc.cfg.bos_id, -1);
    CHECK_EQ_INT(hc.cfg.tied_head, 0);
    CHECK_EQ_INT(hc.ws.qkv_bias, 1);
    CHECK_EQ_INT(hc.ws.o_bias, 1);
    CHECK_EQ_INT(hc.ws.mlp_bias, 0);
    CHECK_NEAR(hc.cfg.norm_eps, 1e-6, 1e-13);
    const char *ok5 = "{\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,\"num_hidden_layers\":1,"
                      "\"num_attention_heads\":2,\"rope_parameters\":{\"rope_type\":\"default\",\"rope_theta\":1000.0}}";
    CHECK(hf_config_parse_text(&hc, ok5, "cfg.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_theta, 1000.0, 0);
}

TEST(test_fp16_bf16_conversion) {
    CHECK(st_f16_to_f32(0x3c00) == 1.0f);
    CHECK(st_f16_to_f32(0xc000) == -2.0f);
    CHECK(st_f16_to_f32(0x3800) == 0.5f);
    CHECK(st_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(st_f16_to_f32(0x0001) == ldexpf(1.0f, -24));  // smallest subnormal
    CHECK(st_f16_to_f32(0x03ff) == ldexpf(1023.0f, -24));  // largest subnormal
    CHECK(isinf(st_f16_to_f32(0x7c00)) && st_f16_to_f32(0xfc00) < 0);
    CHECK(isnan(st_f16_to_f32(0x7e00)));
    CHECK(st_bf16_to_f32(0x3f80) == 1.0f);
    CHECK(st_bf16_to_f32(0xc040) == -3.0f);
}

// Writes a one-file safetensors with the given header JSON and `data_len` bytes of data.
static void write_st(const char *dir, const char *name, const char *header, const void *data, size_t data_len) {
    size_t hl = strlen(header);
    unsigned char *buf = malloc(8 + hl + data_len);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, header, hl);
    if (data_len) memcpy(buf + 8 + hl, data, data_len);
    write_file(dir, name, buf, 8 + hl + data_len);
    free(buf);
}

TEST(test_safetensors_reader) {
    char dir[64], path[128];
    CHECK(make_tmpdir(dir) == 0);
    const uint16_t f16[4] = {0x3c00, 0xc000, 0x3800, 0x0000};
    write_st(dir, "ok.safetensors", "{\"x\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,8]},\"__metadata__\":{\"a\":\"b\"}}", f16, 8);
    snprintf(path, sizeof path, "%s/ok.safetensors", dir);
    struct safetensors st = {0};
    xsa_error err = {0};
    CHECK_MSG(safetensors_open_file(&st, path, &err) == 0, "%s", err.msg);
    struct st_tensor *t = safetensors_find(&st, "x");
    CHECK(t && t->ndim == 2 && t->shape[1] == 2 && t->dtype == ST_F16);
    float out[4] = {0};
    if (t) CHECK(safetensors_read_f32(&st, t, out, &err) == 0);
    CHECK(out[0] == 1.0f && out[1] == -2.0f && out[2] == 0.5f && out[3] == 0.0f);
    safetensors_close(&st);

    static const struct { const char *header; size_t data; const char *want; } bad[] = {
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,16]}}", 8, "run past"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "need 12"},
        {"{\"x\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype 'Q4'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "invalid data_offsets"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "invalid shape"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "lacks"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, "the header: not valid JSON"},
        {"[1]", 8, "the header is not a JSON object"},
        {"{\"x\":1}", 8, "not an object"},
        {"{\"__metadata__\":null,\"x\":7}", 8, "not an object"},  // a null __metadata__ passes (none)
        {"{\"__metadata__\":{\"format\":1},\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "__metadata__ must map names to strings"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_st(dir, "bad.safetensors", bad[i].header, "\0\0\0\0\0\0\0\0", bad[i].data);
        snprintf(path, sizeof path, "%s/bad.safetensors", dir);
        xsa_error_clear(&err);
        struct safetensors s2 = {0};
        CHECK_EQ_INT(safetensors_open_file(&s2, path, &err), XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, bad[i].want) && strstr(err.msg, "bad.safetensors"), "case %zu: %s", i, err.msg);
        safetensors_close(&s2);
    }
    // Header length beyond the file, and a file too short to hold one.
    unsigned char huge[16] = {0xff, 0xff, 0xff, 0x00, 0, 0, 0, 0, '{', '}'};
    write_file(dir, "bad.safetensors", huge, sizeof huge);
    xsa_error_clear(&err);
    struct safetensors s3 = {0};
    CHECK_EQ_INT(safetensors_open_file(&s3, path, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "header length") != NULL);
    safetensors_close(&s3);
    write_file(dir, "bad.safetensors", huge, 5);
    xsa_error_clear(&err);
    CHECK_EQ_INT(safetensors_open_file(&s3, path, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "too short") != NULL);
    safetensors_close(&s3);
    rm_dir(dir);
}

// Hostile headers: a shape whose product wraps around 2^64, tensors that leave gaps, overlap or
// stop short of the end (the reference library refuses those too), a name with a newline (the
// message stays one line), a name given twice, and many tensors (looked up by hash).
TEST(test_safetensors_hostile_headers) {
    char dir[64], path[128];
    CHECK(make_tmpdir(dir) == 0);
    snprintf(path, sizeof path, "%s/h.safetensors", dir);
    static const struct { const char *header; size_t data; const char *want; } bad[] = {
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}", 0, "impossibly large"},
        {"{\"x\":{\"dtype\":\"U8\",\"shape\":[1048576,1048576,1048576,1048576],\"data_offsets\":[0,0]}}", 0, "impossibly large"},
        {"{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2, "gap or an overlap"},
        {"{\"x\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},\"y\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, "gap or an overlap"},
        {"{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 3, "cover 1 of the 3 bytes"},
        {"{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2, "the header: key \"x\" stands twice"},
        {"{\"a\\nb\\r\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "'a?b?' has unknown dtype"},
    };
    xsa_error err = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_st(dir, "h.safetensors", bad[i].header, "\0\0\0", bad[i].data);
        xsa_error_clear(&err);
        struct safetensors st = {0};
        CHECK_EQ_INT(safetensors_open_file(&st, path, &err), XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, bad[i].want) && !strchr(err.msg, '\n'), "case %zu: %s", i, err.msg);
        safetensors_close(&st);
    }
    // Zero-size tensors may share an offset (the library sorts by (begin, end)).
    write_st(dir, "h.safetensors", "{\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}", "\0", 1);
    struct safetensors st = {0};
    CHECK_MSG(safetensors_open_file(&st, path, &err) == 0, "%s", err.msg);
    safetensors_close(&st);
    // 30000 tiny tensors: every name found, absent names not.
    struct sbuf h = {0};
    sbuf_append(&h, "{", 1);
    for (int i = 0; i < 30000; i++)
        sbuf_printf(&h, "%s\"t%d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%d,%d]}", i ? "," : "", i, i, i + 1);
    sbuf_append(&h, "}", 1);
    char *zeros = calloc(30000, 1);
    write_st(dir, "h.safetensors", h.s, zeros, 30000);
    xsa_error_clear(&err);
    CHECK_MSG(safetensors_open_file(&st, path, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(st.n_tensors, 30000);
    int found = 0;
    for (int i = 0; i < 30000; i += 7) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        struct st_tensor *t = safetensors_find(&st, name);
        found += t && !strcmp(t->name, name);
    }
    CHECK_EQ_INT(found, (30000 + 6) / 7);
    CHECK(safetensors_find(&st, "t30000") == NULL && safetensors_find(&st, "") == NULL);
    safetensors_close(&st);
    free(zeros);
    sbuf_free(&h);
    rm_dir(dir);
}

// A config.json that implies a model far larger than its weights (here 1.5 TB) is bad input,
// refused with the first tensor that does not match before anything is allocated for it, not
// an out-of-memory failure.
TEST(test_config_larger_than_weights) {
    char dir[64];
    CHECK(gpt2_with_config(dir, "{\"model_type\":\"gpt2\",\"vocab_size\":4194304,\"n_embd\":65536,\"n_layer\":2,\"n_head\":4}") == 0);
    expect_load_error(dir, "'transformer.wte.weight' has shape [300, 32] but config.json implies [4194304, 65536]", NULL);
    const char *deep = "{" GPT2_BASE ",\"n_positions\":64,\"n_layer\":512,\"n_inner\":1048576}";
    CHECK(write_file(dir, "config.json", deep, strlen(deep)) == 0);
    expect_load_error(dir, "'transformer.h.0.mlp.c_fc.weight' has shape [32, 128] but config.json implies [32, 1048576]", NULL);
    rm_dir(dir);
}

TEST(test_checkpoint_errors) {
    char dir[64];
    const char *cfg64 = "{" GPT2_BASE ",\"n_positions\":64}";
    // Shape mismatch: config says 65 positions, wpe has 64.
    CHECK(gpt2_with_config(dir, "{" GPT2_BASE ",\"n_positions\":65}") == 0);
    expect_load_error(dir, "wpe.weight' has shape [64, 32] but config.json implies [65, 32]", "model.safetensors");
    // Untied head required but absent.
    const char *untied = "{" GPT2_BASE ",\"n_positions\":64,\"tie_word_embeddings\":false}";
    write_file(dir, "config.json", untied, strlen(untied));
    expect_load_error(dir, "tensor 'lm_head.weight' is missing", NULL);
    // Truncated weights.
    write_file(dir, "config.json", cfg64, strlen(cfg64));
    copy_file(FIX "gpt2_tiny/model.safetensors", dir, "model.safetensors", 100000);
    expect_load_error(dir, "model.safetensors", "run past");
    // No weights at all, then no config.
    char p[128];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    unlink(p);
    expect_load_error(dir, "no model.safetensors", NULL);
    snprintf(p, sizeof p, "%s/config.json", dir);
    unlink(p);
    copy_file(FIX "gpt2_tiny/model.safetensors", dir, "model.safetensors", SIZE_MAX);
    // weights without config.json, as accelerate saves them: how to add it
    expect_load_error(dir, "model.safetensors but no config.json", "model.config.save_pretrained(");
    rm_dir(dir);
    CHECK(make_tmpdir(dir) == 0);
    write_file(dir, "config.json", cfg64, strlen(cfg64));
    char *data = NULL;
    size_t n = 0;
    xsa_error err = {0};
    CHECK(file_read_all(FIX "gpt2_tiny/model.safetensors", 1 << 20, &data, &n, &err) == 0);
    if (data) {
        // Rename one tensor in place (same length): 'ln_f.bias' -> 'ln_q.bias': the expected
        // tensor is missing, and the renamed one would be refused as unexpected.
        char *hit = memmem(data, n, "transformer.ln_f.bias", 21);
        CHECK(hit != NULL);
        if (hit) hit[15] = 'q';
        write_file(dir, "model.safetensors", data, n);
        expect_load_error(dir, "tensor 'transformer.ln_f.bias' is missing", NULL);
        free(data);
    }
    rm_dir(dir);
    // Tensors the config does not account for are refused, not ignored: llama_gqa's 3 layers
    // under a config that declares 2.
    CHECK(make_tmpdir(dir) == 0);
    copy_file(FIX "llama_gqa/model.safetensors", dir, "model.safetensors", SIZE_MAX);
    char *cfg = NULL;
    CHECK(file_read_all(FIX "llama_gqa/config.json", 1 << 20, &cfg, &n, &err) == 0);
    if (cfg) {
        char *hit = strstr(cfg, "\"num_hidden_layers\": 3");
        CHECK(hit != NULL);
        if (hit) hit[21] = '2';
        write_file(dir, "config.json", cfg, n);
        expect_load_error(dir, "unexpected tensor 'model.layers.2.", "model.safetensors");
        free(cfg);
    }
    rm_dir(dir);
    // Wrong paths.
    expect_load_error("/nonexistent/model", "cannot open", NULL);
    expect_load_error(FIX "gpt2_tiny/model.safetensors", "pass the checkpoint directory", NULL);
}

TEST(test_sharded_index_errors) {
    char dir[64];
    CHECK(make_tmpdir(dir) == 0);
    copy_file(FIX "gpt2_tiny_sharded/config.json", dir, "config.json", SIZE_MAX);
    copy_file(FIX "gpt2_tiny_sharded/model-00001-of-00003.safetensors", dir, "model-00001-of-00003.safetensors", SIZE_MAX);
    copy_file(FIX "gpt2_tiny_sharded/model-00002-of-00003.safetensors", dir, "model-00002-of-00003.safetensors", SIZE_MAX);
    copy_file(FIX "gpt2_tiny_sharded/model.safetensors.index.json", dir, "model.safetensors.index.json", SIZE_MAX);
    expect_load_error(dir, "model-00003-of-00003.safetensors", "cannot open");  // a shard is missing
    const char *evil = "{\"weight_map\":{\"wte.weight\":\"../../etc/passwd\"}}";
    write_file(dir, "model.safetensors.index.json", evil, strlen(evil));
    expect_load_error(dir, "does not name a shard file", NULL);
    const char *wrong = "{\"weight_map\":{\"ln_f.bias\":\"model-00001-of-00003.safetensors\"}}";
    write_file(dir, "model.safetensors.index.json", wrong, strlen(wrong));
    expect_load_error(dir, "'ln_f.bias' is not in shard", NULL);
    rm_dir(dir);
}

// The first NaN or Inf is found wherever it sits (block edges included), whatever its sign or
// payload; FLT_MAX, subnormals and -0 are finite.
TEST(test_first_nonfinite) {
    enum { N = 3000 };
    static float x[N];
    static const uint32_t finite[] = {0x7f7fffffu, 0xff7fffffu, 0x00000001u, 0x80000000u, 0x3f800000u};
    for (int i = 0; i < N; i++) {
        uint32_t u = finite[i % 5];
        memcpy(&x[i], &u, 4);
    }
    CHECK_EQ_INT(model_first_nonfinite(x, N), N);
    CHECK_EQ_INT(model_first_nonfinite(x, 0), 0);
    static const uint32_t bad[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f800000u, 0xff800000u};
    static const size_t at[] = {0, 1, 1023, 1024, 1025, 2047, 2048, N - 1};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            float keep = x[at[k]];
            memcpy(&x[at[k]], &bad[b], 4);
            CHECK_MSG(model_first_nonfinite(x, N) == at[k], "0x%08x at %zu", bad[b], at[k]);
            CHECK_EQ_INT(model_first_nonfinite(x, at[k]), at[k]);  // not within the first at[k]
            x[at[k]] = keep;
        }
    x[2500] = NAN;
    x[1500] = INFINITY;
    CHECK_EQ_INT(model_first_nonfinite(x, N), 1500);
}

// Copies checkpoint directory `src` (config.json + model.safetensors) to a new temp dir,
// with `pad` spaces added to the safetensors header (pad 1 leaves the data unaligned for
// float, so F32 weights are copied rather than used in place) and the `nb` bytes of `tensor`
// from byte `at` of its data on overwritten with `bytes` (tensor NULL: none).
static int damaged_copy(char *dir, const char *src, int pad, const char *tensor, size_t at, const void *bytes, size_t nb) {
    char path[256], *data = NULL;
    size_t n = 0;
    xsa_error err = {0};
    if (make_tmpdir(dir)) return -1;
    snprintf(path, sizeof path, "%s/config.json", src);
    if (copy_file(path, dir, "config.json", SIZE_MAX)) return -1;
    snprintf(path, sizeof path, "%s/model.safetensors", src);
    if (file_read_all(path, 64u << 20, &data, &n, &err)) return -1;
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = hl << 8 | (unsigned char)data[i];
    unsigned char *out = malloc(n + (size_t)pad);
    uint64_t nhl = hl + (uint64_t)pad;
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)(nhl >> (8 * i));
    memcpy(out + 8, data + 8, hl);
    memset(out + 8 + hl, ' ', (size_t)pad);
    memcpy(out + 8 + nhl, data + 8 + hl, n - 8 - hl);
    int rc = 0;
    if (tensor) {
        cJSON *h = cJSON_ParseWithLength(data + 8, hl);
        const cJSON *off = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(h, tensor), "data_offsets"), 0);
        if (cJSON_IsNumber(off)) memcpy(out + 8 + nhl + (size_t)off->valuedouble + at, bytes, nb);
        else rc = -1;
        cJSON_Delete(h);
    }
    if (!rc) rc = write_file(dir, "model.safetensors", out, n + (size_t)pad);
    free(out);
    free(data);
    return rc;
}

// Makes dir/model.safetensors, a copy of llama_bf16, an F16 checkpoint: its header retyped
// (same length), its bit patterns kept (all finite as f16 too).
static int retype_f16(const char *dir) {
    char path[128], *data = NULL;
    size_t n = 0;
    xsa_error err = {0};
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (file_read_all(path, 1 << 20, &data, &n, &err)) return -1;
    for (char *hit; (hit = memmem(data, n, "\"BF16\"", 6));) memcpy(hit, "\"F16\" ", 6);
    int rc = write_file(dir, "model.safetensors", data, n);
    free(data);
    return rc;
}

// A NaN or an Inf in any weight is refused at load with the file, the tensor and the element,
// whichever way the tensor is read: F32 in place from the mapping, F32 copied (unaligned),
// BF16 and F16 converted, a gpt2 Conv1D weight transposed, and llama2.c .bin tensors.
TEST(test_nonfinite_weights_refused) {
    static const uint32_t f32_nan = 0x7fc00000u, f32_inf = 0x7f800000u, f32_ninf = 0xff800000u;
    static const uint16_t bf16_inf = 0x7f80, f16_nan = 0x7e00;
    static const struct {
        const char *src;
        int pad;
        const char *tensor;
        size_t el;
        const void *bytes;
        size_t nb;
        const char *want;
    } cases[] = {
        {FIX "llama_gqa", 0, "model.embed_tokens.weight", 5, &f32_nan, 4, "'model.embed_tokens.weight' holds NaN at element 5 (of 9600)"},
        {FIX "llama_gqa", 1, "model.layers.1.self_attn.o_proj.weight", 1023, &f32_inf, 4, "'model.layers.1.self_attn.o_proj.weight' holds +Inf at element 1023 (of 1024)"},
        {FIX "llama_gqa", 0, "lm_head.weight", 9599, &f32_ninf, 4, "'lm_head.weight' holds -Inf at element 9599 (of 9600)"},
        {FIX "gpt2_tiny", 0, "transformer.h.0.mlp.c_proj.weight", 64, &f32_nan, 4, "'transformer.h.0.mlp.c_proj.weight' holds NaN at element 64 (of 4096)"},
        {FIX "llama_bf16", 0, "model.layers.0.input_layernorm.weight", 3, &bf16_inf, 2, "'model.layers.0.input_layernorm.weight' holds +Inf at element 3 (of 32)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[64];
        CHECK(damaged_copy(dir, cases[i].src, cases[i].pad, cases[i].tensor, cases[i].el * cases[i].nb, cases[i].bytes, cases[i].nb) == 0);
        expect_load_error(dir, cases[i].want, "/model.safetensors: tensor");
        expect_load_error(dir, ": the checkpoint is damaged; re-export it", NULL);
        rm_dir(dir);
    }
    char dir[64], path[128];
    CHECK(damaged_copy(dir, FIX "llama_bf16", 0, "model.norm.weight", 0, &f16_nan, 2) == 0);
    CHECK(retype_f16(dir) == 0);
    expect_load_error(dir, "'model.norm.weight' holds NaN at element 0 (of 32)", NULL);
    rm_dir(dir);
    char *data = NULL;
    size_t n = 0;
    xsa_error err = {0};
    // llama2.c: w2 (stacked (L, C, F) = (2, 8, 12)) with NaN in layer 1, then wcls with -Inf.
    CHECK(make_tmpdir(dir) == 0);
    size_t nf = write_llama2c(dir, "m.bin", 1, 0);
    snprintf(path, sizeof path, "%s/m.bin", dir);
    data = NULL;
    CHECK(file_read_all(path, 1 << 20, &data, &n, &err) == 0);
    if (data) {
        size_t w2 = 80 + 16 + 128 + 64 + 64 + 128 + 16 + 192;  // floats before w2
        memcpy(data + 28 + 4 * (w2 + 96 + 7), &f32_nan, 4);
        write_file(dir, "m.bin", data, n);
        expect_load_error(path, "m.bin: tensor 'w2' holds NaN at element 103 (of 192)", NULL);
        memcpy(data + 28 + 4 * (w2 + 96 + 7), "\0\0\0\0", 4);
        memcpy(data + 28 + 4 * (nf - 1), &f32_ninf, 4);
        write_file(dir, "m.bin", data, n);
        expect_load_error(path, "m.bin: tensor 'wcls' holds -Inf at element 79 (of 80)", NULL);
        memcpy(data + 28 + 4 * (nf - 1), "\0\0\0\0", 4);
        write_file(dir, "m.bin", data, n);  // the undamaged file still loads
        struct model m;
        load_ok(&m, path);
        model_free(&m);
        free(data);
    }
    rm_dir(dir);
}

// Finite extremes load unchanged: F32 3e38 and +-FLT_MAX (finite in the file, so accepted;
// whether a forward pass overflows is the backend's concern), BF16 and F16 maxima (F16 and BF16
// cannot overflow float32). The weights SHA-256 is the file's, and unaligned F32 is copied.
TEST(test_finite_extremes_load) {
    static const uint32_t f32[4] = {0x7f61b1e6u /* 3e38 */, 0x7f7fffffu, 0xff7fffffu, 0x00000001u};
    char dir[64], path[128], hex[65];
    xsa_error err = {0};
    for (int pad = 0; pad <= 1; pad++) {
        CHECK(damaged_copy(dir, FIX "llama_gqa", pad, "model.layers.2.mlp.up_proj.weight", 0, f32, sizeof f32) == 0);
        struct model m;
        load_ok(&m, dir);
        if (m.layers) {
            CHECK(memcmp(m.layers[2].w_up, f32, sizeof f32) == 0);
            CHECK(m.layers[2].w_up[0] == 3e38f);
            CHECK_EQ_INT(m.mapping != NULL, !pad);  // aligned F32 is used in place, unaligned copied
        }
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        CHECK(sha256_file_hex(path, hex, &err) == 0);
        CHECK_STR(m.weights_sha256, hex);
        model_free(&m);
        rm_dir(dir);
    }
    static const uint16_t bf16_max[2] = {0x7f7f, 0xff7f};
    CHECK(damaged_copy(dir, FIX "llama_bf16", 0, "model.embed_tokens.weight", 10 * 2, bf16_max, sizeof bf16_max) == 0);
    struct model m;
    load_ok(&m, dir);
    if (m.tok_emb) CHECK(m.tok_emb[10] == st_bf16_to_f32(0x7f7f) && m.tok_emb[11] == -m.tok_emb[10] && isfinite(m.tok_emb[10]));
    model_free(&m);
    rm_dir(dir);
    static const uint16_t f16_max[2] = {0x7bff, 0xfbff};
    CHECK(damaged_copy(dir, FIX "llama_bf16", 0, "model.norm.weight", 30 * 2, f16_max, sizeof f16_max) == 0);
    CHECK(retype_f16(dir) == 0);
    load_ok(&m, dir);
    CHECK_STR(m.dtype, "F16");
    if (m.final_norm_w) CHECK(m.final_norm_w[30] == 65504.0f && m.final_norm_w[31] == -65504.0f);
    model_free(&m);
    rm_dir(dir);
}

// config.json keys given twice count with their last value, as Python's json (so transformers)
// reads them; that holds for nested objects too, and a bad last value is refused.
TEST(test_config_duplicate_keys) {
    struct hf_config hc;
    xsa_error err = {0};
    const char *dup = "{\"model_type\":\"bert\",\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,"
                      "\"num_hidden_layers\":1,\"num_hidden_layers\":3,\"num_attention_heads\":2,\"tie_word_embeddings\":false,"
                      "\"tie_word_embeddings\":true,\"rope_parameters\":{\"rope_type\":\"longrope\"},"
                      "\"rope_parameters\":{\"rope_type\":\"default\",\"rope_theta\":1.0,\"rope_theta\":500000.0},\"xsa_layers\":[0],\"xsa_layers\":[2]}";
    CHECK_MSG(hf_config_parse_text(&hc, dup, "cfg.json", &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(hc.cfg.arch, MODEL_ARCH_LLAMA);
    CHECK_EQ_INT(hc.cfg.n_layer, 3);
    CHECK_EQ_INT(hc.cfg.tied_head, 1);
    CHECK_NEAR(hc.cfg.rope_theta, 500000.0, 0);
    CHECK(!hc.cfg.xsa[0] && !hc.cfg.xsa[1] && hc.cfg.xsa[2]);
    const char *bad_last = "{\"model_type\":\"llama\",\"vocab_size\":10,\"hidden_size\":8,\"intermediate_size\":8,"
                           "\"num_hidden_layers\":1,\"num_attention_heads\":2,\"hidden_act\":\"silu\",\"hidden_act\":\"gelu\"}";
    xsa_error_clear(&err);
    CHECK_EQ_INT(hf_config_parse_text(&hc, bad_last, "cfg.json", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "hidden_act \"gelu\"") != NULL, "%s", err.msg);
}

// Fused projections split at load: phi3's qkv_proj (q | k | v rows) and gate_up_proj, and
// gpt_neox's per-head query_key_value, land in the rows transformers' forward reads them from
// (weights_sample from tools/fixtures/make_model_fixtures.py), and the flags follow each family.
TEST(test_fused_projections_split) {
    struct model m;
    load_ok(&m, FIX "phi3_sharded_bin");
    cJSON *ref = read_json(FIX "phi3_sharded_bin/reference.json");
    const struct model_config *c = &m.cfg;
    CHECK_STR(model_family(c), "phi3");
    CHECK_EQ_INT(c->fused, MODEL_FUSED_QKV | MODEL_FUSED_GATE_UP);
    CHECK_EQ_INT(model_rope_dims(c), 4);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer0_wk_row1", m.layers[0].wk + 32);
    check_sample(ref, "layer0_wv_row2", m.layers[0].wv + 2 * 32);
    check_sample(ref, "layer0_w_gate_row3", m.layers[0].w_gate + 3 * 32);
    check_sample(ref, "layer0_w_up_row3", m.layers[0].w_up + 3 * 32);
    check_sample(ref, "lm_head_row7", m.lm_head + 7 * 32);
    cJSON_Delete(ref);
    model_free(&m);
    load_ok(&m, FIX "pythia");
    ref = read_json(FIX "pythia/reference.json");
    CHECK_STR(model_family(c), "gpt_neox");
    CHECK(c->mlp_plain && c->parallel_residual && !model_mlp_gated(c) && c->gelu_exact);
    CHECK_EQ_INT(c->fused, MODEL_FUSED_QKV_HEADS);
    CHECK_EQ_INT(model_rope_dims(c), 4);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    CHECK(m.layers[0].attn_norm_b && m.layers[0].bq && m.layers[0].bo && m.layers[0].b_up && !m.layers[0].w_gate);
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer0_wk_row1", m.layers[0].wk + 32);
    check_sample(ref, "layer0_wv_row2", m.layers[0].wv + 2 * 32);
    check_sample(ref, "layer0_wq_row_h1", m.layers[0].wq + 16 * 32);  // head 1 starts at row hd of wq
    check_sample(ref, "lm_head_row7", m.lm_head + 7 * 32);
    cJSON_Delete(ref);
    model_free(&m);
}

// phi: one input_layernorm per layer (the MLP's norm is the same arrays, not a second copy: n_params
// as transformers counts them), the head's bias, per-head q/k LayerNorms with biases; opt: the
// positions past OPTLearnedPositionalEmbedding's 2 offset rows, project_in / project_out, no final
// norm in a post-LN model, no biases and weightless LayerNorms (enable_bias, elementwise_affine false).
TEST(test_phi_opt_layout) {
    struct model m;
    load_ok(&m, FIX "phi");
    cJSON *ref = read_json(FIX "phi/reference.json");
    const struct model_config *c = &m.cfg;
    CHECK_STR(model_family(c), "phi");
    CHECK(c->norm_shared && c->parallel_residual && c->mlp_plain && !c->gelu_exact && !c->qk_norm && !c->tied_head);
    CHECK_EQ_INT(model_rope_dims(c), 6);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    for (int l = 0; l < c->n_layer; l++)
        CHECK(m.layers[l].mlp_norm_w == m.layers[l].attn_norm_w && m.layers[l].mlp_norm_b == m.layers[l].attn_norm_b);
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer0_wk_row1", m.layers[0].wk + 64);
    check_sample(ref, "layer0_bo", m.layers[0].bo);
    check_sample(ref, "layer0_w_up_row3", m.layers[0].w_up + 3 * 64);
    check_sample(ref, "final_norm", m.final_norm_w);
    check_sample(ref, "lm_head_bias", m.lm_head_b);
    check_sample(ref, "lm_head_row7", m.lm_head + 7 * 64);
    cJSON_Delete(ref);
    model_free(&m);
    load_ok(&m, FIX "phi_qk_layernorm");
    ref = read_json(FIX "phi_qk_layernorm/reference.json");
    CHECK(c->qk_norm == QK_NORM_HEAD && m.layers[1].q_norm_b && m.layers[1].k_norm_b && c->tied_head && m.lm_head == m.tok_emb);
    CHECK_EQ_INT(model_rope_dims(c), 8);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    check_sample(ref, "lm_head_bias", m.lm_head_b);
    cJSON_Delete(ref);
    model_free(&m);
    load_ok(&m, FIX "opt");
    ref = read_json(FIX "opt/reference.json");
    CHECK_STR(model_family(c), "opt");
    CHECK(c->learned_pos && c->mlp_relu && !c->post_ln && !c->no_final_norm && !c->embed_dim && c->rope == ROPE_NONE);
    CHECK(m.final_norm_w && m.final_norm_b && m.layers[0].bq && m.layers[0].b_up && m.lm_head == m.tok_emb);
    CHECK_EQ_INT(model_position_limit(c), 64);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    check_sample(ref, "pos_emb_row5", m.pos_emb + 5 * 32);
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer0_w_up_row3", m.layers[0].w_up + 3 * 32);
    cJSON_Delete(ref);
    model_free(&m);
    load_ok(&m, FIX "opt_350m_layout");
    ref = read_json(FIX "opt_350m_layout/reference.json");
    CHECK(c->post_ln && c->no_final_norm && !m.final_norm_w && c->embed_dim == 16);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    check_sample(ref, "tok_emb", m.tok_emb);
    check_sample(ref, "proj_in_row1", m.proj_in + 16);
    check_sample(ref, "proj_out_row2", m.proj_out + 2 * 32);
    cJSON_Delete(ref);
    model_free(&m);
    load_ok(&m, FIX "opt_plain");
    ref = read_json(FIX "opt_plain/reference.json");
    CHECK(c->norm_unit && c->no_final_norm && !c->post_ln && !m.final_norm_w && !m.layers[0].bq && !m.layers[0].bo &&
          !m.layers[0].b_up && !c->tied_head);
    CHECK(m.layers[0].attn_norm_w && m.layers[0].attn_norm_w[3] == 1.0f && m.layers[0].mlp_norm_b[3] == 0.0f);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    check_sample(ref, "lm_head_row7", m.lm_head + 7 * 32);
    cJSON_Delete(ref);
    model_free(&m);
}

// olmo's LayerNorms have no tensors: their gains are ones and biases zeros, made at load and not
// counted as parameters (n_params as transformers counts them); attention_bias's o bias is read.
TEST(test_olmo_weightless_layernorm) {
    struct model m;
    load_ok(&m, FIX "olmo");
    cJSON *ref = read_json(FIX "olmo/reference.json");
    const struct model_config *c = &m.cfg;
    CHECK_STR(model_family(c), "olmo");
    CHECK(c->norm_unit && c->clip_qkv == 0 && c->tied_head && m.lm_head == m.tok_emb);
    CHECK_EQ_INT(m.n_params, ref_n_params(ref));
    for (int l = 0; l < c->n_layer; l++) {
        const struct layer_weights *w = &m.layers[l];
        CHECK(w->attn_norm_w && w->attn_norm_b && w->mlp_norm_w && w->mlp_norm_b && !w->post_attn_norm_w);
        for (int i = 0; w->attn_norm_w && w->mlp_norm_b && i < c->d_model; i++)
            CHECK(w->attn_norm_w[i] == 1.0f && w->attn_norm_b[i] == 0.0f && w->mlp_norm_w[i] == 1.0f && w->mlp_norm_b[i] == 0.0f);
    }
    CHECK(m.final_norm_w && m.final_norm_b && m.final_norm_w[31] == 1.0f && m.final_norm_b[31] == 0.0f);
    check_sample(ref, "layer0_wq", m.layers[0].wq);
    check_sample(ref, "layer0_wk_row1", m.layers[0].wk + 32);
    check_sample(ref, "layer0_bo", m.layers[0].bo);
    cJSON_Delete(ref);
    model_free(&m);
    load_ok(&m, FIX "olmo_clip");
    CHECK_NEAR(m.cfg.clip_qkv, 0.5, 0);
    CHECK(!m.cfg.tied_head && !m.layers[0].bq && !m.layers[0].bo);
    model_free(&m);
}

// Buffers a Pythia checkpoint carries besides its weights (the causal mask attention.bias, BOOL;
// attention.masked_bias; rotary_emb.inv_freq) are skipped: the pythia fixture with them added
// loads to the same weights. Real query_key_value / dense biases are not mistaken for them.
TEST(test_neox_buffers_ignored) {
    char *text = NULL;
    size_t len = 0;
    xsa_error err = {0};
    CHECK(file_read_all(FIX "pythia/model.safetensors", 8u << 20, &text, &len, &err) == 0);
    if (!text) return;
    uint64_t hl = 0;
    for (int i = 0; i < 8; i++) hl |= (uint64_t)(unsigned char)text[i] << (8 * i);
    char *hj = strndup(text + 8, (size_t)hl);
    cJSON *h = cJSON_Parse(hj);
    size_t D = len - 8 - (size_t)hl;  // data bytes; the buffers go after them
    static const char *buf[] = {"attention.bias", "attention.masked_bias", "attention.rotary_emb.inv_freq"};
    static const char *dt[] = {"BOOL", "F32", "F32"};
    static const int nbytes[] = {16, 4, 8};
    size_t off = D;
    for (int l = 0; l < 2; l++)
        for (int b = 0; b < 3; b++) {
            char name[96], spec[160];
            snprintf(name, sizeof name, "gpt_neox.layers.%d.%s", l, buf[b]);
            snprintf(spec, sizeof spec, "{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}", dt[b],
                     b == 0 ? 16 : nbytes[b] / 4, off, off + (size_t)nbytes[b]);
            cJSON_AddItemToObject(h, name, cJSON_Parse(spec));
            off += (size_t)nbytes[b];
        }
    char *nh = cJSON_PrintUnformatted(h);
    size_t nl = (strlen(nh) + 7) / 8 * 8;  // padded with spaces: the data stays 8-byte aligned
    size_t total = 8 + nl + off;
    unsigned char *out = calloc(1, total);
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)((uint64_t)nl >> (8 * i));
    memset(out + 8, ' ', nl);
    memcpy(out + 8, nh, strlen(nh));
    memcpy(out + 8 + nl, text + 8 + hl, D);  // the extra bytes stay zero
    char dir[64];
    CHECK(make_tmpdir(dir) == 0);
    char *cfg = NULL;
    size_t cl = 0;
    CHECK(file_read_all(FIX "pythia/config.json", 1u << 20, &cfg, &cl, &err) == 0);
    CHECK(write_file(dir, "config.json", cfg, cl) == 0);
    CHECK(write_file(dir, "model.safetensors", out, total) == 0);
    struct model a, b;
    load_ok(&a, FIX "pythia");
    load_ok(&b, dir);
    CHECK_EQ_INT(a.n_params, b.n_params);
    CHECK(a.layers && b.layers && !memcmp(a.layers[1].bq, b.layers[1].bq, 16 * sizeof(float)) &&
          !memcmp(a.layers[1].bo, b.layers[1].bo, 32 * sizeof(float)) && !memcmp(a.lm_head, b.lm_head, 32 * sizeof(float)));
    model_free(&a);
    model_free(&b);
    rm_dir(dir);
    free(cfg), free(out), free(nh), free(hj), free(text);
    cJSON_Delete(h);
}

// Each family's config.json keys onto the feature flags, as its transformers class reads them.
TEST(test_family_configs) {
    struct hf_config hc;
    xsa_error err = {0};
#define BASE "\"vocab_size\":10,\"hidden_size\":16,\"intermediate_size\":8,\"num_hidden_layers\":3,\"num_attention_heads\":2"
    // qwen2: q/k/v biases always, no o bias; windows from max_window_layers when layer_types is absent.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"qwen2\"," BASE ",\"use_sliding_window\":true,\"sliding_window\":5,"
                               "\"max_window_layers\":1}", "c.json", &err) == 0);
    CHECK(hc.ws.qkv_bias && !hc.ws.o_bias && hc.cfg.sliding_window == 5 && !hc.cfg.swa[0] && hc.cfg.swa[1] && hc.cfg.swa[2]);
    // qwen2 without use_sliding_window: sliding_window is ignored, as Qwen2Config sets it to None.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"qwen2\"," BASE ",\"sliding_window\":5}", "c.json", &err) == 0);
    CHECK(hc.cfg.sliding_window == 0 && !hc.cfg.swa[2]);
    // qwen3: attention_bias gives all four biases; per-head q/k norms.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"qwen3\"," BASE ",\"attention_bias\":true,\"mlp_bias\":true}", "c.json", &err) == 0);
    CHECK(hc.ws.qkv_bias && hc.ws.o_bias && !hc.ws.mlp_bias && hc.cfg.qk_norm == QK_NORM_HEAD);
    CHECK_EQ_INT(hc.cfg.head_dim, 128);  // Qwen3Config's default, not hidden_size / heads (8 here)
    // mistral: sliding_window on every layer; attention_bias is not a mistral key.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"mistral\"," BASE ",\"sliding_window\":4,\"attention_bias\":true}", "c.json", &err) == 0);
    CHECK(hc.cfg.sliding_window == 4 && hc.cfg.swa[0] && hc.cfg.swa[2] && !hc.ws.qkv_bias);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"mistral\"," BASE ",\"sliding_window\":null}", "c.json", &err) == 0);
    CHECK(hc.cfg.sliding_window == 0 && !hc.cfg.swa[0]);
    // olmo: LayerNorm without weight or bias at OlmoLayerNorm's fixed eps 1e-5 (no eps key read);
    // attention_bias gives q/k/v/o biases; clip_qkv; no mlp_bias key.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"olmo\"," BASE ",\"rms_norm_eps\":0.1,\"attention_bias\":true,"
                               "\"mlp_bias\":true,\"clip_qkv\":8.0}", "c.json", &err) == 0);
    CHECK(hc.ws.norm_unit && hc.ws.norm_bias && hc.cfg.norm_unit && !hc.ws.post_norm && !hc.ws.no_pre_norm && !hc.cfg.qk_norm);
    CHECK(hc.ws.qkv_bias && hc.ws.o_bias && !hc.ws.mlp_bias && !hc.cfg.tied_head);
    CHECK_NEAR(hc.cfg.norm_eps, 1e-5, 1e-12);
    CHECK_NEAR(hc.cfg.clip_qkv, 8.0, 0);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"olmo\"," BASE ",\"clip_qkv\":null}", "c.json", &err) == 0);
    CHECK(hc.cfg.clip_qkv == 0 && !hc.ws.qkv_bias);
    CHECK_EQ_INT(hc.cfg.max_seq_len, 2048);  // OlmoConfig's max_position_embeddings
    static const char *const bad_clip[] = {"-0.5", "0", "\"8\"", "true"};
    for (int i = 0; i < 4; i++) {
        char t[256];
        snprintf(t, sizeof t, "{\"model_type\":\"olmo\"," BASE ",\"clip_qkv\":%s}", bad_clip[i]);
        CHECK_EQ_INT(hf_config_parse_text(&hc, t, "c.json", &err), XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, "\"clip_qkv\" must be a positive number") != NULL, "%s", err.msg);
        xsa_error_clear(&err);
    }
    // clip_qkv is olmo's key: llama's class has none (its forward never clamps).
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"llama\"," BASE ",\"clip_qkv\":0.5}", "c.json", &err) == 0);
    CHECK(hc.cfg.clip_qkv == 0 && !hc.cfg.norm_unit);
    // olmo2: norms after, not before; full-width q/k norms; eps default 1e-5.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"olmo2\"," BASE "}", "c.json", &err) == 0);
    CHECK(hc.ws.post_norm && hc.ws.no_pre_norm && hc.cfg.qk_norm == QK_NORM_FULL);
    CHECK_NEAR(hc.cfg.norm_eps, 1e-5, 1e-12);
    // gpt_neox: the older key names (rotary_pct, rotary_emb_base), the defaults of GPTNeoXConfig.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"gpt_neox\"," BASE ",\"rotary_pct\":0.5,\"rotary_emb_base\":500}", "c.json", &err) == 0);
    CHECK(hc.cfg.parallel_residual && hc.cfg.mlp_plain && hc.ws.norm_bias && hc.ws.qkv_bias && hc.ws.mlp_bias);
    CHECK_EQ_INT(hc.cfg.rope_dims, 4);
    CHECK_NEAR(hc.cfg.rope_theta, 500.0, 0);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"gpt_neox\"," BASE ",\"rotary_emb_base\":500,"
                               "\"rope_parameters\":{\"rope_theta\":700,\"partial_rotary_factor\":1.0}}", "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_theta, 700.0, 0);
    CHECK_EQ_INT(hc.cfg.rope_dims, 0);  // every dim rotates
    // The rotated dims as transformers counts them, int(head_dim * factor) in double: 80 x 0.35
    // is 28 (27 in float32); 10 x 0.7 is 7 (6 in float32), odd, refused.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"gpt_neox\",\"vocab_size\":16,\"hidden_size\":160,"
                               "\"num_attention_heads\":2,\"num_hidden_layers\":1,\"intermediate_size\":8,"
                               "\"rotary_pct\":0.35}", "c.json", &err) == 0);
    CHECK_EQ_INT(hc.cfg.rope_dims, 28);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"phi3\",\"vocab_size\":16,\"hidden_size\":40,"
                               "\"num_attention_heads\":4,\"num_hidden_layers\":1,\"intermediate_size\":8,"
                               "\"partial_rotary_factor\":0.7}", "c.json", &err) == XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "gives 7 rotated dims (int(10 x 0.7))") != NULL, "%s", err.msg);
    // yarn: the attention factor from factor alone, or from mscale / mscale_all_dim.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"llama\"," BASE ",\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":8,"
                               "\"original_max_position_embeddings\":64}}", "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_attn_factor, 0.1 * log(8.0) + 1, 1e-6);
    CHECK(hc.cfg.rope_beta_fast == 32 && hc.cfg.rope_beta_slow == 1 && hc.cfg.rope_truncate);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"llama\"," BASE ",\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":8,"
                               "\"original_max_position_embeddings\":64,\"mscale\":2,\"mscale_all_dim\":1}}", "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_attn_factor, (0.2 * log(8.0) + 1) / (0.1 * log(8.0) + 1), 1e-6);
    // Where a config leaves things out or says them twice, the values transformers 5.25 takes
    // (its config classes and standardize_rope_params; each case checked against a model's
    // log-probabilities): original_max_position_embeddings from the top level over the rope
    // object's, else max_position_embeddings; the family's own max_position_embeddings default;
    // mistral's and qwen's sliding_window 4096 and qwen's max_window_layers 28 when absent;
    // gpt_neox's rope from rotary_emb_base / rotary_pct only.
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"llama\"," BASE ",\"max_position_embeddings\":256,"
                               "\"original_max_position_embeddings\":32,\"rope_scaling\":{\"rope_type\":\"yarn\","
                               "\"factor\":4,\"original_max_position_embeddings\":128}}", "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_orig_ctx, 32, 0);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"llama\"," BASE ",\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":8}}",
                               "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_orig_ctx, 2048, 0);  // LlamaConfig's max_position_embeddings
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"llama\"," BASE ",\"max_position_embeddings\":512,\"rope_scaling\":{"
                               "\"rope_type\":\"llama3\",\"factor\":8,\"low_freq_factor\":1,\"high_freq_factor\":4}}",
                               "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_orig_ctx, 512, 0);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"qwen2\"," BASE ",\"rope_scaling\":{\"rope_type\":\"yarn\","
                               "\"factor\":null,\"original_max_position_embeddings\":64}}", "c.json", &err) == 0);
    CHECK(hc.cfg.max_seq_len == 32768 && hc.cfg.rope_factor == 512);  // Qwen2Config's 32768 / 64
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"mistral\"," BASE "}", "c.json", &err) == 0);
    CHECK(hc.cfg.max_seq_len == 131072 && hc.cfg.sliding_window == 4096 && hc.cfg.swa[0] && hc.cfg.swa[2]);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"phi3\"," BASE "}", "c.json", &err) == 0);
    CHECK(hc.cfg.max_seq_len == 4096 && hc.cfg.sliding_window == 0);
    xsa_error_clear(&err);
    CHECK_EQ_INT(hf_config_parse_text(&hc, "{\"model_type\":\"phi3\"," BASE ",\"rope_scaling\":{\"rope_type\":\"yarn\","
                                      "\"factor\":2}}", "c.json", &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "phi3 with scaled RoPE is not supported") != NULL);
    xsa_error_clear(&err);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"qwen2\",\"vocab_size\":10,\"hidden_size\":16,\"intermediate_size\":8,"
                               "\"num_hidden_layers\":30,\"num_attention_heads\":2,\"use_sliding_window\":true}", "c.json", &err) == 0);
    CHECK(hc.cfg.sliding_window == 4096 && !hc.cfg.swa[27] && hc.cfg.swa[28] && hc.cfg.swa[29]);
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"gpt_neox\"," BASE ",\"rope_theta\":777,\"partial_rotary_factor\":0.5}",
                               "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_theta, 10000.0, 0);
    CHECK_EQ_INT(hc.cfg.rope_dims, 2);  // rotary_pct 0.25 of head_dim 8
    CHECK(hf_config_parse_text(&hc, "{\"model_type\":\"gpt_neox\"," BASE ",\"rope_theta\":777,\"rotary_emb_base\":555}",
                               "c.json", &err) == 0);
    CHECK_NEAR(hc.cfg.rope_theta, 555.0, 0);
#undef BASE
}

RUN_TESTS(T(test_gpt2_tiny), T(test_gpt2_sharded_equals_unsharded), T(test_llama_gqa),
          T(test_llama_bf16_converted), T(test_stories260K), T(test_llama2c_layout), T(test_xsa_spec),
          T(test_config_xsa_layers), T(test_config_refusals), T(test_fp16_bf16_conversion),
          T(test_safetensors_reader), T(test_checkpoint_errors), T(test_sharded_index_errors),
          T(test_safetensors_hostile_headers), T(test_config_larger_than_weights), T(test_first_nonfinite),
          T(test_nonfinite_weights_refused), T(test_finite_extremes_load), T(test_config_duplicate_keys),
          T(test_fused_projections_split), T(test_phi_opt_layout), T(test_olmo_weightless_layernorm), T(test_neox_buffers_ignored), T(test_family_configs))
