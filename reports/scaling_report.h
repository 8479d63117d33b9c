// scaling_report.h: the XSA paper's scaling table from pairs of results files: one row per
// (A, B) pair labelled by parameter count, the per-task delta in points (* where the paired
// interval excludes 0 and McNemar's p < alpha), the average with its interval, and a chart of
// the average delta against parameter count on a log axis.
#ifndef XSA_REPORTS_SCALING_REPORT_H
#define XSA_REPORTS_SCALING_REPORT_H

#include "common/error.h"
#include "common/vec.h"
#include "eval/compare.h"

// a, b, paths_a, paths_b: (n) pairs, in any order (rows are sorted by A's parameter count).
// Markdown to md_path with `<md_path minus .md>_scaling.svg` beside it, or to stdout (no chart).
int scaling_write_report(const struct results *const *a, const struct results *const *b, const char *const *paths_a,
                         const char *const *paths_b, int n, const struct compare_options *opt, const char *md_path,
                         xsa_error *err);

#endif
