// json_read.h: a whole file's text as one JSON value, as Python's json.loads reads it: text
// after the value (a second object, stray characters) is an error, not silently dropped.
#ifndef XSA_EVAL_JSON_READ_H
#define XSA_EVAL_JSON_READ_H

#include <cJSON.h>
#include <stddef.h>

// The value of the `len` bytes of `text`, or NULL. When they start with a valid value that is
// followed by more than whitespace (a NUL byte included), NULL with *trailing_at (may be NULL)
// set to the byte where that text starts; else *trailing_at is -1.
cJSON *json_parse_whole(const char *text, size_t len, long *trailing_at);

#endif
