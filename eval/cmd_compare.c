// cmd_compare.c: `xsa-eval compare A.json B.json [-o report.md] [--metric auto|acc|acc_norm]
// [--force] [--alpha A] [--iters N] [--seed S]`: paired comparison of two saved results.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/commands.h"
#include "eval/compare.h"
#include "eval/outdir.h"
#include "reports/report.h"

static void compare_usage(FILE *f) {
    fprintf(f, "usage: xsa-eval compare A.json B.json [-o report.md] [--metric auto|acc|acc_norm] [--force]\n"
               "                        [--alpha A] [--iters N] [--seed S]\n"
               "  Paired comparison of two results files (A = baseline, e.g. SA; B = candidate, e.g. XSA):\n"
               "  per task the delta in points, a paired bootstrap interval over documents and an exact\n"
               "  McNemar p-value; averages over the paper's eight tasks and all tasks.\n"
               "  -o FILE      write the Markdown report there, with FILE_delta.svg and FILE_acc.svg beside it\n"
               "               (default: Markdown on stdout, no charts)\n"
               "  --metric M   auto (acc_norm where lm-eval defines it, else acc), acc, or acc_norm\n"
               "  --force      compare inputs on different data / tasks / limits; the report says FORCED\n"
               "  --alpha A    significance level, intervals are 1 - A (default 0.05)\n"
               "  --iters N    bootstrap resamples (default %d); --seed S (default %d)\n",
            COMPARE_DEFAULT_ITERS, COMPARE_DEFAULT_SEED);
}

static int parse_double(const char *flag, const char *s, double *out) {
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (errno || end == s || *end) {
        fprintf(stderr, "xsa-eval: %s %s: not a number\n", flag, s);
        return 2;
    }
    return 0;
}

static int parse_u64(const char *flag, const char *s, unsigned long long lo, unsigned long long hi,
                     unsigned long long *out) {
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || *out < lo || *out > hi) {
        fprintf(stderr, "xsa-eval: %s %s: expected an integer in [%llu, %llu]\n", flag, s, lo, hi);
        return 2;
    }
    return 0;
}

int cmd_compare(int argc, char **argv) {
    struct compare_options opt = {.metric = "auto", .alpha = 0.05, .iters = COMPARE_DEFAULT_ITERS,
                                  .seed = COMPARE_DEFAULT_SEED};
    const char *files[2] = {NULL, NULL}, *out = NULL;
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        unsigned long long u;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { compare_usage(stdout); return 0; }
        else if (!strcmp(a, "--force")) opt.force = 1;
        else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_val) out = argv[++i];
        else if (!strcmp(a, "--metric") && has_val) opt.metric = argv[++i];
        else if (!strcmp(a, "--alpha") && has_val) { if (parse_double(a, argv[++i], &opt.alpha)) return 2; }
        else if (!strcmp(a, "--iters") && has_val) {
            if (parse_u64(a, argv[++i], 1, 10000000, &u)) return 2;
            opt.iters = (int)u;
        } else if (!strcmp(a, "--seed") && has_val) {
            if (parse_u64(a, argv[++i], 1, ~0ULL, &u)) return 2;
            opt.seed = u;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "xsa-eval compare: unknown flag or missing value: %s (see xsa-eval compare --help)\n", a);
            return 2;
        } else if (nfiles < 2) files[nfiles++] = a;
        else { fprintf(stderr, "xsa-eval compare: expected exactly two results files (got a third: %s)\n", a); return 2; }
    }
    xsa_error oerr = {0};
    if (out && outdir_check_file("-o", out, &oerr)) {
        fprintf(stderr, "xsa-eval compare: %s\n", oerr.msg);
        return 2;
    }
    if (nfiles != 2) {
        fprintf(stderr, "xsa-eval compare: expected two results files, A.json B.json\n");
        compare_usage(stderr);
        return 2;
    }
    if (strcmp(opt.metric, "auto") && strcmp(opt.metric, "acc") && strcmp(opt.metric, "acc_norm")) {
        fprintf(stderr, "xsa-eval compare: --metric %s: expected auto, acc or acc_norm\n", opt.metric);
        return 2;
    }
    if (!(opt.alpha > 0 && opt.alpha < 1)) {
        fprintf(stderr, "xsa-eval compare: --alpha must be in (0, 1)\n");
        return 2;
    }
    struct results a = {0}, b = {0};
    struct sbuf cmd = {0};
    xsa_error err = {0};
    int rc = results_read_json(&a, files[0], &err);
    if (!rc) rc = results_read_json(&b, files[1], &err);
    if (!rc && report_command_line(argc, argv, &cmd)) rc = xsa_fail(&err, XSA_ERUNTIME, "out of memory");
    if (!rc) {
        opt.path_a = files[0];
        opt.path_b = files[1];
        opt.command = cmd.s;
        rc = compare_write_report(&a, &b, &opt, out, &err);
    }
    if (rc) fprintf(stderr, "xsa-eval compare: %s\n", err.msg);
    else if (out) fprintf(stderr, "xsa-eval compare: wrote %s\n", out);
    results_free(&a);
    results_free(&b);
    sbuf_free(&cmd);
    return rc;
}
