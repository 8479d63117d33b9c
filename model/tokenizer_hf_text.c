// tokenizer_hf_text.c: UTF-8 helpers, Rust `char` predicates and PCRE2 regexes with the match-iteration
// rules of the onig engine that the `tokenizers` library uses.
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/xalloc.h"
#include "model/tokenizer_hf_priv.h"
#include <utf8proc.h>

size_t hft_utf8_len(unsigned char b) {
    if (b < 0x80) return 1;
    if (b < 0xE0) return 2;
    if (b < 0xF0) return 3;
    return 4;
}

uint32_t hft_utf8_next(const char *s, size_t len, size_t *i) {
    const unsigned char *u = (const unsigned char *)s + *i;
    size_t n = hft_utf8_len(u[0]);
    if (*i + n > len) n = len - *i;  // never read past the end, even on bad input
    uint32_t cp;
    switch (n) {
    case 1: cp = u[0]; break;
    case 2: cp = ((uint32_t)(u[0] & 0x1F) << 6) | (u[1] & 0x3F); break;
    case 3: cp = ((uint32_t)(u[0] & 0x0F) << 12) | ((uint32_t)(u[1] & 0x3F) << 6) | (u[2] & 0x3F); break;
    default:
        cp = ((uint32_t)(u[0] & 0x07) << 18) | ((uint32_t)(u[1] & 0x3F) << 12) | ((uint32_t)(u[2] & 0x3F) << 6) |
             (u[3] & 0x3F);
    }
    *i += n ? n : 1;
    return cp;
}

void hft_utf8_put(struct sbuf *b, uint32_t cp) {
    char t[4];
    size_t n;
    if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    sbuf_append(b, t, n);
}

// Length of the well-formed sequence at u[0..n), or -(bytes of its maximal ill-formed subpart).
static long utf8_check(const unsigned char *u, size_t n) {
    unsigned char c = u[0];
    if (c < 0x80) return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c == 0xE0) need = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) need = 2;
    else if (c == 0xED) need = 2, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) need = 2;
    else if (c == 0xF0) need = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) need = 3;
    else if (c == 0xF4) need = 3, hi = 0x8F;
    else return -1;
    for (size_t k = 1; k <= need; k++) {
        if (k >= n) return -(long)k;
        unsigned char d = u[k];
        if (k == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xBF)) return -(long)k;
    }
    return (long)need + 1;
}

int hft_utf8_valid(const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        long r = utf8_check(u + i, len - i);
        if (r < 0) return 0;
        i += (size_t)r;
    }
    return 1;
}

void hft_utf8_sanitize(const char *s, size_t len, struct sbuf *out) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0;  // run: start of the pending well-formed bytes
    while (i < len) {
        long r = u[i] < 0x80 ? 1 : utf8_check(u + i, len - i);
        if (r > 0) {
            i += (size_t)r;
            continue;
        }
        sbuf_append(out, s + run, i - run);
        sbuf_append(out, "\xEF\xBF\xBD", 3);
        i += (size_t)(-r);
        run = i;
    }
    sbuf_append(out, s + run, len - run);
}

int hft_is_whitespace(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

int hft_is_numeric(uint32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

int hft_is_word_char(uint32_t c) {
    if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
    if (c == 0x200C || c == 0x200D) return 1;  // Join_Control
    // Other_Alphabetic outside the marks: circled and squared letters.
    if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
        (c >= 0x1F170 && c <= 0x1F189))
        return 1;
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO) || (k >= UTF8PROC_CATEGORY_MN && k <= UTF8PROC_CATEGORY_ME) ||
           k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_PC;
}

// ---- regexes ----

// tokenizer.json's regexes are Oniguruma's, whose \s is the Unicode White_Space property. PCRE2's
// \s (UCP) also takes U+180E MONGOLIAN VOWEL SEPARATOR (its \h list keeps it from before Unicode
// 6.3), so \s and \S are spelled as the property, in and out of classes; \Q...\E is copied as is.
// (Unicode binary properties such as WSpace came with PCRE2 10.40: older ones keep \s as is.)
#if PCRE2_MAJOR > 10 || (PCRE2_MAJOR == 10 && PCRE2_MINOR >= 40)
#define HFT_ONIG_SPACES 1
#else
#define HFT_ONIG_SPACES 0
#endif
static void onig_spaces(const char *p, struct sbuf *out) {
    if (!HFT_ONIG_SPACES) {
        sbuf_puts(out, p);
        return;
    }
    for (int quoted = 0; *p; p++) {
        if (quoted) {
            if (p[0] == '\\' && p[1] == 'E') quoted = 0;
        } else if (p[0] == '\\' && p[1]) {
            if (p[1] == 's' || p[1] == 'S') {
                sbuf_append(out, p[1] == 's' ? "\\p{WSpace}" : "\\P{WSpace}", 10);
                p++;
                continue;
            }
            if (p[1] == 'Q') quoted = 1;
            sbuf_append(out, p, 2);  // an escape is two bytes: "\\s" stays a backslash and an s
            p++;
            continue;
        }
        sbuf_append(out, p, 1);
    }
}

int hft_regex_compile(struct hft_regex *re, const char *pattern, const char *path, xsa_error *err) {
    memset(re, 0, sizeof *re);
    int ec;
    PCRE2_SIZE eo;
    struct sbuf pat = {0};
    onig_spaces(pattern, &pat);
    re->code = pcre2_compile((PCRE2_SPTR)(pat.s ? pat.s : ""), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &ec, &eo,
                             NULL);
    if (!re->code) {
        // The error as the file spells the pattern (its offsets, not the respelled one's), unless
        // only the respelled one fails.
        int ec2;
        PCRE2_SIZE eo2;
        pcre2_code *as_is = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &ec2, &eo2, NULL);
        const char *shown = as_is ? (pat.s ? pat.s : "") : pattern;
        if (!as_is) ec = ec2, eo = eo2;
        pcre2_code_free(as_is);
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        int rc = xsa_fail(err, XSA_EBADINPUT, "%s: regex /%.200s/%s does not compile at offset %zu: %s", path, shown,
                          as_is ? " (as PCRE2 is given it)" : "", (size_t)eo, (const char *)msg);
        sbuf_free(&pat);
        return rc;
    }
    sbuf_free(&pat);
    pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is absent
    return 0;
}

int hft_regex_from_json(struct hft_regex *re, const cJSON *pat, const char *path, const char *what,
                       xsa_error *err) {
    memset(re, 0, sizeof *re);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(pat, "String");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(pat, "Regex");
    if (cJSON_IsString(s)) {
        re->lit_len = strlen(s->valuestring);
        re->lit = xsa_strdup(s->valuestring);
        return 0;
    }
    if (cJSON_IsString(r)) return hft_regex_compile(re, r->valuestring, path, err);
    return xsa_fail(err, XSA_EBADINPUT, "%s: %s: \"pattern\" must be {\"String\": ...} or {\"Regex\": ...}", path, what);
}

void hft_regex_free(struct hft_regex *re) {
    if (re->code) pcre2_code_free(re->code);
    free(re->lit);
    memset(re, 0, sizeof *re);
}

static void span_push(struct hft_span **v, size_t *n, size_t *cap, size_t s, size_t e) {
    XSA_GROW(*v, *cap, *n + 1);
    (*v)[(*n)++] = (struct hft_span){s, e};
}

int hft_regex_find_all(const struct hft_regex *re, const char *s, size_t len, pcre2_match_data *md,
                      struct hft_span **out, size_t *n, size_t *cap, xsa_error *err) {
    if (!re->code) {  // literal: non-overlapping, left to right; an empty literal never matches
        if (re->lit_len == 0) return 0;
        const char *p = s, *end = s + len;
        while ((size_t)(end - p) >= re->lit_len) {
            const char *q = memmem(p, (size_t)(end - p), re->lit, re->lit_len);
            if (!q) break;
            span_push(out, n, cap, (size_t)(q - s), (size_t)(q - s) + re->lit_len);
            p = q + re->lit_len;
        }
        return 0;
    }
    size_t last_end = 0;
    long last_match_end = -1;
    while (last_end <= len) {
        int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, last_end, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return xsa_fail(err, XSA_ERUNTIME, "regex match failed: %s", (const char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t ms = ov[0], me = ov[1];
        if (ms == me && last_match_end == (long)me) {  // onig: no empty match right after a match
            last_end += last_end < len ? hft_utf8_len((unsigned char)s[last_end]) : 1;
            continue;
        }
        last_end = me;
        last_match_end = (long)me;
        span_push(out, n, cap, ms, me);
    }
    return 0;
}

int hft_regex_replace(const struct hft_regex *re, const char *s, size_t len, const char *with, size_t with_len,
                     pcre2_match_data *md, struct sbuf *out, xsa_error *err) {
    struct hft_span *v = NULL;
    size_t n = 0, cap = 0, prev = 0;
    int rc = hft_regex_find_all(re, s, len, md, &v, &n, &cap, err);
    for (size_t k = 0; !rc && k < n; k++) {
        sbuf_append(out, s + prev, v[k].s - prev);
        sbuf_append(out, with, with_len);
        prev = v[k].e;
    }
    if (!rc) sbuf_append(out, s + prev, len - prev);
    free(v);
    return rc;
}

// ---- pieces ----

void hft_pieces_push_tail(struct hft_pieces *p, size_t off, int32_t id, int first) {
    if (!p->buf.s) sbuf_append(&p->buf, "", 0);  // an empty piece still has a buffer to point into
    XSA_GROW(p->v, p->cap, p->n + 1);
    p->v[p->n++] = (struct hft_piece){off, p->buf.n - off, id, first};
}

void hft_pieces_push(struct hft_pieces *p, const char *s, size_t len, int32_t id, int first) {
    size_t off = p->buf.n;
    sbuf_append(&p->buf, s, len);
    hft_pieces_push_tail(p, off, id, first);
}

void hft_pieces_free(struct hft_pieces *p) {
    sbuf_free(&p->buf);
    free(p->v);
    memset(p, 0, sizeof *p);
}
