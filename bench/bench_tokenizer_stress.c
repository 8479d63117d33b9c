// bench_tokenizer_stress.c: load time of large tokenizer files and encode time on long
// adversarial single "words" (100 KB of one letter, random letters, digits, spaces,
// punctuation, CJK, random bytes) at 25, 50 and 100 KB, so quadratic behaviour shows as a 4x
// step between 50 and 100 KB; then throughput on ordinary text (the fixture corpus x 64).
// Make a large tokenizer.json with tools/fixtures/make_big_tokenizer.py (it also prints the `tokenizers`
// library's load time for the same file, to set beside ours).
// Usage: build/bench/bench_tokenizer_stress TOKENIZER_FILE...   (from the repo root)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "model/tokenizer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned long long rng = 88172645463325252ull;
static unsigned next_rand(void) {  // xorshift64
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

// Fills out[0..n) with one kind of word (UTF-8 kept whole at the end).
static size_t make_word(int kind, char *out, size_t n) {
    static const char punct[] = "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~";
    size_t i = 0;
    while (i < n) {
        switch (kind) {
        case 0: out[i++] = 'a'; break;
        case 1: out[i++] = (char)('a' + next_rand() % 26); break;
        case 2: out[i++] = (char)('0' + next_rand() % 10); break;
        case 3: out[i++] = ' '; break;
        case 4: out[i++] = punct[next_rand() % (sizeof punct - 1)]; break;
        case 5: {  // CJK U+4E00..U+62FF, 3 bytes each
            if (i + 3 > n) return i;
            unsigned cp = 0x4E00 + next_rand() % 0x1500;
            out[i++] = (char)(0xE0 | (cp >> 12));
            out[i++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[i++] = (char)(0x80 | (cp & 0x3F));
            break;
        }
        default: out[i++] = (char)(1 + next_rand() % 255); break;  // random bytes, no NUL
        }
    }
    return i;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s TOKENIZER_FILE...\n", argv[0]);
        return 2;
    }
    static const char *const kinds[] = {"'a' x N", "random a-z", "digits", "spaces", "punctuation", "CJK", "random bytes"};
    char *corpus = NULL;
    size_t clen = 0;
    xsa_error err = {0};
    if (file_read_all("tests/fixtures/tokenizers/corpus.txt", 1 << 20, &corpus, &clen, &err)) {
        fprintf(stderr, "bench_tokenizer_stress: %s\n", err.msg);
        return 2;
    }
    char *word = xsa_malloc(100000);
    for (int a = 1; a < argc; a++) {
        struct tokenizer *t = NULL;
        double best = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            tokenizer_free(t);
            t = NULL;
            double t0 = now();
            if (tokenizer_load(&t, argv[a], &err)) {
                fprintf(stderr, "bench_tokenizer_stress: %s\n", err.msg);
                return 2;
            }
            double dt = now() - t0;
            if (dt < best) best = dt;
        }
        printf("%s: vocab %d, load %.3f s (best of 3)\n", argv[a], tokenizer_vocab_size(t), best);
        printf("  %-14s %12s %12s %12s %10s\n", "one word of", "25 KB", "50 KB", "100 KB", "tokens");
        for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++) {
            printf("  %-14s", kinds[k]);
            size_t ntok = 0;
            for (size_t size = 25000; size <= 100000; size *= 2) {
                size_t n = make_word(k, word, size);
                struct ivec ids = {0};
                double t0 = now();
                int rc = tokenizer_encode(t, word, n, 0, &ids, &err);
                double dt = now() - t0;
                if (rc) printf(" %12s", "error");
                else printf(" %10.4f s", dt);
                ntok = ids.n;
                ivec_free(&ids);
                xsa_error_clear(&err);
            }
            printf(" %10zu\n", ntok);
        }
        // Ordinary text, line by line.
        size_t bytes = 0, tokens = 0;
        double t0 = now();
        for (int rep = 0; rep < 64; rep++)
            for (char *line = corpus, *nl; line < corpus + clen; line = nl + 1) {
                nl = memchr(line, '\n', (size_t)(corpus + clen - line));
                if (!nl) nl = corpus + clen;
                struct ivec ids = {0};
                if (tokenizer_encode(t, line, (size_t)(nl - line), 0, &ids, &err) == 0) tokens += ids.n;
                bytes += (size_t)(nl - line);
                ivec_free(&ids);
            }
        double dt = now() - t0;
        printf("  corpus.txt x 64: %.2f MB/s, %zu tokens\n", (double)bytes / 1e6 / dt, tokens);
        tokenizer_free(t);
    }
    free(word);
    free(corpus);
    return 0;
}
