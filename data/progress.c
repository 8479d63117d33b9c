// progress.c: the download progress bar. One carriage-return-redrawn line on stderr.
#include "data/progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/timing.h"

double progress_now(void) { return timing_now_s(); }

void progress_begin(struct progress *p, const char *label, long total_units, int quiet) {
    memset(p, 0, sizeof *p);
    p->enabled = !quiet && isatty(STDERR_FILENO);
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->total_units = total_units;
    p->start_s = progress_now();
}

static void human_bytes(double b, char *out, size_t n) {
    const char *unit[] = {"B", "kB", "MB", "GB"};
    int i = 0;
    while (b >= 1000.0 && i < 3) { b /= 1000.0; i++; }
    snprintf(out, n, i ? "%.1f %s" : "%.0f %s", b, unit[i]);
}

static void progress_draw(struct progress *p, double now) {
    double dt = now - p->start_s > 1e-3 ? now - p->start_s : 1e-3;
    char got[32], rate[32];
    human_bytes((double)p->bytes, got, sizeof got);
    human_bytes((double)p->bytes / dt, rate, sizeof rate);
    char rows[64] = "", eta[32] = "";
    if (p->total_units > 0) {
        snprintf(rows, sizeof rows, "  %ld/%ld rows (%3.0f%%)", p->done_units, p->total_units,
                 100.0 * (double)p->done_units / (double)p->total_units);
        if (p->done_units > 0 && p->done_units < p->total_units) {
            double left = (double)(p->total_units - p->done_units) * dt / (double)p->done_units;
            snprintf(eta, sizeof eta, "  ETA %.0fs", left);
        }
    }
    fprintf(stderr, "\r%-16s %10s  %10s/s%s%s\033[K", p->label, got, rate, rows, eta);
    fflush(stderr);
    p->drawn = 1;
    p->last_draw_s = now;
}

void progress_add(struct progress *p, size_t bytes, long units) {
    if (!p) return;
    p->bytes += bytes;
    p->done_units += units;
    if (!p->enabled) return;
    double now = progress_now();
    if (now - p->last_draw_s >= 0.1) progress_draw(p, now);
}

void progress_end(struct progress *p) {
    if (!p || !p->enabled) return;
    if (p->drawn || p->bytes) {
        progress_draw(p, progress_now());
        fputc('\n', stderr);
    }
    p->drawn = 0;
}
