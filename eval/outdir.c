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
    return rc;
}

int outdir_check_file(const char *flag, const char *path, xsa_error *err) {
    if (!path || !*path) return xsa_fail(err, XSA_EBADINPUT, "%s '': empty path; name a file", flag);
    if (dir_exists(path)) return xsa_fail(err, XSA_EBADINPUT, "%s %s: is a folder; name a file in it", flag, path);
    const char *slash = strrchr(path, '/');
    if (!slash) return 0;
    char parent[4096];
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len >= sizeof parent) return xsa_fail(err, XSA_EBADINPUT, "%s %s: path too long", flag, path);
    memcpy(parent, path, len);
    parent[len] = '\0';
    if (!dir_exists(parent)) return xsa_fail(err, XSA_EBADINPUT, "%s %s: no folder %s; create it first", flag, path, parent);
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

int outdir_write_set(int n, const char *const *paths, const char *const *data, const size_t *lens, xsa_error *err) {
    if (n < 1) return 0;
    char dir[4096], tmp[4200], p[4400];
    dir_of(paths[0], dir, sizeof dir);
    if (snprintf(tmp, sizeof tmp, "%s/.xsa-report.tmp.%ld", dir, (long)getpid()) >= (int)sizeof tmp)
        return xsa_fail(err, XSA_EBADINPUT, "%s: path too long", paths[0]);
    remove_tree(tmp);  // this pid's own leftover, if any
    if (mkdir(tmp, 0755) != 0) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot create: %s", tmp, strerror(errno));
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        const char *base = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
        if (snprintf(p, sizeof p, "%s/%s", tmp, base) >= (int)sizeof p) rc = xsa_fail(err, XSA_EBADINPUT, "%s: path too long", paths[i]);
        else rc = file_write_atomic(p, data[i], lens[i], err);
    }
    for (int i = 0; i < n && !rc; i++) {
        const char *base = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
        snprintf(p, sizeof p, "%s/%s", tmp, base);
        if (rename(p, paths[i]) != 0) rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot write: %s", paths[i], strerror(errno));
    }
    remove_tree(tmp);
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

static int is_ours(const char *name) {
    return !strncmp(name, "results_", 8) || !strncmp(name, "samples_", 8) || !strncmp(name, ".xsa-report.tmp.", 16);
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

int outdir_sweep(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        long pid = is_ours(de->d_name) ? leftover_pid(de->d_name) : 0;
        if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char p[4200];
        struct stat st;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p || lstat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode) && !strncmp(de->d_name, ".xsa-report.tmp.", 16)) remove_tree(p), n++;
        else if (S_ISREG(st.st_mode) && unlink(p) == 0) n++;
    }
    closedir(d);
    return n;
}
