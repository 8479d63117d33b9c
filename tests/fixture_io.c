// fixture_io.c: reading committed fixtures in tests (fixture_io.h).
#include "tests/fixture_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int hexval(char c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

void fixture_hex_to_sbuf(const char *h, size_t n, struct sbuf *out) {
    out->n = 0;
    sbuf_append(out, "", 0);
    for (size_t i = 0; i + 1 < n; i += 2) {
        char c = (char)(hexval(h[i]) * 16 + hexval(h[i + 1]));
        sbuf_append(out, &c, 1);
    }
}

void fixture_parse_ids(const char *s, size_t n, struct ivec *out) {
    out->n = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && s[i] == ' ') i++;
        if (i >= n) break;
        ivec_push(out, (int32_t)strtol(s + i, NULL, 10));
        while (i < n && s[i] != ' ') i++;
    }
}

int fixture_ivec_eq(const struct ivec *a, const struct ivec *b) {
    return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, a->n * sizeof *a->v) == 0);
}
