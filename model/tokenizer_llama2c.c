// tokenizer_llama2c.c: llama2.c's tokenizer.bin, encoded and decoded as run.c's encode() and
// decode() do, id for id. File: int32 max_token_length, then per token: float32 score, int32
// len, len bytes. The token count is not stored (run.c takes it from the checkpoint), so the
// loader reads tokens until the end of the file. Strings are C strings as in run.c: a token's
// string and the text end at their first NUL byte. BOS is 1, EOS 2; add_special = 1 prepends
// BOS as run.c's encode(bos=1) does. Decoding drops the leading space of a token after BOS
// and turns "<0xXX>" tokens into raw bytes; the first id has no previous token.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/piece_map.h"
#include "model/tokenizer_impl.h"

#define L2C_MAX_TOKENS (1 << 22)
#define L2C_MAX_TOKEN_LEN (1 << 16)

struct l2c_model {
    int n;
    char **strs;       // (n,) token strings, NUL-terminated copies
    uint32_t *lens;    // (n,) strlen of each
    float *scores;     // (n,)
    struct piece_map map;
    int space_id;      // the dummy prefix token " ", -1 when absent
    char path[4096];   // for messages
};

static void l2c_free(void *impl) {
    struct l2c_model *m = impl;
    if (!m) return;
    for (int i = 0; i < m->n; i++) free(m->strs[i]);
    free(m->strs);
    free(m->lens);
    free(m->scores);
    piece_map_free(&m->map);
    free(m);
}

static uint32_t l2c_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int l2c_encode(const void *impl, const char *text, size_t len, int add_special, struct ivec *out,
                      xsa_error *err);
static int l2c_decode(const void *impl, const int32_t *ids, size_t n, struct sbuf *out, xsa_error *err);
static const struct tokenizer_ops l2c_ops = {l2c_encode, l2c_decode, l2c_free};

int tokenizer_llama2c_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err) {
    const unsigned char *p = (const unsigned char *)data;
    if (len < 4) return xsa_fail(err, XSA_EBADINPUT, "%s: truncated llama2.c tokenizer (no header)", path);
    int32_t max_len = (int32_t)l2c_u32(p);
    if (max_len <= 0 || max_len > L2C_MAX_TOKEN_LEN)
        return xsa_fail(err, XSA_EBADINPUT, "%s: not a llama2.c tokenizer (max_token_length %d)", path, (int)max_len);
    // Pass 1: count and check the records.
    size_t off = 4;
    int n = 0;
    while (off < len) {
        if (len - off < 8)
            return xsa_fail(err, XSA_EBADINPUT, "%s: truncated llama2.c tokenizer (token %d header at byte %zu)", path,
                            n, off);
        int32_t tl = (int32_t)l2c_u32(p + off + 4);
        if (tl < 0 || tl > L2C_MAX_TOKEN_LEN)
            return xsa_fail(err, XSA_EBADINPUT, "%s: corrupt llama2.c tokenizer (token %d has length %d)", path, n,
                            (int)tl);
        if ((size_t)tl > len - off - 8)
            return xsa_fail(err, XSA_EBADINPUT, "%s: truncated llama2.c tokenizer (token %d runs past the end)", path,
                            n);
        off += 8 + (size_t)tl;
        if (++n > L2C_MAX_TOKENS)
            return xsa_fail(err, XSA_EBADINPUT, "%s: llama2.c tokenizer has over %d tokens", path, L2C_MAX_TOKENS);
    }
    if (n < 3) return xsa_fail(err, XSA_EBADINPUT, "%s: llama2.c tokenizer has %d tokens (needs <unk>, <s>, </s>)", path, n);
    struct l2c_model *m = calloc(1, sizeof *m);
    if (!m) return xsa_fail(err, XSA_ERUNTIME, "out of memory");
    m->strs = calloc((size_t)n, sizeof *m->strs);
    m->lens = calloc((size_t)n, sizeof *m->lens);
    m->scores = calloc((size_t)n, sizeof *m->scores);
    if (!m->strs || !m->lens || !m->scores) goto oom;
    off = 4;
    for (int i = 0; i < n; i++) {
        memcpy(&m->scores[i], p + off, 4);  // float32, little-endian hosts only (as run.c)
        uint32_t tl = l2c_u32(p + off + 4);
        off += 8;
        if (!(m->strs[i] = malloc(tl + 1))) goto oom;
        memcpy(m->strs[i], p + off, tl);
        m->strs[i][tl] = '\0';
        m->lens[i] = (uint32_t)strlen(m->strs[i]);  // C string: ends at the first NUL
        m->n = i + 1;
        off += tl;
    }
    if (piece_map_init(&m->map, (const char *const *)m->strs, m->lens, (size_t)n)) goto oom;
    for (int i = 0; i < n; i++) piece_map_add(&m->map, i);  // duplicates: the first wins
    m->space_id = piece_map_get(&m->map, " ", 1);
    snprintf(m->path, sizeof m->path, "%s", path);
    t->kind = TOKENIZER_LLAMA2C;
    t->ops = &l2c_ops;
    t->impl = m;
    t->vocab_size = n;
    t->bos_id = 1;
    t->eos_id = 2;
    t->adds_bos = 1;
    return 0;
oom:
    l2c_free(m);
    return xsa_fail(err, XSA_ERUNTIME, "out of memory");
}

static int l2c_encode(const void *impl, const char *text, size_t len, int add_special, struct ivec *out,
                      xsa_error *err) {
    const struct l2c_model *m = impl;
    const char *nul = memchr(text, '\0', len);
    if (nul) len = (size_t)(nul - text);  // run.c reads a C string
    size_t base = out->n;  // merges run over everything this call appends, BOS included
    char *buf = NULL;
    size_t buf_cap = 0;
    if (add_special && ivec_push(out, 1)) goto oom;
    if (len > 0) {
        if (m->space_id < 0)
            return xsa_fail(err, XSA_EBADINPUT, "%s: llama2.c tokenizer has no \" \" token for the dummy prefix",
                            m->path);
        if (ivec_push(out, m->space_id)) goto oom;
    }
    for (size_t i = 0; i < len;) {
        size_t j = i + 1;  // a character: this byte and up to 3 continuation bytes
        while (j < len && ((unsigned char)text[j] & 0xC0) == 0x80 && j - i < 4) j++;
        int32_t id = piece_map_get(&m->map, text + i, j - i);
        if (id >= 0) {
            if (ivec_push(out, id)) goto oom;
        } else {
            for (size_t k = i; k < j; k++) {
                int32_t b = (unsigned char)text[k] + 3;  // run.c: bytes follow <unk>, <s>, </s>
                if (b >= m->n)
                    return xsa_fail(err, XSA_EBADINPUT,
                                    "%s: byte fallback id %d is past the llama2.c vocabulary (%d tokens)", m->path,
                                    (int)b, m->n);
                if (ivec_push(out, b)) goto oom;
            }
        }
        i = j;
    }
    // Merge the best-scoring adjacent pair until none is in the vocabulary (run.c's loop).
    int32_t *v = out->v + base;
    size_t n = out->n - base;
    for (;;) {
        float best = -1e10f;
        int32_t best_id = -1;
        size_t best_i = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            size_t a = m->lens[v[i]], b = m->lens[v[i + 1]];
            if (a + b > buf_cap) {
                size_t cap = 2 * (a + b) + 16;
                char *nb = realloc(buf, cap);
                if (!nb) goto oom;
                buf = nb;
                buf_cap = cap;
            }
            memcpy(buf, m->strs[v[i]], a);
            memcpy(buf + a, m->strs[v[i + 1]], b);
            int32_t id = piece_map_get(&m->map, buf, a + b);
            if (id >= 0 && m->scores[id] > best) {
                best = m->scores[id];
                best_id = id;
                best_i = i;
            }
        }
        if (best_id < 0) break;
        v[best_i] = best_id;
        memmove(v + best_i + 1, v + best_i + 2, (n - best_i - 2) * sizeof *v);
        n--;
    }
    out->n = base + n;
    free(buf);
    return 0;
oom:
    free(buf);
    return xsa_fail(err, XSA_ERUNTIME, "out of memory while tokenizing");
}

static int l2c_hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int l2c_decode(const void *impl, const int32_t *ids, size_t n, struct sbuf *out, xsa_error *err) {
    const struct l2c_model *m = impl;
    for (size_t i = 0; i < n; i++) {
        const char *piece = m->strs[ids[i]];
        size_t len = m->lens[ids[i]];
        if (i > 0 && ids[i - 1] == 1 && len > 0 && piece[0] == ' ') piece++, len--;
        if (len >= 4 && memcmp(piece, "<0x", 3) == 0 && l2c_hex(piece[3]) >= 0) {  // sscanf "<0x%02hhX>"
            int v = l2c_hex(piece[3]);
            if (l2c_hex(piece[4]) >= 0) v = v * 16 + l2c_hex(piece[4]);
            char byte = (char)v;
            if (sbuf_append(out, &byte, 1)) goto oom;
        } else if (sbuf_append(out, piece, len)) {
            goto oom;
        }
    }
    return 0;
oom:
    return xsa_fail(err, XSA_ERUNTIME, "out of memory while decoding");
}
