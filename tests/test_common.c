// Tests of common/: vectors, atomic writes, SHA-256.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/vec.h"
#include "tests/check.h"

TEST(test_ivec_grows) {
    struct ivec a = {0};
    for (int i = 0; i < 1000; i++) CHECK(ivec_push(&a, i) == 0);
    CHECK_EQ_INT(a.n, 1000);
    CHECK_EQ_INT(a.v[999], 999);
    ivec_free(&a);
}

TEST(test_sbuf_printf) {
    struct sbuf b = {0};
    sbuf_puts(&b, "x=");
    sbuf_printf(&b, "%d/%s", 42, "y");
    CHECK_STR(b.s, "x=42/y");
    CHECK_EQ_INT(b.n, 6);
    sbuf_free(&b);
}

TEST(test_sha256_known_vector) {
    char hex[65];
    xsa_error err = {0};
    CHECK(sha256_hex("abc", 3, hex, &err) == 0);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(test_atomic_write_roundtrip) {
    char dir[] = "/tmp/xsa_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    xsa_error err = {0};
    CHECK(file_write_atomic(path, "hello", 5, &err) == 0);
    char *data = NULL;
    size_t n = 0;
    CHECK(file_read_all(path, 100, &data, &n, &err) == 0);
    CHECK_EQ_INT(n, 5);
    CHECK_STR(data, "hello");
    free(data);
    char hex[65];
    CHECK(sha256_file_hex(path, hex, &err) == 0);
    CHECK_STR(hex, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    // Too-large files are refused with a message naming the file.
    xsa_error e2 = {0};
    CHECK(file_read_all(path, 2, &data, &n, &e2) == XSA_EBADINPUT);
    CHECK(strstr(e2.msg, path) != NULL);
    unlink(path);
    rmdir(dir);
}

TEST(test_atomic_write_ignores_planted_symlink) {
    char dir[] = "/tmp/xsa_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], tmp[300], victim[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    xsa_error err = {0};
    CHECK(file_write_atomic(victim, "keep", 4, &err) == 0);
    CHECK(symlink(victim, tmp) == 0);  // where our temp file will be
    CHECK(file_write_atomic(path, "new", 3, &err) == 0);
    char *data = NULL;
    CHECK(file_read_all(victim, 100, &data, NULL, &err) == 0);
    CHECK_STR(data, "keep");
    free(data);
    CHECK(file_read_all(path, 100, &data, NULL, &err) == 0);
    CHECK_STR(data, "new");
    free(data);
    unlink(path);
    unlink(victim);
    rmdir(dir);
}

// A spy on fsync (this program's definition wins over libc's at link time): it records what
// each descriptor is, then makes the real system call, so the writes stay durable and real.
static struct stat fsynced[16];
static int n_fsynced;
int fsync(int fd) {
    if (n_fsynced < 16 && fstat(fd, &fsynced[n_fsynced]) == 0) n_fsynced++;
    return (int)syscall(SYS_fsync, fd);
}

// Whether an fsync since n_fsynced was last zeroed was on the file or folder `want`.
static int was_fsynced(const struct stat *want) {
    for (int i = 0; i < n_fsynced; i++)
        if (fsynced[i].st_ino == want->st_ino && fsynced[i].st_dev == want->st_dev &&
            S_ISDIR(fsynced[i].st_mode) == S_ISDIR(want->st_mode))
            return 1;
    return 0;
}

// The rename is durable only once the folder holding the name is fsynced too.
TEST(test_atomic_write_fsyncs_folder) {
    char dir[] = "/tmp/xsa_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    xsa_error err = {0};
    n_fsynced = 0;
    CHECK(file_write_atomic(path, "data", 4, &err) == 0);
    struct stat file_st, dir_st;
    CHECK(stat(path, &file_st) == 0 && stat(dir, &dir_st) == 0);
    CHECK_MSG(was_fsynced(&file_st), "the temp file was not fsynced (%d fsync calls)", n_fsynced);
    CHECK_MSG(was_fsynced(&dir_st), "the folder %s was not fsynced after the rename (%d fsync calls)", dir, n_fsynced);
    char *data = NULL;
    CHECK(file_read_all(path, 100, &data, NULL, &err) == 0);
    CHECK_STR(data, "data");
    free(data);
    // A bare file name: the folder is the current one.
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(dir) == 0);
    n_fsynced = 0;
    CHECK(file_write_atomic("bare.txt", "x", 1, &err) == 0);
    CHECK_MSG(was_fsynced(&dir_st), "the current folder was not fsynced for a bare file name");
    CHECK(unlink("bare.txt") == 0);
    CHECK(chdir(cwd) == 0);
    unlink(path);
    rmdir(dir);
}

TEST(test_missing_file_error) {
    xsa_error err = {0};
    char *data;
    CHECK(file_read_all("/nonexistent/x", 10, &data, NULL, &err) == XSA_EBADINPUT);
    CHECK(strstr(err.msg, "/nonexistent/x") != NULL);
}

RUN_TESTS(T(test_ivec_grows), T(test_sbuf_printf), T(test_sha256_known_vector), T(test_atomic_write_roundtrip),
          T(test_missing_file_error), T(test_atomic_write_ignores_planted_symlink), T(test_atomic_write_fsyncs_folder))
