// rows.h: canonical JSONL rows (one JSON object per line, the Hugging Face schema) with the
// "file:line" that names each, and the one serialization every digest is taken over:
// cJSON_PrintUnformatted(row) + "\n" per row, in order.
#ifndef XSA_TASKS_ROWS_H
#define XSA_TASKS_ROWS_H

#include <cJSON.h>
#include <stddef.h>

#include "common/error.h"

#define TASK_ROW_MAX_LINE (4u << 20)     // bytes in one JSONL line
#define TASK_ROWS_MAX_FILE (1u << 30)    // bytes in one data file
#define TASK_ROWS_MAX (20 * 1000 * 1000) // rows in one file

struct task_rows {
    int n, cap;
    cJSON **row;   // (n) owned
    char **where;  // (n) "file:line", owned
};

// Reads a canonical JSONL file: blank lines are skipped, a trailing "\r" is ignored; each
// other line must be valid UTF-8 holding one JSON object.
int task_rows_read_jsonl(const char *path, struct task_rows *out, xsa_error *err);
// One line of such a file (a trailing "\r" ignored) into *out, NULL for a blank line; `where`
// ("file:line") names it in errors; a line over max_line bytes is refused.
int task_row_parse_line(const char *where, const char *line, size_t n, size_t max_line, cJSON **out,
                        xsa_error *err);
// A buffer of such lines; `name` is the file name used in "name:line".
int task_rows_parse_jsonl(const char *name, const char *buf, size_t len, struct task_rows *out,
                          xsa_error *err);
// cJSON hands out C strings, so a NUL inside a JSON string (a "\u0000" escape or a raw 0 byte)
// would silently cut the text short. Returns 1 when `text` (len bytes of JSON) has one, with
// the path of the value holding it in `path` (size n): "choices.text[2]", "rows[4].row.q".
int task_json_find_nul(const char *text, size_t len, char *path, size_t n);

// Appends a row (ownership passes to `r`, also on error).
int task_rows_push(struct task_rows *r, cJSON *row, const char *where, xsa_error *err);
void task_rows_free(struct task_rows *r);

// The canonical serialization of the rows into `out` (a malloc'd NUL-terminated buffer): the
// bytes every data digest is taken over, by the cache and the task loaders alike.
int task_rows_serialize(const struct task_rows *r, char **out, size_t *out_len, xsa_error *err);
int task_rows_serialize_array(cJSON *const *rows, int n_rows, char **out, size_t *out_len, xsa_error *err);
// Puts an object's keys in `schema`'s order (a task_def's: "id,question,choices(text,label)"
// orders the nested object's keys too); keys it does not name follow in their own order. A row
// a writer of JSONL or Parquet put in another key order then serializes to the same bytes.
void task_row_order_keys(cJSON *row, const char *schema);
// SHA-256 of that serialization, as 64 hex digits.
int task_rows_sha256(const struct task_rows *r, char out[65], xsa_error *err);

#endif
