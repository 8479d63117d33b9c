// reqstore.c: the request record file of the journal and the request cache (reqstore.h).
#include "eval/reqstore.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/timing.h"
#include "common/xalloc.h"

#define MAGIC "XSAREQS1"
#define HEADER_BYTES 80
#define RECORD_BYTES REQSTORE_RECORD_BYTES
#define MAX_FILE_BYTES ((off_t)1 << 34)  // 16 GiB: 500M records, far past any run

static uint32_t fnv1a(const unsigned char *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

void reqstore_key(const struct sched_request *q, uint8_t key[16]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int32_t ni = q->n_input, nc = q->n_cont;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, &ni, sizeof ni) &&
             EVP_DigestUpdate(ctx, q->input, (size_t)ni * sizeof *q->input) && EVP_DigestUpdate(ctx, &nc, sizeof nc) &&
             EVP_DigestUpdate(ctx, q->cont, (size_t)nc * sizeof *q->cont) && EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    if (!ok || mdlen < 16) memset(md, 0xff, 16);  // never matches a real digest's use: see reqstore_find
    memcpy(key, md, 16);
}

static void put_header(unsigned char h[HEADER_BYTES], const char scope[65]) {
    memset(h, 0, HEADER_BYTES);
    memcpy(h, MAGIC, 8);
    memcpy(h + 8, scope, 64);
    uint32_t c = fnv1a(h, 72);
    memcpy(h + 72, &c, 4);
}

// A header whose checksum holds and whose scope is 64 hex digits (else it is damaged).
static int header_intact(const unsigned char h[HEADER_BYTES]) {
    uint32_t c;
    memcpy(&c, h + 72, 4);
    for (int i = 8; i < 72; i++)
        if (!isxdigit(h[i])) return 0;
    return c == fnv1a(h, 72);
}

static void put_record(unsigned char r[RECORD_BYTES], const uint8_t key[16], const struct sched_result *res) {
    memset(r, 0, RECORD_BYTES);
    memcpy(r, key, 16);
    memcpy(r + 16, &res->logprob, 8);
    r[24] = res->greedy ? 1 : 0;
    uint32_t c = fnv1a(r, 28);
    memcpy(r + 28, &c, 4);
}

static void grow(struct reqstore *s) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    struct reqstore_slot *ns = xsa_calloc(cap, sizeof *ns);
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slot[i].used) continue;
        size_t j;
        memcpy(&j, s->slot[i].key, sizeof j);
        for (j &= cap - 1; ns[j].used; j = (j + 1) & (cap - 1)) {}
        ns[j] = s->slot[i];
    }
    free(s->slot);
    s->slot = ns;
    s->cap = cap;
}

// Inserts or overwrites key (the same tokens in one scope always score the same, so a
// duplicate record carries the same value).
static void put(struct reqstore *s, const uint8_t key[16], double lp, int greedy) {
    if ((s->n + 1) * 2 > s->cap) grow(s);
    size_t j;
    memcpy(&j, key, sizeof j);
    for (j &= s->cap - 1; s->slot[j].used && memcmp(s->slot[j].key, key, 16); j = (j + 1) & (s->cap - 1)) {}
    if (!s->slot[j].used) s->n++;
    memcpy(s->slot[j].key, key, 16);
    s->slot[j].logprob = lp;
    s->slot[j].greedy = greedy;
    s->slot[j].used = 1;
}

int reqstore_find(const struct reqstore *s, const uint8_t key[16], struct sched_result *out) {
    if (!s->cap) return 0;
    size_t j;
    memcpy(&j, key, sizeof j);
    for (j &= s->cap - 1; s->slot[j].used; j = (j + 1) & (s->cap - 1))
        if (!memcmp(s->slot[j].key, key, 16)) {
            out->logprob = s->slot[j].logprob;
            out->greedy = s->slot[j].greedy;
            return 1;
        }
    return 0;
}

// Reads the records from `from` to `size`; with `cut`, cuts the file at the first bad one (else
// stops there). s->loaded becomes the end of the good records.
static int load(struct reqstore *s, off_t from, off_t size, int cut, long *dropped, xsa_error *err) {
    unsigned char *buf = xsa_malloc(1 << 20);
    off_t at = from, good = from;
    int rc = 0, bad = 0;
    while (!rc && !bad && at < size) {
        size_t want = size - at < (1 << 20) ? (size_t)(size - at) : (1 << 20);
        ssize_t got = pread(s->fd, buf, want, at);
        if (got <= 0) { rc = xsa_fail(err, XSA_ERUNTIME, "%s: read failed: %s", s->path, got ? strerror(errno) : "short file"); break; }
        for (ssize_t i = 0; i + RECORD_BYTES <= got; i += RECORD_BYTES) {
            const unsigned char *r = buf + i;
            uint32_t c;
            memcpy(&c, r + 28, 4);
            double lp;
            memcpy(&lp, r + 16, 8);
            if (c != fnv1a(r, 28) || r[24] > 1 || r[25] || r[26] || r[27] || !isfinite(lp)) { bad = 1; break; }
            put(s, r, lp, r[24]);
            good += RECORD_BYTES;
        }
        at += got - got % RECORD_BYTES;
        if (got % RECORD_BYTES) break;  // a torn record at the end of the file
    }
    free(buf);
    s->loaded = good;
    if (!rc && cut && good < size) {
        if (ftruncate(s->fd, good) != 0) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot cut its damaged tail: %s", s->path, strerror(errno));
        if (dropped) *dropped = (long)(size - good);
    }
    return rc;
}

int reqstore_open(struct reqstore *s, const char *path, const char scope[65], int exclusive, long *dropped,
                  xsa_error *err) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->exclusive = exclusive;
    if (dropped) *dropped = 0;
    if (snprintf(s->path, sizeof s->path, "%s", path) >= (int)sizeof s->path)
        return xsa_fail(err, XSA_EBADINPUT, "%s: path too long", path);
    s->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (s->fd < 0 && (errno == EROFS || errno == EACCES || errno == EPERM))  // the user's choice of folder
        return xsa_fail(err, XSA_EBADINPUT, "%s: cannot open: %s; choose a folder this run can write in", path,
                        strerror(errno));
    if (s->fd < 0) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot open: %s", path, strerror(errno));
    if (flock(s->fd, exclusive ? LOCK_EX | LOCK_NB : LOCK_EX) != 0) {
        int e = errno;
        close(s->fd);
        s->fd = -1;
        if (exclusive && e == EWOULDBLOCK) return -1;
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot lock: %s", path, strerror(e));
    }
    struct stat st;
    int rc = 0;
    unsigned char want[HEADER_BYTES], have[HEADER_BYTES];
    put_header(want, scope);
    if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: not a regular file; remove it", path);
    } else if (st.st_size > MAX_FILE_BYTES) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: %lld bytes, larger than any request store; remove it", path, (long long)st.st_size);
    } else if (st.st_size < HEADER_BYTES || exclusive == REQSTORE_FRESH) {  // new, killed before its header was whole, or to be emptied
        if (ftruncate(s->fd, 0) != 0 || write(s->fd, want, HEADER_BYTES) != HEADER_BYTES || fsync(s->fd) != 0)
            rc = xsa_fail(err, XSA_ERUNTIME, "%s: cannot write: %s", path, strerror(errno));
    } else if (pread(s->fd, have, HEADER_BYTES, 0) != HEADER_BYTES) {
        rc = xsa_fail(err, XSA_ERUNTIME, "%s: read failed: %s", path, strerror(errno));
    } else if (memcmp(have, MAGIC, 8)) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: not an xsa-eval request store; remove it or choose another folder", path);
    } else if (memcmp(have, want, HEADER_BYTES) && (!memcmp(have + 8, want + 8, 16) || !header_intact(have))) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: its header is damaged; remove it", path);
    } else if (memcmp(have, want, HEADER_BYTES)) {  // a whole header of another scope: a file copied or renamed
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: holds requests of another model or settings (scope %.16s..., wanted %.16s...); remove it",
                      path, (const char *)have + 8, scope);
    } else {
        rc = load(s, HEADER_BYTES, st.st_size, 1, dropped, err);
    }
    if (!rc && s->loaded < HEADER_BYTES) s->loaded = HEADER_BYTES;  // (a new or emptied store)
    s->last_sync = timing_now_s();
    if (!exclusive && s->fd >= 0) flock(s->fd, LOCK_UN);
    if (rc) reqstore_close(s);
    return rc;
}

// fsync now (a clean stop).
static int reqstore_sync(struct reqstore *s, xsa_error *err) {
    if (s->fd < 0 || !s->dirty) return 0;
    if (fsync(s->fd) != 0) return xsa_fail(err, XSA_ERUNTIME, "%s: fsync failed: %s", s->path, strerror(errno));
    s->dirty = 0;
    s->last_sync = timing_now_s();
    return 0;
}

int reqstore_append(struct reqstore *s, const uint8_t (*keys)[16], const struct sched_result *res, int n,
                    xsa_error *err) {
    if (s->fd < 0 || n <= 0) return 0;
    int rc = 0;
    // One locked write with O_APPEND: a reader never sees another writer's half record. A shared
    // store first takes in what other runs appended since, so a request two overlapping runs
    // both scored is kept once.
    if (!s->exclusive && flock(s->fd, LOCK_EX) != 0)
        return xsa_fail(err, XSA_ERUNTIME, "%s: cannot lock: %s", s->path, strerror(errno));
    struct stat st;
    // A torn or damaged record there (a run killed mid-write, a full disk) is cut before this
    // run appends: records written after it would be out of step with the 32-byte grid.
    if (!s->exclusive && fstat(s->fd, &st) == 0) {
        if (st.st_size > s->loaded) rc = load(s, s->loaded, st.st_size, 1, NULL, err);
        else s->loaded = st.st_size;  // (another run cut a damaged tail)
    }
    unsigned char *buf = xsa_malloc((size_t)n * RECORD_BYTES);
    size_t len = 0, off = 0;
    for (int i = 0; i < n && !rc; i++) {
        struct sched_result have;
        if (reqstore_find(s, keys[i], &have)) continue;
        put_record(buf + len, keys[i], &res[i]);
        put(s, keys[i], res[i].logprob, res[i].greedy);
        len += RECORD_BYTES;
    }
    while (!rc && off < len) {
        ssize_t w = write(s->fd, buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) rc = xsa_fail(err, XSA_ERUNTIME, "%s: write failed: %s", s->path, w ? strerror(errno) : "disk full?");
        else off += (size_t)w;
    }
    s->loaded += (off_t)off;
    if (!s->exclusive) flock(s->fd, LOCK_UN);
    free(buf);
    s->dirty = 1;
    if (!rc && timing_now_s() - s->last_sync >= REQSTORE_SYNC_S) rc = reqstore_sync(s, err);
    return rc;
}

void reqstore_close(struct reqstore *s) {
    if (s->fd >= 0) {
        if (s->dirty) fsync(s->fd);
        close(s->fd);
    }
    free(s->slot);
    s->slot = NULL;
    s->cap = s->n = 0;
    s->fd = -1;
}
