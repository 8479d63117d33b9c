// jsonw.c: the fixed-layout JSON writer of jsonw.h (golden-testable files, %.17g numbers).
#include "common/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

// Appends `s` as a JSON string literal (quotes included) to `b`.
static void jsonw_quote(struct sbuf *b, const char *s) {
    sbuf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"') sbuf_puts(b, "\\\"");
        else if (*p == '\\') sbuf_puts(b, "\\\\");
        else if (*p == '\n') sbuf_puts(b, "\\n");
        else if (*p == '\t') sbuf_puts(b, "\\t");
        else if (*p == '\r') sbuf_puts(b, "\\r");
        else if (*p < 0x20) sbuf_printf(b, "\\u%04x", *p);
        else sbuf_append(b, (const char *)p, 1);  // UTF-8 passes through
    }
    sbuf_puts(b, "\"");
}

static int is_inline(const struct jsonw *w) { return w->inline_from > 0 && w->depth >= w->inline_from; }

// Separator, indentation and key before a new member.
static void member(struct jsonw *w, const char *key) {
    if (w->failed) return;
    if (w->depth > 0) {
        int in_array = w->is_array[w->depth - 1];
        if ((key != NULL) == in_array) { w->failed = 1; return; }  // key only inside objects
        int first = w->count[w->depth - 1]++ == 0;
        if (is_inline(w)) {
            if (!first) sbuf_puts(&w->out, ", ");
        } else {
            sbuf_puts(&w->out, first ? "\n" : ",\n");
            for (int i = 0; i < w->depth; i++) sbuf_puts(&w->out, "  ");
        }
        if (key) {
            jsonw_quote(&w->out, key);
            sbuf_puts(&w->out, ": ");
        }
    } else if (key || w->out.n) {
        w->failed = 1;  // one top-level value, no key
    }
}

static void open_level(struct jsonw *w, const char *key, int array) {
    member(w, key);
    if (w->failed) return;
    if (w->depth >= JSONW_MAX_DEPTH) { w->failed = 1; return; }
    sbuf_puts(&w->out, array ? "[" : "{");
    w->is_array[w->depth] = array;
    w->count[w->depth] = 0;
    w->depth++;
    if (array && !w->inline_from) w->inline_from = w->depth;
}

void jsonw_object(struct jsonw *w, const char *key) { open_level(w, key, 0); }
void jsonw_array(struct jsonw *w, const char *key) { open_level(w, key, 1); }

void jsonw_end(struct jsonw *w) {
    if (w->failed) return;
    if (w->depth == 0) { w->failed = 1; return; }
    if (!is_inline(w) && w->count[w->depth - 1] > 0) {
        sbuf_puts(&w->out, "\n");
        for (int i = 0; i < w->depth - 1; i++) sbuf_puts(&w->out, "  ");
    }
    sbuf_puts(&w->out, w->is_array[w->depth - 1] ? "]" : "}");
    if (w->inline_from == w->depth) w->inline_from = 0;
    w->depth--;
    if (w->depth == 0) sbuf_puts(&w->out, "\n");
}

void jsonw_str(struct jsonw *w, const char *key, const char *s) {
    member(w, key);
    if (!w->failed) jsonw_quote(&w->out, s ? s : "");
}

// x as %.*g with `digits` significant digits (17: round-trips); non-finite as null, -0 as 0.
static void number(struct jsonw *w, const char *key, double x, int digits) {
    member(w, key);
    if (w->failed) return;
    if (!isfinite(x)) sbuf_puts(&w->out, "null");
    else sbuf_printf(&w->out, "%.*g", digits, x == 0 ? 0 : x);
}

void jsonw_num(struct jsonw *w, const char *key, double x) { number(w, key, x, 17); }

void jsonw_num_prec(struct jsonw *w, const char *key, double x, int digits) { number(w, key, x, digits); }

void jsonw_int(struct jsonw *w, const char *key, long long x) {
    member(w, key);
    if (!w->failed) sbuf_printf(&w->out, "%lld", x);
}

// A literal: true, false, null.
static void literal(struct jsonw *w, const char *key, const char *lit) {
    member(w, key);
    if (!w->failed) sbuf_puts(&w->out, lit);
}

void jsonw_bool(struct jsonw *w, const char *key, int b) { literal(w, key, b ? "true" : "false"); }

void jsonw_null(struct jsonw *w, const char *key) { literal(w, key, "null"); }

void jsonw_free(struct jsonw *w) {
    sbuf_free(&w->out);
    memset(w, 0, sizeof *w);
}
