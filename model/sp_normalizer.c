// sp_normalizer.c: the normalizer of sp_normalizer.h, step for step as sentencepiece's
// Normalizer::Normalize / NormalizePrefix, with every trie offset bounded.
#include "model/sp_normalizer.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define SP_SPACE "\xe2\x96\x81"  // U+2581, the escaped space
#define SP_MAX_TRIE_RESULTS 32   // sentencepiece looks at the first 32 prefix matches only

static int cmp_desc_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x > y ? -1 : x < y;
}

void sp_matcher_init(struct sp_matcher *m, const char *const *syms, const uint32_t *lens, int n) {
    memset(m, 0, sizeof *m);
    m->syms = syms;
    m->lens = lens;
    m->n = n;
    m->by_len = xsa_malloc(((size_t)n + 1) * sizeof *m->by_len);
    piece_map_init(&m->map, syms, lens, (size_t)n);
    for (int i = 0; i < n; i++) {
        piece_map_add(&m->map, i);
        m->by_len[i] = lens[i];
        if (lens[i]) m->first[(unsigned char)syms[i][0] >> 3] |= (uint8_t)(1u << ((unsigned char)syms[i][0] & 7));
    }
    qsort(m->by_len, (size_t)n, sizeof *m->by_len, cmp_desc_u32);
    for (int i = 0; i < n; i++)
        if (i == 0 || m->by_len[i] != m->by_len[m->n_len - 1]) m->by_len[m->n_len++] = m->by_len[i];
}

void sp_matcher_free(struct sp_matcher *m) {
    free(m->by_len);
    m->by_len = NULL;
    m->n_len = 0;
    piece_map_free(&m->map);
}

size_t sp_matcher_match(const struct sp_matcher *m, const char *s, size_t len, int *found) {
    size_t best = 0;
    unsigned char c0 = (unsigned char)s[0];
    if (m && m->n_len && (m->first[c0 >> 3] >> (c0 & 7) & 1))
        for (int k = 0; k < m->n_len && !best; k++)
            if (m->by_len[k] && m->by_len[k] <= len && piece_map_get(&m->map, s, m->by_len[k]) >= 0) best = m->by_len[k];
    *found = best > 0;
    if (best) return best;
    static const unsigned char one_char_len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    size_t n = one_char_len[(unsigned char)s[0] >> 4];
    return n < len ? n : len;
}

int sp_utf8_valid(const uint8_t *s, size_t len, size_t *mblen) {
#define TRAIL(c) (((c) & 0xC0) == 0x80)
#define CP_OK(c) ((c) < 0xD800 || ((c) >= 0xE000 && (c) <= 0x10FFFF))
    uint32_t c;
    if (s[0] < 0x80) {
        *mblen = 1;
        return 1;
    } else if (len >= 2 && (s[0] & 0xE0) == 0xC0) {
        c = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
        if (TRAIL(s[1]) && c >= 0x80 && CP_OK(c)) {
            *mblen = 2;
            return 1;
        }
    } else if (len >= 3 && (s[0] & 0xF0) == 0xE0) {
        c = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        if (TRAIL(s[1]) && TRAIL(s[2]) && c >= 0x800 && CP_OK(c)) {
            *mblen = 3;
            return 1;
        }
    } else if (len >= 4 && (s[0] & 0xF8) == 0xF0) {
        c = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) | ((uint32_t)(s[2] & 0x3F) << 6) |
            (s[3] & 0x3F);
        if (TRAIL(s[1]) && TRAIL(s[2]) && TRAIL(s[3]) && c >= 0x10000 && CP_OK(c)) {
            *mblen = 4;
            return 1;
        }
    }
#undef TRAIL
#undef CP_OK
    *mblen = 1;
    return 0;
}

int sp_normalizer_set_charsmap(struct sp_normalizer *n, const uint8_t *blob, size_t len, const char **why) {
    n->units = NULL;
    n->n_units = 0;
    n->pool = NULL;
    n->pool_len = 0;
    if (len == 0) return 0;
    if (len <= 4) {
        *why = "precompiled_charsmap is too short";
        return -1;
    }
    uint32_t trie_size = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 | (uint32_t)blob[3] << 24;
    if ((size_t)trie_size >= len) {
        *why = "precompiled_charsmap trie size exceeds the blob";
        return -1;
    }
    if ((size_t)trie_size > len - 4) {
        *why = "precompiled_charsmap trie runs past the blob";
        return -1;
    }
    n->n_units = trie_size / 4;
    n->pool_len = len - 4 - trie_size;
    n->units = xsa_malloc(n->n_units * sizeof *n->units);
    n->pool = xsa_malloc(n->pool_len + 1);
    for (size_t i = 0; i < n->n_units; i++) {
        const uint8_t *u = blob + 4 + 4 * i;
        n->units[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    memcpy(n->pool, blob + 4 + trie_size, n->pool_len);
    n->pool[n->pool_len] = '\0';  // so the last string is terminated even if the blob is not
    return 0;
}

void sp_normalizer_free(struct sp_normalizer *n) {
    free(n->units);
    free(n->pool);
    n->units = NULL;
    n->pool = NULL;
}

// darts-clone unit fields.
static uint32_t da_offset(uint32_t u) { return (u >> 10) << ((u & (1U << 9)) >> 6); }
static uint32_t da_label(uint32_t u) { return u & ((1U << 31) | 0xFF); }
static int da_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static uint32_t da_value(uint32_t u) { return u & ((1U << 31) - 1); }

// Longest charsmap rule that prefixes s (among the first 32 matches, as sentencepiece);
// returns its length and sets *value, or 0. A walk that leaves the array stops there.
static size_t sp_trie_longest(const struct sp_normalizer *n, const uint8_t *s, size_t len, uint32_t *value) {
    if (!n->units || n->n_units == 0) return 0;
    size_t best = 0, found = 0;
    size_t pos = da_offset(n->units[0]);
    for (size_t i = 0; i < len; i++) {
        pos ^= s[i];
        if (pos >= n->n_units) break;
        uint32_t u = n->units[pos];
        if (da_label(u) != s[i]) break;
        pos ^= da_offset(u);
        if (pos >= n->n_units) break;
        if (da_has_leaf(u)) {
            if (found < SP_MAX_TRIE_RESULTS && i + 1 > best) {
                best = i + 1;
                *value = da_value(n->units[pos]);
            }
            found++;
        }
    }
    return best;
}

// One normalization step (NormalizePrefix): the replacement text for the start of `in`
// and how many input bytes it consumes (>= 1 when len >= 1).
static size_t sp_normalize_prefix(const struct sp_normalizer *n, const char *in, size_t len, const char **sp,
                                  size_t *sp_len) {
    int found = 0;
    if (n->matcher && n->matcher->n) {
        size_t m = sp_matcher_match(n->matcher, in, len, &found);
        if (found) {
            *sp = in;
            *sp_len = m;
            return m;
        }
    }
    uint32_t value = 0;
    size_t longest = sp_trie_longest(n, (const uint8_t *)in, len, &value);
    if (longest > 0 && value < n->pool_len) {
        *sp = n->pool + value;
        *sp_len = strlen(n->pool + value);  // pool is NUL-terminated at pool_len
        return longest;
    }
    if (longest > 0) {  // a rule pointing outside the pool: treat as deleting the match
        *sp = "";
        *sp_len = 0;
        return longest;
    }
    size_t mblen;
    if (!sp_utf8_valid((const uint8_t *)in, len, &mblen)) {
        *sp = "\xEF\xBF\xBD";  // malformed byte -> U+FFFD, one byte consumed
        *sp_len = 3;
        return 1;
    }
    *sp = in;
    *sp_len = mblen;
    return mblen;
}

void sp_normalize(const struct sp_normalizer *n, const char *in, size_t len, struct sbuf *out) {
    const char *sp;
    size_t sp_len;
    if (len == 0) return;
    if (n->remove_extra_whitespaces) {  // heading spaces
        while (len > 0) {
            size_t used = sp_normalize_prefix(n, in, len, &sp, &sp_len);
            if (!(sp_len == 1 && sp[0] == ' ')) break;
            in += used;
            len -= used;
        }
    }
    if (len == 0) return;
    const size_t start = out->n;
    const char *space = n->escape_whitespaces ? SP_SPACE : " ";
    const size_t space_len = n->escape_whitespaces ? 3 : 1;
    if (!n->treat_whitespace_as_suffix && n->add_dummy_prefix) sbuf_append(out, space, space_len);
    int is_prev_space = n->remove_extra_whitespaces;
    while (len > 0) {
        size_t used = sp_normalize_prefix(n, in, len, &sp, &sp_len);
        while (is_prev_space && sp_len > 0 && sp[0] == ' ') sp++, sp_len--;
        if (sp_len > 0) {
            size_t run = 0;  // bytes copied as they are, flushed at each space
            for (size_t i = 0; i < sp_len; i++) {
                if (n->escape_whitespaces && sp[i] == ' ') {
                    sbuf_append(out, sp + i - run, run);
                    sbuf_append(out, SP_SPACE, 3);
                    run = 0;
                } else {
                    run++;
                }
            }
            sbuf_append(out, sp + sp_len - run, run);
            is_prev_space = sp[sp_len - 1] == ' ';
        }
        in += used;
        len -= used;
        if (!n->remove_extra_whitespaces) is_prev_space = 0;
    }
    if (n->remove_extra_whitespaces) {  // trailing spaces
        while (out->n - start >= space_len && memcmp(out->s + out->n - space_len, space, space_len) == 0) {
            out->n -= space_len;
            out->s[out->n] = '\0';
        }
    }
    if (n->treat_whitespace_as_suffix && n->add_dummy_prefix) sbuf_append(out, space, space_len);
}
