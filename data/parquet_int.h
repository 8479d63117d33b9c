// parquet_int.h: the parts of the Parquet reader (metadata, pages, row assembly). Internal
// to data/parquet*.c.
#ifndef XSA_DATA_PARQUET_INT_H
#define XSA_DATA_PARQUET_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "data/parquet.h"

#define PQ_MAX_SCHEMA 4096   // schema elements
#define PQ_MAX_DEPTH 16      // nesting of groups
#define PQ_MAX_LEVEL 255     // definition / repetition levels

// What one file's pages may expand to, in level entries and decompressed bytes, from its size:
// a file of benchmark rows holds a few values per row and compresses text a few times over, so
// a page that claims millions of values in a few bytes (an RLE run, a zstd bomb) is refused
// before its memory is asked for.
struct pq_budget {
    int64_t values, bytes;    // left
    size_t file_bytes;
};
#define PQ_BUDGET_VALUES(len) ((int64_t)(len) * 16 + ((int64_t)1 << 20))
#define PQ_BUDGET_BYTES(len) ((int64_t)(len) * 32 + ((int64_t)16 << 20))

enum { PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_INT96, PQ_FLOAT, PQ_DOUBLE, PQ_BYTE_ARRAY, PQ_FIXED_LEN_BYTE_ARRAY };
enum { PQ_REQUIRED, PQ_OPTIONAL, PQ_REPEATED };
enum { PQ_KIND_GROUP, PQ_KIND_LIST, PQ_KIND_STRING, PQ_KIND_INT, PQ_KIND_UINT, PQ_KIND_BOOL, PQ_KIND_FLOAT };

struct pq_node {             // one schema element, as a tree
    char *name;
    int type;                // physical type (leaves); -1 for groups
    int repetition;
    int kind;                // PQ_KIND_*: how its values become JSON
    int def, rep;            // the levels at which this node is present / repeats
    int n_children, *children;
    int leaf;                // column index (leaves), -1 for groups
    int first_leaf, n_leaves;
};

struct pq_chunk {            // ColumnMetaData of one column in one row group
    int type, codec;
    int64_t num_values, data_offset, dict_offset, size;
    int has_dict;
};

struct pq_meta {
    struct pq_node *nodes;   // (n_nodes) in schema (depth-first) order; nodes[0] is the root
    int n_nodes;
    int *leaves;             // (n_leaves) node index of each column
    int n_leaves;
    int64_t num_rows;
    int64_t data_end;        // where the footer starts: pages lie in [4, data_end)
    int n_groups;
    int64_t *group_rows;     // (n_groups)
    struct pq_chunk *chunks; // (n_groups * n_leaves)
};

struct pq_value {            // one decoded value
    const unsigned char *s;  // BYTE_ARRAY bytes (in the file or a page buffer)
    union {
        int64_t i;
        double d;
        uint32_t len;        // BYTE_ARRAY length
    } u;
};

struct pq_column {           // one column chunk, decoded
    uint32_t *def, *rep;     // (n) levels of every entry (zeros when the max level is 0)
    struct pq_value *vals;   // (n_vals) the non-null values
    size_t n, n_vals, cap, vcap;
    size_t pos, vpos;        // assembly cursors
    unsigned char **bufs;    // decompressed pages the values point into
    int n_bufs, cap_bufs;
    struct pq_value *dict;   // (n_dict)
    size_t n_dict;
};

// Parses the footer of buf (magic, FileMetaData, schema tree).
int pq_meta_read(const unsigned char *buf, size_t len, const char *where, struct pq_meta *m, xsa_error *err);
void pq_meta_free(struct pq_meta *m);
// "choices.text.list.element": the column's path, for errors.
const char *pq_column_path(const struct pq_meta *m, int leaf, char *out, size_t n);

// Decodes every page of chunk (group g, column leaf) into col.
int pq_column_read(const unsigned char *buf, size_t len, const char *where, const struct pq_meta *m, int g, int leaf,
                   struct pq_column *col, struct pq_budget *budget, xsa_error *err);
void pq_column_free(struct pq_column *col);

#endif
