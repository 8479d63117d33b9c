// json_read.c: whole-text JSON parsing (json_read.h).
#include "common/json_read.h"

cJSON *json_parse_whole(const char *text, size_t len, long *trailing_at) {
    if (trailing_at) *trailing_at = -1;
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!v) return NULL;
    const char *stop = text + len;
    while (end < stop && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) end++;
    if (end == stop) return v;
    cJSON_Delete(v);
    if (trailing_at) *trailing_at = (long)(end - text);
    return NULL;
}
