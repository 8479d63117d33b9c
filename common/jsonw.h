// jsonw.h: a small JSON writer with one fixed layout, so files diff well and golden tests
// can compare bytes: objects one member per line (2-space indent), arrays and everything
// inside them on one line (`[1, 0, 1]`, `{"a": 1, "b": 2}`), doubles as %.17g (they
// round-trip), non-finite doubles as null. tools/fixtures/make_compare_fixtures.py mirrors it.
#ifndef XSA_COMMON_JSONW_H
#define XSA_COMMON_JSONW_H

#include "common/vec.h"

#define JSONW_MAX_DEPTH 32

struct jsonw {
    struct sbuf out;                  // the document so far
    int depth;
    int count[JSONW_MAX_DEPTH];       // members written at each open level
    int is_array[JSONW_MAX_DEPTH];
    int inline_from;                  // first depth printed on one line (inside an array)
    int failed;                       // misuse (a key in an array, unbalanced ends): the output is unusable
};

// `key` names the member inside an object and must be NULL inside an array or at the top.
void jsonw_object(struct jsonw *w, const char *key);
void jsonw_array(struct jsonw *w, const char *key);
void jsonw_end(struct jsonw *w);   // closes the innermost object/array (the top one adds '\n')
void jsonw_str(struct jsonw *w, const char *key, const char *s);
void jsonw_num(struct jsonw *w, const char *key, double x);
// x with `digits` significant digits (%.*g): for derived figures whose last bits may differ
// between libm versions, so golden files stay stable.
void jsonw_num_prec(struct jsonw *w, const char *key, double x, int digits);
void jsonw_int(struct jsonw *w, const char *key, long long x);
void jsonw_bool(struct jsonw *w, const char *key, int b);
void jsonw_null(struct jsonw *w, const char *key);
void jsonw_free(struct jsonw *w);

#endif
