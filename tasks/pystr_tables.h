// pystr_tables.h: Unicode data for Python's capitalize() (generated into pystr_tables.c).
#ifndef XSA_TASKS_PYSTR_TABLES_H
#define XSA_TASKS_PYSTR_TABLES_H

#include <stdint.h>

struct pystr_special {  // a code point whose full title case is several code points
    uint32_t cp;
    int n;
    uint32_t map[3];
};

// Sorted, disjoint inclusive ranges [lo, hi].
extern const uint32_t pystr_cased_ranges[][2];
extern const int pystr_cased_count;
extern const uint32_t pystr_case_ignorable_ranges[][2];
extern const int pystr_case_ignorable_count;
// Sorted by cp.
extern const struct pystr_special pystr_title_special[];
extern const int pystr_title_special_count;

#endif
