// svg.c: hand-written SVG bar charts for the reports (svg.h).
#include "reports/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define SVG_W 760
#define SVG_LABEL_W 150      // left column for row labels
#define SVG_RIGHT 30
#define SVG_TOP 44
#define SVG_BOTTOM 40

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
                                      "#e15759", "#9c755f", "#bab0ac", "#ff9da7"};

static void put_text(struct sbuf *o, const char *s) {  // XML-escaped
    for (; *s; s++) {
        if (*s == '&') sbuf_puts(o, "&amp;");
        else if (*s == '<') sbuf_puts(o, "&lt;");
        else if (*s == '>') sbuf_puts(o, "&gt;");
        else if (*s == '"') sbuf_puts(o, "&quot;");
        else sbuf_append(o, s, 1);
    }
}

static void header(struct sbuf *o, const char *title, int h) {
    sbuf_printf(o,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
                "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\">",
                SVG_W, h, SVG_W, h, SVG_W / 2);
    put_text(o, title);
    sbuf_puts(o, "</text>\n");
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about 6 ticks over span.
static double nice_step(double span) {
    double raw = span / 6, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

// Vertical grid lines and tick labels for [lo, hi] mapped to [x0, x1], at y0..y1.
static void axis(struct sbuf *o, double lo, double hi, double x0, double x1, double y0, double y1, const char *unit) {
    double step = nice_step(hi - lo);
    for (double t = ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
        double v = fabs(t) < step * 1e-9 ? 0 : t;
        double x = x0 + (v - lo) / (hi - lo) * (x1 - x0);
        sbuf_printf(o,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555555\">%g</text>\n",
                    x, y0, x, y1, v == 0 ? "#333333" : "#e5e5e5", x, y1 + 16, v);
    }
    sbuf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555555\">%s</text>\n", (x0 + x1) / 2,
                y1 + 32, unit);
}

static void row_label(struct sbuf *o, double y, const char *label) {
    sbuf_printf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", SVG_LABEL_W - 8, y + 4);
    put_text(o, label);
    sbuf_puts(o, "</text>\n");
}

void svg_delta_chart(const char *title, const char *const *labels, const double *delta, const double *lo,
                    const double *hi, const int *sign, int n, double level, struct sbuf *out) {
    const double row_h = 26;
    int h = (int)(SVG_TOP + row_h * n + SVG_BOTTOM + 8);
    double mn = 0, mx = 0;
    for (int i = 0; i < n; i++) {
        double vals[3] = {delta[i], lo[i], hi[i]};
        for (int k = 0; k < 3; k++)
            if (isfinite(vals[k])) { mn = fmin(mn, vals[k]); mx = fmax(mx, vals[k]); }
    }
    double pad = fmax(0.5, (mx - mn) * 0.08);
    mn -= pad;
    mx += pad;
    double x0 = SVG_LABEL_W, x1 = SVG_W - SVG_RIGHT, y0 = SVG_TOP, y1 = SVG_TOP + row_h * n;
    header(out, title, h);
    char label[96];
    snprintf(label, sizeof label, "B - A (points), %g%% paired bootstrap interval", 100 * level);
    axis(out, mn, mx, x0, x1, y0, y1, label);
    for (int i = 0; i < n; i++) {
        double y = y0 + row_h * (i + 0.5);
        const char *col = sign[i] > 0 ? "#2e7d32" : sign[i] < 0 ? "#c62828" : "#777777";
#define X(v) (x0 + ((v) - mn) / (mx - mn) * (x1 - x0))
        row_label(out, y, labels[i]);
        if (isfinite(lo[i]) && isfinite(hi[i]))
            sbuf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                        X(lo[i]), y, X(hi[i]), y, col);
        if (isfinite(delta[i]) && isfinite(lo[i]) && isfinite(hi[i]))
            sbuf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"><title>%+.2f [%+.2f, %+.2f]</title></circle>\n",
                        X(delta[i]), y, col, delta[i], lo[i], hi[i]);
        else if (isfinite(delta[i]))
            sbuf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"><title>%+.2f (no interval)</title></circle>\n",
                        X(delta[i]), y, col, delta[i]);
#undef X
    }
    sbuf_puts(out, "</svg>\n");
}

void svg_bars_chart(const char *title, const char *const *row_labels, int n_rows, const char *const *series,
                   int n_series, const double *value, const double *se, struct sbuf *out) {
    const double bar_h = 11, gap = 10;
    double row_h = bar_h * n_series + gap;
    int legend_h = 20;
    int h = (int)(SVG_TOP + legend_h + row_h * n_rows + SVG_BOTTOM);
    double mx = 0;
    for (int i = 0; i < n_series * n_rows; i++)
        if (isfinite(value[i])) mx = fmax(mx, value[i] + (isfinite(se[i]) ? se[i] : 0));
    double step = nice_step(fmax(mx, 1));
    mx = ceil(fmax(mx, 1) / step) * step;
    double x0 = SVG_LABEL_W, x1 = SVG_W - SVG_RIGHT, y0 = SVG_TOP + legend_h, y1 = y0 + row_h * n_rows;
    header(out, title, h);
    for (int s = 0; s < n_series; s++) {  // legend
        double lx = x0 + s * ((x1 - x0) / (n_series > 0 ? n_series : 1));
        sbuf_printf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%d\">",
                    lx, SVG_TOP - 6, palette[s % 10], lx + 16, SVG_TOP + 4);
        put_text(out, series[s]);
        sbuf_puts(out, "</text>\n");
    }
    axis(out, 0, mx, x0, x1, y0, y1, "score (%), whiskers: +- 1 stderr");
    for (int r = 0; r < n_rows; r++) {
        double ytop = y0 + row_h * r + gap / 2;
        row_label(out, ytop + bar_h * n_series / 2, row_labels[r]);
        for (int s = 0; s < n_series; s++) {
            double v = value[s * n_rows + r], e = se[s * n_rows + r], y = ytop + bar_h * s;
            if (!isfinite(v)) continue;
#define X(u) (x0 + (u) / mx * (x1 - x0))
            sbuf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%.2f</title></rect>\n",
                        x0, y, X(fmax(v, 0)) - x0, bar_h - 1, palette[s % 10], v);
            if (isfinite(e) && e > 0)
                sbuf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222222\"/>\n",
                            X(fmax(v - e, 0)), y + (bar_h - 1) / 2, X(fmin(v + e, mx)), y + (bar_h - 1) / 2);
#undef X
        }
    }
    sbuf_puts(out, "</svg>\n");
}

#define SVG_XY_LEFT 70  // room for the y labels

void svg_line_chart(const char *title, const char *x_unit, const char *y_unit, int log_x, const char *const *series,
                   int n_series, int n, const double *x, const char *const *x_labels, const double *y, const double *lo,
                   const double *hi, struct sbuf *out) {
    const int h = 380, legend_h = 20;
    double x0 = SVG_XY_LEFT, x1 = SVG_W - SVG_RIGHT, y0 = SVG_TOP + legend_h, y1 = h - SVG_BOTTOM - 8;
    double xmn = INFINITY, xmx = -INFINITY, ymn = INFINITY, ymx = -INFINITY;
    for (int i = 0; i < n; i++) {
        double xv = log_x ? log10(x[i]) : x[i];
        if (isfinite(xv)) xmn = fmin(xmn, xv), xmx = fmax(xmx, xv);
    }
    for (int k = 0; k < n_series * n; k++) {
        double v[3] = {y[k], lo ? lo[k] : NAN, hi ? hi[k] : NAN};
        for (int j = 0; j < 3; j++)
            if (isfinite(v[j])) ymn = fmin(ymn, v[j]), ymx = fmax(ymx, v[j]);
    }
    if (!isfinite(xmn)) xmn = 0, xmx = 1;
    if (!isfinite(ymn)) ymn = 0, ymx = 1;
    if (xmx - xmn < 1e-12) xmn -= 0.5, xmx += 0.5;
    // A flat series (one point, or equal values) still gets an axis a reader can read: at least
    // 2% of its size (1 unit at 0), 2 points on a percentage axis, which stays within [0, 100].
    int percent = y_unit && strstr(y_unit, "(%)") != NULL;
    double dmin = ymn, dmax = ymx;  // what is drawn (bands included) stays inside the axis
    double mag = fmax(fabs(ymn), fabs(ymx)), min_span = fmax(mag > 0 ? mag * 0.02 : 1.0, percent ? 2.0 : 0.0);
    if (ymx - ymn < min_span) {
        double c = (ymn + ymx) / 2;
        ymn = c - min_span / 2, ymx = c + min_span / 2;
    }
    double pad = (ymx - ymn) * 0.08;
    ymn -= pad, ymx += pad;
    if (percent && ymn < 0 && dmin >= 0) ymx = fmax(dmax, fmin(100, ymx - ymn)), ymn = 0;
    if (percent && ymx > 100 && dmax <= 100) ymn = fmin(dmin, fmax(0, ymn - (ymx - 100))), ymx = 100;
    header(out, title, h);
    for (int s = 0; s < n_series; s++) {  // legend
        double lx = x0 + s * ((x1 - x0) / n_series);
        sbuf_printf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%d\">",
                         lx, SVG_TOP - 6, palette[s % 10], lx + 16, SVG_TOP + 4);
        put_text(out, series[s]);
        sbuf_puts(out, "</text>\n");
    }
#define PX(v) (x0 + (((log_x ? log10(v) : (v))) - xmn) / (xmx - xmn) * (x1 - x0))
#define PY(v) (y1 - ((v) - ymn) / (ymx - ymn) * (y1 - y0))
    double step = nice_step(ymx - ymn);  // horizontal grid and y labels
    for (double t = ceil(ymn / step) * step; t <= ymx; t += step) {
        double v = fabs(t) < step * 1e-9 ? 0 : t;
        sbuf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555555\">%g</text>\n",
                         x0, PY(v), x1, PY(v), v == 0 ? "#333333" : "#e5e5e5", x0 - 6, PY(v) + 4, v);
    }
    char (*lab)[32] = xsa_malloc((size_t)(n > 0 ? n : 1) * sizeof *lab);
    for (int i = 0; i < n; i++) {
        if (x_labels) snprintf(lab[i], sizeof lab[i], "%s", x_labels[i]);
        else if (x[i] == floor(x[i]) && fabs(x[i]) < 1e15) snprintf(lab[i], sizeof lab[i], "%.0f", x[i]);
        else snprintf(lab[i], sizeof lab[i], "%g", x[i]);
    }
    double last_x = -INFINITY, last_half = 0;  // x labels at the points, each clear of the one before
    for (int i = 0; i < n; i++) {
        double half = 3.5 * (double)strlen(lab[i]);  // about 7 px a character at the chart's font size
        if (isfinite(PX(x[i])) && PX(x[i]) - last_x >= last_half + half + 6) {
            last_x = PX(x[i]), last_half = half;
            sbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555555\">", last_x, y1 + 16);
            put_text(out, lab[i]);
            sbuf_puts(out, "</text>\n");
        }
    }
    sbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555555\">%s%s</text>\n"
                         "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555555\" transform=\"rotate(-90 14 %.1f)\">%s</text>\n",
                         (x0 + x1) / 2, y1 + 32, x_unit, log_x ? " (log scale)" : "", (y0 + y1) / 2, (y0 + y1) / 2, y_unit);
    for (int s = 0; s < n_series; s++) {
        const double *ys = y + (long)s * n, *ls = lo ? lo + (long)s * n : NULL, *hs = hi ? hi + (long)s * n : NULL;
        const char *col = palette[s % 10];
        if (ls && hs) {  // the band: upper edge left to right, then the lower edge back
            int k = 0;
            for (int i = 0; i < n; i++)
                if (isfinite(ls[i]) && isfinite(hs[i]) && isfinite(PX(x[i])))
                    sbuf_printf(out, "%s%.1f,%.1f", k++ ? " " : "<polygon points=\"", PX(x[i]), PY(hs[i]));
            for (int i = n - 1; i >= 0 && k; i--)
                if (isfinite(ls[i]) && isfinite(hs[i]) && isfinite(PX(x[i])))
                    sbuf_printf(out, " %.1f,%.1f", PX(x[i]), PY(ls[i]));
            if (k) sbuf_printf(out, "\" fill=\"%s\" fill-opacity=\"0.18\"/>\n", col);
        }
        int pen = 0;
        for (int i = 0; i < n; i++) {
            if (!isfinite(ys[i]) || !isfinite(PX(x[i]))) continue;
            sbuf_printf(out, "%s%.1f,%.1f", pen++ ? " " : "<polyline fill=\"none\" stroke-width=\"2\" points=\"", PX(x[i]), PY(ys[i]));
        }
        if (pen) sbuf_printf(out, "\" stroke=\"%s\"/>\n", col);
        for (int i = 0; i < n; i++)
            if (isfinite(ys[i]) && isfinite(PX(x[i]))) {
                sbuf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>", PX(x[i]), PY(ys[i]), col);
                put_text(out, lab[i]);
                sbuf_printf(out, ": %.4g</title></circle>\n", ys[i]);
            }
    }
#undef PX
#undef PY
    free(lab);
    sbuf_puts(out, "</svg>\n");
}
