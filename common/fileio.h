// fileio.h: reading files whole or mapped, and writing them atomically.
#ifndef XSA_COMMON_FILEIO_H
#define XSA_COMMON_FILEIO_H

#include <stddef.h>

#include "common/error.h"

struct mapped_file {  // read-only mmap of a whole file
    const unsigned char *data;
    size_t size;
};

// Reads `path` into a NUL-terminated malloc'd buffer; refuses files over `max_bytes`. A pipe
// or FIFO is read as `cat` reads it (a user's --text <(zcat ...)).
int file_read_all(const char *path, size_t max_bytes, char **out, size_t *out_len, xsa_error *err);
// The same for a file that must be a regular one (a checkpoint's config.json, tokenizer, index):
// a FIFO, device or folder there is refused at once, never waited on.
int file_read_regular(const char *path, size_t max_bytes, char **out, size_t *out_len, xsa_error *err);

// Maps a regular file (anything else is refused without blocking on it).
int file_map(const char *path, struct mapped_file *mf, xsa_error *err);
void file_unmap(struct mapped_file *mf);

// Writes `len` bytes to `path` via a temp file in the same folder, fsync, rename, fsync of the
// folder: readers see the old file or the new one, never a partial one, also after a crash.
int file_write_atomic(const char *path, const void *data, size_t len, xsa_error *err);
// What to do about a failed write with errno `e` (" (the disk or quota is full: ...)"), or "".
const char *file_full_hint(int e);

// The one name of a writer's temp file: "<path>.tmp.<pid of this process>". 0, or -1 when it
// does not fit in `n`.
int file_temp_path(const char *path, char *out, size_t n);
// 1 when `name` is exactly "<base>.tmp.<pid>" (file_temp_path's form) and no process <pid>
// exists any more: a killed writer's leftover. A live process's temp, or any other name, is 0.
int file_is_stale_temp(const char *name, const char *base);
// fsync of a folder, so a rename or a new name in it survives a crash. A file system that
// cannot sync folders (EINVAL) is not an error.
int file_sync_dir(const char *dir, xsa_error *err);

// SHA-256 of a buffer / of a file, as 64 lowercase hex digits plus NUL (OpenSSL EVP).
int sha256_hex(const void *data, size_t len, char out[65], xsa_error *err);
// 1 when s is a SHA-256 as sha256_hex writes it: 64 lowercase hex digits.
int sha256_hex_valid(const char *s);
int sha256_file_hex(const char *path, char out[65], xsa_error *err);

// mkdir -p: creates `path` and its missing parents (0755). On failure the message names the
// folder and ends with `hint` (how to fix it, e.g. "choose another --output").
int file_mkdirs(const char *path, const char *hint, xsa_error *err);
// The outermost folder of `path` (itself included) that does not exist yet, into top: what
// file_mkdirs would create first. 0 when path exists (or is too long), 1 otherwise.
int file_first_missing(const char *path, char *top, size_t n);
// Undoes a file_mkdirs whose first created folder was `top`: removes path and then each parent
// up to and including top, stopping at the first that is not empty (rmdir never removes files).
void file_rmdirs_upto(const char *path, const char *top);

int file_exists(const char *path);
int dir_exists(const char *path);

#endif
