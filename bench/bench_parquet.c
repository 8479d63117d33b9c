// bench_parquet.c: speed of data/parquet.c on one file: the file read from memory into rows
// (cJSON objects, as the Hub source builds them), and into canonical JSONL (what the cache
// stores). Prints MB/s of Parquet bytes and rows/s, best of REPEATS runs, one thread.
// The HellaSwag-validation-shaped input and pyarrow's figures on the same file:
//   python3 -m tools.fixtures.make_parquet_fixtures --bench /tmp/hellaswag_bench.parquet
//   build/bench/bench_parquet /tmp/hellaswag_bench.parquet
//   python3 -m tools.bench.bench_parquet_pyarrow /tmp/hellaswag_bench.parquet
// Usage: build/bench/bench_parquet FILE [REPEATS]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "data/cache.h"
#include "data/parquet.h"
#include "data/sources.h"
#include "tasks/rows.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.parquet [REPEATS]\n", argv[0]);
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    if (repeats < 1) repeats = 1;
    char *buf = NULL;
    size_t len = 0;
    xsa_error err = {0};
    if (file_read_all(argv[1], PARQUET_MAX_FILE, &buf, &len, &err)) {
        fprintf(stderr, "bench_parquet: %s\n", err.msg);
        return 2;
    }
    double best_rows = 1e30, best_jsonl = 1e30;
    long n = 0;
    size_t jsonl_len = 0;
    for (int k = 0; k < repeats; k++) {
        struct source_result s = {0};  // rows kept as the data sources keep them
        double t0 = now();
        if (parquet_read_rows((const unsigned char *)buf, len, argv[1], source_result_emit, &s, &n, &err)) {
            fprintf(stderr, "bench_parquet: %s\n", err.msg);
            return 2;
        }
        double t1 = now();
        char *text = NULL;
        if (task_rows_serialize_array(s.rows, s.n, &text, &jsonl_len, &err)) {
            fprintf(stderr, "bench_parquet: %s\n", err.msg);
            return 2;
        }
        double t2 = now();
        if (t1 - t0 < best_rows) best_rows = t1 - t0;
        if (t2 - t0 < best_jsonl) best_jsonl = t2 - t0;
        free(text);
        source_result_free(&s);
    }
    double mb = (double)len / 1e6;
    printf("xsa-eval parquet -> rows:  %ld rows, %.2f MB file in %.4f s (best of %d): %.1f MB/s, %.0f rows/s\n", n, mb,
           best_rows, repeats, mb / best_rows, (double)n / best_rows);
    printf("xsa-eval parquet -> JSONL: %ld rows, %.2f MB JSONL in %.4f s (best of %d): %.1f MB/s, %.0f rows/s\n", n,
           (double)jsonl_len / 1e6, best_jsonl, repeats, mb / best_jsonl, (double)n / best_jsonl);
    free(buf);
    return 0;
}
