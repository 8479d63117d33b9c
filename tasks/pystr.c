// pystr.c: Python str semantics on UTF-8 (see pystr.h).
#include "tasks/pystr.h"

#include <utf8proc.h>

#include "tasks/pystr_tables.h"

size_t pystr_utf8_invalid_at(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp, min;
        if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F, min = 0x80;
        else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07, min = 0x10000;
        else return i;
        if (n - i < len) return i;
        for (size_t k = 1; k < len; k++) {
            if ((u[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return n;
}

int pystr_utf8_valid(const char *s, size_t n) { return pystr_utf8_invalid_at(s, n) == n; }

// Decodes the code point starting at s[i] (i < n); returns its byte length (1..4).
static size_t pystr_utf8_next(const char *s, size_t n, size_t i, uint32_t *cp) {
    const unsigned char *u = (const unsigned char *)s + i;
    size_t left = n - i;
    if (u[0] < 0x80 || left < 2) {
        *cp = u[0];
        return 1;
    }
    if (u[0] < 0xE0) {
        *cp = ((uint32_t)(u[0] & 0x1F) << 6) | (u[1] & 0x3F);
        return 2;
    }
    if (u[0] < 0xF0 || left < 4) {
        *cp = ((uint32_t)(u[0] & 0x0F) << 12) | ((uint32_t)(u[1] & 0x3F) << 6) | (u[2] & 0x3F);
        return 3;
    }
    *cp = ((uint32_t)(u[0] & 0x07) << 18) | ((uint32_t)(u[1] & 0x3F) << 12) |
          ((uint32_t)(u[2] & 0x3F) << 6) | (u[3] & 0x3F);
    return 4;
}

// Byte offset of the code point that ends at s[i] (i > 0), i.e. the start of the previous one.
static size_t pystr_utf8_prev(const char *s, size_t i) {
    do i--;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80);
    return i;
}

size_t pystr_len(const char *s, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += ((unsigned char)s[i] & 0xC0) != 0x80;
    return count;
}

int pystr_isspace(uint32_t cp) {
    // CPython's _PyUnicode_IsWhitespace: bidirectional WS/B/S or category Zs.
    if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
    switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
        return 1;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

size_t pystr_rstrip_len(const char *s, size_t n) {
    while (n > 0) {
        size_t p = pystr_utf8_prev(s, n);
        uint32_t cp;
        pystr_utf8_next(s, n, p, &cp);
        if (!pystr_isspace(cp)) break;
        n = p;
    }
    return n;
}

size_t pystr_lstrip_off(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = pystr_utf8_next(s, n, i, &cp);
        if (!pystr_isspace(cp)) break;
        i += len;
    }
    return i;
}

static int in_ranges(const uint32_t (*r)[2], int count, uint32_t cp) {
    int lo = 0, hi = count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < r[mid][0]) hi = mid - 1;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

int pystr_title_full(uint32_t cp, uint32_t out[3]) {
    int lo = 0, hi = pystr_title_special_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const struct pystr_special *sp = &pystr_title_special[mid];
        if (cp < sp->cp) hi = mid - 1;
        else if (cp > sp->cp) lo = mid + 1;
        else {
            for (int k = 0; k < sp->n; k++) out[k] = sp->map[k];
            return sp->n;
        }
    }
    out[0] = (uint32_t)utf8proc_totitle((utf8proc_int32_t)cp);
    return 1;
}

int pystr_lower_full(uint32_t cp, uint32_t out[3]) {
    if (cp == 0x130) {  // the only unconditional multi-code-point lower mapping
        out[0] = 0x69;
        out[1] = 0x307;
        return 2;
    }
    out[0] = (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp);
    return 1;
}

static int cased(uint32_t cp) { return in_ranges(pystr_cased_ranges, pystr_cased_count, cp); }

static int ignorable(uint32_t cp) {
    return in_ranges(pystr_case_ignorable_ranges, pystr_case_ignorable_count, cp);
}

// CPython's handle_capital_sigma: U+03A3 at byte i lowers to final sigma when
// cased ignorable* SIGMA and not followed by ignorable* cased.
static uint32_t sigma_lower(const char *s, size_t n, size_t i, size_t len) {
    uint32_t cp = 0;
    size_t j = i;
    int found = 0;
    while (j > 0) {
        j = pystr_utf8_prev(s, j);
        pystr_utf8_next(s, n, j, &cp);
        if (!ignorable(cp)) {
            found = 1;
            break;
        }
    }
    if (!found || !cased(cp)) return 0x3C3;
    for (j = i + len; j < n;) {
        j += pystr_utf8_next(s, n, j, &cp);
        if (!ignorable(cp)) return cased(cp) ? 0x3C3 : 0x3C2;
    }
    return 0x3C2;
}

static void put_cp(struct sbuf *out, uint32_t cp) {
    utf8proc_uint8_t buf[4];
    utf8proc_ssize_t len = utf8proc_encode_char((utf8proc_int32_t)cp, buf);
    sbuf_append(out, (const char *)buf, (size_t)len);
}

void pystr_capitalize(const char *s, size_t n, struct sbuf *out) {
    sbuf_append(out, "", 0);  // an empty result is still a string
    for (size_t i = 0; i < n;) {
        uint32_t cp, map[3];
        size_t len = pystr_utf8_next(s, n, i, &cp);
        int k;
        if (i == 0) k = pystr_title_full(cp, map);
        else if (cp == 0x3A3) map[0] = sigma_lower(s, n, i, len), k = 1;
        else k = pystr_lower_full(cp, map);
        for (int m = 0; m < k; m++) put_cp(out, map[m]);
        i += len;
    }
}
