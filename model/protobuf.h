// protobuf.h: a bounded reader of the protobuf wire format (varints, fixed32/64,
// length-delimited fields); enough to read a SentencePiece ModelProto without libprotobuf.
#ifndef XSA_MODEL_PROTOBUF_H
#define XSA_MODEL_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_BYTES = 2, PB_FIXED32 = 5 };

struct pb_reader {  // the unread part of one message: [p, end)
    const uint8_t *p, *end;
};

struct pb_field {
    uint32_t number;
    int wire;                // PB_VARINT, PB_FIXED64, PB_BYTES or PB_FIXED32
    uint64_t u;              // varint or fixed value
    const uint8_t *bytes;    // PB_BYTES: the payload, `len` bytes, inside the message
    size_t len;
};

struct pb_reader pb_reader_init(const void *data, size_t len);

// Reads the next field. Returns 1 with `f` filled, 0 at the end of the message, or -1 when
// the data is malformed (truncated varint or payload, a length past the end, field number 0,
// or a wire type this reader does not know: groups (3, 4) and 6, 7). `*why` says which.
int pb_next(struct pb_reader *r, struct pb_field *f, const char **why);

// The float stored in a PB_FIXED32 field.
float pb_float(const struct pb_field *f);

#endif
