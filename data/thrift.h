// thrift.h: a bounded reader of the Thrift compact protocol (what Parquet's metadata and page
// headers are written in). It reads fields one at a time and skips what the caller does not
// know; every length is checked against the end of the buffer. Internal to data/.
#ifndef XSA_DATA_THRIFT_H
#define XSA_DATA_THRIFT_H

#include <stddef.h>
#include <stdint.h>

enum {  // compact protocol type codes (in field headers and list headers)
    THRIFT_STOP = 0,
    THRIFT_TRUE = 1,
    THRIFT_FALSE = 2,
    THRIFT_BYTE = 3,
    THRIFT_I16 = 4,
    THRIFT_I32 = 5,
    THRIFT_I64 = 6,
    THRIFT_DOUBLE = 7,
    THRIFT_BINARY = 8,
    THRIFT_LIST = 9,
    THRIFT_SET = 10,
    THRIFT_MAP = 11,
    THRIFT_STRUCT = 12,
};

#define THRIFT_MAX_DEPTH 32  // nesting of structs, lists and maps

struct thrift_reader {
    const unsigned char *p, *end;  // unread bytes
    int depth;                     // structs/containers being skipped
    const char *error;             // first failure ("truncated", ...), NULL while fine
};

// Reads the next field header of a struct. *type is THRIFT_STOP at the struct's end; *last is
// the previous field id (start each struct with 0). Returns 0, or -1 with r->error set.
int thrift_field(struct thrift_reader *r, int16_t *last, int *type, int16_t *id);
int thrift_i64(struct thrift_reader *r, int64_t *v);              // I16, I32 or I64 (zigzag varint)
int thrift_i32(struct thrift_reader *r, int type, int32_t *v);    // an I32 field (type checked)
int thrift_binary(struct thrift_reader *r, const unsigned char **s, uint32_t *len);
int thrift_list(struct thrift_reader *r, int *elem_type, uint32_t *n);
// Reads a struct to its end: fn(ctx, r, id, type) reads or skips the value of each field
// (thrift_skip for fields it does not know) and returns 0, or -1 to stop.
typedef int (*thrift_field_fn)(void *ctx, struct thrift_reader *r, int16_t id, int type);
int thrift_struct(struct thrift_reader *r, thrift_field_fn fn, void *ctx);
// Skips one value of `type` (nested values included).
int thrift_skip(struct thrift_reader *r, int type);

#endif
