// vec.c: growable token-id arrays and byte strings (vec.h).
#include "common/vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

int ivec_reserve(struct ivec *a, size_t cap) {
    XSA_GROW(a->v, a->cap, cap);
    return 0;
}

int ivec_push(struct ivec *a, int32_t x) {
    ivec_reserve(a, a->n + 1);
    a->v[a->n++] = x;
    return 0;
}

int ivec_append(struct ivec *a, const int32_t *xs, size_t n) {
    if (n == 0) return 0;
    ivec_reserve(a, a->n + n);
    memcpy(a->v + a->n, xs, n * sizeof *xs);
    a->n += n;
    return 0;
}

void ivec_free(struct ivec *a) {
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

static void sbuf_reserve(struct sbuf *b, size_t len) {  // room for len bytes and the NUL
    size_t need = len + 1 < 64 ? 64 : len + 1;  // 64 bytes at first: most strings are short
    XSA_GROW(b->s, b->cap, need);
}

int sbuf_append(struct sbuf *b, const char *s, size_t n) {
    sbuf_reserve(b, b->n + n);
    if (n) memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}

int sbuf_puts(struct sbuf *b, const char *s) { return sbuf_append(b, s, strlen(s)); }

int sbuf_printf(struct sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;  // an invalid format: not a memory failure
    sbuf_reserve(b, b->n + (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
    return 0;
}

void sbuf_free(struct sbuf *b) {
    free(b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}
