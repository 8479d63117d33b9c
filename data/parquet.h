// parquet.h: the rows of a Parquet file as canonical JSON objects (the Hugging Face schema:
// one object per row, fields in schema order, list<...> as arrays, structs as objects, nulls
// as null). Only what the benchmark datasets' files use is read: data pages v1 and v2,
// dictionary pages, PLAIN and (RLE_|PLAIN_)DICTIONARY encodings, RLE/bit-packed levels,
// BYTE_ARRAY strings, INT32, INT64, BOOLEAN, FLOAT and DOUBLE, UNCOMPRESSED, SNAPPY, GZIP and
// ZSTD pages. Anything else is refused by name; every length and offset is checked.
#ifndef XSA_DATA_PARQUET_H
#define XSA_DATA_PARQUET_H

#include <cJSON.h>
#include <stddef.h>

#include "common/error.h"

#define PARQUET_MAX_FILE ((size_t)1 << 30)      // the cache's own bound on a file
#define PARQUET_MAX_PAGE ((size_t)256 << 20)    // one page, decompressed
#define PARQUET_MAX_VALUES ((long)1 << 24)      // level entries in one column chunk
#define PARQUET_MAX_ROWS 2000000L

typedef int (*parquet_emit_fn)(void *ctx, cJSON *row, const char *where, xsa_error *err);

// Calls emit(ctx, row, where, err) for every row, in file order (emit owns the row). `where`
// names the file in errors. Errors: XSA_EBADINPUT naming the file, the column and the problem;
// emit's own code when emit fails. *n_rows: rows emitted.
int parquet_read_rows(const unsigned char *buf, size_t len, const char *where, parquet_emit_fn emit, void *ctx,
                      long *n_rows, xsa_error *err);

// parquet_read_rows over a file on disk (at most PARQUET_MAX_FILE bytes).
int parquet_read_file(const char *path, parquet_emit_fn emit, void *ctx, long *n_rows, xsa_error *err);

#endif
