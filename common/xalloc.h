// xalloc.h: the memory policy. An allocation a run cannot continue without either succeeds or
// ends the process with one line on stderr and exit 3, as redis's zmalloc and llm.c's
// mallocCheck do, so callers carry no out-of-memory branches. (Allocations a run can do
// without, such as the CPU backend's optional packed weights, use malloc and fall back.)
// cJSON's allocations follow the same policy (hooks installed before main).
#ifndef XSA_COMMON_XALLOC_H
#define XSA_COMMON_XALLOC_H

#include <stddef.h>

void *xsa_malloc(size_t n);
void *xsa_calloc(size_t count, size_t size);  // count * size checked for overflow
void *xsa_realloc(void *p, size_t n);
void *xsa_realloc_array(void *p, size_t count, size_t size);  // count * size checked
char *xsa_strdup(const char *s);
// p, allocated by a library that uses plain malloc (PCRE2); NULL ends the process as above.
void *xsa_alloc_check(void *p);

#endif
