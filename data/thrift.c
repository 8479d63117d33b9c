// thrift.c: the Thrift compact protocol, read with bounds (see thrift.h).
#include "data/thrift.h"

static int fail(struct thrift_reader *r, const char *why) {
    if (!r->error) r->error = why;
    return -1;
}

static int varint(struct thrift_reader *r, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return fail(r, "truncated varint");
        unsigned b = *r->p++;
        if (shift == 63 && b > 1) return fail(r, "varint over 64 bits");
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return fail(r, "varint over 64 bits");
}

int thrift_i64(struct thrift_reader *r, int64_t *v) {
    uint64_t u;
    if (varint(r, &u)) return -1;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);  // zigzag
    return 0;
}

int thrift_i32(struct thrift_reader *r, int type, int32_t *v) {
    int64_t x;
    if (type != THRIFT_I32 && type != THRIFT_I16 && type != THRIFT_BYTE) return fail(r, "field is not an integer");
    if (type == THRIFT_BYTE) {
        if (r->p >= r->end) return fail(r, "truncated byte");
        *v = (int8_t)*r->p++;
        return 0;
    }
    if (thrift_i64(r, &x)) return -1;
    if (x < INT32_MIN || x > INT32_MAX) return fail(r, "i32 out of range");
    *v = (int32_t)x;
    return 0;
}

int thrift_field(struct thrift_reader *r, int16_t *last, int *type, int16_t *id) {
    if (r->p >= r->end) return fail(r, "truncated struct");
    unsigned b = *r->p++;
    *type = (int)(b & 0x0f);
    if (*type == THRIFT_STOP) return 0;
    unsigned delta = b >> 4;
    if (delta) {
        *id = (int16_t)(*last + (int)delta);
    } else {
        int64_t x;
        if (thrift_i64(r, &x)) return -1;
        if (x < INT16_MIN || x > INT16_MAX) return fail(r, "field id out of range");
        *id = (int16_t)x;
    }
    if (*type > THRIFT_STRUCT) return fail(r, "unknown field type");
    *last = *id;
    return 0;
}

int thrift_binary(struct thrift_reader *r, const unsigned char **s, uint32_t *len) {
    uint64_t n;
    if (varint(r, &n)) return -1;
    if (n > (uint64_t)(r->end - r->p)) return fail(r, "string length past the end");
    *s = r->p;
    *len = (uint32_t)n;
    r->p += n;
    return 0;
}

int thrift_list(struct thrift_reader *r, int *elem_type, uint32_t *n) {
    if (r->p >= r->end) return fail(r, "truncated list");
    unsigned b = *r->p++;
    uint64_t size = b >> 4;
    if (size == 15 && varint(r, &size)) return -1;
    *elem_type = (int)(b & 0x0f);
    // Every element takes at least one byte: a longer list cannot fit in what is left.
    if (size > (uint64_t)(r->end - r->p)) return fail(r, "list length past the end");
    if (*elem_type == THRIFT_STOP || *elem_type > THRIFT_STRUCT) return fail(r, "unknown list element type");
    *n = (uint32_t)size;
    return 0;
}

int thrift_skip(struct thrift_reader *r, int type) {
    if (++r->depth > THRIFT_MAX_DEPTH) return fail(r, "nesting too deep");
    int rc = 0;
    int64_t x;
    const unsigned char *s;
    uint32_t n;
    switch (type) {
    case THRIFT_TRUE:
    case THRIFT_FALSE:
        break;  // a struct field's value is in its type; this is only reached for list elements
    case THRIFT_BYTE:
        if (r->p >= r->end) rc = fail(r, "truncated byte");
        else r->p++;
        break;
    case THRIFT_I16:
    case THRIFT_I32:
    case THRIFT_I64:
        rc = thrift_i64(r, &x);
        break;
    case THRIFT_DOUBLE:
        if (r->end - r->p < 8) rc = fail(r, "truncated double");
        else r->p += 8;
        break;
    case THRIFT_BINARY:
        rc = thrift_binary(r, &s, &n);
        break;
    case THRIFT_LIST:
    case THRIFT_SET: {
        int et;
        rc = thrift_list(r, &et, &n);
        // Booleans in a list take one byte each.
        for (uint32_t i = 0; !rc && i < n; i++) rc = et == THRIFT_TRUE || et == THRIFT_FALSE ? thrift_skip(r, THRIFT_BYTE)
                                                                                            : thrift_skip(r, et);
        break;
    }
    case THRIFT_MAP: {
        uint64_t size;
        if ((rc = varint(r, &size))) break;
        if (!size) break;
        if (r->p >= r->end) {
            rc = fail(r, "truncated map");
            break;
        }
        unsigned kv = *r->p++;
        int kt = (int)(kv >> 4), vt = (int)(kv & 0x0f);
        if (size > (uint64_t)(r->end - r->p)) rc = fail(r, "map length past the end");
        if (kt == THRIFT_TRUE || kt == THRIFT_FALSE) kt = THRIFT_BYTE;
        if (vt == THRIFT_TRUE || vt == THRIFT_FALSE) vt = THRIFT_BYTE;
        for (uint64_t i = 0; !rc && i < size; i++) rc = thrift_skip(r, kt) || thrift_skip(r, vt) ? -1 : 0;
        break;
    }
    case THRIFT_STRUCT: {
        int16_t last = 0, id;
        int ft;
        for (;;) {
            if ((rc = thrift_field(r, &last, &ft, &id)) || ft == THRIFT_STOP) break;
            if ((rc = thrift_skip(r, ft))) break;
        }
        break;
    }
    default:
        rc = fail(r, "unknown type");
    }
    r->depth--;
    return rc;
}

int thrift_struct(struct thrift_reader *r, thrift_field_fn fn, void *ctx) {
    int16_t last = 0, id;
    int t;
    for (;;) {
        if (thrift_field(r, &last, &t, &id)) return -1;
        if (t == THRIFT_STOP) return 0;
        if (fn(ctx, r, id, t)) return fail(r, "field of the wrong type");
    }
}
