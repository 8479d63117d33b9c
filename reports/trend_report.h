// trend_report.h: `report --trend`: accuracy against training step, per series (SA / XSA) and
// task, and their average, with the stderr band: a table per series and one chart per task.
#ifndef XSA_REPORTS_TREND_REPORT_H
#define XSA_REPORTS_TREND_REPORT_H

#include "common/error.h"
#include "eval/results.h"

// rs, paths, series, steps: (n). Tasks: those every file has, in the first file's order (each
// its preferred metric); average: their mean, stderr sqrt(sum se^2) / k. Markdown to md_path
// with `<md_path minus .md>_trend_<task>.svg` and `..._trend_average.svg` beside it, or to
// stdout (no charts). Two files of one series at one step: XSA_EBADINPUT.
int trend_write_report(const struct results *const *rs, const char *const *paths, const char *const *series,
                       const long long *steps, int n, const char *command, const char *md_path, xsa_error *err);

#endif
