// protobuf.c: the bounded wire-format reader of protobuf.h.
#include "model/protobuf.h"

#include <string.h>

struct pb_reader pb_reader_init(const void *data, size_t len) {
    struct pb_reader r = {(const uint8_t *)data, (const uint8_t *)data + len};
    return r;
}

// A varint is at most 10 bytes; anything longer or cut short is malformed.
static int pb_read_varint(struct pb_reader *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return -1;
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

int pb_next(struct pb_reader *r, struct pb_field *f, const char **why) {
    if (r->p >= r->end) return 0;
    uint64_t key;
    if (pb_read_varint(r, &key)) {
        *why = "truncated field key";
        return -1;
    }
    memset(f, 0, sizeof *f);
    f->wire = (int)(key & 7);
    if ((key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF) {
        *why = "invalid field number";
        return -1;
    }
    f->number = (uint32_t)(key >> 3);
    size_t left;
    switch (f->wire) {
    case PB_VARINT:
        if (pb_read_varint(r, &f->u)) {
            *why = "truncated varint";
            return -1;
        }
        return 1;
    case PB_FIXED64:
    case PB_FIXED32: {
        size_t n = f->wire == PB_FIXED64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n) {
            *why = "truncated fixed-width value";
            return -1;
        }
        for (size_t i = 0; i < n; i++) f->u |= (uint64_t)r->p[i] << (8 * i);  // little-endian
        r->p += n;
        return 1;
    }
    case PB_BYTES:
        if (pb_read_varint(r, &f->u)) {
            *why = "truncated length";
            return -1;
        }
        left = (size_t)(r->end - r->p);
        if (f->u > left) {
            *why = "length-delimited field runs past the end of its message";
            return -1;
        }
        f->bytes = r->p;
        f->len = (size_t)f->u;
        r->p += f->len;
        return 1;
    default:
        *why = "unknown wire type";
        return -1;
    }
}

float pb_float(const struct pb_field *f) {
    uint32_t bits = (uint32_t)f->u;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}
