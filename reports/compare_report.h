// compare_report.h: the report of a paired comparison (eval/compare.h computes it).
#ifndef XSA_REPORTS_COMPARE_REPORT_H
#define XSA_REPORTS_COMPARE_REPORT_H

#include "common/vec.h"
#include "eval/compare.h"

// The Markdown report of a computed comparison (charts referenced by `chart_base`_delta.svg
// and `chart_base`_acc.svg, relative to the report).
void compare_markdown(const struct results *a, const struct results *b, const struct comparison *c,
                      const struct compare_options *opt, const char *chart_base, struct sbuf *out);

// compare_results + compare_markdown, written atomically to `md_path`, with the two charts
// `<md_path minus .md>_delta.svg` and `..._acc.svg` next to it. A NULL md_path prints the
// Markdown to stdout and writes no charts.
int compare_write_report(const struct results *a, const struct results *b, const struct compare_options *opt,
                         const char *md_path, xsa_error *err);

#endif
