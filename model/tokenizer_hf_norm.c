// tokenizer_hf_norm.c: tokenizer.json normalizers (Sequence, Prepend, Replace, NFC, NFD, NFKC,
// NFKD, Lowercase, Strip), as the `tokenizers` library applies them to one piece of text.
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "common/xalloc.h"
#include "model/tokenizer_hf_priv.h"

enum { N_SEQ, N_PREPEND, N_REPLACE, N_UNICODE, N_LOWER, N_STRIP };

struct hft_norm {
    int type;
    struct hft_norm **kids;  // (nkids,) for Sequence
    size_t nkids;
    char *str;              // Prepend's text, Replace's content
    size_t str_len;
    struct hft_regex re;     // Replace's pattern
    int opts;               // utf8proc options for NF*
    int left, right;        // Strip
};

void hft_norm_free(struct hft_norm *n) {
    if (!n) return;
    for (size_t i = 0; i < n->nkids; i++) hft_norm_free(n->kids[i]);
    free(n->kids);
    free(n->str);
    hft_regex_free(&n->re);
    free(n);
}

int hft_norm_parse(struct hft_norm **out, const cJSON *j, const char *path, xsa_error *err) {
    *out = NULL;
    const char *type = hft_json_str(j, "type");
    if (!type) return xsa_fail(err, XSA_EBADINPUT, "%s: normalizer without a \"type\"", path);
    struct hft_norm *n = xsa_calloc(1, sizeof *n);
    int rc = 0;
    if (!strcmp(type, "Sequence")) {
        n->type = N_SEQ;
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "normalizers");
        if (!cJSON_IsArray(arr)) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: normalizer Sequence without a \"normalizers\" array", path);
        } else {
            size_t k = (size_t)cJSON_GetArraySize(arr);
            n->kids = xsa_calloc(k, sizeof *n->kids);
            const cJSON *e;
            cJSON_ArrayForEach(e, arr) {
                rc = hft_norm_parse(&n->kids[n->nkids], e, path, err);
                if (rc) break;
                n->nkids++;
            }
        }
    } else if (!strcmp(type, "Prepend")) {
        n->type = N_PREPEND;
        const char *p = hft_json_str(j, "prepend");
        if (!p) rc = xsa_fail(err, XSA_EBADINPUT, "%s: normalizer Prepend without \"prepend\"", path);
        else n->str_len = strlen(n->str = xsa_strdup(p));
    } else if (!strcmp(type, "Replace")) {
        n->type = N_REPLACE;
        const char *c = hft_json_str(j, "content");
        if (!c) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: normalizer Replace without \"content\"", path);
        } else {
            n->str_len = strlen(n->str = xsa_strdup(c));
            rc = hft_regex_from_json(&n->re, cJSON_GetObjectItemCaseSensitive(j, "pattern"), path,
                                     "normalizer Replace", err);
        }
    } else if (!strcmp(type, "NFC") || !strcmp(type, "NFD") || !strcmp(type, "NFKC") || !strcmp(type, "NFKD")) {
        n->type = N_UNICODE;
        n->opts = UTF8PROC_STABLE | (type[2] == 'K' ? UTF8PROC_COMPAT : 0) |
                  (type[strlen(type) - 1] == 'C' ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE);
    } else if (!strcmp(type, "Lowercase")) {
        n->type = N_LOWER;
    } else if (!strcmp(type, "Strip")) {
        n->type = N_STRIP;
        n->left = hft_json_bool(j, "strip_left", 1);
        n->right = hft_json_bool(j, "strip_right", 1);
    } else {
        rc = xsa_fail(err, XSA_EBADINPUT,
                      "%s: unsupported normalizer '%s' (supported: Sequence, Prepend, Replace, NFC, NFD, NFKC, NFKD, "
                      "Lowercase, Strip)",
                      path, type);
    }
    if (rc) {
        hft_norm_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

static void lower(const char *s, size_t len, struct sbuf *out) {
    for (size_t i = 0; i < len;) {
        size_t st = i;
        if ((unsigned char)s[i] < 0x80) {  // ASCII fast path
            while (i < len && (unsigned char)s[i] < 0x80) i++;
            for (size_t k = st; k < i; k++) {
                char c = s[k];
                if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
                sbuf_append(out, &c, 1);
            }
            continue;
        }
        uint32_t cp = hft_utf8_next(s, len, &i);
        if (cp == 0x130) {  // Rust's to_lowercase: the one unconditional multi-character mapping
            sbuf_append(out, "i\xCC\x87", 3);
            continue;
        }
        hft_utf8_put(out, (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp));
    }
}

static int unicode_norm(const char *s, size_t len, int opts, struct sbuf *out, const char *path, xsa_error *err) {
    if (len == 0) return 0;
    utf8proc_uint8_t *dst = NULL;
    utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &dst, opts);
    if (r < 0) return xsa_fail(err, XSA_ERUNTIME, "%s: unicode normalization failed: %s", path, utf8proc_errmsg(r));
    sbuf_append(out, (const char *)dst, (size_t)r);
    free(dst);
    return 0;
}

static void strip(const char *s, size_t len, int left, int right, struct sbuf *out) {
    size_t a = 0, b = len;
    if (left) {
        while (a < len) {
            size_t i = a;
            if (!hft_is_whitespace(hft_utf8_next(s, len, &i))) break;
            a = i;
        }
    }
    if (right) {
        while (b > a) {
            size_t st = b - 1;
            while (st > a && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
            size_t i = st;
            if (!hft_is_whitespace(hft_utf8_next(s, len, &i))) break;
            b = st;
        }
    }
    sbuf_append(out, s + a, b - a);
}

int hft_norm_apply(const struct hft_norm *n, const char *s, size_t len, struct sbuf *out, struct hft_ctx *ctx,
                  xsa_error *err) {
    int rc = 0;
    switch (n->type) {
    case N_SEQ: {
        struct sbuf a = {0}, b = {0};
        sbuf_append(&a, s, len);
        for (size_t k = 0; !rc && k < n->nkids; k++) {
            b.n = 0;
            sbuf_append(&b, "", 0);
            rc = hft_norm_apply(n->kids[k], a.s, a.n, &b, ctx, err);
            struct sbuf t = a;
            a = b;
            b = t;
        }
        if (!rc) sbuf_append(out, a.s, a.n);
        sbuf_free(&a);
        sbuf_free(&b);
        return rc;
    }
    case N_PREPEND:
        if (len) sbuf_append(out, n->str, n->str_len);
        break;
    case N_REPLACE:
        return hft_regex_replace(&n->re, s, len, n->str, n->str_len, ctx->md, out, err);
    case N_UNICODE:
        return unicode_norm(s, len, n->opts, out, ctx->path, err);
    case N_LOWER:
        lower(s, len, out);
        return 0;
    case N_STRIP:
        strip(s, len, n->left, n->right, out);
        return 0;
    }
    sbuf_append(out, s, len);
    return 0;
}
