#include "tests/fixture_io.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/fileio.h"

cJSON *fixture_read_json(const char *path) {
    char *text = NULL;
    size_t len = 0;
    xsa_error err = {0};
    if (file_read_all(path, 64u << 20, &text, &len, &err)) {
        fprintf(stderr, "  %s\n", err.msg);
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(text, len);
    if (!j) fprintf(stderr, "  %s: not valid JSON\n", path);
    free(text);
    return j;
}
