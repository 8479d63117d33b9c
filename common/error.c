// error.c: recording the first error of a call chain as one printable line (error.h).
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

int xsa_fail(xsa_error *err, int code, const char *fmt, ...) {
    if (!err || err->code) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    // Messages quote file content (tensor names, tokens); keep them one printable line.
    for (char *p = err->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return code;
}

void xsa_error_clear(xsa_error *err) {
    err->code = 0;
    err->msg[0] = '\0';
}
