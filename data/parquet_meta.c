// parquet_meta.c: a Parquet file's footer: magic, FileMetaData (Thrift compact), the schema as
// a tree with each node's levels and JSON kind, and each row group's column chunks.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "data/parquet_int.h"
#include "data/thrift.h"

static const char *const converted_names[] = {
    "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS", "TIME_MICROS",
    "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8", "INT_16",
    "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"};
static const char *const logical_names[] = {
    "?", "STRING", "MAP", "LIST", "ENUM", "DECIMAL", "DATE", "TIME", "TIMESTAMP", "?", "INTEGER", "UNKNOWN (null)",
    "JSON", "BSON", "UUID", "FLOAT16", "VARIANT", "GEOMETRY", "GEOGRAPHY"};
static const char *const type_names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                                         "FIXED_LEN_BYTE_ARRAY"};
static const char *const codec_names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};

#define NAME_OF(tab, i) ((i) >= 0 && (size_t)(i) < sizeof tab / sizeof tab[0] ? tab[i] : "unknown")

struct raw_element {         // a SchemaElement as written
    const unsigned char *name;
    uint32_t name_len;
    int type, repetition, n_children, converted, logical, int_signed;
};

static int bad(xsa_error *err, const char *where, const struct thrift_reader *r, const char *what) {
    return xsa_fail(err, XSA_EBADINPUT, "%s: damaged Parquet footer (%s: %s); download the file again", where, what,
                    r->error ? r->error : "wrong field type");
}

// IntType {1: bitWidth i8, 2: isSigned bool}.
static int int_type_field(void *ctx, struct thrift_reader *r, int16_t id, int t) {
    struct raw_element *e = ctx;
    if (id == 2 && (t == THRIFT_TRUE || t == THRIFT_FALSE)) e->int_signed = t == THRIFT_TRUE;
    else return thrift_skip(r, t);
    return 0;
}

// LogicalType is a union: the id of its one field says which; INTEGER carries its signedness.
static int logical_field(void *ctx, struct thrift_reader *r, int16_t id, int t) {
    struct raw_element *e = ctx;
    if (t != THRIFT_STRUCT) return thrift_skip(r, t);
    e->logical = id;
    return id == 10 ? thrift_struct(r, int_type_field, e) : thrift_skip(r, t);
}

static int element_field(void *ctx, struct thrift_reader *r, int16_t id, int t) {
    struct raw_element *e = ctx;
    int32_t v = 0;
    int rc;
    switch (id) {
    case 1: rc = thrift_i32(r, t, &v); e->type = v; break;
    case 3: rc = thrift_i32(r, t, &v); e->repetition = v; break;
    case 4: rc = t == THRIFT_BINARY ? thrift_binary(r, &e->name, &e->name_len) : -1; break;
    case 5: rc = thrift_i32(r, t, &v); e->n_children = v; break;
    case 6: rc = thrift_i32(r, t, &v); e->converted = v; break;
    case 10: rc = t == THRIFT_STRUCT ? thrift_struct(r, logical_field, e) : -1; break;
    default: rc = thrift_skip(r, t);
    }
    return rc;
}

static int read_element(struct thrift_reader *r, struct raw_element *e) {
    memset(e, 0, sizeof *e);
    e->type = e->repetition = e->converted = -1;
    e->int_signed = 1;
    return thrift_struct(r, element_field, e);
}

static int i64_field(struct thrift_reader *r, int t, int64_t *v) { return t == THRIFT_I64 ? thrift_i64(r, v) : -1; }

// ColumnMetaData: type, codec, num_values, total_compressed_size, the page offsets.
static int column_meta_field(void *ctx, struct thrift_reader *r, int16_t id, int t) {
    struct pq_chunk *c = ctx;
    int32_t v = 0;
    int rc;
    switch (id) {
    case 1: rc = thrift_i32(r, t, &v); c->type = v; break;
    case 4: rc = thrift_i32(r, t, &v); c->codec = v; break;
    case 5: rc = i64_field(r, t, &c->num_values); break;
    case 7: rc = i64_field(r, t, &c->size); break;
    case 9: rc = i64_field(r, t, &c->data_offset); break;
    case 11: rc = i64_field(r, t, &c->dict_offset); c->has_dict = 1; break;
    default: rc = thrift_skip(r, t);
    }
    return rc;
}

struct chunk_read {
    struct pq_chunk *c;
    int external, has_meta;
};

// ColumnChunk: its metadata must be inline (field 3) and its pages in this file (no file_path).
static int column_chunk_field(void *ctx, struct thrift_reader *r, int16_t id, int t) {
    struct chunk_read *cr = ctx;
    if (id == 1 && t == THRIFT_BINARY) {  // file_path; some writers write it empty
        const unsigned char *s;
        uint32_t n;
        if (thrift_binary(r, &s, &n)) return -1;
        cr->external |= n > 0;
        return 0;
    }
    if (id != 3 || t != THRIFT_STRUCT) return thrift_skip(r, t);
    cr->has_meta = 1;
    return thrift_struct(r, column_meta_field, cr->c);
}

struct meta_reader {
    struct thrift_reader r;
    const char *where;
    struct pq_meta *m;
    struct raw_element *el;
    uint32_t n_el;
    int groups_cap;
    xsa_error *err;
};

static int read_row_group(struct meta_reader *mr, int g) {
    struct thrift_reader *r = &mr->r;
    struct pq_meta *m = mr->m;
    int16_t last = 0, id;
    int t, seen_cols = 0;
    for (;;) {
        if (thrift_field(r, &last, &t, &id)) return bad(mr->err, mr->where, r, "row group");
        if (t == THRIFT_STOP) break;
        if (id == 1 && t == THRIFT_LIST) {
            int et;
            uint32_t n;
            if (thrift_list(r, &et, &n) || et != THRIFT_STRUCT) return bad(mr->err, mr->where, r, "column chunks");
            if (n != (uint32_t)m->n_leaves)
                return xsa_fail(mr->err, XSA_EBADINPUT, "%s: row group %d has %u column chunks for %d columns",
                                mr->where, g, n, m->n_leaves);
            for (uint32_t k = 0; k < n; k++) {
                struct pq_chunk *c = &m->chunks[(size_t)g * (size_t)m->n_leaves + k];
                struct chunk_read cr = {.c = c};
                if (thrift_struct(r, column_chunk_field, &cr)) return bad(mr->err, mr->where, r, "column chunk");
                int external = cr.external, has_meta = cr.has_meta;
                char path[512];
                if (external || !has_meta)
                    return xsa_fail(mr->err, XSA_EBADINPUT, "%s: column '%s': %s is not supported", mr->where,
                                    pq_column_path(m, (int)k, path, sizeof path),
                                    external ? "column data in another file (file_path)" : "encrypted column metadata");
                int want = m->nodes[m->leaves[k]].type;
                if (c->type != want)
                    return xsa_fail(mr->err, XSA_EBADINPUT, "%s: column '%s': chunk type %s, schema type %s", mr->where,
                                    pq_column_path(m, (int)k, path, sizeof path), NAME_OF(type_names, c->type),
                                    NAME_OF(type_names, want));
                if (c->codec != 0 && c->codec != 1 && c->codec != 2 && c->codec != 6)
                    return xsa_fail(mr->err, XSA_EBADINPUT, "%s: column '%s': compression %s is not supported "
                                    "(supported: UNCOMPRESSED, SNAPPY, GZIP, ZSTD)", mr->where,
                                    pq_column_path(m, (int)k, path, sizeof path), NAME_OF(codec_names, c->codec));
                if (c->num_values < 0 || c->num_values > PARQUET_MAX_VALUES)
                    return xsa_fail(mr->err, XSA_EBADINPUT, "%s: column '%s': %lld values in one chunk (at most %ld)",
                                    mr->where, pq_column_path(m, (int)k, path, sizeof path),
                                    (long long)c->num_values, PARQUET_MAX_VALUES);
            }
            seen_cols = 1;
        } else if (id == 3 && t == THRIFT_I64) {
            if (thrift_i64(r, &m->group_rows[g])) return bad(mr->err, mr->where, r, "row group");
        } else if (thrift_skip(r, t)) {
            return bad(mr->err, mr->where, r, "row group");
        }
    }
    if (!seen_cols && m->n_leaves > 0)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: row group %d lists no columns", mr->where, g);
    if (m->group_rows[g] < 0 || m->group_rows[g] > PARQUET_MAX_ROWS)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: row group %d has %lld rows", mr->where, g,
                        (long long)m->group_rows[g]);
    return 0;
}

// How a node's values become JSON, from its physical type and annotations; 0, or an error.
static int node_kind(const struct raw_element *e, int is_leaf, int *kind, const char **why, char *buf, size_t bn) {
    *why = NULL;
    if (e->logical && e->logical != 1 && e->logical != 3 && e->logical != 10) {
        snprintf(buf, bn, "logical type %s", NAME_OF(logical_names, e->logical));
        *why = buf;
        return -1;
    }
    if (e->converted >= 0 && e->converted != 0 && e->converted != 3 && !(e->converted >= 11 && e->converted <= 18)) {
        snprintf(buf, bn, "type annotation %s", NAME_OF(converted_names, e->converted));
        *why = buf;
        return -1;
    }
    int is_list = e->logical == 3 || e->converted == 3;
    int is_string = e->logical == 1 || e->converted == 0;
    int is_uint = (e->logical == 10 && !e->int_signed) || (e->converted >= 11 && e->converted <= 14);
    if (!is_leaf) {
        if (is_string || (e->logical == 10 || e->converted >= 11)) {
            *why = "an integer or string annotation on a group";
            return -1;
        }
        *kind = is_list ? PQ_KIND_LIST : PQ_KIND_GROUP;
        return 0;
    }
    switch (e->type) {
    case PQ_BYTE_ARRAY:
        if (!is_string) {
            *why = "BYTE_ARRAY without a STRING annotation (binary data)";
            return -1;
        }
        *kind = PQ_KIND_STRING;
        return 0;
    case PQ_INT32:
    case PQ_INT64:
        if (is_string || is_list) break;
        *kind = is_uint ? PQ_KIND_UINT : PQ_KIND_INT;
        return 0;
    case PQ_BOOLEAN:
    case PQ_FLOAT:
    case PQ_DOUBLE:
        if (e->converted >= 0 || e->logical) break;
        *kind = e->type == PQ_BOOLEAN ? PQ_KIND_BOOL : PQ_KIND_FLOAT;
        return 0;
    default:
        snprintf(buf, bn, "physical type %s", NAME_OF(type_names, e->type));
        *why = buf;
        return -1;
    }
    snprintf(buf, bn, "an annotation on physical type %s", NAME_OF(type_names, e->type));
    *why = buf;
    return -1;
}

// Builds node *idx (and its subtree) from the flat element list.
static int build_node(struct meta_reader *mr, uint32_t *idx, int parent, int depth) {
    struct pq_meta *m = mr->m;
    if (*idx >= mr->n_el)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema lists more children than elements", mr->where);
    if (depth > PQ_MAX_DEPTH)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema nested deeper than %d levels", mr->where, PQ_MAX_DEPTH);
    int i = (int)(*idx)++;
    const struct raw_element *e = &mr->el[i];
    struct pq_node *nd = &m->nodes[i];
    nd->leaf = -1;
    if (!e->name || e->name_len > 255 || memchr(e->name, 0, e->name_len))
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema element %d has a bad name", mr->where, i);
    nd->name = xsa_malloc(e->name_len + 1);
    memcpy(nd->name, e->name, e->name_len);
    nd->name[e->name_len] = '\0';
    nd->type = e->n_children > 0 ? -1 : e->type;
    nd->repetition = parent < 0 ? PQ_REQUIRED : e->repetition;
    if (nd->repetition < PQ_REQUIRED || nd->repetition > PQ_REPEATED)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema element '%s' has no repetition type", mr->where, nd->name);
    const struct pq_node *pn = parent >= 0 ? &m->nodes[parent] : NULL;
    nd->def = (pn ? pn->def : 0) + (nd->repetition != PQ_REQUIRED);
    nd->rep = (pn ? pn->rep : 0) + (nd->repetition == PQ_REPEATED);
    if (e->n_children < 0 || (uint32_t)e->n_children > mr->n_el - *idx)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema element '%s' claims %d children", mr->where, nd->name,
                        e->n_children);
    const char *why;
    char wbuf[96];
    if (parent >= 0 && node_kind(e, e->n_children == 0, &nd->kind, &why, wbuf, sizeof wbuf)) {
        if (!why) why = "an unknown annotation";
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: field '%s': %s is not supported", mr->where, nd->name, why);
    }
    nd->first_leaf = m->n_leaves;
    if (e->n_children == 0) {
        if (parent < 0) return xsa_fail(mr->err, XSA_EBADINPUT, "%s: the schema has no columns", mr->where);
        nd->leaf = m->n_leaves;
        m->leaves[m->n_leaves++] = i;
        nd->n_leaves = 1;
        return 0;
    }
    nd->children = xsa_malloc((size_t)e->n_children * sizeof *nd->children);
    for (int k = 0; k < e->n_children; k++) {
        nd->children[k] = (int)*idx;
        nd->n_children = k + 1;
        int rc = build_node(mr, idx, i, depth + 1);
        if (rc) return rc;
    }
    nd->n_leaves = m->n_leaves - nd->first_leaf;
    if (nd->kind == PQ_KIND_LIST &&
        (nd->n_children != 1 || m->nodes[nd->children[0]].repetition != PQ_REPEATED))
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: list '%s' is not a LIST of one repeated field", mr->where, nd->name);
    if (nd->def > PQ_MAX_LEVEL || nd->rep > PQ_MAX_LEVEL)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema nested too deeply", mr->where);
    return 0;
}

const char *pq_column_path(const struct pq_meta *m, int leaf, char *out, size_t n) {
    // Walk down from the root to the leaf: each step takes the child whose leaves hold it.
    size_t used = 0;
    out[0] = '\0';
    if (leaf < 0 || leaf >= m->n_leaves || !m->n_nodes) return out;
    int cur = 0;
    while (m->nodes[cur].n_children > 0) {
        int next = -1;
        for (int k = 0; k < m->nodes[cur].n_children; k++) {
            const struct pq_node *c = &m->nodes[m->nodes[cur].children[k]];
            if (leaf >= c->first_leaf && leaf < c->first_leaf + c->n_leaves) next = m->nodes[cur].children[k];
        }
        if (next < 0) break;
        int w = snprintf(out + used, n - used, "%s%s", used ? "." : "", m->nodes[next].name);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
        cur = next;
    }
    return out;
}

static int read_file_meta(struct meta_reader *mr) {
    struct thrift_reader *r = &mr->r;
    struct pq_meta *m = mr->m;
    int16_t last = 0, id;
    int t, have_schema = 0;
    for (;;) {
        if (thrift_field(r, &last, &t, &id)) return bad(mr->err, mr->where, r, "FileMetaData");
        if (t == THRIFT_STOP) break;
        if (id == 2 && t == THRIFT_LIST && !have_schema) {
            int et;
            if (thrift_list(r, &et, &mr->n_el) || et != THRIFT_STRUCT) return bad(mr->err, mr->where, r, "schema");
            if (mr->n_el == 0 || mr->n_el > PQ_MAX_SCHEMA)
                return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema of %u elements (1 to %d)", mr->where, mr->n_el,
                                PQ_MAX_SCHEMA);
            mr->el = xsa_calloc(mr->n_el, sizeof *mr->el);
            m->nodes = xsa_calloc(mr->n_el, sizeof *m->nodes);
            m->leaves = xsa_calloc(mr->n_el, sizeof *m->leaves);
            m->n_nodes = (int)mr->n_el;
            for (uint32_t k = 0; k < mr->n_el; k++)
                if (read_element(r, &mr->el[k])) return bad(mr->err, mr->where, r, "schema element");
            uint32_t idx = 0;
            int rc = build_node(mr, &idx, -1, 0);
            if (rc) return rc;
            if (idx != mr->n_el)
                return xsa_fail(mr->err, XSA_EBADINPUT, "%s: schema has %u elements outside its tree", mr->where,
                                mr->n_el - idx);
            have_schema = 1;
        } else if (id == 3 && t == THRIFT_I64) {
            if (thrift_i64(r, &m->num_rows)) return bad(mr->err, mr->where, r, "num_rows");
        } else if (id == 4 && t == THRIFT_LIST && have_schema && !m->chunks) {
            int et;
            uint32_t n;
            if (thrift_list(r, &et, &n) || et != THRIFT_STRUCT) return bad(mr->err, mr->where, r, "row groups");
            // Every column chunk of every row group takes at least a byte of the footer.
            if ((uint64_t)n * (uint64_t)m->n_leaves > (uint64_t)(r->end - r->p))
                return xsa_fail(mr->err, XSA_EBADINPUT, "%s: %u row groups of %d columns cannot fit in the footer",
                                mr->where, n, m->n_leaves);
            m->group_rows = xsa_calloc(n ? n : 1, sizeof *m->group_rows);
            m->chunks = xsa_calloc(n && m->n_leaves ? (size_t)n * (size_t)m->n_leaves : 1, sizeof *m->chunks);
            for (uint32_t g = 0; g < n; g++) {
                int rc = read_row_group(mr, (int)g);
                if (rc) return rc;
                m->n_groups = (int)g + 1;
            }
        } else if (id == 4) {
            return xsa_fail(mr->err, XSA_EBADINPUT, "%s: row groups listed before the schema", mr->where);
        } else if (thrift_skip(r, t)) {
            return bad(mr->err, mr->where, r, "FileMetaData");
        }
    }
    if (!have_schema) return xsa_fail(mr->err, XSA_EBADINPUT, "%s: the Parquet footer has no schema", mr->where);
    int64_t total = 0;
    for (int g = 0; g < m->n_groups; g++) total += m->group_rows[g];
    if (m->num_rows != total || total > PARQUET_MAX_ROWS)
        return xsa_fail(mr->err, XSA_EBADINPUT, "%s: num_rows %lld, but the row groups hold %lld (at most %ld)",
                        mr->where, (long long)m->num_rows, (long long)total, PARQUET_MAX_ROWS);
    return 0;
}

int pq_meta_read(const unsigned char *buf, size_t len, const char *where, struct pq_meta *m, xsa_error *err) {
    memset(m, 0, sizeof *m);
    if (len >= 4 && !memcmp(buf + len - 4, "PARE", 4))
        return xsa_fail(err, XSA_EBADINPUT, "%s: encrypted Parquet (PARE) is not supported", where);
    if (len < 12 || memcmp(buf, "PAR1", 4) || memcmp(buf + len - 4, "PAR1", 4))
        return xsa_fail(err, XSA_EBADINPUT, "%s: not a Parquet file (no PAR1 magic at both ends; %zu bytes); the "
                        "download may be truncated or an error page", where, len);
    uint32_t flen = (uint32_t)buf[len - 8] | (uint32_t)buf[len - 7] << 8 | (uint32_t)buf[len - 6] << 16 |
                    (uint32_t)buf[len - 5] << 24;
    if (flen > len - 12)
        return xsa_fail(err, XSA_EBADINPUT, "%s: footer length %u past the start of the file (%zu bytes)", where, flen,
                        len);
    m->data_end = (int64_t)(len - 8 - flen);
    struct meta_reader mr = {.r = {.p = buf + len - 8 - flen, .end = buf + len - 8}, .where = where, .m = m, .err = err};
    int rc = read_file_meta(&mr);
    free(mr.el);
    if (rc) pq_meta_free(m);
    return rc;
}

void pq_meta_free(struct pq_meta *m) {
    for (int i = 0; m->nodes && i < m->n_nodes; i++) {
        free(m->nodes[i].name);
        free(m->nodes[i].children);
    }
    free(m->nodes);
    free(m->leaves);
    free(m->group_rows);
    free(m->chunks);
    memset(m, 0, sizeof *m);
}
