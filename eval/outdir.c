// outdir.c: output folder names, run stamps, committing and sweeping run files (outdir.h).
#include "eval/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/xalloc.h"

// The folder part of path ("." when it has none).
static void dir_of(const char *path, char *buf, size_t n) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, n, ".");
    else if (slash == path) snprintf(buf, n, "/");
    else snprintf(buf, n, "%.*s", (int)(slash - path), path);
}


void outdir_model_name(const char *model_path, char *buf, size_t n) {
    char *real = realpath(model_path, NULL);
    const char *p = real ? real : model_path;
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/') len--;
    size_t s = len;
    while (s > 0 && p[s - 1] != '/') s--;
    size_t k = 0;
    if (len > s && p[s] == '.') buf[k++] = '_';  // never ".", "..", or a hidden folder
    for (size_t i = s; i < len && k + 1 < n; i++) {
        char c = p[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                 c == '_';
        buf[k++] = ok ? c : '_';
    }
    buf[k] = '\0';
    if (!k) snprintf(buf, n, "model");
    free(real);
}

void outdir_stamp(char *buf, size_t n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char t[32];
    strftime(t, sizeof t, "%Y-%m-%dT%H-%M-%S", &tm);
    unsigned r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)  // no entropy yet: pid and time still differ
        r = (unsigned)getpid() * 2654435761u ^ (unsigned)ts.tv_nsec;
    snprintf(buf, n, "%s.%06ld_%06x", t, ts.tv_nsec / 1000, r & 0xffffffu);
}

int outdir_prepare_dir(const char *flag, const char *dir, xsa_error *err) {
    if (!dir || !*dir) return xsa_fail(err, XSA_EBADINPUT, "%s '': empty path; name a folder (e.g. %s results)", flag, flag);
    char hint[96];
    snprintf(hint, sizeof hint, "choose a writable %s folder", flag);
    int rc = file_mkdirs(dir, hint, err);
    if (rc) err->code = rc = XSA_EBADINPUT;  // the user's choice of folder, not a runtime fault
    else if (access(dir, W_OK | X_OK) != 0)  // there, but not ours to write in (read-only, another user's)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s %s: cannot write in it: %s; %s", flag, dir, strerror(errno), hint);
    return rc;
}

// How a report reaches an output path: renamed into place (a regular file or a new name), or
// written into what exists there: this process's own stdout or stderr (/dev/stdout, also when
// it is redirected to a file), or another file that is not a regular one (a FIFO, a terminal).
enum { TARGET_RENAME, TARGET_STDOUT, TARGET_STDERR, TARGET_SPECIAL };

static int same_inode(const struct stat *a, int fd) {
    struct stat f;
    return fstat(fd, &f) == 0 && f.st_dev == a->st_dev && f.st_ino == a->st_ino;
}

// 1 when path is "-": standard output (written as /dev/stdout is; "./-" names a file "-").
static int outdir_is_dash(const char *path) { return path && !strcmp(path, "-"); }

static int target_kind(const char *path) {
    struct stat st;
    if (outdir_is_dash(path)) return TARGET_STDOUT;  // "-": standard output, as Unix tools read it
    // A link that leads nowhere, /dev/stdout with standard output closed say, is no file to
    // replace: a stream that cannot be written.
    if (stat(path, &st) != 0) return lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? TARGET_SPECIAL : TARGET_RENAME;
    if (S_ISDIR(st.st_mode)) return TARGET_RENAME;
    if (same_inode(&st, STDOUT_FILENO)) return TARGET_STDOUT;
    if (same_inode(&st, STDERR_FILENO)) return TARGET_STDERR;
    return S_ISREG(st.st_mode) ? TARGET_RENAME : TARGET_SPECIAL;
}

int outdir_is_stream(const char *path) { return target_kind(path) != TARGET_RENAME; }

int outdir_is_stdout(const char *path) { return path && target_kind(path) == TARGET_STDOUT; }

static int g_n_inputs;
static char **g_inputs;  // (g_n_inputs) copies: the caller's array may go

// Keeps a copy of the command's inputs for outdir_write_set (outdir_check_outputs).
static void protect_inputs(int n, const char *const *inputs) {
    for (int i = 0; i < g_n_inputs; i++) free(g_inputs[i]);
    free(g_inputs);
    g_inputs = n > 0 ? xsa_calloc((size_t)n, sizeof *g_inputs) : NULL;
    g_n_inputs = n > 0 ? n : 0;
    for (int i = 0; i < g_n_inputs; i++) g_inputs[i] = inputs[i] ? xsa_strdup(inputs[i]) : NULL;
}

int outdir_check_file(const char *flag, const char *path, xsa_error *err) {
    if (!path || !*path) return xsa_fail(err, XSA_EBADINPUT, "%s '': empty path; name a file", flag);
    if (dir_exists(path)) return xsa_fail(err, XSA_EBADINPUT, "%s %s: is a folder; name a file in it", flag, path);
    if (outdir_is_stream(path)) {
        if (!outdir_is_dash(path) && access(path, W_OK) != 0)
            return xsa_fail(err, XSA_EBADINPUT, "%s %s: cannot write: %s; choose another path", flag, path, strerror(errno));
        return 0;
    }
    char parent[4096];
    if (strlen(path) >= sizeof parent) return xsa_fail(err, XSA_EBADINPUT, "%s %s: path too long", flag, path);
    dir_of(path, parent, sizeof parent);
    if (!dir_exists(parent)) return xsa_fail(err, XSA_EBADINPUT, "%s %s: no folder %s; create it first", flag, path, parent);
    // The report is written into a temporary folder there, then renamed into place.
    if (access(parent, W_OK | X_OK) != 0)
        return xsa_fail(err, XSA_EBADINPUT, "%s %s: cannot write in the folder %s: %s; choose another path", flag, path,
                        parent, strerror(errno));
    return 0;
}

// The path as a name that is the same for every spelling of one file: the real path of an
// existing file, else its folder's real path and its name. NULL when the folder is missing.
static char *canonical(const char *path) {
    char *real = realpath(path, NULL);
    if (real) return real;
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    char *rd = realpath(dir, NULL);
    if (!rd) return NULL;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n = strlen(rd) + strlen(base) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", rd, base);
    free(rd);
    return out;
}

// 1 when a and b name the same file, whether it exists yet or not.
static int outdir_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (outdir_is_dash(a) || outdir_is_dash(b)) {  // "-" is stdout, whatever file that is
        return target_kind(a) == TARGET_STDOUT && target_kind(b) == TARGET_STDOUT;
    }
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *ca = canonical(a), *cb = canonical(b);
    int same = ca && cb && !strcmp(ca, cb);
    free(ca);
    free(cb);
    return same;
}

int outdir_in_folder(const char *path, const char *dir) {
    char parent[4096];
    dir_of(path, parent, sizeof parent);
    struct stat a, b;
    return stat(parent, &a) == 0 && stat(dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int outdir_check_outputs(int n_out, const char *const *flags, const char *const *outs, int n_in,
                         const char *const *ins, xsa_error *err) {
    for (int i = 0; i < n_out; i++) {
        if (!outs[i]) continue;
        for (int j = 0; j < i; j++)
            if (outs[j] && outdir_same_file(outs[i], outs[j]))
                return xsa_fail(err, XSA_EBADINPUT, "%s %s and %s %s name the same file; give each its own", flags[j],
                                outs[j], flags[i], outs[i]);
        for (int j = 0; j < n_in; j++)
            if (ins[j] && outdir_same_file(outs[i], ins[j]))
                return xsa_fail(err, XSA_EBADINPUT, "%s %s is an input of this command (%s); writing it would replace "
                                "it: choose another path", flags[i], outs[i], ins[j]);
    }
    protect_inputs(n_in, ins);
    return 0;
}

int outdir_pending_path(const char *final, char *buf, size_t n, xsa_error *err) {
    if (snprintf(buf, n, "%s.pending.%ld", final, (long)getpid()) >= (int)n)
        return xsa_fail(err, XSA_EBADINPUT, "%s: output path too long", final);
    return 0;
}

// rename() that never replaces `to` (errno EEXIST when it exists).
static int rename_noreplace(const char *from, const char *to) {
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    // A filesystem without RENAME_NOREPLACE: link() refuses an existing name just as well.
    if (link(from, to) == 0) return unlink(from), 0;
    if (errno == EEXIST) return -1;
    // Nor hard links: check, then rename (the stamps' random suffixes keep runs' names apart).
    if (access(to, F_OK) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

int outdir_commit(const char *final, xsa_error *err) {
    char pending[4200];
    int rc = outdir_pending_path(final, pending, sizeof pending, err);
    if (rc) return rc;
    if (rename_noreplace(pending, final) != 0) {
        int e = errno;
        unlink(pending);
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot commit: %s%s", final, strerror(e),
                        e == EEXIST ? " (another run wrote this name; rerun)" : "");
    }
    // The rename is durable once the folder is synced.
    char dir[4096];
    dir_of(final, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    return 0;
}

void outdir_discard(const char *final) {
    char pending[4200];
    xsa_error e = {0};
    if (!outdir_pending_path(final, pending, sizeof pending, &e)) unlink(pending);
}

static void remove_tree(const char *path);
static long leftover_pid(const char *name);

// The fields of /proc/<pid>/stat after "pid (comm) " (comm may hold any byte, ')' too), in buf;
// NULL where it cannot be read.
static const char *proc_stat(long pid, char *buf, size_t n) {
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "r");
    size_t len = f ? fread(buf, 1, n - 1, f) : 0;
    if (f) fclose(f);
    buf[len] = '\0';
    const char *s = strrchr(buf, ')');
    return s && s[1] == ' ' ? s + 2 : NULL;
}

// 1 when pid names a process that is gone (not this one; one that exists or may, is not). A
// zombie has ended: a killed writer whose parent has not reaped it yet (a script that kills and
// reruns) is not a live one.
int outdir_pid_gone(long pid) {
    if (pid <= 0 || pid == (long)getpid()) return 0;
    if (kill((pid_t)pid, 0) != 0) return errno == ESRCH;
    char buf[1024];
    const char *s = proc_stat(pid, buf, sizeof buf);
    return s && s[0] == 'Z';
}

int outdir_pid_identity(long pid, char *out, size_t n) {
    char buf[1024], boot[64] = "";
    const char *s = proc_stat(pid, buf, sizeof buf);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f && !fgets(boot, sizeof boot, f)) boot[0] = '\0';
    if (f) fclose(f);
    boot[strcspn(boot, "\n")] = '\0';
    // starttime is field 22: the 20th after comm
    for (int i = 0; s && i < 19; i++)
        if ((s = strchr(s, ' '))) s++;
    unsigned long long start = 0;
    if (!s || !boot[0] || sscanf(s, "%llu", &start) != 1) return -1;
    return snprintf(out, n, "%llu %s", start, boot) < (int)n ? 0 : -1;
}

// Untouched for OUTDIR_STALE_S: with a dead pid, a leftover. (A pid says nothing of a run on
// another host sharing the folder; a live one renames these away within seconds.)
#define OUTDIR_STALE_S 600
static int stale(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && time(NULL) - st.st_mtime >= OUTDIR_STALE_S;
}

// The temporary folders of report writers killed in `dir` (compare, report, ppl: no later run of
// theirs sweeps the folder as `run` does).
static void sweep_report_tmps(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, ".xsa-report.tmp.", 16)) continue;
        long pid = leftover_pid(de->d_name);
        if (!outdir_pid_gone(pid)) continue;
        char p[4400];
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) < (int)sizeof p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
            stale(p))
            remove_tree(p);
    }
    if (d) closedir(d);
}

int outdir_write_failed(const char *path, const char *tmp, xsa_error *err) {
    char why[sizeof err->msg];
    size_t tl = strlen(tmp);
    const char *w = strncmp(err->msg, tmp, tl) || strncmp(err->msg + tl, ": ", 2) ? err->msg : err->msg + tl + 2;
    if (!strncmp(w, "write failed: ", 14)) w += 14;
    snprintf(why, sizeof why, "%s", w);
    int code = err->code;
    err->code = 0;
    return xsa_fail(err, code, "%s: cannot write: %s", path, why);
}

int outdir_write_set(int n, const char *const *paths, const char *const *data, const size_t *lens, xsa_error *err) {
    if (n < 1) return 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (outdir_same_file(paths[i], paths[j]))
                return xsa_fail(err, XSA_EBADINPUT, "%s and %s name the same file; give each output its own name", paths[j],
                                paths[i]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < g_n_inputs; j++)
            if (g_inputs[j] && outdir_same_file(paths[i], g_inputs[j]))
                return xsa_fail(err, XSA_EBADINPUT, "%s is an input of this command; writing it would replace it: choose "
                                "another output path", paths[i]);
    // A folder where a file goes (a chart's name, say) would stop the renames half way: refused
    // before anything is written, so that the set appears whole or not at all.
    for (int i = 0; i < n; i++)
        if (dir_exists(paths[i]))
            return xsa_fail(err, XSA_EBADINPUT, "%s: is a folder; nothing was written: choose another -o path or move the "
                            "folder", paths[i]);
    // One temporary folder ".xsa-report.tmp.<pid>" in each distinct target folder (told apart
    // by device and inode, not by spelling), so that every rename stays within its filesystem;
    // stdout, stderr and special files are written last, directly.
    char (*tmp)[4200] = xsa_calloc((size_t)n, sizeof *tmp);  // each renamed file's temporary folder, else ""
    int *kind = xsa_calloc((size_t)n, sizeof *kind), *owner = xsa_calloc((size_t)n, sizeof *owner);
    struct stat *dst = xsa_calloc((size_t)n, sizeof *dst);
    char dir[4096], p[4400];
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        owner[i] = -1;
        if ((kind[i] = target_kind(paths[i])) != TARGET_RENAME) continue;
        dir_of(paths[i], dir, sizeof dir);
        if (stat(dir, &dst[i]) != 0) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: no folder %s: %s", paths[i], dir, strerror(errno));
            break;
        }
        for (int j = 0; j < i && owner[i] < 0; j++)
            if (kind[j] == TARGET_RENAME && dst[j].st_dev == dst[i].st_dev && dst[j].st_ino == dst[i].st_ino) owner[i] = owner[j];
        if (owner[i] < 0) {  // the first file in this folder makes its temporary folder
            owner[i] = i;
            if (snprintf(tmp[i], sizeof tmp[i], "%s/.xsa-report.tmp.%ld", dir, (long)getpid()) >= (int)sizeof tmp[i]) {
                tmp[i][0] = '\0';
                rc = xsa_fail(err, XSA_EBADINPUT, "%s: path too long", paths[i]);
                break;
            }
            remove_tree(tmp[i]);  // this pid's own leftover, if any
            sweep_report_tmps(dir);
            if (mkdir(tmp[i], 0755) != 0) {
                rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot write in its folder: %s", paths[i], strerror(errno));
                tmp[i][0] = '\0';
                break;
            }
        }
        const char *base = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
        if (snprintf(p, sizeof p, "%s/%s", tmp[owner[i]], base) >= (int)sizeof p)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: path too long", paths[i]);
        else if (file_write_atomic(p, data[i], lens[i], err)) rc = outdir_write_failed(paths[i], p, err);
    }
    for (int i = 0; i < n && !rc; i++) {
        if (kind[i] != TARGET_RENAME) continue;
        const char *base = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
        snprintf(p, sizeof p, "%s/%s", tmp[owner[i]], base);
        if (rename(p, paths[i]) != 0) {
            int e = errno, done = 0;
            for (int j = 0; j < i; j++) done += kind[j] == TARGET_RENAME;
            rc = done ? xsa_fail(err, XSA_ERUNTIME, "%s: cannot write: %s; %d of the set's other files were already "
                                 "replaced: rerun to write it whole", paths[i], strerror(e), done)
                      : xsa_fail(err, XSA_ERUNTIME, "%s: cannot write: %s", paths[i], strerror(e));
        }
    }
    for (int i = 0; i < n && !rc; i++) {
        if (kind[i] == TARGET_RENAME) continue;
        // stdout and stderr go through this process's own streams, so what else it prints there
        // stays in order around them; a FIFO or terminal is opened.
        FILE *f = kind[i] == TARGET_STDOUT ? stdout : kind[i] == TARGET_STDERR ? stderr : fopen(paths[i], "w");
        if (!f || fwrite(data[i], 1, lens[i], f) != lens[i] || fflush(f) != 0) {
            int e = errno, renamed = 0;
            for (int j = 0; j < n; j++) renamed += kind[j] == TARGET_RENAME;
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot write: %s%s", paths[i], strerror(e),
                          renamed ? "; the set's files on disk were written" : "");
        }
        if (f && kind[i] == TARGET_SPECIAL) fclose(f);
    }
    for (int i = 0; i < n; i++)
        if (tmp[i][0]) remove_tree(tmp[i]);
    free(tmp), free(kind), free(owner), free(dst);
    return rc;
}

// The pid after the last ".tmp." or ".pending." of a name that ends in digits, else 0.
static long leftover_pid(const char *name) {
    const char *tags[] = {".tmp.", ".pending."};
    long pid = 0;
    for (int t = 0; t < 2; t++) {
        const char *p = NULL, *q = name;
        while ((q = strstr(q, tags[t]))) p = q++;
        if (!p) continue;
        p += strlen(tags[t]);
        char *end;
        long v = strtol(p, &end, 10);
        if (end != p && !*end && v > 0 && p[0] != '0') pid = v;
    }
    return pid;
}

// (journal_*: only the temporary files of its atomic writes, such as a done mark's, carry a pid)
static int is_ours(const char *name) {
    return !strncmp(name, "results_", 8) || !strncmp(name, "samples_", 8) || !strncmp(name, ".xsa-report.tmp.", 16) ||
           !strncmp(name, "journal_", 8);
}

static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char p[4200];
        if (snprintf(p, sizeof p, "%s/%s", path, de->d_name) < (int)sizeof p) unlink(p);
    }
    if (d) closedir(d);
    rmdir(path);
}

// A committed samples_<task>_<stamp>.jsonl of a run killed between committing it and its
// results_<stamp>.json (samples go first): the results are still pending, in a process that is
// gone. Samples whose results file is simply not there (moved away by hand) are not touched.
static int orphan_samples(const char *dir, const char *name) {
    size_t len = strlen(name);
    if (strncmp(name, "samples_", 8) || len < 8 + 6 || strcmp(name + len - 6, ".jsonl")) return 0;
    char stem[512];
    if (len - 6 >= sizeof stem) return 0;
    memcpy(stem, name, len - 6);
    stem[len - 6] = '\0';
    char *hex = strrchr(stem, '_');  // <stamp> = <time>_<hex>: its first '_' is the one before
    if (!hex) return 0;
    *hex = '\0';
    char *stamp = strrchr(stem, '_');
    *hex = '_';
    if (!stamp || stamp < stem + 8) return 0;
    stamp++;
    char want[600];
    int w = snprintf(want, sizeof want, "results_%s.json.pending.", stamp);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int dead = 0, live = 0;
    struct dirent *de;
    while (!live && (de = readdir(d))) {
        if (strncmp(de->d_name, want, (size_t)w)) continue;
        long pid = leftover_pid(de->d_name);
        if (pid <= 0) continue;
        char p[4400];
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p) continue;
        if (!outdir_pid_gone(pid) || !stale(p)) live = 1;
        else dead = 1;
    }
    closedir(d);
    if (!dead || live) return 0;
    // (a filesystem without RENAME_NOREPLACE commits by link + unlink: a kill between the two
    // leaves the results file and its pending name both)
    char results[4400];
    struct stat st;
    return snprintf(results, sizeof results, "%s/results_%s.json", dir, stamp) < (int)sizeof results &&
           lstat(results, &st) != 0 && errno == ENOENT;
}

// A results_<stamp>.json.pending.<pid> with committed samples_*_<stamp>.jsonl beside it: the mark
// orphan_samples goes by, so it stays as long as they do.
static int marks_samples(const char *dir, const char *name) {
    const char *tail = strstr(name, ".json.pending.");
    if (strncmp(name, "results_", 8) || !tail || tail - name - 8 <= 0 || tail - name - 8 >= 256) return 0;
    char suffix[300];
    snprintf(suffix, sizeof suffix, "_%.*s.jsonl", (int)(tail - name - 8), name + 8);
    size_t sl = strlen(suffix);
    DIR *d = opendir(dir);
    int found = 0;
    struct dirent *de;
    while (d && !found && (de = readdir(d))) {
        size_t nl = strlen(de->d_name);
        found = !strncmp(de->d_name, "samples_", 8) && nl > sl + 8 && !strcmp(de->d_name + nl - sl, suffix);
    }
    if (d) closedir(d);
    return found;
}

int outdir_sweep(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    // First the samples of killed runs, while their pending results (dead, and untouched for
    // OUTDIR_STALE_S) still mark them as such.
    while ((de = readdir(d))) {
        char p[4200];
        if (orphan_samples(dir, de->d_name) && snprintf(p, sizeof p, "%s/%s", dir, de->d_name) < (int)sizeof p &&
            unlink(p) == 0)
            n++;
    }
    rewinddir(d);
    while ((de = readdir(d))) {
        long pid = is_ours(de->d_name) ? leftover_pid(de->d_name) : 0;
        if (!outdir_pid_gone(pid)) continue;
        char p[4200];
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p || lstat(p, &st) != 0) continue;
        if (marks_samples(dir, de->d_name) && !stale(p)) continue;  // kept until its samples can go too
        if (S_ISDIR(st.st_mode) && !strncmp(de->d_name, ".xsa-report.tmp.", 16)) remove_tree(p), n++;
        else if (S_ISREG(st.st_mode) && unlink(p) == 0) n++;
    }
    closedir(d);
    return n;
}
