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

#include "common/heap.h"
#include "common/xalloc.h"
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
    struct l2c_model *m = xsa_calloc(1, sizeof *m);
    m->strs = xsa_calloc((size_t)n, sizeof *m->strs);
    m->lens = xsa_calloc((size_t)n, sizeof *m->lens);
    m->scores = xsa_calloc((size_t)n, sizeof *m->scores);
    off = 4;
    for (int i = 0; i < n; i++) {
        memcpy(&m->scores[i], p + off, 4);  // float32, little-endian hosts only (as run.c)
        uint32_t tl = l2c_u32(p + off + 4);
        off += 8;
        m->strs[i] = xsa_malloc(tl + 1);
        memcpy(m->strs[i], p + off, tl);
        m->strs[i][tl] = '\0';
        m->lens[i] = (uint32_t)strlen(m->strs[i]);  // C string: ends at the first NUL
        m->n = i + 1;
        off += tl;
    }
    piece_map_init(&m->map, (const char *const *)m->strs, m->lens, (size_t)n);
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
}

// run.c's merge loop takes, over and over, the adjacent pair whose concatenation is a token
// with the highest score (the leftmost on ties, scores above -1e10 only) and merges it. That
// scan is quadratic; the same choices come from a heap of candidate pairs ordered by (score
// desc, left position asc), a pair being stale once either side has changed.
struct l2c_sym {
    int32_t id;          // -1 once merged into its left neighbour
    int32_t prev, next;  // live neighbours, -1 at the ends
};

struct l2c_pair {
    float score;
    int32_t left, right;       // symbol positions
    int32_t lid, rid, new_id;  // the ids the pair was built from, and the merged token
};

static int l2c_before(const void *pa, const void *pb) {
    const struct l2c_pair *a = pa, *b = pb;
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

// Pushes the pair (left, right) when their concatenation is a token run.c would pick.
static void l2c_consider(const struct l2c_model *m, const struct l2c_sym *sy, int32_t left, int32_t right,
                         struct xsa_heap *h, struct sbuf *buf) {
    if (left < 0 || right < 0) return;
    int32_t a = sy[left].id, b = sy[right].id;
    buf->n = 0;
    sbuf_append(buf, m->strs[a], m->lens[a]);
    sbuf_append(buf, m->strs[b], m->lens[b]);
    int32_t id = piece_map_get(&m->map, buf->s, buf->n);
    if (id < 0 || !(m->scores[id] > -1e10f)) return;  // run.c: best starts at -1e10, compared with >
    struct l2c_pair p = {m->scores[id], left, right, a, b, id};
    xsa_heap_push(h, &p, sizeof p, l2c_before);
}

// Merges ids v[0..*n) in place as run.c does; *n shrinks.
static void l2c_merge(const struct l2c_model *m, int32_t *v, size_t *n) {
    if (*n < 2) return;
    struct l2c_sym *sy = xsa_malloc(*n * sizeof *sy);  // (n,)
    struct xsa_heap h = {0};  // of struct l2c_pair
    struct sbuf buf = {0};
    for (size_t i = 0; i < *n; i++)
        sy[i] = (struct l2c_sym){v[i], (int32_t)i - 1, i + 1 < *n ? (int32_t)i + 1 : -1};
    for (size_t i = 0; i + 1 < *n; i++) l2c_consider(m, sy, (int32_t)i, (int32_t)i + 1, &h, &buf);
    while (h.n) {
        struct l2c_pair p;
        xsa_heap_pop(&h, &p, sizeof p, l2c_before);
        struct l2c_sym *l = &sy[p.left], *r = &sy[p.right];
        if (l->id != p.lid || l->next != p.right || r->id != p.rid) continue;  // stale
        l->id = p.new_id;
        l->next = r->next;
        if (r->next >= 0) sy[r->next].prev = p.left;
        r->id = -1;
        l2c_consider(m, sy, l->prev, p.left, &h, &buf);
        l2c_consider(m, sy, p.left, l->next, &h, &buf);
    }
    size_t k = 0;
    for (int32_t i = 0; i >= 0; i = sy[i].next) v[k++] = sy[i].id;
    *n = k;
    free(sy);
    xsa_heap_free(&h);
    sbuf_free(&buf);
}

static int l2c_encode(const void *impl, const char *text, size_t len, int add_special, struct ivec *out,
                      xsa_error *err) {
    const struct l2c_model *m = impl;
    const char *nul = len ? memchr(text, '\0', len) : NULL;
    if (nul) len = (size_t)(nul - text);  // run.c reads a C string
    size_t base = out->n;  // merges run over everything this call appends, BOS included
    if (len > 0 && m->space_id < 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s: llama2.c tokenizer has no \" \" token for the dummy prefix", m->path);
    if (add_special) ivec_push(out, 1);
    if (len > 0) ivec_push(out, m->space_id);
    for (size_t i = 0; i < len;) {
        size_t j = i + 1;  // a character: this byte and up to 3 continuation bytes
        while (j < len && ((unsigned char)text[j] & 0xC0) == 0x80 && j - i < 4) j++;
        int32_t id = piece_map_get(&m->map, text + i, j - i);
        if (id >= 0) {
            ivec_push(out, id);
        } else {
            for (size_t k = i; k < j; k++) {
                int32_t b = (unsigned char)text[k] + 3;  // run.c: bytes follow <unk>, <s>, </s>
                if (b >= m->n) {
                    out->n = base;  // nothing half-encoded is left behind
                    return xsa_fail(err, XSA_EBADINPUT,
                                    "%s: byte fallback id %d is past the llama2.c vocabulary (%d tokens)", m->path,
                                    (int)b, m->n);
                }
                ivec_push(out, b);
            }
        }
        i = j;
    }
    size_t n = out->n - base;
    if (n) l2c_merge(m, out->v + base, &n);  // out->v may be NULL when nothing was appended
    out->n = base + n;
    return 0;
}

static int l2c_hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int l2c_decode(const void *impl, const int32_t *ids, size_t n, struct sbuf *out, xsa_error *err) {
    (void)err;  // decoding checked ids cannot fail
    const struct l2c_model *m = impl;
    for (size_t i = 0; i < n; i++) {
        const char *piece = m->strs[ids[i]];
        size_t len = m->lens[ids[i]];
        if (i > 0 && ids[i - 1] == 1 && len > 0 && piece[0] == ' ') piece++, len--;
        if (len >= 4 && memcmp(piece, "<0x", 3) == 0 && l2c_hex(piece[3]) >= 0) {  // sscanf "<0x%02hhX>"
            int v = l2c_hex(piece[3]);
            if (l2c_hex(piece[4]) >= 0) v = v * 16 + l2c_hex(piece[4]);
            char byte = (char)v;
            sbuf_append(out, &byte, 1);
        } else {
            sbuf_append(out, piece, len);
        }
    }
    return 0;
}
