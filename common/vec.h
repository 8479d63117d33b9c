// vec.h: growable arrays of token ids and bytes, used across stages.
#ifndef XSA_COMMON_VEC_H
#define XSA_COMMON_VEC_H

#include <stddef.h>
#include <stdint.h>

struct ivec {        // growable int32 array
    int32_t *v;
    size_t n, cap;
};

struct sbuf {        // growable byte string, always NUL-terminated when s != NULL
    char *s;
    size_t n, cap;
};

// Growth never fails: memory running out ends the process (common/xalloc.h). Each returns 0
// (sbuf_printf -1 for an invalid format); callers in stages not yet moved to that policy
// still test the result.
int ivec_push(struct ivec *a, int32_t x);
int ivec_append(struct ivec *a, const int32_t *xs, size_t n);
int ivec_reserve(struct ivec *a, size_t cap);
void ivec_free(struct ivec *a);

int sbuf_append(struct sbuf *b, const char *s, size_t n);
int sbuf_puts(struct sbuf *b, const char *s);
int sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_free(struct sbuf *b);

#endif
