// check.c: the test runner behind tests/check.h.
#include "tests/check.h"

#include <sys/stat.h>

int check_failures_ = 0;
int check_skipped_ = 0;

int run_tests(const struct test_case *cases, int n, int argc, char **argv) {
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < n; i++) {
        if (argc > 1) {
            int want = 0;
            for (int a = 1; a < argc; a++) want |= strcmp(argv[a], cases[i].name) == 0;
            if (!want) continue;
        }
        check_failures_ = 0;
        check_skipped_ = 0;
        cases[i].fn();
        if (check_failures_) {
            failed++;
            printf("FAIL %s\n", cases[i].name);
        } else if (check_skipped_) {
            skipped++;
            printf("skip %s\n", cases[i].name);
        } else {
            passed++;
            printf("ok   %s\n", cases[i].name);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}

const char *shared_benchdata(const char *rel) {
    static char buf[4096];
    const char *root = getenv("XSA_SHARED");  // default: ../shared beside the checkout
    snprintf(buf, sizeof buf, "%s/benchdata/%s", root ? root : "../shared", rel);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}
