// rows.c: reading canonical JSONL rows and their one serialization (see rows.h).
#include "tasks/rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "tasks/pystr.h"

int task_rows_push(struct task_rows *r, cJSON *row, const char *where, xsa_error *err) {
    if (r->n >= TASK_ROWS_MAX) {
        cJSON_Delete(row);
        return xsa_fail(err, XSA_EBADINPUT, "%s: more than %d rows", where, TASK_ROWS_MAX);
    }
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 1024;
        cJSON **nr = realloc(r->row, (size_t)cap * sizeof *nr);
        if (nr) r->row = nr;
        char **nw = nr ? realloc(r->where, (size_t)cap * sizeof *nw) : NULL;
        if (nw) r->where = nw;
        if (!nr || !nw) {
            cJSON_Delete(row);
            return xsa_fail(err, XSA_ERUNTIME, "%s: out of memory", where);
        }
        r->cap = cap;
    }
    char *w = strdup(where);
    if (!w) {
        cJSON_Delete(row);
        return xsa_fail(err, XSA_ERUNTIME, "%s: out of memory", where);
    }
    r->row[r->n] = row;
    r->where[r->n] = w;
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

int task_rows_parse_jsonl(const char *name, const char *buf, size_t len, struct task_rows *out,
                          xsa_error *err) {
    memset(out, 0, sizeof *out);
    size_t line_no = 0;
    char where[600];
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len, n = end - pos;
        const char *line = buf + pos;
        pos = nl ? end + 1 : len;
        line_no++;
        snprintf(where, sizeof where, "%s:%zu", name, line_no);
        if (n > 0 && line[n - 1] == '\r') n--;
        size_t k = 0;
        while (k < n && (line[k] == ' ' || line[k] == '\t')) k++;
        if (k == n) continue;  // blank line
        int rc = 0;
        if (n > TASK_ROW_MAX_LINE)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: line longer than %u bytes", where, TASK_ROW_MAX_LINE);
        else if (!pystr_utf8_valid(line, n))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: not valid UTF-8; the file must be UTF-8 JSONL", where);
        if (rc) {
            task_rows_free(out);
            return rc;
        }
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
            task_rows_free(out);
            return xsa_fail(err, XSA_EBADINPUT, "%s: not one JSON object per line (JSONL expected)", where);
        }
        if ((rc = task_rows_push(out, row, where, err))) {
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

int task_rows_serialize(const struct task_rows *r, char **out, size_t *out_len, xsa_error *err) {
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    if (!s) return xsa_fail(err, XSA_ERUNTIME, "out of memory serializing rows");
    for (int i = 0; i < r->n; i++) {
        char *line = cJSON_PrintUnformatted(r->row[i]);
        if (!line) {
            free(s);
            return xsa_fail(err, XSA_ERUNTIME, "%s: cannot serialize row", r->where[i]);
        }
        size_t ln = strlen(line);
        if (n + ln + 2 > cap) {
            while (n + ln + 2 > cap) cap *= 2;
            char *ns = realloc(s, cap);
            if (!ns) {
                free(line);
                free(s);
                return xsa_fail(err, XSA_ERUNTIME, "out of memory serializing rows");
            }
            s = ns;
        }
        memcpy(s + n, line, ln);
        n += ln;
        s[n++] = '\n';
        free(line);
    }
    s[n] = '\0';
    *out = s;
    *out_len = n;
    return 0;
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
