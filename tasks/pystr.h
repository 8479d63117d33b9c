// pystr.h: the few Python 3 `str` behaviours lm-eval's templates rely on, on UTF-8 bytes.
// Python counts and strips Unicode code points with its own whitespace set (Unicode
// White_Space plus \x1c-\x1f), which C's isspace() does not match; capitalize() title-cases
// the first code point with the full (SpecialCasing) mapping and lower-cases the rest,
// final sigma included. All functions except the two UTF-8 checks expect valid UTF-8.
#ifndef XSA_TASKS_PYSTR_H
#define XSA_TASKS_PYSTR_H

#include <stddef.h>
#include <stdint.h>

#include "common/vec.h"

// 1 when s[0..n) is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
int pystr_utf8_valid(const char *s, size_t n);
// The offset of the first byte that does not start a well-formed UTF-8 sequence; n when valid.
size_t pystr_utf8_invalid_at(const char *s, size_t n);

// Python len(): the number of code points.
size_t pystr_len(const char *s, size_t n);

// Python's str.isspace() for one code point (Py_UNICODE_ISSPACE).
int pystr_isspace(uint32_t cp);

// Bytes kept by s.rstrip() (a prefix of s); bytes removed by s.lstrip() (a prefix offset).
size_t pystr_rstrip_len(const char *s, size_t n);
size_t pystr_lstrip_off(const char *s, size_t n);

// Full Python case mappings of one code point; return the number of code points (1..3).
int pystr_title_full(uint32_t cp, uint32_t out[3]);
int pystr_lower_full(uint32_t cp, uint32_t out[3]);

// Appends s.capitalize() to `out`.
void pystr_capitalize(const char *s, size_t n, struct sbuf *out);

#endif
