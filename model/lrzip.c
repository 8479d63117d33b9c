// lrzip.c: lrzip streams through the lrzip program (see lrzip.h). Each stream is written to a
// private temporary folder, `lrzip -d -q -f -o OUT IN` runs on it in a child whose file size
// limit is the expected output and whose CPU time is bounded, and the output is read back and
// checked. The first failure, or SIGINT / SIGTERM, kills the other children; the folder is
// removed on every path but the process being killed outright (the children then die with it).
#include "model/lrzip.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/signals.h"
#include "common/xalloc.h"

#define LRZIP_HOWTO "install it (Debian: apt-get install lrzip) or set XSA_EVAL_LRZIP to its path"

// The expanded size an lrzip header records; -1 when the bytes do not start with one.
static int64_t lrzip_header_size(const unsigned char *d, size_t n) {
    if (n < LRZIP_HEADER || memcmp(d, "LRZI", 4)) return -1;
    uint64_t s = 0;
    for (int i = 7; i >= 0; i--) s = s << 8 | d[6 + i];
    return s > (uint64_t)INT64_MAX ? -1 : (int64_t)s;
}

// The lrzip program: XSA_EVAL_LRZIP, a path as given or a bare name looked up on PATH as a shell
// does, else the first executable `lrzip` on PATH.
static int find_program(char *out, size_t n) {
    const char *env = getenv("XSA_EVAL_LRZIP"), *name = env && *env ? env : "lrzip";
    if (strchr(name, '/')) {
        snprintf(out, n, "%s", name);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        if (len && (size_t)snprintf(out, n, "%.*s/%s", (int)len, p, name) < n && access(out, X_OK) == 0) return 1;
        p += len + (p[len] == ':');
    }
    snprintf(out, n, "%s", name);
    return 0;
}

struct child {
    pid_t pid;    // 0: not started
    int exec_fd;  // read end of a close-on-exec pipe: the child writes errno there if exec fails; -1: none
    int done, status;
    char in[4200], out[4200], log[4200];
};

// CPU seconds a child may use: ZPAQ decodes at about 200 KB per CPU second here (the 2026-04-27
// 9Hp artifact: 16 MB in 78 s), so a minute plus 16 KB per second leaves a wide margin and
// still ends a stream whose embedded decoder never stops.
// XSA_EVAL_LRZIP_CPU_S sets it (whole seconds, 1 to 1e6), for a slow machine; read by the parent.
static rlim_t cpu_limit(size_t want) {
    const char *e = getenv("XSA_EVAL_LRZIP_CPU_S");
    char *end = NULL;
    long v = e && *e ? strtol(e, &end, 10) : 0;
    if (end && !*end && v >= 1 && v <= 1000000) return (rlim_t)v;
    return (rlim_t)(60 + want / 16384);
}

// XSA_EVAL_LRZIP_CPU_S, when set, must be what cpu_limit takes (exit 2 before lrzip runs).
static int check_cpu_env(xsa_error *err) {
    const char *e = getenv("XSA_EVAL_LRZIP_CPU_S");
    char *end = NULL;
    long v = e && *e ? strtol(e, &end, 10) : 1;
    if (e && *e && (*end || v < 1 || v > 1000000))  // (set but empty: the default)
        return xsa_fail(err, XSA_EBADINPUT, "XSA_EVAL_LRZIP_CPU_S=%s: expected whole seconds from 1 to 1000000", e);
    return 0;
}

// In the child: only async-signal-safe calls until exec. Output bounded by RLIMIT_FSIZE (past
// it, SIGXFSZ ends the child), CPU by RLIMIT_CPU (SIGXCPU); no core file; killed with its parent;
// no descriptor of the parent's but the three standard ones reaches lrzip.
static void run_child(const char *prog, const struct child *c, size_t want, rlim_t cpu_s, int exec_w, pid_t parent) {
    setpgid(0, 0);  // its own process group: stopping it stops what it starts
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(SIGXFSZ, &dfl, NULL);  // (xsa-eval ignores it; exec would keep that)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // (the parent died before prctl)
    struct rlimit fs = {(rlim_t)want + 65536, (rlim_t)want + 65536}, core = {0, 0}, cpu = {cpu_s, cpu_s + 5};  // (SIGXCPU at the soft limit; SIGKILL only past it)
    setrlimit(RLIMIT_FSIZE, &fs);
    setrlimit(RLIMIT_CORE, &core);
    setrlimit(RLIMIT_CPU, &cpu);
    int null = open("/dev/null", O_RDWR), log = null < 0 ? -1 : open(c->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) {  // (lrzip puts some errors on stdout)
        int e = errno;
        ssize_t w = write(exec_w, &e, sizeof e);
        (void)w;
        _exit(127);
    }
    if (null > 2) close(null);
    if (log > 2) close(log);
    syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);  // (exec_w stays usable until exec)
    char *argv[] = {(char *)"lrzip", (char *)"-d", (char *)"-q", (char *)"-f", (char *)"-o", (char *)c->out, (char *)c->in, NULL};
    execv(prog, argv);
    int e = errno;
    ssize_t w = write(exec_w, &e, sizeof e);
    (void)w;
    _exit(127);
}

// The first line of lrzip's output that says what went wrong ("MD5 CHECK FAILED.", "Failed to
// read magic header"), past its progress lines, for the message.
static void reason_line(const char *log, char *out, size_t n) {
    static const char *const progress[] = {"Output filename is", "Decompressing", "Average DeCompression", "Total time", "Fatal error - exiting"};
    char *text = NULL;
    size_t len = 0;
    xsa_error ignore = {0};
    out[0] = 0;
    if (file_read_all(log, (size_t)1 << 20, &text, &len, &ignore)) return;
    for (char *line = text; *line && !out[0];) {
        size_t k = strcspn(line, "\r\n"), skip = k == 0 || strspn(line, " \t") == k;
        for (size_t i = 0; i < sizeof progress / sizeof *progress && !skip; i++) skip = !strncmp(line, progress[i], strlen(progress[i]));
        if (!skip) snprintf(out, n, "%.*s", (int)(k < 200 ? k : 200), line);
        line += k + strspn(line + k, "\r\n");
    }
    free(text);
}

// Job j's child has ended (c->status): its verdict, and its output read into job->out.
static int finish(struct lrzip_job *job, struct child *c, const char *prog, const char *path, xsa_error *err) {
    int status = c->status, exec_errno = 0;
    ssize_t got;
    while ((got = read(c->exec_fd, &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {}
    if (got == (ssize_t)sizeof exec_errno)
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot run the lrzip program %s (%s), which reads its %s; " LRZIP_HOWTO, path, prog,
                        strerror(exec_errno), job->label);
    char why[256];
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGINT || sig == SIGTERM) return xsa_fail(err, XSA_EINTERRUPT, "%s: interrupted while lrzip read its %s", path, job->label);
        if (sig == SIGXFSZ)
            return xsa_fail(err, XSA_EBADINPUT, "%s: lrzip wrote more than the header's size reading its %s; the artifact is damaged", path, job->label);
        if (sig == SIGXCPU)
            return xsa_fail(err, XSA_EBADINPUT, "%s: lrzip used more than %llu s of CPU on its %s, far more than a stream of its size needs; the artifact is damaged",
                            path, (unsigned long long)cpu_limit(job->want), job->label);
        return xsa_fail(err, XSA_ERUNTIME, "%s: lrzip stopped on signal %d (%s) reading its %s%s", path, sig, strsignal(sig), job->label,
                        sig == SIGKILL ? "; out of memory?" : "");
    }
    if (WEXITSTATUS(status)) {
        reason_line(c->log, why, sizeof why);
        return xsa_fail(err, XSA_EBADINPUT, "%s: lrzip failed on its %s (exit %d: %s); the artifact may be damaged (re-download it), or lrzip lacked room: check the space in TMPDIR and the process limits",
                        path, job->label, WEXITSTATUS(status), why[0] ? why : "no message");
    }
    struct stat st;
    if (stat(c->out, &st))
        return xsa_fail(err, XSA_ERUNTIME, "%s: %s exited 0 but wrote nothing for its %s; check that it is lrzip 0.6 or later", path, prog, job->label);
    if ((uint64_t)st.st_size != (uint64_t)job->want)
        return xsa_fail(err, XSA_EBADINPUT, "%s: lrzip decompressed its %s to %lld bytes, not the %zu its header and shapes say; the artifact is damaged",
                        path, job->label, (long long)st.st_size, job->want);
    char *buf = NULL;
    size_t len = 0;
    int rc = file_read_all(c->out, job->want, &buf, &len, err);
    if (!rc) job->out = (unsigned char *)buf;
    return rc;
}

static void remove_files(const struct child *c) {
    unlink(c->in);
    unlink(c->out);
    unlink(c->log);
}

// SIGINT / SIGTERM while the children run: recorded, so the wait loop stops them and cleans up.
static volatile sig_atomic_t g_stop;
static void on_stop(int sig) { g_stop = sig; }

// Waits for every started child; the first failure (or a stop signal) kills the others.
static int wait_all(struct lrzip_job *jobs, struct child *c, int started, const char *prog, const char *path, xsa_error *err) {
    int rc = 0, left = 0, killed = 0;
    for (int j = 0; j < started; j++) left += c[j].pid > 0;
    while (left > 0) {
        for (int j = 0; j < started; j++) {
            if (c[j].pid <= 0 || c[j].done) continue;
            pid_t r = waitpid(c[j].pid, &c[j].status, WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR)) continue;
            c[j].done = 1, left--;
            int jr = r < 0 ? xsa_fail(err, XSA_ERUNTIME, "%s: waiting for lrzip failed (%s)", path, strerror(errno))
                           : rc ? 0 : finish(&jobs[j], &c[j], prog, path, err);
            if (!rc) rc = jr;
        }
        if (g_stop && !rc) rc = xsa_fail(err, XSA_EINTERRUPT, "%s: interrupted while lrzip read its streams", path);
        if (rc && !killed) {
            for (int j = 0; j < started; j++)
                if (c[j].pid > 0 && !c[j].done) kill(-c[j].pid, SIGKILL);
            killed = 1;
        }
        if (left > 0) nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return rc;
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
    if (check_cpu_env(err)) return XSA_EBADINPUT;
    if (!find_program(prog, sizeof prog))
        return xsa_fail(err, XSA_ERUNTIME, "%s: a per-group (PGRP) artifact, whose weights are lrzip streams, needs the lrzip program (%s not found); " LRZIP_HOWTO,
                        path, getenv("XSA_EVAL_LRZIP") && *getenv("XSA_EVAL_LRZIP") ? prog : "lrzip on PATH");
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/xsa-eval-lrzip-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return xsa_fail(err, XSA_ERUNTIME, "cannot make a temporary folder %s for lrzip (%s); set TMPDIR to a writable folder", dir, strerror(errno));
    struct child *c = xsa_calloc((size_t)n, sizeof *c);
    struct sigaction old_sig[2];
    g_stop = 0;
    signals_catch(on_stop, old_sig);  // (no SA_RESTART: the sleeps end early)
    pid_t self = getpid();
    int rc = 0, started = 0;
    for (int j = 0; j < n && !rc && !g_stop; j++) {
        started = j + 1;  // (its files are removed whatever happens next)
        c[j].exec_fd = -1;
        snprintf(c[j].in, sizeof c[j].in, "%s/%d.lrz", dir, j);
        snprintf(c[j].out, sizeof c[j].out, "%s/%d.bin", dir, j);
        snprintf(c[j].log, sizeof c[j].log, "%s/%d.log", dir, j);
        int pipefd[2];
        if ((rc = file_write_atomic(c[j].in, jobs[j].in, jobs[j].in_n, err))) break;
        if (pipe2(pipefd, O_CLOEXEC)) {
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot start lrzip (pipe: %s)", path, strerror(errno));
            break;
        }
        rlim_t cpu_s = cpu_limit(jobs[j].want);
        pid_t pid = fork();
        if (pid == 0) run_child(prog, &c[j], jobs[j].want, cpu_s, pipefd[1], self);
        close(pipefd[1]);
        if (pid > 0) setpgid(pid, pid);  // (also here: no race with the kill below)
        if (pid < 0) {
            close(pipefd[0]);
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot start lrzip (fork: %s)", path, strerror(errno));
            break;
        }
        c[j].pid = pid, c[j].exec_fd = pipefd[0];
    }
    int wrc = wait_all(jobs, c, started, prog, path, err);
    if (!rc) rc = wrc;
    if (!rc && g_stop) rc = xsa_fail(err, XSA_EINTERRUPT, "%s: interrupted while lrzip read its streams", path);
    for (int j = 0; j < started; j++) {
        if (c[j].exec_fd >= 0) close(c[j].exec_fd);
        remove_files(&c[j]);
    }
    signals_restore(old_sig);
    rmdir(dir);
    free(c);
    for (int j = 0; j < n && rc; j++) free(jobs[j].out), jobs[j].out = NULL;
    return rc;
}
