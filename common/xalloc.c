// xalloc.c: allocations that succeed or end the process (xalloc.h).
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/error.h"

static void oom(size_t n) {
    char what[48] = "";  // n is 0 for a library's allocation of unknown size
    if (n) snprintf(what, sizeof what, " allocating %zu bytes", n);
    fprintf(stderr, "xsa-eval: out of memory%s; free memory, or use a smaller --batch-tokens\n", what);
    exit(XSA_ERUNTIME);
}

void *xsa_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xsa_calloc(size_t count, size_t size) {
    if (size && count > (size_t)-1 / size) oom((size_t)-1);
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) oom(count * size);
    return p;
}

void *xsa_realloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

void *xsa_realloc_array(void *p, size_t count, size_t size) {
    if (size && count > (size_t)-1 / size) oom((size_t)-1);
    return xsa_realloc(p, count * size);
}

void *xsa_alloc_check(void *p) {
    if (!p) oom(0);
    return p;
}

// cJSON allocates under the same policy, in every program linked with this file (the CLI,
// tests, fuzzers, benchmarks), so a cJSON_Create* or parse never returns NULL for want of memory.
__attribute__((constructor)) static void json_alloc_policy(void) {
    cJSON_Hooks hooks = {xsa_malloc, free};
    cJSON_InitHooks(&hooks);
}

char *xsa_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xsa_malloc(n), s, n);
}
