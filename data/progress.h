// progress.h: a one-line progress bar on stderr (bytes, rows, rate, ETA) for downloads.
// Silent when stderr is not a terminal or when quiet; never affects what is downloaded.
#ifndef XSA_DATA_PROGRESS_H
#define XSA_DATA_PROGRESS_H

#include <stddef.h>

struct progress {
    int enabled;          // draw at all (TTY and not --quiet)
    char label[64];       // e.g. "arc_easy"
    long total_units;     // rows expected (0: unknown)
    long done_units;      // rows received
    size_t bytes;         // bytes received so far
    double start_s;       // monotonic start time
    double last_draw_s;   // throttles redraws to ~10 per second
    int drawn;            // something is on the line: end it with a newline
};

// Starts a bar for `label` expecting `total_units` rows; enabled only when !quiet and stderr is a TTY.
void progress_begin(struct progress *p, const char *label, long total_units, int quiet);
void progress_add(struct progress *p, size_t bytes, long units);
// Draws a final line (when anything was drawn) and ends it.
void progress_end(struct progress *p);
// Monotonic clock in seconds.
double progress_now(void);

#endif
