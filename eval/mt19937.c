// mt19937.c: CPython's random.Random (see mt19937.h for the exact rules reproduced).
#include "eval/mt19937.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

static void mt_init_genrand(mt19937 *r, uint32_t s) {
    r->mt[0] = s;
    for (int i = 1; i < MT19937_N; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->mti = MT19937_N;
}

// init_by_array as in the reference MT code that CPython ships.
static void mt_init_by_array(mt19937 *r, const uint32_t *key, size_t len) {
    uint32_t *mt = r->mt;
    mt_init_genrand(r, 19650218u);
    size_t i = 1, j = 0;
    size_t k = MT19937_N > len ? MT19937_N : len;
    for (; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT19937_N) {
            mt[0] = mt[MT19937_N - 1];
            i = 1;
        }
        if (j >= len) j = 0;
    }
    for (k = MT19937_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= MT19937_N) {
            mt[0] = mt[MT19937_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000u;  // non-zero initial state
}

void mt19937_seed_words(mt19937 *r, const uint32_t *words, size_t n_words) {
    while (n_words > 1 && words[n_words - 1] == 0) n_words--;  // abs(n).bit_length() words
    if (n_words == 0 || (n_words == 1 && words[0] == 0)) {
        const uint32_t zero = 0;
        mt_init_by_array(r, &zero, 1);
        return;
    }
    mt_init_by_array(r, words, n_words);
}

void mt19937_seed(mt19937 *r, uint64_t n) {
    const uint32_t w[2] = {(uint32_t)n, (uint32_t)(n >> 32)};
    mt19937_seed_words(r, w, 2);
}

// Regenerates all N words at once.
static void mt_twist(mt19937 *r) {
    uint32_t *mt = r->mt;
    int kk;
    for (kk = 0; kk < MT19937_N - MT_M; kk++) {
        uint32_t y = (mt[kk] & MT_UPPER) | (mt[kk + 1] & MT_LOWER);
        mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    }
    for (; kk < MT19937_N - 1; kk++) {
        uint32_t y = (mt[kk] & MT_UPPER) | (mt[kk + 1] & MT_LOWER);
        mt[kk] = mt[kk + (MT_M - MT19937_N)] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    }
    uint32_t y = (mt[MT19937_N - 1] & MT_UPPER) | (mt[0] & MT_LOWER);
    mt[MT19937_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    r->mti = 0;
}

static inline uint32_t mt_temper(uint32_t y) {
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

uint32_t mt19937_uint32(mt19937 *r) {
    if (r->mti >= MT19937_N) mt_twist(r);
    return mt_temper(r->mt[r->mti++]);
}

double mt19937_random(mt19937 *r) {
    uint32_t a = mt19937_uint32(r) >> 5, b = mt19937_uint32(r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

void mt19937_fill_random(mt19937 *r, double *out, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (r->mti >= MT19937_N) mt_twist(r);
        size_t avail = (size_t)(MT19937_N - r->mti) / 2;  // whole pairs left in this state
        if (avail == 0) {  // one word left (an odd number was drawn): straddle the twist
            out[i++] = mt19937_random(r);
            continue;
        }
        size_t m = avail < n - i ? avail : n - i;
        const uint32_t *w = r->mt + r->mti;
        double *o = out + i;
        // A plain loop over whole pairs, which the compiler can vectorise; the shifted words
        // fit in 27 bits, so a signed int conversion is exact.
        for (size_t j = 0; j < m; j++) {
            int32_t a = (int32_t)(mt_temper(w[2 * j]) >> 5);
            int32_t b = (int32_t)(mt_temper(w[2 * j + 1]) >> 6);
            o[j] = ((double)a * 67108864.0 + (double)b) * (1.0 / 9007199254740992.0);
        }
        r->mti += (int)(2 * m);
        i += m;
    }
}

uint64_t mt19937_getrandbits(mt19937 *r, int k) {
    if (k <= 0) return 0;
    if (k > 64) k = 64;
    if (k <= 32) return mt19937_uint32(r) >> (32 - k);
    uint64_t lo = mt19937_uint32(r);
    uint64_t hi = mt19937_uint32(r) >> (64 - k);
    return lo | (hi << 32);
}

static int bit_length_u64(uint64_t n) {
    int k = 0;
    while (n) {
        k++;
        n >>= 1;
    }
    return k;
}

uint64_t mt19937_randbelow(mt19937 *r, uint64_t n) {
    if (n == 0) return 0;
    int k = bit_length_u64(n);  // not (n-1): CPython draws k bits even for powers of two
    uint64_t v = mt19937_getrandbits(r, k);
    while (v >= n) v = mt19937_getrandbits(r, k);
    return v;
}

void mt19937_choices(mt19937 *r, size_t n, size_t k, size_t *out) {
    const double dn = (double)n;
    for (size_t i = 0; i < k; i++) {
        // random() < 1 - 2^-53 keeps the product below n after rounding (for n < 2^53).
        size_t j = (size_t)(mt19937_random(r) * dn);
        out[i] = j < n ? j : n - 1;
    }
}

// CPython's setsize: "size of a small set minus size of an empty list", grown for k > 5 by
// the table size of a k-element set, 4 ** ceil(log(3k, 4)) with math.log's double division.
static uint64_t sample_setsize(size_t k) {
    uint64_t setsize = 21;
    if (k > 5) {
        double e = ceil(log((double)k * 3.0) / log(4.0));
        if (e >= 31) return UINT64_MAX;  // larger than any pool we can hold
        setsize += (uint64_t)1 << (2 * (int)e);
    }
    return setsize;
}

int mt19937_sample(mt19937 *r, size_t n, size_t k, size_t *out) {
    if (k > n) return -1;
    if ((uint64_t)n <= sample_setsize(k)) {
        // Pool branch. Invariant: non-selected items at pool[0 : n-i].
        size_t *pool = xsa_calloc(n, sizeof *pool);  // (n,)
        for (size_t i = 0; i < n; i++) pool[i] = i;
        for (size_t i = 0; i < k; i++) {
            size_t j = (size_t)mt19937_randbelow(r, n - i);
            out[i] = pool[j];
            pool[j] = pool[n - i - 1];
        }
        free(pool);
        return 0;
    }
    // Set branch: draw from the whole range, re-draw on a repeat. The set is an open-addressing
    // table of indices + 1 (0 = empty), at most half full.
    size_t cap = 16;
    while (cap < 2 * k + 2) cap <<= 1;
    size_t *table = xsa_calloc(cap, sizeof *table);  // (cap,)
    for (size_t i = 0; i < k; i++) {
        for (;;) {
            size_t j = (size_t)mt19937_randbelow(r, n);
            size_t h = (j * (size_t)0x9E3779B97F4A7C15ull) & (cap - 1);
            while (table[h] && table[h] != j + 1) h = (h + 1) & (cap - 1);
            if (table[h]) continue;  // already selected: draw again
            table[h] = j + 1;
            out[i] = j;
            break;
        }
    }
    free(table);
    return 0;
}

void mt19937_shuffle(mt19937 *r, size_t *x, size_t n) {
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)mt19937_randbelow(r, (uint64_t)i + 1);
        size_t t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}
