// error.h: one error record passed down every fallible call.
// A function that can fail returns 0 on success or an exit code (XSA_EBADINPUT,
// XSA_ERUNTIME) after filling `err` with one line: what, where, how to fix.
#ifndef XSA_COMMON_ERROR_H
#define XSA_COMMON_ERROR_H

#include <stddef.h>

enum {
    XSA_OK = 0,
    XSA_EREGRESSION = 1,  // `check` found a regression
    XSA_EBADINPUT = 2,    // bad usage or bad input (file, flag, data)
    XSA_ERUNTIME = 3,     // download, device, out of memory
    XSA_EINTERRUPT = 130, // stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it)
};

typedef struct xsa_error {
    int code;        // 0 when no error has been recorded
    char msg[1024];  // one line, no trailing newline
} xsa_error;

// Records the first error (later calls do not overwrite it) and returns `code`,
// so callers can write `return xsa_fail(err, XSA_EBADINPUT, "%s: ...", path);`.
int xsa_fail(xsa_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Clears the record.
void xsa_error_clear(xsa_error *err);

#endif
