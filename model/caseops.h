// caseops.h: the CaseOps text transform of the parameter-golf records from 2026-04-18
// (lossless_caps_caseops_v1, their lossless_caps.py encode_lossless_caps_v2): over maximal runs
// of ASCII letters, a TitleCase word becomes U+E001 + its lowercase, an ALLCAPS word (two letters
// or more) U+E002 + its lowercase, any other word with capitals its lowercase with U+E003 before
// each capital after the first (and U+E001 first when the first is one); a literal U+E001..U+E004
// is escaped by U+E004. Their tokenizers were trained on text so rewritten; their models read it.
#ifndef XSA_MODEL_CASEOPS_H
#define XSA_MODEL_CASEOPS_H

#include <stddef.h>

#include "common/vec.h"

// The markers' UTF-8: U+E001 title, U+E002 allcaps, U+E003 capnext, U+E004 escape.
#define CASEOPS_TITLE "\xee\x80\x81"
#define CASEOPS_ALLCAPS "\xee\x80\x82"
#define CASEOPS_CAPNEXT "\xee\x80\x83"
#define CASEOPS_ESC "\xee\x80\x84"

// text[0..len) (any bytes; only ASCII letters and the four markers are touched) rewritten, appended to out.
void caseops_encode(const char *text, size_t len, struct sbuf *out);

// The inverse, appended to out: the original text for what caseops_encode wrote. A marker where
// none can stand (as decode_lossless_caps_v2 raises for) is kept as it is.
void caseops_decode(const char *text, size_t len, struct sbuf *out);

#endif
