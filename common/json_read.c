// json_read.c: whole-text JSON parsing (json_read.h).
#include "common/json_read.h"

#include <stddef.h>

cJSON *json_parse_whole(const char *text, long *trailing_at) {
    if (trailing_at) *trailing_at = -1;
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(text, &end, 0);
    if (!v) return NULL;
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') end++;
    if (!*end) return v;
    cJSON_Delete(v);
    if (trailing_at) *trailing_at = (long)(end - text);
    return NULL;
}
