// bench_util.h: what the benchmarks share: the clock (common/timing.h) and the median of runs.
#ifndef XSA_BENCH_BENCH_UTIL_H
#define XSA_BENCH_BENCH_UTIL_H

#include <stdlib.h>

#include "common/timing.h"

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The median of v[0..n) (sorted in place).
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
