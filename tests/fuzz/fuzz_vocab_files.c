// fuzz_vocab_files.c: a merges.txt (and, after a line "--VOCAB--", a vocab.json) beside a fixed
// GPT-2-style folder ($FUZZ_VOCAB_DIR, default the opt vocab_files fixture): the merges parser
// gives well-formed pairs or one error line; the folder's tokenizer loads or refuses in one line,
// and loaded, encodes fixed texts and the input's first bytes to ids inside the vocabulary.
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "model/tokenizer_impl.h"
#include "tests/fuzz/fuzz_util.h"

static char dir[256], vocab_path[300], merges_path[300], vocab0[1 << 16];
static size_t vocab0_n;

static void copy_in(const char *src_dir, const char *name, int keep) {
    char src[512], dst[512];
    static char buf[1 << 16];
    snprintf(src, sizeof src, "%s/%s", src_dir, name);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    FILE *f = fopen(src, "rb");
    if (!f) abort();
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n == sizeof buf) abort();
    fuzz_write(dst, buf, n);
    if (keep) memcpy(vocab0, buf, vocab0_n = n);
}

static void setup(void) {
    if (dir[0]) return;
    fuzz_path(dir, sizeof dir, "vocabfiles");
    if (mkdir(dir, 0700) && errno != EEXIST) abort();
    const char *src = getenv("FUZZ_VOCAB_DIR") ? getenv("FUZZ_VOCAB_DIR") : "tests/fixtures/tokenizers/vocab_files/opt";
    copy_in(src, "vocab.json", 1);
    copy_in(src, "config.json", 0);
    copy_in(src, "tokenizer_config.json", 0);
    copy_in(src, "special_tokens_map.json", 0);
    snprintf(vocab_path, sizeof vocab_path, "%s/vocab.json", dir);
    snprintf(merges_path, sizeof merges_path, "%s/merges.txt", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    static const char sep[] = "\n--VOCAB--\n";
    const uint8_t *v = memmem(data, size, sep, sizeof sep - 1);
    size_t mn = v ? (size_t)(v - data) : size;
    // The parser alone: pairs of two strings, or one error line.
    cJSON *pairs = NULL;
    xsa_error err = {0};
    int rc = tokenizer_merges_txt_parse((const char *)data, mn, &pairs, "merges.txt", &err);
    fuzz_check_error(rc, &err);
    for (const cJSON *p = pairs ? pairs->child : NULL; p; p = p->next)
        if (cJSON_GetArraySize(p) != 2 || !cJSON_IsString(p->child) || !cJSON_IsString(p->child->next)) abort();
    cJSON_Delete(pairs);
    fuzz_write(merges_path, data, mn);
    if (v) fuzz_write(vocab_path, v + sizeof sep - 1, size - mn - (sizeof sep - 1));
    else fuzz_write(vocab_path, vocab0, vocab0_n);
    struct tokenizer *t = NULL;
    xsa_error e2 = {0};
    rc = tokenizer_load(&t, vocab_path, &e2);
    fuzz_check_error(rc, &e2);
    if (rc) return 0;
    const char *texts[] = {"Hello there, world </s> <pad>\n\n  caf\xc3\xa9 \xf0\x9f\x98\x80", (const char *)data};
    size_t lens[] = {strlen(texts[0]), size < 64 ? size : 64};
    for (int k = 0; k < 2; k++)
        for (int special = 0; special < 2; special++) {
            struct ivec ids = {0};
            xsa_error e3 = {0};
            rc = tokenizer_encode(t, texts[k], lens[k], special, &ids, &e3);
            fuzz_check_error(rc, &e3);
            for (size_t i = 0; !rc && i < ids.n; i++)
                if (ids.v[i] < 0 || ids.v[i] >= tokenizer_vocab_size(t)) abort();
            struct sbuf out = {0};
            if (!rc) fuzz_check_error(tokenizer_decode(t, ids.v, ids.n, &out, &e3), &e3);
            sbuf_free(&out);
            ivec_free(&ids);
        }
    tokenizer_free(t);
    return 0;
}
