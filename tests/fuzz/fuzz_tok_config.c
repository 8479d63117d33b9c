// fuzz_tok_config.c: a tokenizer_config.json (and, after a line "--MAP--", a
// special_tokens_map.json) beside a fixed tokenizer.json ($FUZZ_TOKENIZER, default the gpt2
// fixture): the tokenizer loads or refuses in one line; the BOS/EOS it gives lie in the
// vocabulary; lm-eval's options for each --add-bos setting are set or refused in one line, and a
// request then encodes to ids of the vocabulary.
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "eval/encode.h"
#include "model/tokenizer_impl.h"
#include "tests/fuzz/fuzz_util.h"

static char dir[256], tok_path[300], cfg_path[300], map_path[300];

static void setup(void) {
    if (dir[0]) return;
    fuzz_path(dir, sizeof dir, "tokcfg");
    if (mkdir(dir, 0700) && errno != EEXIST) abort();
    snprintf(tok_path, sizeof tok_path, "%s/tokenizer.json", dir);
    snprintf(cfg_path, sizeof cfg_path, "%s/tokenizer_config.json", dir);
    snprintf(map_path, sizeof map_path, "%s/special_tokens_map.json", dir);
    const char *src = getenv("FUZZ_TOKENIZER") ? getenv("FUZZ_TOKENIZER") : "tests/fixtures/tokenizers/gpt2/tokenizer.json";
    FILE *f = fopen(src, "rb");
    if (!f) abort();
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    fuzz_write(tok_path, buf, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    static const char sep[] = "\n--MAP--\n";
    const uint8_t *map = memmem(data, size, sep, sizeof sep - 1);
    size_t cfg_n = map ? (size_t)(map - data) : size;
    fuzz_write(cfg_path, data, cfg_n);
    unlink(map_path);
    if (map) fuzz_write(map_path, map + sizeof sep - 1, size - cfg_n - (sizeof sep - 1));
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    int rc = tokenizer_load(&t, tok_path, &err);
    fuzz_check_error(rc, &err);
    if (rc) return 0;
    int v = tokenizer_vocab_size(t);
    if (tokenizer_config_bos_id(t) >= v || tokenizer_config_eos_id(t) >= v || tokenizer_config_bos_id(t) < -1 ||
        tokenizer_config_eos_id(t) < -1) {
        fprintf(stderr, "config bos %d / eos %d outside the vocabulary (%d)\n", tokenizer_config_bos_id(t),
                tokenizer_config_eos_id(t), v);
        abort();
    }
    for (int add_bos = -1; add_bos <= 1; add_bos++) {
        struct encode_options o;
        xsa_error e = {0};
        rc = encode_options_init(&o, t, add_bos, &e);
        fuzz_check_error(rc, &e);
        if (rc) continue;
        o.max_length = 64;
        struct sbuf pb = {0};
        o.prefix_text = encode_prefix_text(t, o.prefix_token_id, &pb);
        struct encoded_request r;
        rc = encode_request(t, &o, "<|endoftext|>Hello there,", " world", &r, &e);
        fuzz_check_error(rc, &e);
        for (size_t i = 0; !rc && i < r.input.n; i++)
            if (r.input.v[i] < 0 || r.input.v[i] >= v) abort();
        if (!rc) encoded_request_free(&r);
        sbuf_free(&pb);
    }
    tokenizer_free(t);
    return 0;
}
