// parquet.c: rows of a Parquet file as JSON objects. Each row group's columns are decoded
// (parquet_page.c), then rows are assembled from the levels: a node is present when a leaf's
// definition level reaches the node's own, and a repeated node continues while the next entry
// repeats at the node's level (Dremel record assembly, for the nesting these files use).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "data/parquet.h"
#include "data/parquet_int.h"
#include "tasks/pystr.h"

struct assembler {
    const struct pq_meta *m;
    struct pq_column *cols;  // (m->n_leaves) of the current row group
    const char *where;
    int group;
    long row;                // in the file, for errors
    char *scratch;           // a NUL-terminated copy of the current string
    size_t scratch_cap;
    xsa_error *err;
    struct pq_budget budget;  // what the file's pages may still expand to
};

static int asm_fail(struct assembler *a, int leaf, const char *what) {
    char path[512];
    return xsa_fail(a->err, XSA_EBADINPUT, "%s: row %ld, column '%s': %s", a->where, a->row + 1,
                    pq_column_path(a->m, leaf, path, sizeof path), what);
}

// The first leaf's column under node i, with its next entry checked to exist.
static struct pq_column *first_col(struct assembler *a, int i) {
    struct pq_column *c = &a->cols[a->m->nodes[i].first_leaf];
    if (c->pos >= c->n) {
        asm_fail(a, a->m->nodes[i].first_leaf, "fewer level entries than rows (inconsistent levels)");
        return NULL;
    }
    return c;
}

// Node i is absent (null, or an empty list): every leaf under it holds one entry for that.
static int skip_absent(struct assembler *a, int i) {
    const struct pq_node *nd = &a->m->nodes[i];
    for (int l = nd->first_leaf; l < nd->first_leaf + nd->n_leaves; l++) {
        struct pq_column *c = &a->cols[l];
        if (c->pos >= c->n || c->def[c->pos] >= (uint32_t)nd->def)
            return asm_fail(a, l, "inconsistent definition levels across the columns of one field");
        c->pos++;
    }
    return 0;
}

static int leaf_json(struct assembler *a, const struct pq_node *nd, cJSON **out) {
    struct pq_column *c = &a->cols[nd->leaf];
    if (c->def[c->pos] != (uint32_t)nd->def) return asm_fail(a, nd->leaf, "a missing value where none may be missing");
    if (c->vpos >= c->n_vals) return asm_fail(a, nd->leaf, "fewer values than definition levels say");
    const struct pq_value *v = &c->vals[c->vpos++];
    c->pos++;
    switch (nd->kind) {
    case PQ_KIND_STRING:
        if (memchr(v->s, 0, v->u.len)) return asm_fail(a, nd->leaf, "a string holds a NUL character");
        if (!pystr_utf8_valid((const char *)v->s, v->u.len)) return asm_fail(a, nd->leaf, "a string is not valid UTF-8");
        if (v->u.len + 1 > a->scratch_cap) {
            size_t cap = v->u.len + 1 > 2 * a->scratch_cap ? v->u.len + 1 : 2 * a->scratch_cap;
            a->scratch = xsa_realloc(a->scratch, cap);
            a->scratch_cap = cap;
        }
        memcpy(a->scratch, v->s, v->u.len);
        a->scratch[v->u.len] = '\0';
        *out = cJSON_CreateString(a->scratch);
        break;
    case PQ_KIND_INT:
    case PQ_KIND_UINT: {
        // JSON numbers are doubles here: integers past 2^53 would change silently.
        int64_t i = v->u.i;
        if (nd->kind == PQ_KIND_UINT && nd->type == PQ_INT32) i = (int64_t)(uint32_t)i;
        if ((nd->kind == PQ_KIND_UINT && nd->type == PQ_INT64 && i < 0) || i > (1LL << 53) || i < -(1LL << 53))
            return asm_fail(a, nd->leaf, "an integer beyond 2^53 (not exact as a JSON number)");
        *out = cJSON_CreateNumber((double)i);
        break;
    }
    case PQ_KIND_BOOL:
        *out = cJSON_CreateBool(v->u.i != 0);
        break;
    default:
        if (!isfinite(v->u.d)) return asm_fail(a, nd->leaf, "a NaN or infinite number (not valid JSON)");
        *out = cJSON_CreateNumber(v->u.d);
    }
    return 0;
}

static int node_json(struct assembler *a, int i, int as_element, cJSON **out);

// A repeated node's elements, as an array (its parent is present).
static int repeated_json(struct assembler *a, int i, cJSON **out) {
    const struct pq_node *nd = &a->m->nodes[i];
    struct pq_column *c = first_col(a, i);
    if (!c) return XSA_EBADINPUT;
    *out = cJSON_CreateArray();
    if (c->def[c->pos] < (uint32_t)nd->def) return skip_absent(a, i);  // an empty list
    // A LIST's repeated group of one field stands for that field (the 3-level form).
    int elem = nd->n_children == 1 ? nd->children[0] : -1;
    for (;;) {
        cJSON *v = NULL;
        int rc = elem >= 0 ? node_json(a, elem, 0, &v) : node_json(a, i, 1, &v);
        if (rc) return rc;
        cJSON_AddItemToArray(*out, v);
        if (c->pos >= c->n) return 0;
        uint32_t r = c->rep[c->pos];
        if (r < (uint32_t)nd->rep) return 0;
        if (r > (uint32_t)nd->rep) return asm_fail(a, nd->first_leaf, "a repetition level deeper than the schema");
    }
}

// Node i's value at the columns' cursors (its parent is present). as_element: i is repeated
// and one of its elements is read.
static int node_json(struct assembler *a, int i, int as_element, cJSON **out) {
    const struct pq_node *nd = &a->m->nodes[i];
    *out = NULL;
    if (nd->repetition == PQ_REPEATED && !as_element) return repeated_json(a, i, out);
    struct pq_column *c = first_col(a, i);
    if (!c) return XSA_EBADINPUT;
    if (nd->repetition == PQ_OPTIONAL && c->def[c->pos] < (uint32_t)nd->def) {
        *out = cJSON_CreateNull();
        return skip_absent(a, i);
    }
    if (nd->leaf >= 0) return leaf_json(a, nd, out);
    if (nd->kind == PQ_KIND_LIST) return repeated_json(a, nd->children[0], out);
    *out = cJSON_CreateObject();
    for (int k = 0; k < nd->n_children; k++) {
        cJSON *v = NULL;
        int rc = node_json(a, nd->children[k], 0, &v);
        if (v) cJSON_AddItemToObject(*out, a->m->nodes[nd->children[k]].name, v);
        if (rc) return rc;
    }
    return 0;
}

static int read_group(struct assembler *a, const unsigned char *buf, size_t len, parquet_emit_fn emit, void *ctx,
                      long *n_rows) {
    const struct pq_meta *m = a->m;
    int rc = 0;
    for (int l = 0; !rc && l < m->n_leaves; l++)
        rc = pq_column_read(buf, len, a->where, m, a->group, l, &a->cols[l], &a->budget, a->err);
    const struct pq_node *root = &m->nodes[0];
    for (int64_t r = 0; !rc && r < m->group_rows[a->group]; r++) {
        for (int l = 0; !rc && l < m->n_leaves; l++)
            if (a->cols[l].pos < a->cols[l].n && a->cols[l].rep[a->cols[l].pos] != 0)
                rc = asm_fail(a, l, "a row does not start at repetition level 0");
        cJSON *row = rc ? NULL : cJSON_CreateObject();
        for (int k = 0; !rc && k < root->n_children; k++) {
            cJSON *v = NULL;
            rc = node_json(a, root->children[k], 0, &v);
            if (v) cJSON_AddItemToObject(row, m->nodes[root->children[k]].name, v);
        }
        if (rc) {
            cJSON_Delete(row);
            break;
        }
        rc = emit(ctx, row, a->where, a->err);
        if (!rc) (*n_rows)++, a->row++;
    }
    for (int l = 0; !rc && l < m->n_leaves; l++)
        if (a->cols[l].pos != a->cols[l].n || a->cols[l].vpos != a->cols[l].n_vals)
            rc = asm_fail(a, l, "more level entries or values than the row group's rows");
    for (int l = 0; l < m->n_leaves; l++) pq_column_free(&a->cols[l]);
    return rc;
}

int parquet_read_rows(const unsigned char *buf, size_t len, const char *where, parquet_emit_fn emit, void *ctx,
                      long *n_rows, xsa_error *err) {
    *n_rows = 0;
    struct pq_meta m;
    int rc = pq_meta_read(buf, len, where, &m, err);
    if (rc) return rc;
    struct assembler a = {.m = &m, .where = where, .err = err,
                          .budget = {PQ_BUDGET_VALUES(len), PQ_BUDGET_BYTES(len), len}};
    a.cols = xsa_calloc(m.n_leaves ? (size_t)m.n_leaves : 1, sizeof *a.cols);
    for (int g = 0; !rc && g < m.n_groups; g++) {
        a.group = g;
        rc = read_group(&a, buf, len, emit, ctx, n_rows);
    }
    free(a.cols);
    free(a.scratch);
    pq_meta_free(&m);
    return rc;
}

int parquet_read_file(const char *path, parquet_emit_fn emit, void *ctx, long *n_rows, xsa_error *err) {
    char *buf = NULL;
    size_t len = 0;
    *n_rows = 0;
    int rc = file_read_all(path, PARQUET_MAX_FILE, &buf, &len, err);
    if (!rc) rc = parquet_read_rows((const unsigned char *)buf, len, path, emit, ctx, n_rows, err);
    free(buf);
    return rc;
}
