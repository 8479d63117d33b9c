// bench_dist.c: data-parallel scaling on the CPU (docs/distributed.md). The same `xsa-eval run`
// of a random 26.2M llama (bench/random_checkpoint.h, the demo's 1024-token tokenizer) over the
// real benchmark files of ../shared/benchdata (else the fixtures): as one process on one core
// (--threads 1: the one-device baseline, as one GPU would be), as one process on every core,
// and under `mpirun --oversubscribe --bind-to none -np N` (each rank its share of the cores,
// free to move off a core that other work holds); prints each wall time (median of the
// repeats, run alternately), the speedup and the scaling efficiency T1 / (N * TN) against the
// one-core run, and checks that every samples file is byte-identical to the one-core run's.
// Usage (from the repository root, after make): build/bench/bench_dist [--limit D (docs per
//        task, default 40)] [--ranks N (default 2)] [--repeats R (default 1)]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "bench/random_checkpoint.h"
#include "common/fileio.h"
#include "common/xalloc.h"

// Runs `launcher ./xsa-eval run ...` into dir/out<tag>; returns its wall time, or -1.
static double timed_run(const char *launcher, const char *extra, const char *dir, const char *data, int limit,
                        const char *tag) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "rm -rf %s/out%s && %s ./xsa-eval run --model %s/model --tasks all --data-dir %s --allow-data-change "
             "--limit %d --offline --device cpu --quiet --log-samples --cache-dir %s/cache --output %s/out%s %s >/dev/null",
             dir, tag, launcher, dir, data, limit, dir, dir, tag, extra);
    double t0 = timing_now_s();
    int rc = system(cmd);
    double t = timing_now_s() - t0;
    if (rc != 0) fprintf(stderr, "bench_dist: failed (%d): %s\n", rc, cmd);
    return rc == 0 ? t : -1;
}

int main(int argc, char **argv) {
    int limit = 40, ranks = 2, reps = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--limit")) limit = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ranks")) ranks = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--repeats")) reps = atoi(argv[i + 1]);
    }
    if (limit < 1 || ranks < 2 || ranks > 64 || reps < 1 || reps > 100 || argc % 2 == 0) {
        fprintf(stderr, "usage: bench_dist [--limit D] [--ranks 2..64] [--repeats 1..100]\n");
        return 2;
    }
    if (system("command -v mpirun >/dev/null 2>&1") != 0 || system("./xsa-eval --version | grep -q 'MPI: Open'") != 0) {
        fprintf(stderr, "bench_dist: needs mpirun and ./xsa-eval built with MPI (apt-get install libopenmpi-dev openmpi-bin; make)\n");
        return 2;
    }
    const char *shared = getenv("XSA_SHARED") ? getenv("XSA_SHARED") : "../shared";
    char data[4096];
    snprintf(data, sizeof data, "%s/benchdata", shared);
    if (!dir_exists(data)) snprintf(data, sizeof data, "tests/fixtures/data");
    char dir[] = "/tmp/xsa_bench_dist_XXXXXX", model[256], tok[300];
    if (!mkdtemp(dir)) { perror("bench_dist: mkdtemp"); return 3; }
    snprintf(model, sizeof model, "%s/model", dir);
    snprintf(tok, sizeof tok, "%s/tokenizer.json", model);
    xsa_error err = {0};
    char *t = NULL;
    size_t tn = 0;
    int rc = file_mkdirs(model, "", &err);
    if (!rc) rc = random_checkpoint_write(model, 0, &err);
    if (!rc) rc = file_read_all("demo/sa/tokenizer.json", 1 << 24, &t, &tn, &err);
    if (!rc) rc = file_write_atomic(tok, t, tn, &err);
    free(t);
    if (rc) { fprintf(stderr, "bench_dist: %s\n", err.msg); return rc; }
    char launcher[256];
    snprintf(launcher, sizeof launcher,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe --bind-to none -np %d", ranks);
    double *t1 = xsa_calloc((size_t)reps, sizeof *t1), *ta = xsa_calloc((size_t)reps, sizeof *ta),
           *tn_ = xsa_calloc((size_t)reps, sizeof *tn_);
    for (int r = 0; r < reps && !rc; r++) {  // alternating, so that a busy moment hits every side
        t1[r] = timed_run("", "--threads 1", dir, data, limit, "1");
        ta[r] = timed_run("", "", dir, data, limit, "A");
        tn_[r] = timed_run(launcher, "", dir, data, limit, "N");
        if (t1[r] < 0 || ta[r] < 0 || tn_[r] < 0) rc = 3;
    }
    char cmp[4096];
    snprintf(cmp, sizeof cmp,
             "cd %s && n=0; for f in out1/model/samples_*.jsonl; do s=$(basename $f | sed -E 's/_[0-9T:.-]+_[0-9a-f]{6}\\.jsonl$//'); "
             "cmp -s $f outN/model/${s}_*.jsonl || exit 1; n=$((n+1)); done; [ $n -gt 0 ]", dir);
    int same = !rc && system(cmp) == 0;
    if (!rc) {
        qsort(t1, (size_t)reps, sizeof *t1, bench_cmp_double);
        qsort(ta, (size_t)reps, sizeof *ta, bench_cmp_double);
        qsort(tn_, (size_t)reps, sizeof *tn_, bench_cmp_double);
        double a = t1[reps / 2], all = ta[reps / 2], b = tn_[reps / 2];
        double load[3] = {0};
        if (getloadavg(load, 3) < 1) load[0] = -1;
        printf("random llama 26.2M (d_model %d, %d layers), %s, --limit %d, all tasks, CPU (%ld cores), median of %d\n", C,
               L, data, limit, sysconf(_SC_NPROCESSORS_ONLN), reps);
        printf("  1 process, 1 thread     %8.2f s   (the one-device baseline)\n", a);
        printf("  1 process, every core   %8.2f s   speedup %.2fx\n", all, a / all);
        printf("  %d ranks                 %8.2f s   speedup %.2fx, scaling efficiency %.0f%%\n", ranks, b, a / b,
               100 * a / (ranks * b));
        printf("  load average at the end %.2f (other work on this machine makes these noisy)\n", load[0]);
        printf("  samples files %s\n", same ? "byte-identical" : "DIFFER");
        if (!same) rc = 1;
    }
    free(t1), free(ta), free(tn_);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) fprintf(stderr, "bench_dist: could not remove %s\n", dir);
    return rc;
}
