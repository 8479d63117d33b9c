// bench_sp_tokenizer.c: encode throughput of a tokenizer on the lines of a text file, to compare
// with the Python sentencepiece library on the same lines (tools/bench/bench_sp_tokenizer.py).
// Usage: build/bench/bench_sp_tokenizer [MODEL [TEXTFILE [REPEATS]]]
//   defaults: ../shared's fineweb_1024_bpe.model, ../shared's boolq/dev.jsonl (raw lines), 3
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_util.h"
#include "common/fileio.h"
#include "model/tokenizer.h"

#define SHARED "../shared/benchdata/"

int main(int argc, char **argv) {
    const char *model = argc > 1 ? argv[1] : SHARED "models/parameter_golf_sp1024/fineweb_1024_bpe.model";
    const char *text = argc > 2 ? argv[2] : SHARED "boolq/dev.jsonl";
    int repeats = argc > 3 ? atoi(argv[3]) : 3;
    xsa_error err = {0};
    struct tokenizer *t = NULL;
    char *data = NULL;
    size_t n = 0;
    if (tokenizer_load(&t, model, &err) || file_read_all(text, (size_t)1 << 30, &data, &n, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        tokenizer_free(t);
        return err.code ? err.code : 2;
    }
    struct ivec ids = {0};
    size_t lines = 0, tokens = 0;
    double best = 1e30;
    for (int r = 0; r < (repeats > 0 ? repeats : 1); r++) {
        lines = tokens = 0;
        double t0 = timing_now_s();
        for (const char *s = data, *end = data + n; s < end;) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
            ids.n = 0;
            if (tokenizer_encode(t, s, len, 0, &ids, &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return err.code;
            }
            tokens += ids.n;
            lines++;
            s += len + 1;
        }
        double dt = timing_now_s() - t0;
        if (dt < best) best = dt;
    }
    printf("xsa-eval encode: %zu lines, %.2f MB, %zu tokens in %.3f s (best of %d): %.2f MB/s, %.0f tokens/s\n", lines,
           (double)n / 1e6, tokens, best, repeats, (double)n / 1e6 / best, (double)tokens / best);
    ivec_free(&ids);
    free(data);
    tokenizer_free(t);
    return 0;
}
