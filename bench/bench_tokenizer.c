// bench_tokenizer.c: encoding speed of the tokenizer.json fixtures, line by line, one thread.
// Input: the lines of FILE when given; else ../shared/benchdata/lambada_openai/lambada_test.jsonl
// when present; else tests/fixtures/tokenizers/corpus.txt. The input is repeated to at least
// 8 MB. Prints MB/s and the token count per tokenizer (tools/bench/bench_hf_tokenizers.py runs the
// Python `tokenizers` library on the same input and prints both side by side).
// Usage: build/bench/bench_tokenizer [FILE]   (from the repo root)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "model/tokenizer.h"

#define MIN_BYTES ((size_t)8 << 20)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    const char *shared = "../shared/benchdata/lambada_openai/lambada_test.jsonl";
    const char *in = argc > 1 ? argv[1] : file_exists(shared) ? shared : "tests/fixtures/tokenizers/corpus.txt";
    static const char *const names[] = {"gpt2", "llama3", "hf_sp", "hf_metaspace", "norm_mix", "split_mix"};
    char *data = NULL;
    size_t len = 0;
    xsa_error err = {0};
    if (file_read_all(in, (size_t)1 << 30, &data, &len, &err)) {
        fprintf(stderr, "bench_tokenizer: %s\n", err.msg);
        return 2;
    }
    size_t reps = len ? (MIN_BYTES + len - 1) / len : 1;
    size_t nlines = 0;
    for (size_t i = 0; i < len; i++) nlines += data[i] == '\n';
    printf("input %s: %zu lines, %.2f MB x %zu repeats\n", in, nlines, (double)len / 1e6, reps);
    printf("%-14s %10s %12s\n", "tokenizer", "MB/s", "tokens");
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/tokenizers/%s/tokenizer.json", names[k]);
        struct tokenizer *t = NULL;
        if (tokenizer_load(&t, path, &err)) {
            fprintf(stderr, "bench_tokenizer: %s\n", err.msg);
            free(data);
            return 2;
        }
        struct ivec ids = {0};
        size_t tokens = 0;
        double t0 = now();
        for (size_t r = 0; r < reps; r++) {
            for (size_t i = 0; i < len;) {
                const char *nl = memchr(data + i, '\n', len - i);
                size_t e = nl ? (size_t)(nl - data) : len;
                ids.n = 0;
                if (tokenizer_encode(t, data + i, e - i, 0, &ids, &err)) {
                    fprintf(stderr, "bench_tokenizer: %s\n", err.msg);
                    return 3;
                }
                tokens += ids.n;
                i = e + 1;
            }
        }
        double dt = now() - t0;
        printf("%-14s %10.2f %12zu\n", names[k], (double)len * (double)reps / 1e6 / dt, tokens / reps);
        ivec_free(&ids);
        tokenizer_free(t);
    }
    free(data);
    return 0;
}
