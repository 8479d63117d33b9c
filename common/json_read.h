// json_read.h: a whole file's text as one JSON value, as Python's json.loads reads it: text
// after the value (a second object, stray characters) is an error, not silently dropped, and
// so is a key repeated within one object (json.loads keeps the last, cJSON finds the first:
// the file would mean one thing to us and another to the tool that wrote or reads it).
#ifndef XSA_EVAL_JSON_READ_H
#define XSA_EVAL_JSON_READ_H

#include <cJSON.h>
#include <stddef.h>

#include "common/error.h"

// The first key (depth-first, in document order of the objects) that stands twice in one
// object, or NULL when every object's keys are distinct.
const char *json_duplicate_key(const cJSON *v);

// Orders every object's members by key, all the way down, so that two values equal as Python
// compares dicts print the same (cJSON_Compare looks each key up in a list: quadratic in a
// vocabulary's 100K keys).
void json_sort_keys(cJSON *v);

// How json_read_whole treats a key repeated within one object.
enum json_keys {
    JSON_KEYS_UNIQUE,     // refused: our own files, results, tokenizers, weights headers
    JSON_KEYS_LAST_WINS,  // allowed, for a file Python's json reads (config.json, as transformers
                          // does): the caller must then read the last of a repeated key
};

// The member `key` of an object as Python's json reads it: the last one when the key stands twice
// (cJSON's own lookup returns the first); NULL when absent or `obj` is NULL or no object.
const cJSON *json_last_item(const cJSON *obj, const char *key);

// The `len` bytes of `text` as one JSON value, or NULL with err (XSA_EBADINPUT) naming `path`
// and the problem: not JSON (and near which byte), text after the value, or a repeated key.
cJSON *json_read_whole(const char *text, size_t len, enum json_keys keys, const char *path, xsa_error *err);

#endif
