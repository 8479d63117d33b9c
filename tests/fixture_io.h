// fixture_io.h: reading committed fixtures in tests.
#ifndef XSA_TESTS_FIXTURE_IO_H
#define XSA_TESTS_FIXTURE_IO_H

#include <cJSON.h>
#include <stddef.h>

#include "common/vec.h"

// Parses a JSON file (up to 64 MiB); NULL, with the reason on stderr, when it cannot.
cJSON *fixture_read_json(const char *path);

// Sets `out` to the bytes written as hex digits in h[0..n) (exact bytes, invalid UTF-8 too).
void fixture_hex_to_sbuf(const char *h, size_t n, struct sbuf *out);
// Sets `out` to the space-separated integers in s[0..n).
void fixture_parse_ids(const char *s, size_t n, struct ivec *out);
int fixture_ivec_eq(const struct ivec *a, const struct ivec *b);

#endif
