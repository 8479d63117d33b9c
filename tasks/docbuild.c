// docbuild.c: typed row fields and doc filling shared by the task builders.
#include "tasks/docbuild.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "common/xalloc.h"
#include "tasks/pystr.h"

int row_get_string(const cJSON *row, const char *field, const char *where, const char **out,
                   xsa_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(row, field);
    if (!it) return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' missing", where, field);
    if (!cJSON_IsString(it) || !it->valuestring)
        return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' must be a string", where, field);
    if (!pystr_utf8_valid(it->valuestring, strlen(it->valuestring)))
        return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' is not valid UTF-8", where, field);
    *out = it->valuestring;
    return 0;
}

int row_get_string_array(const cJSON *row, const char *field, const char *where,
                         const cJSON **arr, int *n_out, xsa_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(row, field);
    if (!it) return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' missing", where, field);
    if (!cJSON_IsArray(it))
        return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' must be a list of strings", where, field);
    int n = 0;
    for (const cJSON *e = it->child; e; e = e->next, n++) {
        if (!cJSON_IsString(e) || !e->valuestring)
            return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' item %d must be a string", where,
                            field, n);
        if (!pystr_utf8_valid(e->valuestring, strlen(e->valuestring)))
            return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' item %d is not valid UTF-8", where,
                            field, n);
    }
    *arr = it;
    *n_out = n;
    return 0;
}

int row_get_int(const cJSON *row, const char *field, const char *where, int *out, xsa_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(row, field);
    if (!it) return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' missing", where, field);
    if (cJSON_IsBool(it)) {  // Python's bool is an int: True == 1
        *out = cJSON_IsTrue(it);
        return 0;
    }
    double v = it->valuedouble;
    if (!cJSON_IsNumber(it) || v != floor(v) || v < INT_MIN || v > INT_MAX)
        return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' must be an integer", where, field);
    *out = (int)v;
    return 0;
}

int doc_alloc(struct task_doc *d, int doc_id, int n_requests, xsa_error *err) {
    memset(d, 0, sizeof *d);
    if (n_requests > TASK_MAX_CHOICES)
        return xsa_fail(err, XSA_EBADINPUT, "doc %d has %d choices; xsa-eval scores at most %d", doc_id, n_requests,
                        TASK_MAX_CHOICES);
    d->doc_id = doc_id;
    d->gold = -100;
    d->req = xsa_calloc((size_t)n_requests, sizeof *d->req);
    d->choice_len = xsa_calloc((size_t)n_requests, sizeof *d->choice_len);
    d->n_requests = n_requests;
    return 0;
}

static char *dup_n(const char *a, size_t an, const char *b, size_t bn) {
    char *s = xsa_malloc(an + bn + 1);
    if (an) memcpy(s, a, an);
    if (bn) memcpy(s + an, b, bn);
    s[an + bn] = '\0';
    return s;
}

void doc_set_request(struct task_doc *d, int i, const char *ctx, size_t ctx_n, const char *delim,
                     const char *cont, size_t cont_n, double choice_len) {
    struct task_request *r = &d->req[i];
    r->context = dup_n(ctx, ctx_n, "", 0);
    r->continuation = dup_n(delim, strlen(delim), cont, cont_n);
    d->choice_len[i] = choice_len;
}

int doc_fail(struct task_doc *d, int rc) {
    task_doc_free(d);
    return rc;
}

int doc_gold_in_range(long long gold, int n) { return gold >= 0 && gold < n ? (int)gold : -100; }

int py_parse_int(const char *s, size_t n, long long *out) {
    size_t i = pystr_lstrip_off(s, n), end = pystr_rstrip_len(s, n);
    if (i >= end) return 0;
    int neg = 0;
    if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';
    if (i >= end || s[i] < '0' || s[i] > '9') return 0;
    long long v = 0;  // int() allows leading zeros ("007" == 7), unlike literal_eval
    for (; i < end; i++) {
        char c = s[i];
        if (c == '_') {  // one underscore, between digits
            if (i + 1 >= end || s[i + 1] < '0' || s[i + 1] > '9') return 0;
            continue;
        }
        if (c < '0' || c > '9') return 0;
        if (v > (LLONG_MAX - (c - '0')) / 10) return 0;
        v = v * 10 + (c - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

void task_doc_free(struct task_doc *d) {
    if (!d) return;
    if (d->req)
        for (int i = 0; i < d->n_requests; i++) {
            free(d->req[i].context);
            free(d->req[i].continuation);
        }
    free(d->req);
    free(d->choice_len);
    memset(d, 0, sizeof *d);
}
