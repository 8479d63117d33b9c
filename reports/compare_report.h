// compare_report.h: the report of a paired comparison (eval/compare.h computes it).
#ifndef XSA_REPORTS_COMPARE_REPORT_H
#define XSA_REPORTS_COMPARE_REPORT_H

#include "common/vec.h"
#include "eval/compare.h"

// The Markdown report of a computed comparison (charts referenced by `chart_base`_delta.svg
// and `chart_base`_acc.svg, relative to the report).
void compare_markdown(const struct results *a, const struct results *b, const struct comparison *c,
                      const struct compare_options *opt, const char *chart_base, struct sbuf *out);

// Every number of a computed comparison as JSON (docs/results-format.md, "compare --json"):
// per task the delta, interval, McNemar p raw and Holm-adjusted (mcnemar_p, mcnemar_p_holm) and
// real; the averages; how many tasks the correction covers (family_tasks). Returns 0, or -1
// when the writer failed.
int compare_json(const struct comparison *c, const struct compare_options *opt, struct sbuf *out);

// compare_results + compare_markdown, written atomically to `md_path`, with the two charts
// `<md_path minus .md>_delta.svg` and `..._acc.svg` next to it, and compare_json to json_path
// (NULL: none), all or none. A NULL md_path prints the Markdown to stdout (unless the JSON goes
// there: "-" or /dev/stdout) and writes no charts.
int compare_write_report(const struct results *a, const struct results *b, const struct compare_options *opt,
                         const char *md_path, const char *json_path, xsa_error *err);

#endif
