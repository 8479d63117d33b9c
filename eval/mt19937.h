// mt19937.h: CPython's `random.Random`, bit for bit, for the draws lm-eval makes: the
// bootstrap's `Random(i).choices(xs, k=len(xs))` and few-shot `Random(1234).sample(pool, n)`.
//
// Exactly as CPython 3.x (_randommodule.c, random.py), which has not changed since 3.2 for
// what is here:
// - seed(n) for an int n: init_by_array(key) with key = the 32-bit words of abs(n), least
//   significant first, as many as abs(n).bit_length() needs and at least one (0 -> [0]).
// - random() = genrand_res53: ((a >> 5) * 67108864 + (b >> 6)) / 2^53, a and b two outputs.
// - getrandbits(k), k <= 32: one output >> (32 - k); k in 33..64: words least significant
//   first, the last one shifted right to keep k bits in all.
// - _randbelow(n) = getrandbits(n.bit_length()) repeated until < n.
// - choices(pop, k) (no weights): pop[floor(random() * float(n))] k times.
// - sample(pop, k): CPython's two branches (a pool list when n <= setsize, else a set of
//   selected indices with re-draws), setsize = 21 + (k > 5 ? 4^ceil(log(3k)/log(4)) : 0).
// - shuffle(x): for i = n-1 .. 1: j = _randbelow(i + 1); swap x[i], x[j].
// The generator is a plain value: no global state; copy it to fork a stream.
#ifndef XSA_EVAL_MT19937_H
#define XSA_EVAL_MT19937_H

#include <stddef.h>
#include <stdint.h>

#define MT19937_N 624

typedef struct mt19937 {
    uint32_t mt[MT19937_N];  // state words
    int mti;                 // next word to temper; MT19937_N means "twist first"
} mt19937;

// random.Random(n) / rnd.seed(n) for 0 <= n < 2^64 (pass abs(n) for a negative seed).
void mt19937_seed(mt19937 *r, uint64_t n);

// seed(n) for any int: `words` are abs(n)'s 32-bit words, least significant first
// (high zero words are dropped, as CPython does; n_words == 0 means n = 0).
void mt19937_seed_words(mt19937 *r, const uint32_t *words, size_t n_words);

// The next raw 32-bit output (genrand_uint32).
uint32_t mt19937_uint32(mt19937 *r);

// random(): a double in [0, 1) with 53 random bits.
double mt19937_random(mt19937 *r);

// n successive random() values, faster than n calls.              out: (n,)
void mt19937_fill_random(mt19937 *r, double *out, size_t n);

// getrandbits(k) for 0 <= k <= 64 (k <= 0 returns 0 and draws nothing, as CPython).
uint64_t mt19937_getrandbits(mt19937 *r, int k);

// _randbelow(n) for n >= 1: uniform in [0, n) by rejection; n == 0 returns 0.
uint64_t mt19937_randbelow(mt19937 *r, uint64_t n);

// choices(range(n), k=k): out[i] = floor(random() * n), i < k.   out: (k,)
void mt19937_choices(mt19937 *r, size_t n, size_t k, size_t *out);

// sample(range(n), k): k distinct indices in selection order.    out: (k,)
// Returns 0, or -1 when k > n (CPython raises ValueError).
int mt19937_sample(mt19937 *r, size_t n, size_t k, size_t *out);

// shuffle(x) in place.                                           x: (n,)
void mt19937_shuffle(mt19937 *r, size_t *x, size_t n);

#endif
