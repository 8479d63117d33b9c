// rows.c: reading canonical JSONL rows and their one serialization (see rows.h).
#include "tasks/rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/grow.h"
#include "common/json_read.h"
#include "common/vec.h"
#include "common/xalloc.h"
#include "tasks/pystr.h"

#define NUL_PATH_DEPTH 16   // containers named in a path; deeper ones are counted only

struct nul_level {
    char kind;         // '{' or '['
    int want_key;      // object: the next string is a key
    long index;        // array: position of the current item
    char key[48];      // object: the current key (truncated)
};

static void nul_path(const struct nul_level *lv, int depth, char *path, size_t n) {
    size_t used = 0;
    path[0] = '\0';
    for (int k = 0; k < depth && k < NUL_PATH_DEPTH && used < n; k++) {
        int w = lv[k].kind == '{' ? snprintf(path + used, n - used, "%s%s", used ? "." : "", lv[k].key)
                                  : snprintf(path + used, n - used, "[%ld]", lv[k].index);
        if (w > 0) used += (size_t)w;
    }
}

int task_json_find_nul(const char *text, size_t len, char *path, size_t n) {
    if (!memchr(text, '\0', len) && !memmem(text, len, "\\u0000", 6)) return 0;  // the common case
    struct nul_level lv[NUL_PATH_DEPTH];
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        struct nul_level *top = depth > 0 && depth <= NUL_PATH_DEPTH ? &lv[depth - 1] : NULL;
        if (c == '"') {
            int is_key = top && top->kind == '{' && top->want_key;
            size_t kl = 0;
            for (i++; i < len && text[i] != '"'; i++) {
                int nul = text[i] == '\0';
                if (text[i] == '\\' && i + 1 < len) {
                    i++;
                    nul = text[i] == 'u' && i + 4 < len && !memcmp(text + i + 1, "0000", 4);
                }
                if (nul) {
                    if (is_key) top->key[kl] = '\0';
                    nul_path(lv, depth, path, n);
                    return 1;
                }
                if (is_key && kl + 1 < sizeof top->key) top->key[kl++] = text[i];
            }
            if (is_key) {
                top->key[kl] = '\0';
                top->want_key = 0;
            }
        } else if (c == '{' || c == '[') {
            if (depth < NUL_PATH_DEPTH) lv[depth] = (struct nul_level){.kind = c, .want_key = c == '{'};
            depth++;
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        } else if (c == ',' && top) {
            if (top->kind == '{') top->want_key = 1;
            else top->index++;
        }
    }
    return 0;
}

int task_rows_push(struct task_rows *r, cJSON *row, const char *where, xsa_error *err) {
    if (r->n >= TASK_ROWS_MAX) {
        cJSON_Delete(row);
        return xsa_fail(err, XSA_EBADINPUT, "%s: more than %d rows", where, TASK_ROWS_MAX);
    }
    if (r->n == r->cap) {  // two parallel arrays, one capacity (at most TASK_ROWS_MAX)
        size_t cap = xsa_grow_cap((size_t)r->cap, (size_t)r->n + 1);
        r->row = xsa_realloc_array(r->row, cap, sizeof *r->row);
        r->where = xsa_realloc_array(r->where, cap, sizeof *r->where);
        r->cap = (int)cap;
    }
    r->row[r->n] = row;
    r->where[r->n] = xsa_strdup(where);
    r->n++;
    return 0;
}

void task_rows_free(struct task_rows *r) {
    for (int i = 0; i < r->n; i++) {
        cJSON_Delete(r->row[i]);
        free(r->where[i]);
    }
    free(r->row);
    free(r->where);
    memset(r, 0, sizeof *r);
}

int task_row_parse_line(const char *where, const char *line, size_t n, size_t max_line, cJSON **out,
                        xsa_error *err) {
    *out = NULL;
    if (n > 0 && line[n - 1] == '\r') n--;
    size_t k = 0;
    while (k < n && (line[k] == ' ' || line[k] == '\t')) k++;
    if (k == n) return 0;  // blank line
    if (n > max_line) return xsa_fail(err, XSA_EBADINPUT, "%s: line longer than %zu bytes", where, max_line);
    if (!pystr_utf8_valid(line, n))
        return xsa_fail(err, XSA_EBADINPUT, "%s: not valid UTF-8; the file must be UTF-8 JSONL", where);
    const char *parse_end = NULL;
    cJSON *row = cJSON_ParseWithLengthOpts(line, n, &parse_end, 0);
    if (row && parse_end) {
        while (parse_end < line + n && (*parse_end == ' ' || *parse_end == '\t')) parse_end++;
        if (parse_end != line + n) {
            cJSON_Delete(row);
            row = NULL;
        }
    }
    if (!row || !cJSON_IsObject(row)) {
        cJSON_Delete(row);
        return xsa_fail(err, XSA_EBADINPUT, "%s: not one JSON object per line (JSONL expected)", where);
    }
    const char *dup = json_duplicate_key(row);
    if (dup) {  // Python's json keeps the last, cJSON the first: the row would mean two things
        int rc = xsa_fail(err, XSA_EBADINPUT, "%s: field '%.80s' stands twice in one object; remove one", where, dup);
        cJSON_Delete(row);
        return rc;
    }
    char field[256];
    if (task_json_find_nul(line, n, field, sizeof field)) {
        cJSON_Delete(row);
        return xsa_fail(err, XSA_EBADINPUT, "%s: field '%s' holds a NUL character (\\u0000), which would cut "
                        "its text short; fix or drop that row", where, field);
    }
    *out = row;
    return 0;
}

int task_rows_parse_jsonl(const char *name, const char *buf, size_t len, struct task_rows *out,
                          xsa_error *err) {
    memset(out, 0, sizeof *out);
    size_t line_no = 0;
    char where[600];
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        const char *line = buf + pos;
        pos = nl ? end + 1 : len;
        snprintf(where, sizeof where, "%s:%zu", name, ++line_no);
        cJSON *row;
        int rc = task_row_parse_line(where, line, (size_t)(buf + end - line), TASK_ROW_MAX_LINE, &row, err);
        if (!rc && row) rc = task_rows_push(out, row, where, err);
        if (rc) {
            task_rows_free(out);
            return rc;
        }
    }
    return 0;
}

int task_rows_read_jsonl(const char *path, struct task_rows *out, xsa_error *err) {
    memset(out, 0, sizeof *out);
    char *buf;
    size_t len;
    int rc = file_read_all(path, TASK_ROWS_MAX_FILE, &buf, &len, err);
    if (rc) return rc;
    rc = task_rows_parse_jsonl(path, buf, len, out, err);
    free(buf);
    return rc;
}

int task_rows_serialize_array(cJSON *const *rows, int n_rows, char **out, size_t *out_len, xsa_error *err) {
    struct sbuf b = {0};
    sbuf_append(&b, "", 0);  // an empty set of rows is "" (a buffer, not NULL)
    for (int i = 0; i < n_rows; i++) {
        char *line = cJSON_PrintUnformatted(rows[i]);
        if (!line) {
            sbuf_free(&b);
            return xsa_fail(err, XSA_ERUNTIME, "row %d cannot be serialized", i + 1);
        }
        sbuf_puts(&b, line);
        sbuf_puts(&b, "\n");
        free(line);
    }
    *out = b.s;
    *out_len = b.n;
    return 0;
}

int task_rows_serialize(const struct task_rows *r, char **out, size_t *out_len, xsa_error *err) {
    return task_rows_serialize_array(r->row, r->n, out, out_len, err);
}

// The end of the schema item starting at s: the next top-level ',' or the end.
static const char *schema_item_end(const char *s) {
    int depth = 0;
    for (; *s; s++) {
        if (*s == '(') depth++;
        else if (*s == ')') depth--;
        else if (*s == ',' && depth == 0) break;
    }
    return s;
}

void task_row_order_keys(cJSON *row, const char *schema) {
    if (!cJSON_IsObject(row) || !schema || !*schema) return;
    // Detach every member, then add back those the schema names, in its order, and the rest.
    int n = cJSON_GetArraySize(row);
    cJSON **item = xsa_calloc(n > 0 ? (size_t)n : 1, sizeof *item);
    for (int i = 0; i < n; i++) item[i] = cJSON_DetachItemViaPointer(row, row->child);
    for (const char *s = schema; *s;) {
        const char *end = schema_item_end(s), *paren = memchr(s, '(', (size_t)(end - s));
        size_t klen = (size_t)((paren ? paren : end) - s);
        for (int i = 0; i < n; i++) {
            if (!item[i] || !item[i]->string || strlen(item[i]->string) != klen || memcmp(item[i]->string, s, klen))
                continue;
            if (paren) {  // "key(a,b)": the nested object's order is between the parentheses
                char inner[256];
                snprintf(inner, sizeof inner, "%.*s", (int)(end - paren - 2 > 0 ? end - paren - 2 : 0), paren + 1);
                task_row_order_keys(item[i], inner);
            }
            cJSON_AddItemToArray(row, item[i]);  // keeps the item's key
            item[i] = NULL;
            break;
        }
        s = *end ? end + 1 : end;
    }
    for (int i = 0; i < n; i++)
        if (item[i]) cJSON_AddItemToArray(row, item[i]);
    free(item);
}

int task_rows_sha256(const struct task_rows *r, char out[65], xsa_error *err) {
    char *s;
    size_t n;
    int rc = task_rows_serialize(r, &s, &n, err);
    if (rc) return rc;
    rc = sha256_hex(s, n, out, err);
    free(s);
    return rc;
}
