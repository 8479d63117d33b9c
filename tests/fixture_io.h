// fixture_io.h: reading committed fixtures in tests.
#ifndef XSA_TESTS_FIXTURE_IO_H
#define XSA_TESTS_FIXTURE_IO_H

#include <cJSON.h>

// Parses a JSON file (up to 64 MiB); NULL, with the reason on stderr, when it cannot.
cJSON *fixture_read_json(const char *path);

#endif
