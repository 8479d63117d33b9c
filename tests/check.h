// check.h: the tiny test harness. Each tests/test_*.c is a program of TEST()s; run_tests()
// runs them and prints "N passed, N failed" (and skipped); tests/run.sh adds the counts up.
#ifndef XSA_TESTS_CHECK_H
#define XSA_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

extern int check_failures_;    // failures in the current test
extern int check_skipped_;     // set by SKIP()

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
            check_failures_++;                                                            \
        }                                                                                 \
    } while (0)

#define CHECK_MSG(cond, ...)                                                              \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "  %s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
            check_failures_++;                                                            \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                \
    do {                                                                                  \
        long long a_ = (long long)(a), b_ = (long long)(b);                               \
        if (a_ != b_) {                                                                   \
            fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, \
                    #a, #b, a_, b_);                                                      \
            check_failures_++;                                                            \
        }                                                                                 \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                             \
    do {                                                                                  \
        double a_ = (double)(a), b_ = (double)(b);                                        \
        if (!(fabs(a_ - b_) <= (tol))) {                                                  \
            fprintf(stderr, "  %s:%d: |%s - %s| <= %g failed: %.9g vs %.9g\n", __FILE__,  \
                    __LINE__, #a, #b, (double)(tol), a_, b_);                             \
            check_failures_++;                                                            \
        }                                                                                 \
    } while (0)

#define CHECK_STR(a, b)                                                                   \
    do {                                                                                  \
        const char *a_ = (a), *b_ = (b);                                                  \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                          \
            fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__,     \
                    __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");            \
            check_failures_++;                                                            \
        }                                                                                 \
    } while (0)

// Marks the current test skipped (e.g. ../shared absent) and returns from it.
#define SKIP(why)                                                                         \
    do {                                                                                  \
        fprintf(stderr, "  skipped: %s\n", why);                                          \
        check_skipped_ = 1;                                                               \
        return;                                                                           \
    } while (0)

#define TEST(name) static void name(void)

// Runs the tests named on the command line (default: all) and returns the exit status.
int run_tests(const struct test_case *cases, int n, int argc, char **argv);

#define RUN_TESTS(...)                                                                    \
    int main(int argc, char **argv) {                                                     \
        static const struct test_case cases_[] = {__VA_ARGS__};                           \
        return run_tests(cases_, (int)(sizeof cases_ / sizeof cases_[0]), argc, argv);    \
    }
#define T(fn) {#fn, fn}

// Path of a file under ../shared/benchdata relative to the repo root, or NULL when absent.
const char *shared_benchdata(const char *rel);

#endif
