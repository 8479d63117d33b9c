// fileio.c: whole-file reads, read-only maps, atomic writes and SHA-256 (fileio.h).
#define _POSIX_C_SOURCE 200809L
#include "common/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/vec.h"
#include "common/xalloc.h"

// Opens path for reading. regular_only: without waiting on a FIFO that has no writer, and
// anything but a regular file is refused (the descriptor then blocks again for reading);
// otherwise as cat opens it (a named FIFO waits for its writer). -1 with err set on failure.
static int open_for_read(const char *path, int regular_only, xsa_error *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0));
    if (fd < 0) {
        xsa_fail(err, XSA_EBADINPUT, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (regular_only && !S_ISREG(st.st_mode))) {
        close(fd);
        xsa_fail(err, XSA_EBADINPUT, "%s: not a regular file (a FIFO, device or folder); give the file itself", path);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {  // (a folder opens, and its read would say only "Is a directory")
        close(fd);
        xsa_fail(err, XSA_EBADINPUT, "%s: a folder, not a file; give the file itself", path);
        return -1;
    }
    int fl = regular_only ? fcntl(fd, F_GETFL) : -1;
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

static int read_whole(const char *path, size_t max_bytes, int regular_only, char **out, size_t *out_len, xsa_error *err) {
    *out = NULL;
    int fd = open_for_read(path, regular_only, err);
    if (fd < 0) return XSA_EBADINPUT;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot open: %s", path, strerror(errno));
    }
    struct sbuf b = {0};
    int rc = 0;
    char chunk[1 << 16];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.n + got > max_bytes) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: larger than the %zu-byte limit for this kind of file", path, max_bytes);
            break;
        }
        sbuf_append(&b, chunk, got);
    }
    if (!rc && ferror(f)) rc = xsa_fail(err, XSA_EBADINPUT, "%s: read error: %s", path, strerror(errno));
    fclose(f);
    if (rc) { free(b.s); return rc; }
    if (!b.s) sbuf_append(&b, "", 0);  // an empty file is "" (NUL-terminated, as every read)
    *out = b.s;
    if (out_len) *out_len = b.n;
    return 0;
}

int file_read_all(const char *path, size_t max_bytes, char **out, size_t *out_len, xsa_error *err) {
    return read_whole(path, max_bytes, 0, out, out_len, err);
}

int file_read_regular(const char *path, size_t max_bytes, char **out, size_t *out_len, xsa_error *err) {
    return read_whole(path, max_bytes, 1, out, out_len, err);
}

int file_map(const char *path, struct mapped_file *mf, xsa_error *err) {
    mf->data = NULL;
    mf->size = 0;
    int fd = open_for_read(path, 1, err);
    if (fd < 0) return XSA_EBADINPUT;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return xsa_fail(err, XSA_EBADINPUT, "%s: cannot read: %s", path, strerror(errno));
    }
    mf->size = (size_t)st.st_size;
    if (mf->size == 0) { close(fd); return 0; }
    void *p = mmap(NULL, mf->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return xsa_fail(err, XSA_ERUNTIME, "%s: mmap failed: %s", path, strerror(errno));
    mf->data = p;
    return 0;
}

void file_unmap(struct mapped_file *mf) {
    if (mf->data) munmap((void *)mf->data, mf->size);
    mf->data = NULL;
    mf->size = 0;
}

int file_temp_path(const char *path, char *out, size_t n) {
    int w = snprintf(out, n, "%s.tmp.%ld", path, (long)getpid());
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

int file_is_stale_temp(const char *name, const char *base) {
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) != 0 || strncmp(name + bl, ".tmp.", 5) != 0) return 0;
    const char *d = name + bl + 5;
    if (*d < '1' || *d > '9' || strlen(d) > 10) return 0;  // "%ld" of a pid: no sign, no leading zero
    long pid = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9') return 0;
        pid = pid * 10 + (*d - '0');
    }
    if (pid > 0x7fffffffL) return 0;
    // EPERM: the process exists (another user's); only "no such process" means its writer is gone.
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int file_sync_dir(const char *dir, xsa_error *err) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot open the folder to sync it: %s", dir, strerror(errno));
    int rc = 0;
    if (fsync(fd) != 0 && errno != EINVAL) rc = xsa_fail(err, XSA_ERUNTIME, "%s: folder fsync failed: %s", dir, strerror(errno));
    close(fd);
    return rc;
}

// What to do about a write that found no room. (Messages name the file written, not its
// temporary name, which is removed.)
const char *file_full_hint(int e) {
    return e == ENOSPC || e == EDQUOT ? " (the disk or quota is full: free space, or choose another folder)"
           : e == EFBIG               ? " (past the file-size limit, ulimit -f, or the filesystem's)"
           : e == EROFS               ? " (a read-only filesystem: choose another folder)"
                                      : "";
}

int file_write_atomic(const char *path, const void *data, size_t len, xsa_error *err) {
    size_t n = strlen(path);
    char *tmp = xsa_malloc(n + 32), *dir = xsa_malloc(n + 2);
    file_temp_path(path, tmp, n + 32);
    // The folder whose entry the rename changes: "." for a bare name, "/" for "/name".
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, n + 2, ".");
    else snprintf(dir, n + 2, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    // O_EXCL | O_NOFOLLOW: never write through a planted symlink; a stale temp of a dead
    // process with the same pid is removed first.
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0) {
        int rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot create: %s%s", path, strerror(errno), file_full_hint(errno));
        free(tmp);
        free(dir);
        return rc;
    }
    const char *p = data;
    size_t left = len;
    int rc = 0;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: write failed: %s%s", path, strerror(errno), file_full_hint(errno));
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (!rc && fsync(fd) != 0)
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: fsync failed: %s%s", path, strerror(errno), file_full_hint(errno));
    if (close(fd) != 0 && !rc)
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: close failed: %s%s", path, strerror(errno), file_full_hint(errno));
    if (!rc && rename(tmp, path) != 0) rc = xsa_fail(err, XSA_ERUNTIME, "%s: rename failed: %s", path, strerror(errno));
    if (rc) unlink(tmp);
    else rc = file_sync_dir(dir, err);  // the new name itself must survive a crash
    free(tmp);
    free(dir);
    return rc;
}

static void hex_digest(const unsigned char *md, char out[65]) {
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[md[i] >> 4];
        out[2 * i + 1] = hx[md[i] & 15];
    }
    out[64] = '\0';
}

int sha256_hex_valid(const char *s) {
    if (strlen(s) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

int sha256_hex(const void *data, size_t len, char out[65], xsa_error *err) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
        return xsa_fail(err, XSA_ERUNTIME, "SHA-256 failed (OpenSSL EVP_Digest)");
    hex_digest(md, out);
    return 0;
}

int sha256_file_hex(const char *path, char out[65], xsa_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return xsa_fail(err, XSA_EBADINPUT, "%s: cannot open: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = 0;
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) rc = xsa_fail(err, XSA_ERUNTIME, "SHA-256 init failed");
    unsigned char buf[1 << 16];
    size_t got;
    while (!rc && (got = fread(buf, 1, sizeof buf, f)) > 0)
        if (!EVP_DigestUpdate(ctx, buf, got)) rc = xsa_fail(err, XSA_ERUNTIME, "SHA-256 update failed");
    if (!rc && ferror(f)) rc = xsa_fail(err, XSA_EBADINPUT, "%s: read error", path);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!rc && (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32)) rc = xsa_fail(err, XSA_ERUNTIME, "SHA-256 final failed");
    if (!rc) hex_digest(md, out);
    EVP_MD_CTX_free(ctx);
    fclose(f);
    return rc;
}

int file_mkdirs(const char *path, const char *hint, xsa_error *err) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return xsa_fail(err, XSA_EBADINPUT, "%s: path is too long", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return xsa_fail(err, XSA_ERUNTIME, "%s: cannot create folder: %s; %s", buf, strerror(errno), hint);
            *p = c;
            if (!c) break;
        }
    }
    if (!dir_exists(path)) return xsa_fail(err, XSA_ERUNTIME, "%s: not a folder; %s", path, hint);
    return 0;
}

int file_first_missing(const char *path, char *top, size_t n) {
    if (!path || !*path || strlen(path) >= n) return 0;
    snprintf(top, n, "%s", path);
    struct stat st;
    for (char *p = top + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (stat(top, &st) != 0) return 1;  // top is now the first missing prefix
            *p = c;
            if (!c) return 0;
        }
    }
}

void file_rmdirs_upto(const char *path, const char *top) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return;
    size_t keep = strlen(top), len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/') buf[--len] = '\0';  // "out/" is the folder out
    while (strlen(buf) >= keep && !strncmp(buf, top, keep)) {
        if (rmdir(buf) != 0) return;
        char *slash = strrchr(buf, '/');
        if (!slash || slash == buf) return;
        *slash = '\0';
    }
}

int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int dir_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
