// Tests of eval/scheduler.c with a fake backend whose "log-probability" is a hash of exactly
// what an entry's token may see (tokens and positions over span0 then span1). Any mistake in
// prefixes, branches, spans, positions or entry indices changes the value.
#include "eval/scheduler.h"
#include "tests/check.h"

static uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ULL; }

// What the request's own plain row would give at input position k for target t.
static double expected_lp(const int32_t *input, int k, int32_t target) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i <= k; i++) h = mix(mix(h, (uint64_t)input[i]), (uint64_t)i);
    h = mix(h, (uint64_t)target);
    return -(double)(h % 100000) / 1000.0;
}

static int fake_calls, fake_max_tokens;

static int fake_score(struct backend *be, const struct score_batch *b, float *lp, uint8_t *greedy, xsa_error *err) {
    (void)be;
    (void)err;
    fake_calls++;
    if (b->n_tokens > fake_max_tokens) fake_max_tokens = b->n_tokens;
    for (int e = 0; e < b->n_entries; e++) {
        int t = b->entry_index[e];
        uint64_t h = 1469598103934665603ULL;
        for (int j = b->span0_lo[t]; j < b->span0_hi[t]; j++) h = mix(mix(h, (uint64_t)b->token[j]), (uint64_t)b->pos[j]);
        for (int j = b->span1_lo[t]; j < b->span1_hi[t]; j++) h = mix(mix(h, (uint64_t)b->token[j]), (uint64_t)b->pos[j]);
        // The query token itself must be the last key it sees.
        int last = b->span1_hi[t] > b->span1_lo[t] ? b->span1_hi[t] - 1 : b->span0_hi[t] - 1;
        if (last != t) h = 0;
        h = mix(h, (uint64_t)b->entry_target[e]);
        lp[e] = (float)(-(double)(h % 100000) / 1000.0);
        greedy[e] = (uint8_t)(b->entry_target[e] % 3 != 0);
    }
    return 0;
}

// The model backend_score checks batches against: token ids below 1000, positions unbounded (llama).
static struct model fake_model = {.cfg = {.arch = MODEL_ARCH_LLAMA, .vocab_size = 1000}};
static struct backend fake = {.name = "fake", .model = &fake_model, .score = fake_score};

struct req_set {
    int n;
    struct sched_request r[400];
    int32_t store[400][80];
};

static uint32_t rng = 12345;
static uint32_t rnd(uint32_t m) {
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) % m;
}

// Documents of 1-5 requests: a shared context plus per-choice continuations, some requests
// identical, some with equal inputs and different continuations (BoolQ-like).
static void make_requests(struct req_set *s) {
    s->n = 0;
    for (int g = 0; s->n < 380; g++) {
        int ctx = 1 + (int)rnd(30), k = 1 + (int)rnd(5);
        int32_t base[40];
        for (int i = 0; i < ctx; i++) base[i] = (int32_t)rnd(50);
        for (int c = 0; c < k; c++) {
            struct sched_request *q = &s->r[s->n];
            int32_t *tok = s->store[s->n];
            int cont = 1 + (int)rnd(6);
            if (c > 0 && rnd(4) == 0) cont = 1;  // single-token continuation
            memcpy(tok, base, (size_t)ctx * sizeof *tok);
            for (int j = 0; j < cont; j++) tok[ctx + j] = (int32_t)rnd(50);
            if (c > 0 && rnd(5) == 0) memcpy(tok, s->store[s->n - 1], (size_t)(ctx + cont) * sizeof *tok);  // duplicate-ish
            q->input = tok;
            q->n_input = ctx + cont - 1;
            q->cont = tok + ctx;
            q->n_cont = cont;
            q->group = g;
            s->n++;
        }
    }
}

static struct req_set set;

static void check_against_expected(const struct sched_result *out) {
    for (int r = 0; r < set.n; r++) {
        const struct sched_request *q = &set.r[r];
        double sum = 0;
        int greedy = 1;
        for (int j = 0; j < q->n_cont; j++) {
            sum += (double)(float)expected_lp(q->input, q->n_input - q->n_cont + j, q->cont[j]);
            greedy &= q->cont[j] % 3 != 0;
        }
        CHECK_NEAR(out[r].logprob, sum, 0);
        CHECK_EQ_INT(out[r].greedy, greedy);
    }
}

TEST(test_shared_equals_unshared_and_plain_rows) {
    make_requests(&set);
    static struct sched_result a[400], b[400];
    struct sched_stats sa, sb;
    xsa_error err = {0};
    struct sched_options share = {.batch_tokens = 512, .share = 1}, plain = {.batch_tokens = 512, .share = 0};
    CHECK(scheduler_score(&fake, set.r, set.n, &share, a, &sa, &err) == 0);
    CHECK(scheduler_score(&fake, set.r, set.n, &plain, b, &sb, &err) == 0);
    check_against_expected(a);
    check_against_expected(b);
    CHECK(sa.tokens_computed < sb.tokens_computed);       // sharing saves work
    CHECK(sb.tokens_computed <= sb.tokens_requested);      // dedupe never adds work
    CHECK(sa.unique_requests < sa.requests);              // the set has duplicates
}

TEST(test_batch_budgets_and_order_do_not_change_scores) {
    make_requests(&set);
    static struct sched_result ref[400], out[400];
    struct sched_stats st;
    xsa_error err = {0};
    struct sched_options o = {.batch_tokens = 8192, .share = 1};
    CHECK(scheduler_score(&fake, set.r, set.n, &o, ref, &st, &err) == 0);
    int budgets[] = {1, 64, 512, 8192};
    for (int i = 0; i < 4; i++) {
        fake_max_tokens = 0;
        o.batch_tokens = budgets[i];
        CHECK(scheduler_score(&fake, set.r, set.n, &o, out, &st, &err) == 0);
        for (int r = 0; r < set.n; r++) CHECK(out[r].logprob == ref[r].logprob && out[r].greedy == ref[r].greedy);
    }
    // Reversed request order (groups keep their identity).
    static struct sched_request rev[400];
    for (int r = 0; r < set.n; r++) rev[r] = set.r[set.n - 1 - r];
    CHECK(scheduler_score(&fake, rev, set.n, &o, out, &st, &err) == 0);
    for (int r = 0; r < set.n; r++) CHECK(out[set.n - 1 - r].logprob == ref[r].logprob);
}

TEST(test_budget_is_respected) {
    make_requests(&set);
    static struct sched_result out[400];
    struct sched_stats st;
    xsa_error err = {0};
    struct sched_options o = {.batch_tokens = 100, .share = 1};
    fake_max_tokens = 0;
    CHECK(scheduler_score(&fake, set.r, set.n, &o, out, &st, &err) == 0);
    CHECK(fake_max_tokens <= 100);
    CHECK(st.batches > 1);
}

TEST(test_bad_request_is_an_error) {
    int32_t tok[3] = {1, 2, 3};
    struct sched_request q = {.input = tok, .n_input = 1, .cont = tok + 1, .n_cont = 2, .group = 0};
    struct sched_result out;
    struct sched_stats st;
    xsa_error err = {0};
    struct sched_options o = {.batch_tokens = 100, .share = 1};
    CHECK(scheduler_score(&fake, &q, 1, &o, &out, &st, &err) == XSA_EBADINPUT);
    CHECK(strstr(err.msg, "request 0") != NULL);
}

RUN_TESTS(T(test_shared_equals_unshared_and_plain_rows), T(test_batch_budgets_and_order_do_not_change_scores),
          T(test_budget_is_respected), T(test_bad_request_is_an_error))
