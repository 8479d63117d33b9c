// caseops.c: the CaseOps text transform and its inverse (caseops.h), byte by byte: the markers
// are the 3-byte UTF-8 of U+E001..U+E004, every other byte that is not an ASCII letter passes
// (a multi-byte character ends an ASCII word as the Python code's non-letter characters do).
#include "model/caseops.h"

#include <string.h>

enum { M_NONE, M_TITLE, M_ALLCAPS, M_CAPNEXT, M_ESC };

static int is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static int is_alpha(unsigned char c) { return is_upper(c) || is_lower(c); }
static char lower(unsigned char c) { return (char)(is_upper(c) ? c + 32 : c); }
static char upper(unsigned char c) { return (char)(is_lower(c) ? c - 32 : c); }

// M_TITLE..M_ESC when text + i starts with that marker, else M_NONE.
static int marker_at(const char *text, size_t len, size_t i) {
    const unsigned char *s = (const unsigned char *)text + i;
    if (len - i < 3 || s[0] != 0xee || s[1] != 0x80 || s[2] < 0x81 || s[2] > 0x84) return M_NONE;
    return s[2] - 0x80;
}

static void put_marker(struct sbuf *out, int m) {
    static const char *const utf8[] = {"", CASEOPS_TITLE, CASEOPS_ALLCAPS, CASEOPS_CAPNEXT, CASEOPS_ESC};
    sbuf_append(out, utf8[m], 3);
}

static void put(struct sbuf *out, char c) { sbuf_append(out, &c, 1); }

void caseops_encode(const char *text, size_t len, struct sbuf *out) {
    const unsigned char *s = (const unsigned char *)text;
    sbuf_append(out, "", 0);
    for (size_t i = 0; i < len;) {
        int m = marker_at(text, len, i);
        if (m) {  // a literal marker: escaped
            put_marker(out, M_ESC);
            sbuf_append(out, text + i, 3);
            i += 3;
            continue;
        }
        if (!is_alpha(s[i])) {
            put(out, text[i++]);
            continue;
        }
        size_t j = i, n_upper = 0;
        while (j < len && is_alpha(s[j])) n_upper += is_upper(s[j++]);
        size_t n = j - i;
        if (n_upper == 0) {  // word.islower()
            sbuf_append(out, text + i, n);
        } else if (n >= 2 && n_upper == n) {  // word.isupper()
            put_marker(out, M_ALLCAPS);
            for (size_t k = i; k < j; k++) put(out, lower(s[k]));
        } else if (n >= 2 && is_upper(s[i]) && n_upper == 1) {  // TitleCase: word[1:].islower()
            put_marker(out, M_TITLE);
            for (size_t k = i; k < j; k++) put(out, lower(s[k]));
        } else {  // mixed case (and a lone capital): title on the first, capnext on the others
            if (is_upper(s[i])) put_marker(out, M_TITLE);
            put(out, lower(s[i]));
            for (size_t k = i + 1; k < j; k++) {
                if (is_upper(s[k])) put_marker(out, M_CAPNEXT);
                put(out, lower(s[k]));
            }
        }
        i = j;
    }
}

// decode_lossless_caps_v2's state machine. Where it raises (a marker that cannot stand there),
// the markers waiting are written back as they were, so nothing is lost.
struct dec {
    struct sbuf *out;
    int mode;        // M_TITLE / M_ALLCAPS waiting for a word's first letter, or M_NONE
    int capnext;     // a capnext waiting for the next letter
    int allcaps;     // inside an ALLCAPS word
    int in_word;     // the last unit was an ASCII letter
};

static void flush_pending(struct dec *d) {
    if (d->mode) put_marker(d->out, d->mode);
    if (d->capnext) put_marker(d->out, M_CAPNEXT);
    d->mode = M_NONE, d->capnext = 0;
}

void caseops_decode(const char *text, size_t len, struct sbuf *out) {
    const unsigned char *s = (const unsigned char *)text;
    struct dec d = {.out = out};
    sbuf_append(out, "", 0);
    for (size_t i = 0; i < len;) {
        int m = marker_at(text, len, i);
        if (m == M_ESC) {  // the next unit is literal
            i += 3;
            if (i >= len) {
                flush_pending(&d);
                put_marker(out, M_ESC);
                break;
            }
            int lit = marker_at(text, len, i);
            if (d.mode && !is_alpha(s[i])) flush_pending(&d);
            if (lit) sbuf_append(out, text + i, 3), i += 3;
            else put(out, text[i++]);
            d.in_word = !lit && is_alpha(s[i - 1]);
            if (!d.in_word) d.allcaps = 0;
            continue;
        }
        if (m == M_TITLE || m == M_ALLCAPS) {
            if (d.mode || d.in_word || d.capnext) flush_pending(&d), put_marker(out, m);
            else d.mode = m;
            i += 3;
            continue;
        }
        if (m == M_CAPNEXT) {
            if (d.capnext) put_marker(out, M_CAPNEXT);
            d.capnext = 1;
            i += 3;
            continue;
        }
        unsigned char c = s[i++];
        if (is_alpha(c)) {
            if (!d.in_word) {
                d.allcaps = d.mode == M_ALLCAPS;
                put(out, d.mode || d.capnext ? upper(c) : (char)c);
            } else {
                if (d.mode) flush_pending(&d);  // a word marker in the middle of a word
                put(out, d.allcaps || d.capnext ? upper(c) : (char)c);
            }
            d.mode = M_NONE, d.capnext = 0, d.in_word = 1;
            continue;
        }
        flush_pending(&d);  // (a marker before a non-letter: kept)
        put(out, (char)c);
        d.in_word = 0, d.allcaps = 0;
    }
    flush_pending(&d);
}
