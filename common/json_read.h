// json_read.h: a whole file's text as one JSON value, as Python's json.loads reads it: text
// after the value (a second object, stray characters) is an error, not silently dropped.
#ifndef XSA_EVAL_JSON_READ_H
#define XSA_EVAL_JSON_READ_H

#include <cJSON.h>

// The value of NUL-terminated `text`, or NULL. When the text starts with a valid value that is
// followed by more than whitespace, NULL with *trailing_at (may be NULL) set to the byte where
// that text starts; else *trailing_at is -1.
cJSON *json_parse_whole(const char *text, long *trailing_at);

#endif
