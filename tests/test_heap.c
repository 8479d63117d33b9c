// test_heap.c: common/heap.h (the merge queues of the three BPE tokenizers) and common/grow.h.
#include <stdint.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/heap.h"
#include "tests/check.h"

struct item {
    int key;  // ordered by key only, so equal keys tie and their order shows the sift rule
    int tag;  // which push made it
};

static int item_less(const void *pa, const void *pb) {
    const struct item *a = pa, *b = pb;
    return a->key < b->key;
}

// The hand-written heap the tokenizers had (tokenizer_sp.c's sp_heap): the sift rule whose
// pop order, ties included, xsa_heap must reproduce.
struct ref_heap {
    struct item v[4096];
    size_t n;
};

static void ref_push(struct ref_heap *h, struct item p) {
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!item_less(&p, &h->v[parent])) break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i] = p;
}

static struct item ref_pop(struct ref_heap *h) {
    struct item top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && item_less(&h->v[c + 1], &h->v[c])) c++;
        if (!item_less(&h->v[c], &last)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = last;
    return top;
}

static uint32_t lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

TEST(test_heap_pops_in_order) {
    struct xsa_heap h = {0};
    uint32_t seed = 7;
    for (int i = 0; i < 1000; i++) {
        struct item x = {(int)(lcg(&seed) % 100000), i};
        xsa_heap_push(&h, &x, sizeof x, item_less);
    }
    CHECK_EQ_INT(h.n, 1000);
    int prev = -1, sorted = 1;
    while (h.n) {
        struct item x;
        xsa_heap_pop(&h, &x, sizeof x, item_less);
        if (x.key < prev) sorted = 0;
        prev = x.key;
    }
    CHECK(sorted);
    xsa_heap_free(&h);
    CHECK(h.v == NULL && h.cap == 0);
}

TEST(test_heap_ties_come_out_as_the_old_heaps) {
    // Few distinct keys and pushes interleaved with pops, as a merge loop does: every pop must
    // return the same item (tag included) as the reference.
    static struct ref_heap ref;
    ref.n = 0;
    struct xsa_heap h = {0};
    uint32_t seed = 12345;
    int tag = 0, same = 1, pops = 0;
    for (int step = 0; step < 20000; step++) {
        if (ref.n == 0 || (ref.n < 4000 && lcg(&seed) % 3 != 0)) {
            struct item x = {(int)(lcg(&seed) % 8), tag++};
            ref_push(&ref, x);
            xsa_heap_push(&h, &x, sizeof x, item_less);
        } else {
            struct item a = ref_pop(&ref), b;
            xsa_heap_pop(&h, &b, sizeof b, item_less);
            if (a.key != b.key || a.tag != b.tag) same = 0;
            pops++;
        }
        if (h.n != ref.n) same = 0;
    }
    CHECK(pops > 1000);
    CHECK(same);
    xsa_heap_free(&h);
}

TEST(test_grow_doubles) {
    CHECK_EQ_INT(xsa_grow_cap(0, 1), 16);
    CHECK_EQ_INT(xsa_grow_cap(16, 16), 16);
    CHECK_EQ_INT(xsa_grow_cap(16, 17), 32);
    CHECK_EQ_INT(xsa_grow_cap(0, 100), 128);
    CHECK_EQ_INT(xsa_grow_cap(24, 25), 48);
    int *v = NULL;
    size_t cap = 0;
    for (int i = 0; i < 1000; i++) {
        XSA_GROW(v, cap, (size_t)i + 1);
        v[i] = i;
    }
    CHECK_EQ_INT(cap, 1024);
    int kept = 1;
    for (int i = 0; i < 1000; i++) kept &= v[i] == i;
    CHECK(kept);
    free(v);
}

TEST(test_grow_overflow_exits_3) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(open("/dev/null", 1), 2);  // the one-line message is not this test's output
        size_t cap = 0;
        xsa_grow(NULL, &cap, (size_t)-1 / 4, 16);  // need * elem overflows size_t
        _exit(0);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

RUN_TESTS(T(test_heap_pops_in_order), T(test_heap_ties_come_out_as_the_old_heaps), T(test_grow_doubles),
          T(test_grow_overflow_exits_3))
