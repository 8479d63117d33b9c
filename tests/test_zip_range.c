// test_zip_range.c: the Range zip reader's three parsers (data/zip_range.h) on archives libzip
// writes, and on the same bytes damaged: every bad size, signature or checksum is refused by name.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "common/fileio.h"
#include "data/zip_range.h"
#include "tests/check.h"

// An archive of two members (one deflated, one stored) written by libzip; *len bytes, malloc'd.
static unsigned char *make_zip(size_t *len, const char *comment) {
    char path[] = "/tmp/xsa_zip_range_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    close(fd);
    int zerr = 0;
    zip_t *z = zip_open(path, ZIP_TRUNCATE, &zerr);
    static char big[20000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 7);
    zip_source_t *s1 = zip_source_buffer(z, big, sizeof big, 0);
    zip_source_t *s2 = zip_source_buffer(z, "stored text\n", 12, 0);
    zip_int64_t i1 = zip_file_add(z, "dir/deflated.jsonl", s1, 0), i2 = zip_file_add(z, "stored.txt", s2, 0);
    zip_set_file_compression(z, (zip_uint64_t)i2, ZIP_CM_STORE, 0);
    zip_set_file_compression(z, (zip_uint64_t)i1, ZIP_CM_DEFLATE, 9);
    if (comment) zip_set_archive_comment(z, comment, (zip_uint16_t)strlen(comment));
    zip_close(z);
    char *buf = NULL;
    xsa_error err = {0};
    int rc = file_read_all(path, 1 << 24, &buf, len, &err);
    unlink(path);
    return rc ? NULL : (unsigned char *)buf;
}

// Reads `member` out of the whole archive `a` through the three parsers, as zip_range_fetch does.
static int read_member(const unsigned char *a, size_t n, const char *member, size_t max, unsigned char **out,
                       struct zip_entry *e, xsa_error *err) {
    size_t tail = n < ZIP_RANGE_TAIL ? n : ZIP_RANGE_TAIL;
    uint64_t off = 0, size = 0;
    int rc = zip_range_find_cd(a + n - tail, tail, n, "mem", &off, &size, err);
    if (!rc) rc = zip_range_find_member(a + off, (size_t)size, member, max, "mem", e, err);
    if (!rc) rc = zip_range_inflate(a + e->local_offset, n - e->local_offset, e, "mem", out, err);
    return rc;
}

TEST(members_read_as_written) {
    size_t n = 0;
    unsigned char *a = make_zip(&n, "a comment");
    CHECK(a != NULL);
    if (!a) return;
    unsigned char *out = NULL;
    struct zip_entry e;
    xsa_error err = {0};
    CHECK_EQ_INT(read_member(a, n, "dir/deflated.jsonl", 1 << 20, &out, &e, &err), 0);
    CHECK_EQ_INT(e.method, 8);
    CHECK_EQ_INT(e.usize, 20000);
    CHECK(out && out[0] == 'a' && out[19999] == (char)('a' + 19999 % 7));
    free(out);
    out = NULL;
    CHECK_EQ_INT(read_member(a, n, "stored.txt", 1 << 20, &out, &e, &err), 0);
    CHECK_EQ_INT(e.method, 0);
    CHECK(out && !memcmp(out, "stored text\n", 12));
    free(out);
    free(a);
}

TEST(damage_refused_by_name) {
    size_t n = 0;
    unsigned char *a = make_zip(&n, NULL);
    if (!a) return;
    unsigned char *out = NULL;
    struct zip_entry e;
    xsa_error err = {0};
    // No such member; a limit below the member's size.
    CHECK_EQ_INT(read_member(a, n, "nope.txt", 1 << 20, &out, &e, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "archive has no member nope.txt") != NULL);
    xsa_error_clear(&err);
    CHECK_EQ_INT(read_member(a, n, "dir/deflated.jsonl", 1000, &out, &e, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "over the 1000-byte limit") != NULL);
    xsa_error_clear(&err);
    // Not a zip: no end record in the bytes.
    unsigned char junk[100] = {0};
    uint64_t off, size;
    CHECK_EQ_INT(zip_range_find_cd(junk, sizeof junk, sizeof junk, "mem", &off, &size, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "no zip end-of-central-directory record") != NULL);
    xsa_error_clear(&err);
    // The end record claims zip64 / a directory past its own position.
    unsigned char *end = a + n - 22;
    unsigned char keep[22];
    memcpy(keep, end, 22);
    memset(end + 16, 0xff, 4);
    CHECK_EQ_INT(zip_range_find_cd(a, n, n, "mem", &off, &size, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "zip64") != NULL);
    xsa_error_clear(&err);
    memcpy(end, keep, 22);
    end[15] = 0x7f;  // directory size about 2 GB
    CHECK_EQ_INT(zip_range_find_cd(a, n, n, "mem", &off, &size, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "does not fit before the end record") != NULL);
    xsa_error_clear(&err);
    memcpy(end, keep, 22);
    // A byte of the deflated data flipped: inflate or the CRC-32 fails.
    CHECK_EQ_INT(read_member(a, n, "dir/deflated.jsonl", 1 << 20, &out, &e, &err), 0);
    free(out);
    out = NULL;
    const unsigned char *lh = a + e.local_offset;
    size_t data = e.local_offset + 30 + (size_t)(lh[26] | lh[27] << 8) + (size_t)(lh[28] | lh[29] << 8);
    a[data + e.csize / 2] ^= 0x55;
    CHECK_EQ_INT(read_member(a, n, "dir/deflated.jsonl", 1 << 20, &out, &e, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "CRC-32") != NULL || strstr(err.msg, "does not inflate") != NULL);
    CHECK(out == NULL);
    xsa_error_clear(&err);
    // The member's bytes cut short (what a truncated Range answer gives).
    CHECK_EQ_INT(zip_range_inflate(a + e.local_offset, 40, &e, "mem", &out, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "runs past the bytes received") != NULL);
    xsa_error_clear(&err);
    // A directory entry whose name length runs past the directory.
    CHECK_EQ_INT(zip_range_find_cd(a + n - 22, 22, n, "mem", &off, &size, &err), 0);
    unsigned char *cd = a + off;
    cd[28] = 0xff, cd[29] = 0xff;
    CHECK_EQ_INT(zip_range_find_member(cd, (size_t)size, "stored.txt", 1 << 20, "mem", &e, &err), XSA_ERUNTIME);
    CHECK(strstr(err.msg, "runs past its end") != NULL);
    free(a);
}

TEST(every_truncation_refused_or_exact) {
    // Every prefix of the directory: either refused or (the whole) read; never out of bounds (asan).
    size_t n = 0;
    unsigned char *a = make_zip(&n, NULL);
    if (!a) return;
    uint64_t off, size;
    xsa_error err = {0};
    CHECK_EQ_INT(zip_range_find_cd(a, n, n, "mem", &off, &size, &err), 0);
    int ok = 0;
    for (size_t k = 0; k <= size; k++) {
        unsigned char *cd = malloc(k ? k : 1);
        memcpy(cd, a + off, k);
        struct zip_entry e;
        xsa_error_clear(&err);
        if (!zip_range_find_member(cd, k, "stored.txt", 1 << 20, "mem", &e, &err)) ok++;
        free(cd);
    }
    CHECK_EQ_INT(ok, 1);  // only the whole directory holds the second entry completely
    free(a);
}

RUN_TESTS(T(members_read_as_written), T(damage_refused_by_name), T(every_truncation_refused_or_exact))
