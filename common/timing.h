// timing.h: seconds on the monotonic clock, for durations (progress, deadlines, benchmarks);
// wall-clock timestamps use CLOCK_REALTIME where they are written.
#ifndef XSA_COMMON_TIMING_H
#define XSA_COMMON_TIMING_H

#include <time.h>

static inline double timing_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
