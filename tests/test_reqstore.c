// The request store (eval/reqstore.c) shared by overlapping runs (--cache-requests): a request
// two runs both scored is kept once, each run takes in the other's records when it appends, and
// a torn tail (a kill mid-write) is cut off at the next open.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/journal.h"
#include "eval/reqstore.h"
#include "tests/check.h"

#define HEADER 80
#define RECORD 32

static void key_of(int i, uint8_t key[16]) {
    memset(key, 0, 16);
    memcpy(key, &i, sizeof i);
    key[15] = 0x5a;
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

TEST(overlapping_runs_keep_one_record_per_request) {
    char dir[] = "/tmp/xsa_reqstore_XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/store", dir);
    const char *scope = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    struct reqstore a, b;
    xsa_error err = {0};
    CHECK_EQ_INT(reqstore_open(&a, path, scope, 0, NULL, &err), 0);
    CHECK_EQ_INT(reqstore_open(&b, path, scope, 0, NULL, &err), 0);  // both open before either scores
    uint8_t keys[6][16];
    struct sched_result res[6];
    for (int i = 0; i < 6; i++) key_of(i, keys[i]), res[i] = (struct sched_result){.logprob = -0.5 * (i + 1), .greedy = i & 1};
    CHECK_EQ_INT(reqstore_append(&a, keys, res, 4, &err), 0);      // requests 0..3
    CHECK_EQ_INT(reqstore_append(&b, keys + 2, res + 2, 4, &err), 0);  // 2..5: 2 and 3 were a's
    CHECK_EQ_INT(file_size(path), HEADER + 6 * RECORD);
    struct sched_result got;
    CHECK(reqstore_find(&b, keys[0], &got) && got.logprob == -0.5 && got.greedy == 0);  // taken in from a
    CHECK_EQ_INT(reqstore_append(&a, keys + 5, res + 5, 1, &err), 0);  // b's: nothing written
    CHECK_EQ_INT(file_size(path), HEADER + 6 * RECORD);
    CHECK(reqstore_find(&a, keys[4], &got) && got.logprob == -2.5 && got.greedy == 0);
    reqstore_close(&a);
    reqstore_close(&b);
    // A torn record at the end (a kill mid-write) is cut off at the next open; the rest is kept.
    FILE *f = fopen(path, "ab");
    CHECK(f && fwrite("torn", 1, 4, f) == 4 && fclose(f) == 0);
    long dropped = 0;
    CHECK_EQ_INT(reqstore_open(&a, path, scope, 0, &dropped, &err), 0);
    CHECK_EQ_INT(dropped, 4);
    CHECK_EQ_INT(file_size(path), HEADER + 6 * RECORD);
    for (int i = 0; i < 6; i++) CHECK(reqstore_find(&a, keys[i], &got) && got.logprob == -0.5 * (i + 1));
    reqstore_close(&a);
    unlink(path);
    rmdir(dir);
}

// A run killed mid-write while another has the store open: the other cuts the torn bytes before
// it appends, so its records stay on the 32-byte grid and a later open keeps every one.
TEST(torn_tail_cut_before_append) {
    char dir[] = "/tmp/xsa_reqstore_XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/store", dir);
    const char *scope = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    struct reqstore a;
    xsa_error err = {0};
    uint8_t keys[4][16];
    struct sched_result res[4];
    for (int i = 0; i < 4; i++) key_of(i, keys[i]), res[i] = (struct sched_result){.logprob = -1.0 - i, .greedy = 0};
    CHECK_EQ_INT(reqstore_open(&a, path, scope, 0, NULL, &err), 0);
    CHECK_EQ_INT(reqstore_append(&a, keys, res, 2, &err), 0);
    FILE *f = fopen(path, "ab");  // another run's half record
    CHECK(f && fwrite("abcde", 1, 5, f) == 5 && fclose(f) == 0);
    CHECK_EQ_INT(reqstore_append(&a, keys + 2, res + 2, 2, &err), 0);
    CHECK_EQ_INT(file_size(path), HEADER + 4 * RECORD);
    reqstore_close(&a);
    long dropped = -1;
    struct sched_result got;
    CHECK_EQ_INT(reqstore_open(&a, path, scope, 0, &dropped, &err), 0);
    CHECK_EQ_INT(dropped, 0);
    for (int i = 0; i < 4; i++) CHECK(reqstore_find(&a, keys[i], &got) && got.logprob == -1.0 - i);
    reqstore_close(&a);
    // A header: damaged when a byte of it is flipped, another scope's when whole.
    struct reqstore b;
    const char *other = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
    char path2[80];
    snprintf(path2, sizeof path2, "%s/other", dir);
    CHECK_EQ_INT(reqstore_open(&b, path2, other, 0, NULL, &err), 0);
    reqstore_close(&b);
    CHECK_EQ_INT(reqstore_open(&b, path2, scope, 0, NULL, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "another model or settings") != NULL);
    xsa_error_clear(&err);
    f = fopen(path, "r+b");
    CHECK(f && fseek(f, 10, SEEK_SET) == 0 && fputc(0xff, f) != EOF && fclose(f) == 0);
    CHECK_EQ_INT(reqstore_open(&a, path, scope, 0, NULL, &err), XSA_EBADINPUT);
    CHECK(strstr(err.msg, "its header is damaged") != NULL);
    unlink(path);
    unlink(path2);
    rmdir(dir);
}

// A journal opened before the request cache failed to open leaves nothing behind: no empty
// journal in the model's folder (which would keep a failed run's --output folder).
TEST(journal_open_failure_leaves_no_journal) {
    char dir[] = "/tmp/xsa_journal_XXXXXX", cache[64], journal[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    FILE *f = fopen(cache, "w");  // a file where the cache folder should be
    CHECK(f && fclose(f) == 0);
    const char *scope = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    struct run_journal j;
    xsa_error err = {0};
    CHECK(journal_open(&j, dir, cache, scope, scope, 0, 1, 1, &err) != 0);
    CHECK(strstr(err.msg, "not a folder") != NULL);
    snprintf(journal, sizeof journal, "%s/journal_%.16s.xsaj", dir, scope);
    CHECK_MSG(access(journal, F_OK) != 0, "%s was left behind", journal);
    unlink(journal);
    unlink(cache);
    rmdir(dir);
}

RUN_TESTS(T(overlapping_runs_keep_one_record_per_request), T(torn_tail_cut_before_append),
          T(journal_open_failure_leaves_no_journal))
