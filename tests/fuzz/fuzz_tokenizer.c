// fuzz_tokenizer.c: a tokenizer file of kind FUZZ_KIND (1 tokenizer.json, 2 SentencePiece
// .model, 3 llama2.c tokenizer.bin) loaded from the input, then used: fixed texts and the
// input's own first bytes encoded (with and without specials) and the ids decoded; a
// tokenizer.json's byte counts for bits per byte (tokenizer_hf_byte_luts), which must add up to
// the bytes of each decoded run of ids between special tokens.
#include <stdint.h>

#include "common/xalloc.h"
#include "model/tokenizer_impl.h"
#include "tests/fuzz/fuzz_util.h"

#ifndef FUZZ_KIND
#define FUZZ_KIND 1
#endif

static const char *const texts[] = {
    "Hello world! It's 2024 -- naïve café, 東京, emoji 😀.\n\n  spaced   out  ",
    " <s> </s> <|endoftext|> <unk> <0x41>\t\r\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "\xff\xfe bad \xc3 utf8 \xed\xa0\x80 end",
    "",
};

static void use(const struct tokenizer *t, const char *text, size_t len) {
    for (int special = 0; special < 2; special++) {
        struct ivec ids = {0};
        xsa_error err = {0};
        int rc = tokenizer_encode(t, text, len, special, &ids, &err);
        fuzz_check_error(rc, &err);
        if (!rc) {
            for (size_t i = 0; i < ids.n; i++)
                if (ids.v[i] < 0 || ids.v[i] >= t->vocab_size) {
                    fprintf(stderr, "id %d outside the vocabulary (%d)\n", (int)ids.v[i], t->vocab_size);
                    abort();
                }
            struct sbuf s = {0};
            xsa_error e2 = {0};
            fuzz_check_error(tokenizer_decode(t, ids.v, ids.n, &s, &e2), &e2);
            sbuf_free(&s);
        }
        ivec_free(&ids);
    }
}

// The byte counts add up, over each run of ids between special tokens, to the bytes the decoder
// makes of the run: the rule ppl's bits per byte rest on. Where decode makes U+FFFD (byte tokens
// that spell no UTF-8) or U+2581 (a run of byte tokens that spells the Metaspace character),
// token-by-token counts differ by design (tokenizer.h), and the run is not checked.
static void check_bytes(const struct tokenizer *t, const char *text, const int16_t *bytes, const uint8_t *lead,
                        const uint8_t *boundary) {
    struct ivec ids = {0};
    xsa_error err = {0};
    size_t len = strlen(text) < 200 ? strlen(text) : 200;
    if (!tokenizer_encode(t, text, len, 1, &ids, &err)) {
        for (size_t a = 0; a < ids.n;) {
            if (boundary[ids.v[a]]) {
                a++;
                continue;
            }
            size_t b = a;
            long want = 0;
            for (; b < ids.n && !boundary[ids.v[b]]; b++) want += bytes[ids.v[b]] + (b > a ? lead[ids.v[b]] : 0);
            struct sbuf s = {0};
            xsa_error e2 = {0};
            if (!tokenizer_decode(t, ids.v + a, b - a, &s, &e2) && !memmem(s.s, s.n, "\xEF\xBF\xBD", 3) &&
                !memmem(s.s, s.n, "\xE2\x96\x81", 3) && (long)s.n != want) {
                fprintf(stderr, "ids %zu..%zu decode to %zu bytes; the byte tables count %ld\n", a, b, s.n, want);
                abort();
            }
            sbuf_free(&s);
            a = b;
        }
    }
    ivec_free(&ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = xsa_malloc(size + 1);  // loaders get the file NUL-terminated, as file_read_all gives it
    memcpy(buf, data, size);
    buf[size] = '\0';
    struct tokenizer *t = xsa_calloc(1, sizeof *t);
    t->bos_id = t->eos_id = -1;
    snprintf(t->path, sizeof t->path, "fuzz");
    xsa_error err = {0};
    int rc = FUZZ_KIND == 1 ? tokenizer_hf_load(t, "fuzz.json", buf, size, &err)
           : FUZZ_KIND == 2 ? tokenizer_sp_load(t, "fuzz.model", buf, size, &err)
                            : tokenizer_llama2c_load(t, "fuzz.bin", buf, size, &err);
    fuzz_check_error(rc, &err);
    if (!rc) {
        if (t->bos_id >= t->vocab_size || t->eos_id >= t->vocab_size) {
            fprintf(stderr, "bos %d / eos %d outside the vocabulary (%d)\n", t->bos_id, t->eos_id, t->vocab_size);
            abort();
        }
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) use(t, texts[i], strlen(texts[i]));
        use(t, buf, size < 200 ? size : 200);
        if (FUZZ_KIND == 1) {  // ppl's bits per byte: each id's byte count, never negative
            int n = t->vocab_size + 2;
            int16_t *bytes = xsa_malloc((size_t)n * sizeof *bytes);
            uint8_t *boundary = xsa_malloc((size_t)n), *lead = xsa_malloc((size_t)n);
            xsa_error e = {0};
            int brc = tokenizer_hf_byte_luts(t, n, bytes, lead, boundary, &e);
            fuzz_check_error(brc, &e);
            for (int i = 0; !brc && i < n; i++)
                if (bytes[i] < 0 || boundary[i] > 1 || (boundary[i] && (bytes[i] || lead[i]))) abort();
            for (size_t i = 0; !brc && i < sizeof texts / sizeof texts[0]; i++) check_bytes(t, texts[i], bytes, lead, boundary);
            if (!brc) check_bytes(t, buf, bytes, lead, boundary);
            free(bytes);
            free(boundary);
            free(lead);
        }
        tokenizer_free(t);
    } else {
        free(t);
    }
    free(buf);
    return 0;
}
