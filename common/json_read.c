// json_read.c: whole-text JSON parsing (json_read.h).
#include "common/json_read.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

static int cmp_key(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// The repeated key among an object's members, or NULL.
static const char *repeated_member(const cJSON *o) {
    int n = 0;
    for (const cJSON *e = o->child; e; e = e->next) n++;
    if (n < 2) return NULL;
    if (n <= 16) {  // the common small object: no allocation
        for (const cJSON *e = o->child; e; e = e->next)
            for (const cJSON *f = e->next; f; f = f->next)
                if (!strcmp(e->string, f->string)) return e->string;
        return NULL;
    }
    const char **keys = xsa_malloc((size_t)n * sizeof *keys);
    int k = 0;
    for (const cJSON *e = o->child; e; e = e->next) keys[k++] = e->string;
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    const char *dup = NULL;
    for (int i = 1; i < n && !dup; i++)
        if (!strcmp(keys[i - 1], keys[i])) dup = keys[i];
    free(keys);
    return dup;
}

// cJSON limits nesting (CJSON_NESTING_LIMIT), so the recursion is bounded.
const char *json_duplicate_key(const cJSON *v) {
    if (!v) return NULL;
    if (cJSON_IsObject(v)) {
        const char *d = repeated_member(v);
        if (d) return d;
    }
    if (cJSON_IsObject(v) || cJSON_IsArray(v))
        for (const cJSON *e = v->child; e; e = e->next) {
            const char *d = json_duplicate_key(e);
            if (d) return d;
        }
    return NULL;
}

static int cmp_member(const void *a, const void *b) {
    return strcmp((*(cJSON *const *)a)->string, (*(cJSON *const *)b)->string);
}

void json_sort_keys(cJSON *v) {
    if (!v || !(cJSON_IsObject(v) || cJSON_IsArray(v))) return;
    for (cJSON *e = v->child; e; e = e->next) json_sort_keys(e);
    int n = 0;
    for (cJSON *e = v->child; e; e = e->next) n++;
    if (!cJSON_IsObject(v) || n < 2) return;
    cJSON **m = xsa_malloc((size_t)n * sizeof *m);
    n = 0;
    for (cJSON *e = v->child; e; e = e->next) m[n++] = e;
    qsort(m, (size_t)n, sizeof *m, cmp_member);
    // cJSON's list: next runs to NULL, and the first member's prev points at the last.
    for (int i = 0; i < n; i++) m[i]->next = i + 1 < n ? m[i + 1] : NULL, m[i]->prev = m[i ? i - 1 : n - 1];
    v->child = m[0];
    free(m);
}

cJSON *json_read_whole(const char *text, size_t len, enum json_keys keys, const char *path, xsa_error *err) {
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!v) {
        long at = end && end >= text && end <= text + len ? (long)(end - text) : 0;
        xsa_fail(err, XSA_EBADINPUT, "%s: not valid JSON (near byte %ld)", path, at);
        return NULL;
    }
    const char *stop = text + len;
    while (end < stop && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) end++;
    if (end != stop) {
        xsa_fail(err, XSA_EBADINPUT, "%s: text after the JSON %s, at byte %ld; the file holds one", path,
                 cJSON_IsObject(v) ? "object" : "value", (long)(end - text));
        cJSON_Delete(v);
        return NULL;
    }
    const char *dup = keys == JSON_KEYS_UNIQUE ? json_duplicate_key(v) : NULL;
    if (dup) {
        xsa_fail(err, XSA_EBADINPUT, "%s: key \"%.80s\" stands twice in one object; readers disagree on which counts "
                 "(Python's json keeps the last), so remove one", path, dup);
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

const cJSON *json_last_item(const cJSON *obj, const char *key) {
    const cJSON *found = NULL, *e;
    if (!cJSON_IsObject(obj)) return NULL;
    cJSON_ArrayForEach(e, obj) if (e->string && !strcmp(e->string, key)) found = e;
    return found;
}
