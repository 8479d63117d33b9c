// Shared prefixes, batch budgets and request order never change a score, on the real CPU backend.
//
// Every task fixture of tests/fixtures/data is encoded as `xsa-eval run` encodes it and scored with
// the checkpoints of tests/fixtures/parity/models (gpt2_bpe: byte-level BPE, 96 positions, so
// long requests are left-truncated; llama_sp_xsa: BOS, GQA, XSA in layer 1):
//   - sharing on vs off: identical predictions (acc, acc_norm, greedy) and log-likelihoods within 1e-5
//   - batch budgets of 64, 512 and 8192 tokens and a shuffled request order: bit-identical scores
// and bad requests reach the caller as errors through the scheduler and the backend; a
// parameter-golf model's shared-prefix tree equals its plain rows bit for bit.
#include <stdint.h>

#include "data/data.h"
#include "eval/encode.h"
#include "eval/metrics.h"
#include "eval/scheduler.h"
#include "kernels/backend.h"
#include "kernels/batch.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "tasks/task.h"
#include "tests/backend_env.h"
#include "tests/check.h"

#define MAX_TASKS 16

struct task_reqs {  // one task's docs and encoded requests
    const struct task_def *def;
    struct task_doc *docs;  // (n_docs)
    int n_docs, n_req;
    int *first_req;                // (n_docs) first request of each doc
    struct encoded_request *enc;   // (n_req)
    struct sched_request *req;     // (n_req), group = doc
};

struct fixture {
    struct model m;
    struct tokenizer *tok;
    struct backend be;
    struct task_reqs t[MAX_TASKS];
    int n_tasks, ok;
};

static void fixture_free(struct fixture *f) {
    for (int i = 0; i < f->n_tasks; i++) {
        struct task_reqs *t = &f->t[i];
        for (int k = 0; t->enc && k < t->n_req; k++) encoded_request_free(&t->enc[k]);
        free(t->enc);
        free(t->req);
        free(t->first_req);
        task_docs_free(t->docs, t->n_docs);
    }
    if (f->ok) backend_close(&f->be);
    tokenizer_free(f->tok);
    model_free(&f->m);
    memset(f, 0, sizeof *f);
}

// Loads a parity model, its tokenizer, the CPU backend and every task's encoded requests.
static int fixture_load(struct fixture *f, const char *model_dir) {
    memset(f, 0, sizeof *f);
    xsa_error err = {0};
    char tp[4096];
    int rc = model_load(&f->m, model_dir, &err);
    if (rc) {
        fprintf(stderr, "  %s\n", err.msg);
        return rc;
    }
    if (!rc) rc = tokenizer_find(model_dir, tp, sizeof tp, &err);
    if (!rc) rc = tokenizer_load(&f->tok, tp, &err);
    struct backend_options bo = {.n_threads = 2, .max_batch_tokens = 8192};
    if (!rc) rc = backend_open_batch_invariant(&f->be, &f->m, &bo, &err);
    f->ok = !rc;
    const struct task_def *defs[MAX_TASKS];
    int n = 0;
    if (!rc) rc = task_expand_list("all", defs, MAX_TASKS, &n, &err);
    struct data_options d = {.data_dir = "tests/fixtures/data", .offline = 1, .quiet = 1, .allow_data_change = 1};
    struct encode_options eo = {
        .add_special = 1,  // as `xsa-eval run` without --add-bos / --no-add-bos
        .bos_id = f->tok ? tokenizer_bos_id(f->tok) : -1,
        .prefix_token_id = f->tok && tokenizer_bos_id(f->tok) >= 0 ? tokenizer_bos_id(f->tok)
                                                                    : (f->tok ? tokenizer_eos_id(f->tok) : -1),
        .max_length = f->m.cfg.max_seq_len,
    };
    for (int i = 0; i < n && !rc; i++) {
        struct task_reqs *t = &f->t[i];
        cJSON **rows = NULL;
        int n_rows = 0;
        struct data_provenance prov;
        t->def = defs[i];
        rc = data_load_task(defs[i], &d, &rows, &n_rows, &prov, &err);
        if (!rc) rc = task_docs_from_rows(defs[i], rows, NULL, n_rows, 0, &t->docs, &t->n_docs, &err);
        if (rows) data_rows_free(rows, n_rows);
        if (rc) break;
        f->n_tasks = i + 1;
        for (int k = 0; k < t->n_docs; k++) t->n_req += t->docs[k].n_requests;
        t->enc = calloc((size_t)t->n_req + 1, sizeof *t->enc);
        t->req = calloc((size_t)t->n_req + 1, sizeof *t->req);
        t->first_req = calloc((size_t)t->n_docs + 1, sizeof *t->first_req);
        if (!t->enc || !t->req || !t->first_req) { rc = XSA_ERUNTIME; break; }
        int k = 0;
        for (int doc = 0; doc < t->n_docs && !rc; doc++) {
            t->first_req[doc] = k;
            for (int c = 0; c < t->docs[doc].n_requests && !rc; c++, k++) {
                const struct task_request *q = &t->docs[doc].req[c];
                rc = encode_request(f->tok, &eo, q->context, q->continuation, &t->enc[k], &err);
                t->req[k] = (struct sched_request){.input = t->enc[k].input.v, .n_input = (int)t->enc[k].input.n,
                                                   .cont = t->enc[k].cont.v, .n_cont = (int)t->enc[k].cont.n,
                                                   .group = doc};
            }
        }
    }
    if (rc) fprintf(stderr, "  %s: %s\n", model_dir, err.msg);
    return rc;
}

static int score(struct fixture *f, const struct sched_request *req, int n, int budget, int share,
                 struct sched_result *out, struct sched_stats *st) {
    xsa_error err = {0};
    struct sched_options o = {.batch_tokens = budget, .share = share};
    int rc = scheduler_score(&f->be, req, n, &o, out, st, &err);
    if (rc) fprintf(stderr, "  scheduler_score: %s\n", err.msg);
    return rc;
}

// pred / pred_norm (multiple choice) or the greedy flag (LAMBADA) of every doc.
static void predictions(const struct task_reqs *t, const struct sched_result *r, int *pred, int *pred_norm) {
    double lls[64];
    for (int d = 0; d < t->n_docs; d++) {
        const struct task_doc *doc = &t->docs[d];
        const struct sched_result *q = &r[t->first_req[d]];
        pred[d] = pred_norm[d] = -1;
        if (t->def->output == TASK_LOGLIKELIHOOD) {
            pred[d] = pred_norm[d] = q[0].greedy;
            continue;
        }
        int n = doc->n_requests < 64 ? doc->n_requests : 64;
        for (int c = 0; c < n; c++) lls[c] = q[c].logprob;
        metrics_mc_doc(lls, doc->choice_len, n, doc->gold, NULL, NULL, &pred[d], &pred_norm[d]);
    }
}

static void check_share_vs_no_share(const char *model_dir) {
    struct fixture f;
    CHECK(fixture_load(&f, model_dir) == 0);
    CHECK_EQ_INT(f.n_tasks, 9);
    long long computed[2] = {0, 0}, requested = 0;
    int n_req = 0, n_docs = 0;
    double worst = 0;
    for (int i = 0; i < f.n_tasks; i++) {
        struct task_reqs *t = &f.t[i];
        struct sched_result *r[2] = {calloc((size_t)t->n_req + 1, sizeof **r), calloc((size_t)t->n_req + 1, sizeof **r)};
        int *p[4];
        for (int k = 0; k < 4; k++) p[k] = calloc((size_t)t->n_docs + 1, sizeof **p);
        struct sched_stats st[2];
        CHECK(t->n_req > 0);
        for (int s = 0; s < 2; s++) CHECK(score(&f, t->req, t->n_req, 4096, s == 0, r[s], &st[s]) == 0);
        for (int k = 0; k < t->n_req; k++) {
            double d = fabs(r[0][k].logprob - r[1][k].logprob);
            if (d > worst) worst = d;
            CHECK_MSG(d <= 1e-5, "%s %s request %d: shared %.9g vs unshared %.9g", model_dir, t->def->name, k,
                      r[0][k].logprob, r[1][k].logprob);
            CHECK_MSG(r[0][k].greedy == r[1][k].greedy, "%s %s request %d: greedy differs", model_dir, t->def->name, k);
            CHECK(isfinite(r[0][k].logprob) && r[0][k].logprob <= 0);
        }
        predictions(t, r[0], p[0], p[1]);
        predictions(t, r[1], p[2], p[3]);
        for (int d = 0; d < t->n_docs; d++) {
            CHECK_MSG(p[0][d] == p[2][d] && p[1][d] == p[3][d], "%s %s doc %d: prediction differs with sharing",
                      model_dir, t->def->name, d);
            CHECK(p[0][d] >= 0);
        }
        n_req += t->n_req;
        n_docs += t->n_docs;
        requested += st[0].tokens_requested;
        for (int s = 0; s < 2; s++) computed[s] += st[s].tokens_computed;
        for (int k = 0; k < 4; k++) free(p[k]);
        free(r[0]);
        free(r[1]);
    }
    // The comparison means something only when sharing really changed the work done.
    CHECK(computed[0] < computed[1]);
    CHECK(computed[1] <= requested);
    CHECK(n_docs >= 100);
    printf("  %s: %d docs, %d requests, %lld tokens requested, %lld computed shared, %lld unshared, worst |dll| %.2g\n",
           model_dir, n_docs, n_req, requested, computed[0], computed[1], worst);
    fixture_free(&f);
}

TEST(test_share_equals_no_share_gpt2) { check_share_vs_no_share("tests/fixtures/parity/models/gpt2_bpe"); }
TEST(test_share_equals_no_share_llama_xsa) { check_share_vs_no_share("tests/fixtures/parity/models/llama_sp_xsa"); }

static uint32_t lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

// Budgets 64, 512, 8192 (both modes) and a shuffled order give bit-identical scores.
static void check_budgets_and_order(const char *model_dir) {
    struct fixture f;
    CHECK(fixture_load(&f, model_dir) == 0);
    CHECK_EQ_INT(f.n_tasks, 9);
    static const int budgets[3] = {64, 512, 8192};
    uint32_t seed = 2024;
    int multi_batch = 0, moved = 0;
    for (int i = 0; i < f.n_tasks; i++) {
        struct task_reqs *t = &f.t[i];
        int n = t->n_req;
        struct sched_result *ref = calloc((size_t)n + 1, sizeof *ref), *out = calloc((size_t)n + 1, sizeof *out);
        struct sched_request *shuf = calloc((size_t)n + 1, sizeof *shuf);
        int *perm = calloc((size_t)n + 1, sizeof *perm);
        struct sched_stats st;
        for (int share = 1; share >= 0; share--) {
            CHECK(score(&f, t->req, n, budgets[0], share, ref, &st) == 0);
            if (st.batches > 1) multi_batch = 1;
            for (int b = 1; b < 3; b++) {
                CHECK(score(&f, t->req, n, budgets[b], share, out, &st) == 0);
                for (int k = 0; k < n; k++)
                    CHECK_MSG(out[k].logprob == ref[k].logprob && out[k].greedy == ref[k].greedy,
                              "%s %s share=%d request %d: budget %d gives %.17g, budget 64 %.17g", model_dir,
                              t->def->name, share, k, budgets[b], out[k].logprob, ref[k].logprob);
            }
            // Fisher-Yates shuffle of the requests (each keeps its group, i.e. its document).
            for (int k = 0; k < n; k++) perm[k] = k;
            for (int k = n - 1; k > 0; k--) {
                int j = (int)(lcg(&seed) % (uint32_t)(k + 1)), x = perm[k];
                perm[k] = perm[j], perm[j] = x;
            }
            for (int k = 0; k < n; k++) {
                shuf[k] = t->req[perm[k]];
                moved += perm[k] != k;
            }
            CHECK(score(&f, shuf, n, 512, share, out, &st) == 0);
            for (int k = 0; k < n; k++)
                CHECK_MSG(out[k].logprob == ref[perm[k]].logprob && out[k].greedy == ref[perm[k]].greedy,
                          "%s %s share=%d: request %d shuffled to %d gives %.17g, in order %.17g", model_dir,
                          t->def->name, share, perm[k], k, out[k].logprob, ref[perm[k]].logprob);
        }
        free(ref);
        free(out);
        free(shuf);
        free(perm);
    }
    CHECK(multi_batch);  // a 64-token budget really split the work
    CHECK(moved > 0);    // the shuffle really moved requests
    fixture_free(&f);
}

TEST(test_budgets_and_order_bit_identical_gpt2) { check_budgets_and_order("tests/fixtures/parity/models/gpt2_bpe"); }
TEST(test_budgets_and_order_bit_identical_llama_xsa) {
    check_budgets_and_order("tests/fixtures/parity/models/llama_sp_xsa");
}

// A prefix with branches scores as the plain rows prefix + branch, bit for bit, on a
// parameter-golf architecture: SmearGate and the bigram hash read the previous token, which for
// a branch's first token is the prefix's last (and none at position 0).
static void check_pgolf_tree(const char *path) {
    struct model m;
    xsa_error err = {0};
    CHECK_EQ_INT(model_load(&m, path, &err), 0);
    struct backend be;
    struct backend_options bo = {.n_threads = 2, .max_batch_tokens = 256};
    CHECK_EQ_INT(backend_open_batch_invariant(&be, &m, &bo, &err), 0);
    static const int32_t prefix[5] = {1, 50, 300, 7, 900}, b0[3] = {12, 400, 33}, b1[1] = {5}, b2[4] = {800, 2, 2, 99};
    const int32_t *br[3] = {b0, b1, b2};
    int len[3] = {3, 1, 4}, pf, bf[3];
    struct batch_builder tree, plain;
    batch_init(&tree);
    batch_init(&plain);
    CHECK_EQ_INT(batch_add_tree(&tree, prefix, 5, br, len, 3, &pf, bf, &err), 0);
    for (int i = 0; i < 3; i++) {
        int32_t row[16];
        memcpy(row, prefix, sizeof prefix);
        memcpy(row + 5, br[i], (size_t)len[i] * sizeof *row);
        int first;
        CHECK_EQ_INT(batch_add_row(&plain, row, 5 + len[i], &first, &err), 0);
        for (int k = 0; k < len[i]; k++) {  // the branch's tokens, each given what precedes it
            CHECK_EQ_INT(batch_add_entry(&tree, k ? bf[i] + k - 1 : pf + 4, br[i][k], &err), 0);
            CHECK_EQ_INT(batch_add_entry(&plain, first + 4 + k, br[i][k], &err), 0);
        }
    }
    struct score_batch tb = batch_view(&tree), pb = batch_view(&plain);
    float lt[8], lp[8];
    uint8_t gt[8], gp[8];
    CHECK_EQ_INT(tb.n_entries, 8);
    CHECK_EQ_INT(backend_score(&be, &tb, lt, gt, &err), 0);
    CHECK_EQ_INT(backend_score(&be, &pb, lp, gp, &err), 0);
    for (int e = 0; e < 8; e++) {
        CHECK_MSG(!memcmp(&lt[e], &lp[e], sizeof lt[e]), "entry %d: tree %.9g vs plain %.9g", e, lt[e], lp[e]);
        CHECK_EQ_INT(gt[e], gp[e]);
    }
    batch_free(&tree);
    batch_free(&plain);
    backend_close(&be);
    model_free(&m);
}

TEST(test_pgolf_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/xsa_record/final_model.pt"); }
// The 2026-03-31 record's GPT: two residual lanes, depth recurrence, a layer without attention.
TEST(test_pgolf_lanes_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/recur_0331/final_model.pt"); }
// A looped record (2026-04-05): physical blocks run several times.
TEST(test_pgolf_loops_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/loop_0405/final_model.pt"); }
TEST(test_pgolf_gptj_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/gptj_0406/final_model.pt"); }
TEST(test_pgolf_lanes_together_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/lanes_0410/final_model.pt"); }
// The SmearGate of 2026-04-27 reads the previous token's raw embedding: the prefix's last for a branch.
TEST(test_pgolf_physical_recurrence_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/recur_0403/final_model.pt"); }
TEST(test_pgolf_split_lanes_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/split_0404/final_model.pt"); }
TEST(test_pgolf_smear_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/gates_0427/final_model.pt"); }
TEST(test_pgolf_recurrent_gpt_tree_equals_plain_rows) { check_pgolf_tree("tests/fixtures/pgolf/recurrent_0321/final_model.pt"); }

// Bad requests come back as errors from the scheduler + CPU backend, never a crash.
TEST(test_bad_requests_are_errors) {
    struct model m;
    xsa_error err = {0};
    CHECK(model_load(&m, "tests/fixtures/parity/models/gpt2_bpe", &err) == 0);
    struct backend be;
    struct backend_options bo = {.n_threads = 1, .max_batch_tokens = 512};
    CHECK(backend_open_env(&be, &m, &bo, &err) == 0);
    int32_t tok[200];
    for (int i = 0; i < 200; i++) tok[i] = i % 50 + 1;
    struct sched_result out = {.logprob = 123};
    struct sched_stats st;
    struct sched_options o = {.batch_tokens = 512, .share = 1};
    // Past gpt2_bpe's 96 learned positions (lm-eval would have truncated it first).
    struct sched_request q = {.input = tok, .n_input = 150, .cont = tok + 150, .n_cont = 1, .group = 0};
    CHECK_EQ_INT(scheduler_score(&be, &q, 1, &o, &out, &st, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "position") != NULL);
    // A target outside the vocabulary.
    xsa_error_clear(&err);
    tok[20] = m.cfg.vocab_size + 5;
    struct sched_request r[2] = {{.input = tok, .n_input = 20, .cont = tok + 19, .n_cont = 2, .group = 0},
                                 {.input = tok, .n_input = 10, .cont = tok + 10, .n_cont = 1, .group = 0}};
    CHECK_EQ_INT(scheduler_score(&be, r, 2, &o, &out, &st, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "vocabulary") != NULL);
    CHECK(out.logprob == 123);  // nothing written on failure
    backend_close(&be);
    model_free(&m);
}

RUN_TESTS(T(test_share_equals_no_share_gpt2), T(test_share_equals_no_share_llama_xsa),
          T(test_budgets_and_order_bit_identical_gpt2), T(test_budgets_and_order_bit_identical_llama_xsa),
          T(test_pgolf_tree_equals_plain_rows), T(test_pgolf_lanes_tree_equals_plain_rows), T(test_pgolf_loops_tree_equals_plain_rows), T(test_pgolf_gptj_tree_equals_plain_rows),
          T(test_pgolf_lanes_together_tree_equals_plain_rows), T(test_pgolf_smear_tree_equals_plain_rows), T(test_pgolf_recurrent_gpt_tree_equals_plain_rows),
          T(test_pgolf_physical_recurrence_tree_equals_plain_rows), T(test_pgolf_split_lanes_tree_equals_plain_rows),
          T(test_bad_requests_are_errors))
