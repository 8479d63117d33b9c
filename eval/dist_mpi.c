// dist_mpi.c: eval/dist.h over MPI (Open MPI). MPI starts only when a launcher started
// several ranks, so a plain run pays nothing but loading the library.
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/xalloc.h"
#include "eval/dist.h"

static int started, rank, size = 1, local_rank, local_size = 1;

int dist_start(xsa_error *err) {
    if (started) return 0;
    const char *launcher;
    int n, rc = dist_env_size(&launcher, &n, err);
    if (rc || n < 2) return rc;
    int provided;
    // Only the main thread calls MPI (the CPU backend's pool never does).
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return xsa_fail(err, XSA_ERUNTIME, "MPI_Init failed under %s; check the launcher's setup", launcher);
    started = 1;
    // Errors come back as codes, turned into one rank's message and dist_fail.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local_rank);
        MPI_Comm_size(node, &local_size);
        MPI_Comm_free(&node);
    }
    return 0;
}

void dist_stop(void) {
    if (!started) return;
    MPI_Finalize();
    started = 0;
}

int dist_rank(void) { return rank; }
int dist_size(void) { return size; }
int dist_local_rank(void) { return local_rank; }
int dist_local_size(void) { return local_size; }

static int mpi_fail(int code, const char *what, int peer, xsa_error *err) {
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return xsa_fail(err, XSA_ERUNTIME, "%s rank %d: %s", what, peer, msg);
}

int dist_send(int to, int tag, const void *buf, size_t n, xsa_error *err) {
    if (n > INT_MAX)
        return xsa_fail(err, XSA_ERUNTIME, "a message of %zu bytes to rank %d is over MPI's 2 GiB; use more ranks", n, to);
    int rc = MPI_Send(buf, (int)n, MPI_BYTE, to, tag, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "sending to", to, err);
}

int dist_recv(int from, int tag, char **buf, size_t *n, xsa_error *err) {
    *buf = NULL;
    *n = 0;
    MPI_Status st;
    // Polled with sleeps, not MPI_Probe: Open MPI's blocking calls spin, and a rank waiting
    // for rank 0 to encode (or for others to finish a task) would hold a core the whole time.
    // A message waits at most 1 ms more; a run sends a few per task.
    int count = 0, ready = 0, rc;
    struct timespec nap = {0, 1000000};
    while ((rc = MPI_Iprobe(from, tag, MPI_COMM_WORLD, &ready, &st)) == MPI_SUCCESS && !ready) nanosleep(&nap, NULL);
    if (rc == MPI_SUCCESS) rc = MPI_Get_count(&st, MPI_BYTE, &count);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, "waiting for", from, err);
    *buf = xsa_malloc((size_t)count + 1);
    rc = MPI_Recv(*buf, count, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        free(*buf);
        *buf = NULL;
        return mpi_fail(rc, "receiving from", from, err);
    }
    *n = (size_t)count;
    return 0;
}

int dist_fail(int code, const char *msg) {
    if (!started || size < 2) return code;
    fprintf(stderr, "xsa-eval run: rank %d of %d: %s\n", rank, size, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);  // MPI_Abort does not return; if it ever did, still stop this rank
}

const char *dist_build_desc(void) {
    static char desc[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (!desc[0]) {
        MPI_Get_library_version(desc, &len);
        for (int i = 0; desc[i]; i++)
            if (desc[i] == ',' || desc[i] == '\n') desc[i] = '\0';  // "Open MPI v4.1.4"
    }
    return desc;
}
