// Data-parallel runs without a launcher: dealing requests to ranks (groups stay whole, every
// rank gets work, loads within one group of each other, deterministic), the bytes requests
// and results travel as (round trip; malformed buffers refused), and the launcher's
// environment (world size, srun without MPI, each rank's GPU and CPU share).
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/vec.h"
#include "eval/dist.h"
#include "eval/shard.h"
#include "tests/check.h"

enum { N_DOCS = 60, PER_DOC = 4, N = N_DOCS * PER_DOC };
static int32_t toks[N][160];

// 60 documents of 4 requests: a shared context of 10..90 tokens, then 1..12 of their own.
static void make_requests(struct sched_request *req) {
    unsigned s = 7;
    for (int d = 0; d < N_DOCS; d++) {
        int ctx = 10 + (d * 37) % 81;
        for (int c = 0; c < PER_DOC; c++) {
            int k = d * PER_DOC + c, own = 1 + (int)((s = s * 1103515245u + 12345u) >> 16) % 12;
            for (int j = 0; j < ctx + own; j++) toks[k][j] = j < ctx ? d * 1000 + j : 500000 + c * 100 + j;
            req[k] = (struct sched_request){.input = toks[k], .n_input = ctx + own, .cont = toks[k] + ctx,
                                            .n_cont = own, .group = d};
        }
    }
}

static double cost_of(const struct sched_request *q, int n) {  // what shard_assign estimates, without sharing
    double c = 0;
    for (int i = 0; i < n; i++) c += q[i].n_input + (double)q[i].n_input * q[i].n_input / (12.0 * 64);
    return c;
}

TEST(test_assign_keeps_groups_and_balances) {
    static struct sched_request req[N];
    static int owner[N], again[N];
    make_requests(req);
    for (int ranks = 1; ranks <= 5; ranks++) {
        shard_assign(req, N, 0, 64, ranks, owner);
        shard_assign(req, N, 0, 64, ranks, again);
        CHECK(!memcmp(owner, again, sizeof owner));
        double load[5] = {0}, biggest = 0;
        for (int d = 0; d < N_DOCS; d++) {
            const struct sched_request *g = &req[d * PER_DOC];
            for (int c = 1; c < PER_DOC; c++) CHECK_EQ_INT(owner[d * PER_DOC + c], owner[d * PER_DOC]);
            CHECK(owner[d * PER_DOC] >= 0 && owner[d * PER_DOC] < ranks);
            load[owner[d * PER_DOC]] += cost_of(g, PER_DOC);
            if (cost_of(g, PER_DOC) > biggest) biggest = cost_of(g, PER_DOC);
        }
        double lo = load[0], hi = load[0];
        for (int r = 0; r < ranks; r++) {
            CHECK_MSG(load[r] > 0, "rank %d of %d got nothing", r, ranks);
            if (load[r] < lo) lo = load[r];
            if (load[r] > hi) hi = load[r];
        }
        // Largest first to the least loaded: no two ranks differ by more than one group.
        CHECK_MSG(hi - lo <= biggest, "%d ranks: loads %.0f..%.0f, largest group %.0f", ranks, lo, hi, biggest);
    }
}

TEST(test_assign_counts_a_shared_prefix_once) {
    // Group A: 4 requests of 100 tokens sharing 96; B: 2 of 150 sharing nothing; C: 1 of 150.
    // With d_model 64, shared A costs ~128 (its prefix once), B ~359, C ~179; unshared A ~452.
    static int32_t t[7][150];
    struct sched_request q[7];
    for (int i = 0; i < 7; i++) {
        int n = i < 4 ? 100 : 150;
        for (int j = 0; j < n; j++) t[i][j] = i < 4 ? (j < 96 ? j : 1000 + 10 * i + j) : 5000 + 200 * i + j;
        q[i] = (struct sched_request){.input = t[i], .n_input = n, .cont = t[i] + n - 1, .n_cont = 1,
                                      .group = i < 4 ? 0 : i < 6 ? 1 : 2};
    }
    int owner[7];
    // Shared: B (~300) first to rank 0, C (~150) to rank 1, A (~112) to rank 1 (150 < 300).
    shard_assign(q, 7, 1, 64, 2, owner);
    CHECK_EQ_INT(owner[4], 0);
    CHECK_EQ_INT(owner[6], 1);
    CHECK_EQ_INT(owner[0], 1);
    // Unshared: A (~400 + attention) is the costliest and goes first, alone on rank 0.
    shard_assign(q, 7, 0, 64, 2, owner);
    CHECK_EQ_INT(owner[0], 0);
    CHECK_EQ_INT(owner[4], 1);
    CHECK_EQ_INT(owner[6], 1);
}

TEST(test_requests_round_trip_and_malformed_refused) {
    static struct sched_request req[N];
    make_requests(req);
    int idx[3] = {5, 0, 239};
    struct sbuf b = {0};
    shard_pack_requests(req, idx, 3, &b);
    struct sched_request *out;
    int32_t *tok;
    int n;
    xsa_error err = {0};
    CHECK_EQ_INT(shard_unpack_requests(b.s, b.n, &out, &tok, &n, &err), 0);
    CHECK_EQ_INT(n, 3);
    for (int i = 0; i < n && i < 3; i++) {
        const struct sched_request *a = &req[idx[i]];
        CHECK_EQ_INT(out[i].n_input, a->n_input);
        CHECK_EQ_INT(out[i].n_cont, a->n_cont);
        CHECK_EQ_INT(out[i].group, a->group);
        CHECK(!memcmp(out[i].input, a->input, (size_t)a->n_input * 4));
        CHECK(!memcmp(out[i].cont, a->cont, (size_t)a->n_cont * 4));
    }
    free(out), free(tok);
    // Cut short at every length, a count too large, a continuation longer than its input.
    for (size_t len = 0; len < b.n; len += 7) {
        err.code = 0;
        CHECK_MSG(shard_unpack_requests(b.s, len, &out, &tok, &n, &err) == XSA_ERUNTIME, "cut at %zu accepted", len);
        CHECK(out == NULL && tok == NULL);
    }
    int32_t big = 1 << 30;
    memcpy(b.s, &big, 4);
    err.code = 0;
    CHECK_EQ_INT(shard_unpack_requests(b.s, b.n, &out, &tok, &n, &err), XSA_ERUNTIME);
    int32_t three = 3, cont = 10000;
    memcpy(b.s, &three, 4);
    memcpy(b.s + 8, &cont, 4);
    err.code = 0;
    CHECK_EQ_INT(shard_unpack_requests(b.s, b.n, &out, &tok, &n, &err), XSA_ERUNTIME);
    sbuf_free(&b);
}

TEST(test_results_round_trip_bit_exact) {
    struct sched_result r[3] = {{-1.0 / 3.0, 1}, {-123.456789012345678, 0}, {-0.0, 1}}, back[3];
    struct sbuf b = {0};
    uint8_t reused[3] = {0, 1, 0}, reused_back[3] = {9, 9, 9};
    shard_pack_results(r, reused, 3, 987654321012LL, &b);
    long long computed = 0;
    xsa_error err = {0};
    CHECK_EQ_INT(shard_unpack_results(b.s, b.n, back, reused_back, 3, &computed, &err), 0);
    CHECK(reused_back[0] == 0 && reused_back[1] == 1 && reused_back[2] == 0);
    CHECK(!memcmp(&back[0].logprob, &r[0].logprob, 8) && !memcmp(&back[1].logprob, &r[1].logprob, 8));
    CHECK(!memcmp(&back[2].logprob, &r[2].logprob, 8));
    CHECK(back[0].greedy == 1 && back[1].greedy == 0 && back[2].greedy == 1);
    CHECK(computed == 987654321012LL);
    err.code = 0;
    CHECK_EQ_INT(shard_unpack_results(b.s, b.n, back, NULL, 2, &computed, &err), XSA_ERUNTIME);  // not the count asked for
    err.code = 0;
    CHECK_EQ_INT(shard_unpack_results(b.s, b.n - 1, back, NULL, 3, &computed, &err), XSA_ERUNTIME);
    int32_t odd = 4;  // a flag no rank writes
    memcpy(b.s + 4 + 8 + 8, &odd, 4);
    err.code = 0;
    CHECK_EQ_INT(shard_unpack_results(b.s, b.n, back, NULL, 3, &computed, &err), XSA_ERUNTIME);
    sbuf_free(&b);
}

static const char *launch_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_FD", "PMI_SIZE",
                                    "SLURM_PROCID", "SLURM_NTASKS"};

static void clear_launch(void) {
    for (size_t i = 0; i < sizeof launch_vars / sizeof launch_vars[0]; i++) unsetenv(launch_vars[i]);
}

TEST(test_env_world_size) {
    clear_launch();
    const char *who;
    int size;
    xsa_error err = {0};
    CHECK_EQ_INT(dist_env_size(&who, &size, &err), 0);
    CHECK_EQ_INT(size, 1);
    CHECK_STR(who, "none");
    setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
    CHECK_EQ_INT(dist_env_size(&who, &size, &err), 0);
    CHECK_EQ_INT(size, 3);
    CHECK_STR(who, "mpirun");
    clear_launch();
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "8", 1);
    CHECK_EQ_INT(dist_env_size(&who, &size, &err), XSA_EBADINPUT);  // srun without an MPI plugin
    CHECK(strstr(err.msg, "--mpi=pmix") != NULL);
    err.code = 0;
    setenv("PMIX_RANK", "1", 1);
    CHECK_EQ_INT(dist_env_size(&who, &size, &err), 0);
    CHECK_EQ_INT(size, 8);
    CHECK_STR(who, "srun");
    clear_launch();
    setenv("SLURM_PROCID", "0", 1);  // one task: a plain process
    setenv("SLURM_NTASKS", "1", 1);
    CHECK_EQ_INT(dist_env_size(&who, &size, &err), 0);
    CHECK_EQ_INT(size, 1);
    clear_launch();
}

TEST(test_env_gpu_of_local_rank) {
    xsa_error err = {0};
    unsetenv("CUDA_VISIBLE_DEVICES");
    CHECK_EQ_INT(dist_env_pick_gpu("cuda", 3, 8, &err), 0);
    CHECK_STR(getenv("CUDA_VISIBLE_DEVICES"), "3");
    setenv("CUDA_VISIBLE_DEVICES", "4,5,GPU-abc", 1);
    CHECK_EQ_INT(dist_env_pick_gpu("auto", 2, 3, &err), 0);
    CHECK_STR(getenv("CUDA_VISIBLE_DEVICES"), "GPU-abc");
    setenv("CUDA_VISIBLE_DEVICES", "4,5", 1);
    CHECK_EQ_INT(dist_env_pick_gpu("cuda", 3, 4, &err), 0);  // more ranks than GPUs: they share, round robin
    CHECK_STR(getenv("CUDA_VISIBLE_DEVICES"), "5");
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);  // one GPU for two ranks (tools/gpu-check.sh)
    CHECK_EQ_INT(dist_env_pick_gpu("cuda", 1, 2, &err), 0);
    CHECK_STR(getenv("CUDA_VISIBLE_DEVICES"), "0");
    setenv("CUDA_VISIBLE_DEVICES", "4,5", 1);
    CHECK_EQ_INT(dist_env_pick_gpu("cuda:1", 1, 2, &err), 0);  // an explicit index is the user's
    CHECK_EQ_INT(dist_env_pick_gpu("cpu", 1, 2, &err), 0);
    CHECK_EQ_INT(dist_env_pick_gpu("cuda", 1, 1, &err), 0);  // alone on its node: untouched
    CHECK_STR(getenv("CUDA_VISIBLE_DEVICES"), "4,5");
    setenv("CUDA_VISIBLE_DEVICES", "4,,5", 1);
    CHECK_EQ_INT(dist_env_pick_gpu("cuda", 1, 2, &err), XSA_EBADINPUT);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST(test_env_threads_share) {
    CHECK_EQ_INT(dist_env_threads(5, 4), 5);  // --threads wins
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    int mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)online;
    if (mine < online) {
        CHECK_EQ_INT(dist_env_threads(0, 64), mine);  // bound by the launcher: its set
    } else {
        CHECK_EQ_INT(dist_env_threads(0, 1), (int)online);
        CHECK_EQ_INT(dist_env_threads(0, 2), online / 2 > 0 ? (int)(online / 2) : 1);
        CHECK_EQ_INT(dist_env_threads(0, (int)online * 4), 1);  // never 0
    }
}

RUN_TESTS(T(test_assign_keeps_groups_and_balances), T(test_assign_counts_a_shared_prefix_once),
          T(test_requests_round_trip_and_malformed_refused), T(test_results_round_trip_bit_exact),
          T(test_env_world_size), T(test_env_gpu_of_local_rank), T(test_env_threads_share))
