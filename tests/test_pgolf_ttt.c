// test_pgolf_ttt.c: test-time training against the records' own code
// (tests/fixtures/pgolf/ttt_*/ttt_reference.json, made by tools/fixtures/make_pgolf_ttt_fixture.py):
// the gradients of GPT.forward's loss (kernels/cpu/cpu_train.c) against torch autograd, and the
// TTT function's val_loss and weights after it (eval/ttt.c). ttt_0323: the 2026-03-23 record's
// banked GPT and eval_val_sliding_ttt; ttt_0408: 2026-04-08's looped GPT with two lanes and gated
// skips, its eval_val_sliding_ttt (2026-04-06's); ttt_0409: 2026-04-09's looped GPT with GPT-J
// blocks, its eval_val_ttt; ttt_0404: 2026-04-04's GPT (RECUR_LAYERS, two lanes, value
// embedding, skips cut past skip_weights' rows), its eval_val_ttt; lanes_0410
// (ttt_lora_reference.json): 2026-04-10's looped GPT with side-by-side lanes, its LoRA adapters'
// gradients (GPT.forward_ttt), eval_val_ttt_lora (eval/ttt_lora.c) and 2026-04-14's
// eval_val_ttt_phased (eval/ttt_global.c between LoRA phases).
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "eval/token_shard.h"
#include "eval/ttt.h"
#include "eval/ttt_lora.h"
#include "kernels/cpu/cpu_train.h"
#include "model/model.h"
#include "tests/check.h"
#include "tests/fixture_io.h"

#define DIR "tests/fixtures/pgolf/ttt_0323/"
#define DIR_OPTIONS "tests/fixtures/pgolf/options_0323/"  // VALUE_RESIDUAL, GATED_ATTENTION, DTG_ENABLED
#define DIR_0331 "tests/fixtures/pgolf/ttt_0331/"  // recur_0331's weights, its own xsa_eval.json
#define DIR_0404 "tests/fixtures/pgolf/ttt_0404/"
#define DIR_0408 "tests/fixtures/pgolf/ttt_0408/"
#define DIR_0409 "tests/fixtures/pgolf/ttt_0409/"
#define DIR_0410 "tests/fixtures/pgolf/lanes_0410/"
#define DIR_0416 "tests/fixtures/pgolf/gates_0416/"
#define DIR_0419 "tests/fixtures/pgolf/gates_0419/"
#define DIR_0427 "tests/fixtures/pgolf/gates_0427/"
#define DIR_0423 "tests/fixtures/pgolf/gates_0423/"  // gates_0427's weights, its own xsa_eval.json
#define LORA_REF DIR_0410 "ttt_lora_reference.json"
#define SHARD "tests/fixtures/ppl/docs_sp1024.bin"

static const cJSON *param_ref(const cJSON *params, const char *name) { return cJSON_GetObjectItemCaseSensitive(params, name); }

// dir's final_model.pt into m and the fixture shard's tokens into tok. gates_0423 and ttt_0331
// hold no weights: they are gates_0427's and recur_0331's under their own architecture files
// (SMEAR_GATE_BOS_FIX 0; EVAL_SEQ_LEN 1024, as the reference's windows run no NTK).
static void load_model_tokens(const char *dir, struct model *m, struct ivec *tok) {
    xsa_error err = {0};
    char path[256], arch[256];
    const char *weights = !strcmp(dir, DIR_0423) ? DIR_0427 : !strcmp(dir, DIR_0331) ? "tests/fixtures/pgolf/recur_0331/" : NULL;
    int other = weights != NULL;
    snprintf(path, sizeof path, "%sfinal_model.pt", other ? weights : dir);
    snprintf(arch, sizeof arch, "%sxsa_eval.json", dir);
    if (other) model_set_arch_file(arch);
    CHECK_MSG(model_load(m, path, &err) == 0, "%s", err.msg);
    model_set_arch_file(NULL);
    *tok = (struct ivec){0};
    CHECK(token_shard_read(SHARD, m->cfg.vocab_size, tok, &err) == 0);
}

// max over the sampled values of |ours - ref| / (norm of ref / sqrt(n) + floor): errors relative
// to the tensor's typical size.
static double summary_err(const float *w, long n, const cJSON *ref, double *norm_err) {
    const cJSON *idx = cJSON_GetObjectItem(ref, "idx"), *val = cJSON_GetObjectItem(ref, "val");
    double rn = cJSON_GetObjectItem(ref, "norm")->valuedouble, typ = rn / sqrt((double)n) + 1e-12, worst = 0, ss = 0;
    for (long i = 0; i < n; i++) ss += (double)w[i] * w[i];
    *norm_err = fabs(sqrt(ss) - rn) / (rn + 1e-12);
    for (int k = 0; k < cJSON_GetArraySize(idx); k++) {
        long i = (long)cJSON_GetArrayItem(idx, k)->valuedouble;
        double e = fabs(w[i] - cJSON_GetArrayItem(val, k)->valuedouble) / typ;
        if (e > worst) worst = e;
    }
    return worst;
}

// Each of p[0..np)'s gradients against its reference summary in params: within 1e-4 of the
// tensor's typical size, its norm within 1e-5 relative.
static void check_grads(const cJSON *params, const struct train_param *p, int np, const char *label) {
    for (int i = 0; i < np; i++) {
        const cJSON *r = param_ref(params, p[i].name);
        CHECK_MSG(r != NULL, "%s: %s has no reference", label, p[i].name);
        if (!r) continue;
        CHECK_EQ_INT(p[i].n, cJSON_GetObjectItem(r, "n")->valueint);
        double ne, e = summary_err(p[i].grad, p[i].n, r, &ne);
        if (getenv("TTT_VERBOSE")) fprintf(stderr, "%s %-28s %.3g %.3g\n", label, p[i].name, e, ne);
        CHECK_MSG(e < 1e-4 && ne < 1e-5, "%s: %s: gradient off by %.3g (typical size), norm by %.3g", label, p[i].name, e, ne);
    }
}

// The reference's gradients under `key` ("grad": 4 sequences of 32; "grad_long": 2 of 320, past
// one block of the trainer's attention) against cpu_trainer_grad's, with CastedLinear's QAT as the
// reference had it ("qat": 2026-03-23's, on in its run's TTT).
static void check_gradients_in(const char *dir, const char *ref_name, const char *key) {
    char path[256];
    snprintf(path, sizeof path, "%s%s", dir, ref_name);
    cJSON *ref = fixture_read_json(path);
    const cJSON *g = cJSON_GetObjectItem(ref, key), *params = cJSON_GetObjectItem(g, "params");
    int n = cJSON_GetObjectItem(g, "seqs")->valueint, S = cJSON_GetObjectItem(g, "seq_len")->valueint;
    xsa_error err = {0};
    struct model m;
    struct ivec tok;
    load_model_tokens(dir, &m, &tok);
    struct cpu_trainer *t = cpu_trainer_open(&m, S, 2, &err);
    CHECK_MSG(t != NULL, "%s", err.msg);
    if (!t) return;
    cpu_trainer_qat(t, cJSON_IsTrue(cJSON_GetObjectItem(ref, "qat")));
    double loss = cpu_trainer_grad(t, tok.v, n);
    CHECK_NEAR(loss, cJSON_GetObjectItem(g, "loss")->valuedouble, 2e-6);
    struct train_param *p;
    int np = cpu_trainer_params(t, &p);
    CHECK_EQ_INT(np, cJSON_GetArraySize(params));
    char label[300];
    snprintf(label, sizeof label, "%s%s", dir, key);
    check_grads(params, p, np, label);
    cpu_trainer_close(t);
    free(tok.v);
    model_free(&m);
    cJSON_Delete(ref);
}

static void check_gradients(const char *dir, const char *key) { check_gradients_in(dir, "ttt_reference.json", key); }

TEST(gradients_match_autograd) { check_gradients(DIR, "grad"); }
TEST(gradients_past_one_attention_block) { check_gradients(DIR, "grad_long"); }
// The options the 2026-03-23 run left off: layer 0's v in the later layers' (vr_lambda), the
// attention gates with a bias, DTG's blend of each block's output with its input.
TEST(gradients_of_the_2026_03_23_options) {
    check_gradients(DIR_OPTIONS, "grad");
    check_gradients(DIR_OPTIONS, "grad_long");
}
// Blocks run by several layers (their gradients summed), gated skips, two lanes, GPT-J blocks.
TEST(gradients_of_the_looped_gpts) {
    // (2026-03-31: its blocks over the banks of the layers they repeat, repeat_mlp's own MLP,
    // block 0 without attention, the lanes over sublayers in sequence)
    const char *dirs[] = {DIR_0408, DIR_0409, DIR_0404, DIR_0331};
    for (int i = 0; i < 4; i++) {
        check_gradients(dirs[i], "grad");
        check_gradients(dirs[i], "grad_long");
    }
    check_gradients_in(DIR_0410, "ttt_lora_reference.json", "grad");  // side-by-side lanes (parallel_*_lambdas)
    check_gradients_in(DIR_0410, "ttt_lora_reference.json", "grad_long");
    check_gradients_in(DIR_0416, "ttt_lora_reference.json", "grad");  // 2026-04-16's SmearGate and output gates
    check_gradients_in(DIR_0416, "ttt_lora_reference.json", "grad_long");
    check_gradients_in(DIR_0419, "ttt_lora_reference.json", "grad");  // 2026-04-19's dense attention gates
    check_gradients_in(DIR_0419, "ttt_lora_reference.json", "grad_long");
    check_gradients_in(DIR_0427, "ttt_lora_reference.json", "grad");  // 2026-04-23's sparse gates, 2026-04-27's BOS-fixed SmearGate
    check_gradients_in(DIR_0427, "ttt_lora_reference.json", "grad_long");
    check_gradients_in(DIR_0423, "ttt_lora_reference.json", "grad");  // 2026-04-23's SmearGate, into a BOS too
    check_gradients_in(DIR_0423, "ttt_lora_reference.json", "grad_long");
}

// The fixture's model and the shard as one stream (free with unload).
static void load_fixture(const char *dir, struct model *m, struct ppl_docs *d, struct ivec *tok) {
    xsa_error err = {0};
    load_model_tokens(dir, m, tok);
    *d = (struct ppl_docs){.stream = 1};
    CHECK(ppl_docs_add(d, tok->v, tok->n, &err) == 0);
}

static void unload(struct model *m, struct ppl_docs *d, struct ivec *tok) {
    ppl_docs_free(d);
    free(tok->v);
    model_free(m);
}

// The reference's settings (its "settings" object) as --ttt-set words, over m's defaults.
static void case_settings(const cJSON *c, const struct model *m, struct ttt_settings *s) {
    ttt_settings_of_model(s, m);
    const cJSON *e;
    char spec[1024] = "";
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "settings")) {
        if (cJSON_IsString(e)) snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s=%s ", e->string, e->valuestring);
        else snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s=%.17g ", e->string, e->valuedouble);
    }
    xsa_error err = {0};
    CHECK_MSG(ttt_settings_parse(s, spec, &err) == 0, "%s", err.msg);
}

// The case's scores against its "val_loss" (the record's float32 run), within tol, and where the
// case has it its "val_loss_f64" (the same run in float64), within tol_f64.
static void check_val_loss(const char *label, const cJSON *c, const struct ppl_scores *sc, double tol, double tol_f64) {
    double nll = 0;
    for (size_t i = 0; i < sc->n; i++) nll += sc->nll[i];
    double got = nll / (double)sc->n, want = cJSON_GetObjectItem(c, "val_loss")->valuedouble;
    const cJSON *f64 = cJSON_GetObjectItem(c, "val_loss_f64");
    if (getenv("TTT_VERBOSE"))
        fprintf(stderr, "%s: %.9f vs %.9f (%.3g)%s%.3g\n", label, got, want, got - want, f64 ? ", float64 " : "",
                f64 ? got - f64->valuedouble : 0.0);
    CHECK_MSG(fabs(got - want) < tol, "%s: val_loss %.9f, the record's %.9f", label, got, want);
    if (f64) CHECK_MSG(fabs(got - f64->valuedouble) < tol_f64, "%s: val_loss %.9f, the record's in float64 %.9f", label, got, f64->valuedouble);
}

// Every case of dir's reference ref_name: the record's val_loss within tol, and each parameter
// after it (where the case has them: LoRA TTT changes none), with the recipe the model gets and
// its defaults (LATE_QAT as the reference's "qat": its record's run at TTT time).
static void check_cases_in(const char *dir, const char *ref_name, int recipe, double tol, double tol_f64) {
    char path[256];
    snprintf(path, sizeof path, "%s%s", dir, ref_name);
    cJSON *ref = fixture_read_json(path);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ref, "cases")) {
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        xsa_error err = {0};
        struct model m;
        struct ppl_docs d;
        struct ivec tok;
        load_fixture(dir, &m, &d, &tok);
        CHECK_EQ_INT(ttt_recipe_of(&m), recipe);
        struct ttt_settings s;
        case_settings(c, &m, &s);
        CHECK_EQ_INT(s.qat, cJSON_IsTrue(cJSON_GetObjectItem(ref, "qat")));
        struct ppl_scores sc;
        const cJSON *stride = cJSON_GetObjectItem(c, "stride"), *params = cJSON_GetObjectItem(c, "params");
        int rc = ttt_score(&m, 2, &d, cJSON_GetObjectItem(c, "seq_len")->valueint, stride ? stride->valueint : 1, &s, 0, &sc,
                           &err);
        CHECK_MSG(rc == 0, "%s%s: %s", dir, name, err.msg);
        if (!rc) {
            char label[300];
            snprintf(label, sizeof label, "%s%s", dir, name);
            check_val_loss(label, c, &sc, tol, tol_f64);
            ppl_scores_free(&sc);
        }
        if (!rc && params) {
            // the weights after it: a cpu_trainer names them as the reference does
            struct cpu_trainer *t = cpu_trainer_open(&m, 8, 1, &err);
            struct train_param *p;
            int np = cpu_trainer_params(t, &p);
            CHECK_EQ_INT(np, cJSON_GetArraySize(params));
            double worst = 0;
            for (int i = 0; i < np; i++) {
                const cJSON *r = param_ref(params, p[i].name);
                CHECK_MSG(r != NULL, "%s has no reference", p[i].name);
                if (!r) continue;
                double ne, e = summary_err(p[i].w, p[i].n, r, &ne);
                if (e > worst) worst = e;
                CHECK_MSG(e < 1e-5 && ne < 1e-6, "%s%s: %s after TTT off by %.3g (typical size), norm by %.3g", dir, name, p[i].name, e,
                          ne);
            }
            if (getenv("TTT_VERBOSE")) fprintf(stderr, "%s%s: weights within %.3g\n", dir, name, worst);
            cpu_trainer_close(t);
        }
        unload(&m, &d, &tok);
    }
    cJSON_Delete(ref);
}

static void check_cases(const char *dir, int recipe) { check_cases_in(dir, "ttt_reference.json", recipe, 1e-6, 0); }

TEST(ttt_matches_the_records_eval_val_sliding_ttt) {
    check_cases(DIR, TTT_2026_03);
    check_cases(DIR_0331, TTT_2026_03);  // (2026-03-31's, the same function, off in its record's run)
    check_cases(DIR_OPTIONS, TTT_2026_03);
}
TEST(ttt_matches_the_2026_04_records) {
    check_cases(DIR_0408, TTT_2026_04);  // eval_val_sliding_ttt (2026-04-06/08)
    check_cases(DIR_0409, TTT_2026_04);  // eval_val_ttt (2026-04-09)
    check_cases(DIR_0404, TTT_2026_04_04);  // eval_val_ttt (2026-04-04)
}

// TTT_FREEZE_BLOCKS freezes the Blocks' own tensors. The 2026-03 records' GPTs hold their
// matrices in banks, outside the Blocks, and train them whatever TTT_FREEZE_BLOCKS says: so does
// an int6 dict of theirs, which names them blocks.N.* (xsa_all_0325_quant: 2026-03-25's int6).
TEST(ttt_freeze_spares_the_2026_03_records_matrices) {
    xsa_error err = {0};
    struct model m;
    CHECK_MSG(model_load(&m, "tests/fixtures/pgolf/xsa_all_0325_quant/final_model.int6.ptz", &err) == 0, "%s", err.msg);
    struct ivec tok = {0};
    CHECK(token_shard_read(SHARD, m.cfg.vocab_size, &tok, &err) == 0);
    struct ppl_docs d = {.stream = 1};
    CHECK(ppl_docs_add(&d, tok.v, tok.n, &err) == 0);
    CHECK_EQ_INT(ttt_recipe_of(&m), TTT_2026_03);
    CHECK(m.pgolf_banks == 0);
    int C = m.cfg.d_model;
    long nu = (long)m.cfg.d_ff * C;
    float *up0 = xsa_malloc((size_t)nu * sizeof *up0), *ms0 = xsa_malloc((size_t)C * sizeof *ms0), *ms1 = xsa_malloc((size_t)C * sizeof *ms1);
    memcpy(up0, m.layers[0].w_up, (size_t)nu * sizeof *up0);
    memcpy(ms0, m.layers[0].mlp_scale, (size_t)C * sizeof *ms0);
    memcpy(ms1, m.layers[1].mlp_scale, (size_t)C * sizeof *ms1);
    struct ttt_settings s;
    ttt_settings_init(&s, TTT_2026_03);
    CHECK(ttt_settings_parse(&s, "TTT_FREEZE_BLOCKS=1 TTT_EPOCHS=1 TTT_CHUNK_TOKENS=256 TTT_LR=0.01", &err) == 0);
    struct ppl_scores sc;
    CHECK_MSG(ttt_score(&m, 2, &d, 32, 8, &s, 0, &sc, &err) == 0, "%s", err.msg);
    CHECK(memcmp(up0, m.layers[0].w_up, (size_t)nu * sizeof *up0) != 0);    // block 0's MLP matrix trained (a bank's slice)
    CHECK(memcmp(ms0, m.layers[0].mlp_scale, (size_t)C * sizeof *ms0) == 0);  // block 0's own scale frozen
    CHECK(memcmp(ms1, m.layers[1].mlp_scale, (size_t)C * sizeof *ms1) != 0);  // block 1's trained
    ppl_scores_free(&sc);
    unload(&m, &d, &tok);
    // (an unbanked final_model.pt, 2026-03-20's: its Blocks own their matrices, and block 0's freeze)
    CHECK_MSG(model_load(&m, "tests/fixtures/pgolf/xsa_record/final_model.pt", &err) == 0, "%s", err.msg);
    tok = (struct ivec){0};
    CHECK(token_shard_read(SHARD, m.cfg.vocab_size, &tok, &err) == 0);
    d = (struct ppl_docs){.stream = 1};
    CHECK(ppl_docs_add(&d, tok.v, tok.n, &err) == 0);
    CHECK_EQ_INT(ttt_recipe_of(&m), TTT_2026_03);
    nu = (long)m.cfg.d_ff * m.cfg.d_model;
    up0 = xsa_realloc(up0, (size_t)nu * sizeof *up0);
    memcpy(up0, m.layers[0].w_up, (size_t)nu * sizeof *up0);
    CHECK_MSG(ttt_score(&m, 2, &d, 32, 8, &s, 0, &sc, &err) == 0, "%s", err.msg);
    CHECK(memcmp(up0, m.layers[0].w_up, (size_t)nu * sizeof *up0) == 0);
    ppl_scores_free(&sc);
    free(up0), free(ms0), free(ms1);
    unload(&m, &d, &tok);
}

// The reference's first case with n_threads threads; its per-target losses into nll (n of them).
static void run_case(const char *dir, int n_threads, float **nll, size_t *n, const char *spec) {
    xsa_error err = {0};
    struct model m;
    struct ppl_docs d;
    struct ivec tok;
    load_fixture(dir, &m, &d, &tok);
    struct ttt_settings s;
    ttt_settings_init(&s, ttt_recipe_of(&m));
    CHECK(ttt_settings_parse(&s, spec, &err) == 0);
    struct ppl_scores sc;
    CHECK_MSG(ttt_score(&m, n_threads, &d, 32, 8, &s, 0, &sc, &err) == 0, "%s", err.msg);
    *nll = xsa_malloc(sc.n * sizeof **nll);
    memcpy(*nll, sc.nll, sc.n * sizeof **nll);
    *n = sc.n;
    ppl_scores_free(&sc);
    unload(&m, &d, &tok);
}

// The same bits with 1 or 3 threads: no GEMM task's shape depends on the thread count.
TEST(ttt_thread_count_invariant) {
    const char *spec = "TTT_EPOCHS=2 TTT_CHUNK_TOKENS=256 TTT_FREEZE_BLOCKS=0 TTT_BATCH_SEQS=4";
    const char *dirs[] = {DIR, DIR_0408};
    for (int i = 0; i < 2; i++) {
        float *a, *b;
        size_t na, nb;
        run_case(dirs[i], 1, &a, &na, spec);
        run_case(dirs[i], 3, &b, &nb, spec);
        CHECK_EQ_INT((long)na, (long)nb);
        CHECK_MSG(na == nb && memcmp(a, b, na * sizeof *a) == 0, "%s", dirs[i]);
        free(a);
        free(b);
    }
}

// A stream shorter than one sequence, and weights that overflow: exit codes, nothing reported.
TEST(ttt_refusals) {
    xsa_error err = {0};
    struct model m;
    CHECK(model_load(&m, DIR "final_model.pt", &err) == 0);
    struct ttt_settings s;
    ttt_settings_init(&s, TTT_2026_03);
    struct ppl_scores sc;
    struct ppl_docs d = {.stream = 1};
    int32_t few[20] = {1, 5, 9, 200, 7};
    CHECK(ppl_docs_add(&d, few, 20, &err) == 0);
    CHECK_EQ_INT(ttt_score(&m, 1, &d, 32, 8, &s, 0, &sc, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "the stream has 20 tokens, fewer than one sequence of 32") != NULL);
    err = (xsa_error){0};
    CHECK_EQ_INT(ttt_score(&m, 1, &d, 8, 9, &s, 0, &sc, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "--stride 9 must be from 1 to --context 8") != NULL);
    ppl_docs_free(&d);
    struct ivec tok = {0};
    d = (struct ppl_docs){.stream = 1};
    CHECK(token_shard_read(SHARD, m.cfg.vocab_size, &tok, &err) == 0);
    CHECK(ppl_docs_add(&d, tok.v, tok.n, &err) == 0);
    for (long i = 0; i < (long)m.cfg.d_model * m.cfg.n_head * m.cfg.head_dim; i++) m.layers[0].wq[i] = 3e38f;
    for (long i = 0; i < (long)m.cfg.d_model * m.cfg.d_ff; i++) m.layers[0].w_up[i] = 3e38f;
    err = (xsa_error){0};
    int rc = ttt_score(&m, 1, &d, 32, 8, &s, 0, &sc, &err);
    CHECK_EQ_INT(rc, XSA_ERUNTIME);
    CHECK_MSG(strstr(err.msg, "before any training: the forward pass overflowed") != NULL, "%s", err.msg);
    CHECK(sc.nll == NULL && sc.n == 0);
    ppl_docs_free(&d);
    free(tok.v);
    model_free(&m);
    // LATE_QAT=1 where the record's code has no QAT (2026-04-08), or one xsa-eval does not run
    // (2026-03-31's soft rounding): both default to 0
    const char *no_qat[] = {DIR_0408, DIR_0331};
    for (int i = 0; i < 2; i++) {
        load_fixture(no_qat[i], &m, &d, &tok);
        ttt_settings_of_model(&s, &m);
        CHECK_EQ_INT(s.qat, 0);
        CHECK(ttt_settings_parse(&s, "LATE_QAT=1", &err) == 0);
        err = (xsa_error){0};
        CHECK_EQ_INT(ttt_score(&m, 1, &d, 32, 8, &s, 0, &sc, &err), XSA_EBADINPUT);
        CHECK_MSG(strstr(err.msg, "LATE_QAT=1") != NULL, "%s", err.msg);
        unload(&m, &d, &tok);
    }
    err = (xsa_error){0};
    CHECK_EQ_INT(ttt_settings_parse(&s, "LATE_QAT=2", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "LATE_QAT=2: expected 0 or 1") != NULL, "%s", err.msg);
}

// ---- 2026-04-10's LoRA TTT ----

static struct cpu_trainer *lora_trainer(struct model *m, int S, int rank, double alpha, const char *name_ok, xsa_error *err) {
    struct cpu_trainer *t = cpu_trainer_open(m, S, 2, err);
    struct cpu_lora_spec spec = {rank, 1, 1, 1, alpha};
    CHECK_MSG(t && cpu_trainer_lora(t, &spec, 1, err) == 0, "%s: %s", name_ok, err->msg);
    return t;
}

// forward_ttt's losses and the adapters' gradients for one window, adapters drawn as the reference's.
static void check_lora_gradients(const char *dir) {
    char path[256];
    snprintf(path, sizeof path, "%sttt_lora_reference.json", dir);
    cJSON *ref = fixture_read_json(path);
    const cJSON *g = cJSON_GetObjectItem(ref, "lora_grad"), *params = cJSON_GetObjectItem(g, "params");
    int start = cJSON_GetObjectItem(g, "start")->valueint, len = cJSON_GetObjectItem(g, "len")->valueint;
    int from = cJSON_GetObjectItem(g, "from")->valueint, count = cJSON_GetObjectItem(g, "count")->valueint;
    int rank = cJSON_GetObjectItem(g, "rank")->valueint, doc = cJSON_GetObjectItem(g, "doc")->valueint;
    double b_scale = cJSON_GetObjectItem(g, "b_scale")->valuedouble;
    xsa_error err = {0};
    struct model m;
    struct ivec tok;
    load_model_tokens(dir, &m, &tok);
    const cJSON *alpha = cJSON_GetObjectItem(g, "alpha");  // (2026-04-23 on: the adapters scaled by alpha / rank)
    struct cpu_trainer *t = lora_trainer(&m, 64, rank, alpha ? alpha->valuedouble : 0, "lora", &err);
    struct train_param *p;
    int np = cpu_trainer_lora_params(t, 0, &p);
    CHECK_EQ_INT(np, cJSON_GetArraySize(params));
    for (int i = 0; i < np; i++) {  // A drawn; B drawn too, times b_scale (so that A's gradients are not 0)
        long in = p[i].name[strlen(p[i].name) - 1] == 'A' ? p[i].n / rank : rank;
        ttt_lora_uniform(1337, doc, i, p[i].n, 1.0 / sqrt((double)in), p[i].w);
        if (p[i].name[strlen(p[i].name) - 1] == 'B')
            for (long k = 0; k < p[i].n; k++) p[i].w[k] *= (float)b_scale;
    }
    float nll[64];
    uint8_t greedy[64];
    cpu_trainer_chunk(t, tok.v + start, tok.v + start + 1, len, from, count, 1, nll, greedy);
    const cJSON *rn = cJSON_GetObjectItem(g, "nll");
    for (int j = 0; j < count; j++) CHECK_NEAR(nll[j], cJSON_GetArrayItem(rn, j)->valuedouble, 2e-5);
    check_grads(params, p, np, "lora");
    cpu_trainer_close(t);
    free(tok.v);
    model_free(&m);
    cJSON_Delete(ref);
}

TEST(lora_gradients_match_autograd) { check_lora_gradients(DIR_0410); }
// 2026-04-16's SmearGate on the raw embedding and attention output gates under the adapters.
TEST(lora_gradients_through_the_2026_04_16_gates) {
    check_lora_gradients(DIR_0416);
    check_lora_gradients(DIR_0419);  // (2026-04-19's dense gates)
    check_lora_gradients(DIR_0427);  // (2026-04-27's: adapters scaled by alpha / rank)
}

// Windows side by side in one pass (the documents of a batch) get what each gets alone: losses
// and their slots' adapter gradients, up to the GEMMs' rounding. The row-to-row pieces start
// afresh at each window: 2026-03-23's bigram hash and SmearGate, 2026-04-16's SmearGate on the
// raw embedding (2026-04-27's BOS-fixed too), RoPE positions, attention.
static void check_windows_as_alone(const char *dir) {
    xsa_error err = {0};
    struct model m;
    struct ivec tok;
    load_model_tokens(dir, &m, &tok);
    const int rank = 4, n_w = 3;
    struct cpu_trainer *t = cpu_trainer_open(&m, 64, 2, &err);
    struct cpu_lora_spec spec = {rank, 1, 1, 1, 0};
    CHECK_MSG(t && cpu_trainer_lora(t, &spec, n_w, &err) == 0, "%s: %s", dir, err.msg);
    struct train_param *p[3];
    int np = 0;
    for (int s = 0; s < n_w; s++) {
        np = cpu_trainer_lora_params(t, s, &p[s]);
        for (int i = 0; i < np; i++) {  // (B drawn too, small, so that every gradient is nonzero)
            int b = p[s][i].name[strlen(p[s][i].name) - 1] == 'B';
            ttt_lora_uniform(1337, 7 + s, i, p[s][i].n, b ? 0.05 : 0.3, p[s][i].w);
        }
    }
    const int start[3] = {0, 37, 90}, n[3] = {20, 28, 11}, from[3] = {4, 0, 10}, count[3] = {10, 28, 1};
    float nll[2][3][32];
    uint8_t greedy[2][3][32];
    struct cpu_window w[3];
    for (int i = 0; i < n_w; i++)
        w[i] = (struct cpu_window){tok.v + start[i], tok.v + start[i] + 1, n[i], from[i], count[i], i, nll[0][i], greedy[0][i]};
    CHECK_EQ_INT(cpu_trainer_windows(t, w, n_w, 1), n_w);
    float **together = xsa_calloc((size_t)n_w * np, sizeof *together);
    for (int s = 0; s < n_w; s++)
        for (int i = 0; i < np; i++) {
            together[s * np + i] = xsa_malloc((size_t)p[s][i].n * sizeof(float));
            memcpy(together[s * np + i], p[s][i].grad, (size_t)p[s][i].n * sizeof(float));
        }
    for (int i = 0; i < n_w; i++) {
        struct cpu_window one = w[i];
        one.nll = nll[1][i], one.greedy = greedy[1][i];
        CHECK_EQ_INT(cpu_trainer_windows(t, &one, 1, 1), 1);
        for (int j = 0; j < count[i]; j++) {
            CHECK_MSG(fabsf(nll[0][i][j] - nll[1][i][j]) < 1e-5f, "%s window %d target %d: %.8g side by side, %.8g alone", dir, i, j,
                      nll[0][i][j], nll[1][i][j]);
            CHECK(greedy[0][i][j] == greedy[1][i][j]);
        }
        double worst = 0;
        for (int k = 0; k < np; k++) {
            const float *a = together[i * np + k], *b = p[i][k].grad;
            double mx = 0, d = 0;
            for (long e = 0; e < p[i][k].n; e++) mx = fmax(mx, fabs(b[e])), d = fmax(d, fabs(a[e] - b[e]));
            CHECK_MSG(mx > 0, "%s: %s's gradient is 0", dir, p[i][k].name);
            worst = fmax(worst, d / (mx + 1e-30));
        }
        CHECK_MSG(worst < 1e-4, "%s window %d: adapter gradients side by side differ from alone by %.3g of their size", dir, i, worst);
    }
    CHECK_EQ_INT(cpu_trainer_windows(t, w, n_w, 0), n_w);  // (scored without gradients: the same losses)
    for (int i = 0; i < n_w; i++)
        for (int j = 0; j < count[i]; j++) CHECK(fabsf(nll[0][i][j] - nll[1][i][j]) < 1e-5f);
    // Windows that share a slot add into its gradients in turn: slot 0's from windows 0 and 2
    // together are the sum of each alone (the pass's other paths: not one job per GEMM step).
    struct cpu_window shared[3] = {w[0], w[1], w[2]};
    shared[2].slot = 0;
    float **sum = xsa_calloc((size_t)np, sizeof *sum);
    for (int k = 0; k < 2; k++) {
        CHECK_EQ_INT(cpu_trainer_windows(t, &shared[2 * k], 1, 1), 1);
        for (int i = 0; i < np; i++) {
            if (!sum[i]) sum[i] = xsa_calloc((size_t)p[0][i].n, sizeof(float));
            for (long e = 0; e < p[0][i].n; e++) sum[i][e] += p[0][i].grad[e];
        }
    }
    CHECK_EQ_INT(cpu_trainer_windows(t, shared, 3, 1), 3);
    double worst = 0;
    for (int i = 0; i < np; i++) {
        double mx = 0, d = 0;
        for (long e = 0; e < p[0][i].n; e++) mx = fmax(mx, fabs(sum[i][e])), d = fmax(d, fabs(sum[i][e] - p[0][i].grad[e]));
        worst = fmax(worst, d / (mx + 1e-30));
        free(sum[i]);
    }
    free(sum);
    CHECK_MSG(worst < 1e-4, "%s: a slot shared by two windows: its gradients differ from the sum of each alone by %.3g of their size",
              dir, worst);
    struct cpu_window big[3] = {w[0], w[1], w[1]};  // (20 + 28 + 28 rows: past the trainer's 64)
    CHECK_EQ_INT(cpu_trainer_windows(t, big, 3, 1), 0);
    for (int i = 0; i < n_w * np; i++) free(together[i]);
    free(together);
    cpu_trainer_close(t);
    t = cpu_trainer_open(&m, 64, 1, &err);  // (without adapters: one window only, the weights' gradients)
    CHECK_EQ_INT(cpu_trainer_windows(t, w, 2, 1), 0);
    CHECK_EQ_INT(cpu_trainer_windows(t, w, 1, 0), 1);
    cpu_trainer_close(t);
    free(tok.v);
    model_free(&m);
}

TEST(lora_windows_side_by_side_as_alone) {
    check_windows_as_alone(DIR);       // (2026-03-23: bigram hash, SmearGate on x0)
    check_windows_as_alone(DIR_0416);  // (SmearGate on the raw embedding, output gates)
    check_windows_as_alone(DIR_0427);  // (its BOS fix)
}

// The records' LoRA TTT per setting (their adapters drawn by xsa-eval's generator): 2026-04-10's
// eval_val_ttt_lora and 2026-04-14's eval_val_ttt_phased (one phase as 2026-04-13's, three, plain
// sequences in the global SGD), 2026-04-16's, 2026-04-19's, 2026-04-23's and 2026-04-27's: val_loss within 1e-6
// of their float32 runs (which drift by up to 1.5e-7 after three phases) and within 2e-7 of the
// same runs in float64 (measured under every kernel setting of .ci/run: 6.3e-8).
TEST(lora_ttt_matches_the_records_eval_val_ttt_lora) {
    check_cases_in(DIR_0410, "ttt_lora_reference.json", TTT_2026_04_10, 1e-6, 2e-7);
    check_cases_in(DIR_0416, "ttt_lora_reference.json", TTT_2026_04_10, 1e-6, 2e-7);  // (2026-04-16's eval_val_ttt_lora)
    check_cases_in(DIR_0419, "ttt_lora_reference.json", TTT_2026_04_10, 1e-6, 2e-7);  // (2026-04-19's eval_val_ttt_phased)
    check_cases_in(DIR_0427, "ttt_lora_reference.json", TTT_2026_04_23, 1e-6, 2e-7);  // (2026-04-27's: warm-started A)
    check_cases_in(DIR_0423, "ttt_lora_reference.json", TTT_2026_04_23, 1e-6, 2e-7);  // (2026-04-23's own, its SmearGate)
}

// No BOS in the stream: refused, nothing reported; documents are independent, so thread counts agree bit for bit.
TEST(lora_ttt_refusals_and_threads) {
    xsa_error err = {0};
    struct model m;
    struct ppl_docs d;
    struct ivec tok;
    load_fixture(DIR_0410, &m, &d, &tok);
    struct ttt_settings s;
    ttt_settings_init(&s, TTT_2026_04_10);
    CHECK(ttt_settings_parse(&s, "TTT_LORA_RANK=2 TTT_CHUNK_SIZE=16 TTT_EVAL_SEQ_LEN=48 TTT_LORA_LR=0.01", &err) == 0);
    struct ppl_scores a, b;
    CHECK(ttt_lora_score(&m, 1, &d, 32, &s, 0, &a, &err) == 0);
    CHECK(ttt_lora_score(&m, 3, &d, 32, &s, 0, &b, &err) == 0);
    CHECK(a.n == b.n && a.n > 0 && memcmp(a.nll, b.nll, a.n * sizeof *a.nll) == 0);
    ppl_scores_free(&a);
    ppl_scores_free(&b);
    struct ppl_docs nb = {.stream = 1};
    int32_t few[64];
    for (int i = 0; i < 64; i++) few[i] = 5 + i;
    CHECK(ppl_docs_add(&nb, few, 64, &err) == 0);
    CHECK_EQ_INT(ttt_lora_score(&m, 1, &nb, 32, &s, 0, &a, &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "the stream holds no BOS (token 1)") != NULL, "%s", err.msg);
    CHECK(a.nll == NULL && a.n == 0);
    err = (xsa_error){0};
    CHECK_EQ_INT(ttt_settings_parse(&s, "TTT_LR=0.1", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "train LoRA adapters") != NULL, "%s", err.msg);
    err = (xsa_error){0};
    CHECK_EQ_INT(ttt_settings_parse(&s, "TTT_OPTIMIZER=lion", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "TTT_OPTIMIZER=lion: expected adam or sgd") != NULL, "%s", err.msg);
    err = (xsa_error){0};
    CHECK_EQ_INT(ttt_settings_parse(&s, "TTT_K_LORA=2", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "TTT_K_LORA=2: expected 0 or 1") != NULL, "%s", err.msg);
    ttt_settings_init(&s, TTT_2026_03);
    err = (xsa_error){0};
    CHECK_EQ_INT(ttt_settings_parse(&s, "TTT_LORA_LR=0.1", &err), XSA_EBADINPUT);
    CHECK_MSG(strstr(err.msg, "LoRA settings are the 2026-04-10 records'") != NULL, "%s", err.msg);
    ppl_docs_free(&nb);
    unload(&m, &d, &tok);
}

RUN_TESTS(T(gradients_match_autograd), T(gradients_past_one_attention_block), T(gradients_of_the_2026_03_23_options), T(gradients_of_the_looped_gpts),
          T(ttt_matches_the_records_eval_val_sliding_ttt), T(ttt_matches_the_2026_04_records), T(ttt_thread_count_invariant), T(ttt_freeze_spares_the_2026_03_records_matrices),
          T(ttt_refusals), T(lora_gradients_match_autograd), T(lora_gradients_through_the_2026_04_16_gates), T(lora_windows_side_by_side_as_alone), T(lora_ttt_matches_the_records_eval_val_ttt_lora),
          T(lora_ttt_refusals_and_threads))
