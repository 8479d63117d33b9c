// svg.h: hand-written SVG charts for the reports (no dependencies; fixed number formatting so
// the output is byte-stable for golden tests). Values are in points (percent).
#ifndef XSA_REPORTS_SVG_H
#define XSA_REPORTS_SVG_H

#include "common/vec.h"

// Per-row delta with its interval: a dot at delta[i] and a line from lo[i] to hi[i] around a
// zero line. sign[i] colours the row: +1 real gain, -1 real loss, 0 not significant. `level`:
// the intervals' confidence (0.95), for the axis label.              labels, delta, lo, hi, sign: (n)
void svg_delta_chart(const char *title, const char *const *labels, const double *delta, const double *lo,
                     const double *hi, const int *sign, int n, double level, struct sbuf *out);

// Grouped horizontal bars: for each of n_rows rows, one bar per series (value +- se whisker;
// se NAN draws none). value, se: (n_series, n_rows) row-major by series.
void svg_bars_chart(const char *title, const char *const *row_labels, int n_rows, const char *const *series,
                    int n_series, const double *value, const double *se, struct sbuf *out);

// Lines over shared x values (ascending; on a log10 axis when log_x, then x > 0): series s has
// y[s * n + i] at x[i] (NAN: no point) and, when lo and hi are given, a shaded band from lo
// to hi (an interval, or +- stderr). x, and y, lo, hi: (n) and (n_series, n). x_labels (n), or
// NULL for the numbers themselves (whole ones in full: a step of 2147483647, not 2.14748e+09).
void svg_line_chart(const char *title, const char *x_unit, const char *y_unit, int log_x, const char *const *series,
                   int n_series, int n, const double *x, const char *const *x_labels, const double *y, const double *lo,
                   const double *hi, struct sbuf *out);

#endif
