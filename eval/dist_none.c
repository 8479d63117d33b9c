// dist_none.c: eval/dist.h for a build without MPI: one process, rank 0 of 1.
#include <stdio.h>

#include "eval/dist.h"

int dist_start(xsa_error *err) {
    const char *launcher;
    int size, rc = dist_env_size(&launcher, &size, err);
    if (!rc && size > 1)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s started %d ranks but this xsa-eval is built without MPI, so each would run "
                      "the whole evaluation; install libopenmpi-dev and rebuild (make), or run one process", launcher, size);
    return rc;
}

void dist_stop(void) {}
int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }
int dist_local_rank(void) { return 0; }
int dist_local_size(void) { return 1; }

int dist_send(int to, int tag, const void *buf, size_t n, xsa_error *err) {
    (void)tag, (void)buf, (void)n;
    return xsa_fail(err, XSA_ERUNTIME, "no rank %d: this xsa-eval is built without MPI", to);
}

int dist_recv(int from, int tag, char **buf, size_t *n, xsa_error *err) {
    (void)tag;
    *buf = NULL;
    *n = 0;
    return xsa_fail(err, XSA_ERUNTIME, "no rank %d: this xsa-eval is built without MPI", from);
}

int dist_fail(int code, const char *msg) {
    (void)msg;
    return code;
}

const char *dist_build_desc(void) { return "not built in"; }
