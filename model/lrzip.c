// lrzip.c: lrzip streams through the lrzip program (see lrzip.h). Each stream is written to a
// private temporary folder, `lrzip -d -q -f -o OUT IN` runs on it in a child whose file size
// limit is the expected output, and the output is read back and checked; the folder is removed
// on every path.
#include "model/lrzip.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/xalloc.h"

#define LRZIP_HOWTO "install it (Debian: apt-get install lrzip) or set XSA_EVAL_LRZIP to its path"

int64_t lrzip_header_size(const unsigned char *d, size_t n) {
    if (n < LRZIP_HEADER || memcmp(d, "LRZI", 4)) return -1;
    uint64_t s = 0;
    for (int i = 7; i >= 0; i--) s = s << 8 | d[6 + i];
    return s > (uint64_t)INT64_MAX ? -1 : (int64_t)s;
}

// The lrzip program: XSA_EVAL_LRZIP as given, else the first executable `lrzip` on PATH.
static int find_program(char *out, size_t n) {
    const char *env = getenv("XSA_EVAL_LRZIP");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        if (len && (size_t)snprintf(out, n, "%.*s/lrzip", (int)len, p) < n && access(out, X_OK) == 0) return 1;
        p += len + (p[len] == ':');
    }
    return 0;
}

struct child {
    pid_t pid;
    int exec_fd;  // read end of a close-on-exec pipe: the child writes errno there if exec fails
    char in[4200], out[4200], log[4200];
};

// In the child: only async-signal-safe calls until exec. Output bounded by RLIMIT_FSIZE (past
// it, SIGXFSZ ends the child); no core file.
static void run_child(const char *prog, const struct child *c, size_t want, int exec_w) {
    struct rlimit fs = {(rlim_t)want + 65536, (rlim_t)want + 65536}, core = {0, 0};
    setrlimit(RLIMIT_FSIZE, &fs);
    setrlimit(RLIMIT_CORE, &core);
    int null = open("/dev/null", O_RDWR), log = open(c->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null >= 0) dup2(null, 0), dup2(null, 1);
    if (log >= 0) dup2(log, 2);
    char *argv[] = {(char *)"lrzip", (char *)"-d", (char *)"-q", (char *)"-f", (char *)"-o", (char *)c->out, (char *)c->in, NULL};
    execv(prog, argv);
    int e = errno;
    ssize_t w = write(exec_w, &e, sizeof e);
    (void)w;
    _exit(127);
}

// lrzip's first line on stderr ("Failed to read magic header"), for the message.
static void first_line(const char *log, char *out, size_t n) {
    char *text = NULL;
    size_t len = 0;
    xsa_error ignore = {0};
    out[0] = 0;
    if (file_read_all(log, 4096, &text, &len, &ignore)) return;
    size_t k = strcspn(text, "\n");
    snprintf(out, n, "%.*s", (int)(k < 200 ? k : 200), text);
    free(text);
}

// Waits for job j's child and reads its output; the first failure is kept in err.
static int finish(struct lrzip_job *job, struct child *c, const char *prog, const char *path, int rc, xsa_error *err) {
    int status = 0, exec_errno = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {}
    ssize_t got;
    while ((got = read(c->exec_fd, &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {}
    close(c->exec_fd);
    if (rc) return rc;
    if (got == (ssize_t)sizeof exec_errno)
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot run the lrzip program %s (%s), which reads its %s; " LRZIP_HOWTO, path, prog,
                        strerror(exec_errno), job->label);
    char why[256];
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM))
        return xsa_fail(err, XSA_EINTERRUPT, "%s: interrupted while lrzip read its %s", path, job->label);
    if (WIFSIGNALED(status))
        return xsa_fail(err, XSA_EBADINPUT, "%s: lrzip stopped on signal %d reading its %s%s; the artifact is damaged", path, WTERMSIG(status),
                        job->label, WTERMSIG(status) == SIGXFSZ ? " (it wrote more than the header's size)" : "");
    if (WEXITSTATUS(status)) {
        first_line(c->log, why, sizeof why);
        return xsa_fail(err, XSA_EBADINPUT, "%s: lrzip cannot decompress its %s (exit %d: %s); the artifact is damaged, re-download it", path,
                        job->label, WEXITSTATUS(status), why[0] ? why : "no message");
    }
    struct stat st;
    if (stat(c->out, &st))
        return xsa_fail(err, XSA_ERUNTIME, "%s: %s exited 0 but wrote nothing for its %s; check that it is lrzip 0.6 or later", path, prog, job->label);
    if ((uint64_t)st.st_size != (uint64_t)job->want)
        return xsa_fail(err, XSA_EBADINPUT, "%s: lrzip decompressed its %s to %lld bytes, not the %zu its header and shapes say; the artifact is damaged",
                        path, job->label, (long long)st.st_size, job->want);
    char *buf = NULL;
    size_t len = 0;
    if ((rc = file_read_all(c->out, job->want, &buf, &len, err))) return rc;
    job->out = (unsigned char *)buf;
    return 0;
}

static void remove_files(const struct child *c) {
    unlink(c->in);
    unlink(c->out);
    unlink(c->log);
}

int lrzip_decompress_all(struct lrzip_job *jobs, int n, const char *path, xsa_error *err) {
    if (n <= 0) return 0;
    for (int j = 0; j < n; j++) {
        jobs[j].out = NULL;
        int64_t s = lrzip_header_size(jobs[j].in, jobs[j].in_n);
        if (s < 0)
            return xsa_fail(err, XSA_EBADINPUT, "%s: its %s is not an lrzip stream (no LRZI header); the artifact is damaged", path, jobs[j].label);
        if ((uint64_t)s != (uint64_t)jobs[j].want)
            return xsa_fail(err, XSA_EBADINPUT, "%s: the lrzip header of its %s says %lld bytes; its shapes need %zu (the artifact is damaged)", path,
                            jobs[j].label, (long long)s, jobs[j].want);
    }
    char prog[4200];
    if (!find_program(prog, sizeof prog))
        return xsa_fail(err, XSA_ERUNTIME, "%s: a per-group (PGRP) artifact, whose weights are lrzip streams, needs the lrzip program (%s not found); " LRZIP_HOWTO,
                        path, getenv("XSA_EVAL_LRZIP") && *getenv("XSA_EVAL_LRZIP") ? prog : "lrzip on PATH");
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/xsa-eval-lrzip-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return xsa_fail(err, XSA_ERUNTIME, "cannot make a temporary folder %s for lrzip (%s); set TMPDIR to a writable folder", dir, strerror(errno));
    struct child *c = xsa_calloc((size_t)n, sizeof *c);
    int rc = 0, started = 0;
    for (int j = 0; j < n && !rc; j++, started++) {
        snprintf(c[j].in, sizeof c[j].in, "%s/%d.lrz", dir, j);
        snprintf(c[j].out, sizeof c[j].out, "%s/%d.bin", dir, j);
        snprintf(c[j].log, sizeof c[j].log, "%s/%d.log", dir, j);
        int pipefd[2];
        if ((rc = file_write_atomic(c[j].in, jobs[j].in, jobs[j].in_n, err))) break;
        if (pipe2(pipefd, O_CLOEXEC)) {
            rc = xsa_fail(err, XSA_ERUNTIME, "pipe failed (%s)", strerror(errno));
            break;
        }
        c[j].pid = fork();
        if (c[j].pid == 0) run_child(prog, &c[j], jobs[j].want, pipefd[1]);
        close(pipefd[1]);
        c[j].exec_fd = pipefd[0];
        if (c[j].pid < 0) {
            close(pipefd[0]);
            rc = xsa_fail(err, XSA_ERUNTIME, "cannot start lrzip (fork: %s)", strerror(errno));
            break;
        }
    }
    for (int j = 0; j < started; j++) {
        if (c[j].pid > 0) rc = finish(&jobs[j], &c[j], prog, path, rc, err);
        remove_files(&c[j]);
    }
    rmdir(dir);
    free(c);
    for (int j = 0; j < n && rc; j++) free(jobs[j].out), jobs[j].out = NULL;
    return rc;
}
