// cmd_check.c: `xsa-eval check --baseline BASE.json --results NEW.json [--max-drop POINTS]
// [--alpha A] [--verdict FILE]`: the CI regression gate (rule in eval/check.h).
// Exit 0: no regression; 1: a regression; 2: bad usage or incomparable / unreadable inputs.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "eval/check.h"
#include "eval/commands.h"
#include "eval/outdir.h"

static void check_usage(FILE *f) {
    fprintf(f, "usage: xsa-eval check --baseline BASE.json --results NEW.json [--max-drop POINTS] [--alpha A]\n"
               "                      [--verdict FILE] [--metric auto|acc|acc_norm] [--iters N] [--seed S]\n"
               "  Fails (exit 1) when a task drops by more than POINTS (default %.1f) with significance at level A\n"
               "  (default %.2f: exact McNemar p < A and the 1 - A paired bootstrap interval below 0), or the\n"
               "  average over all tasks drops by more than POINTS with its interval below 0. Exit 0 otherwise;\n"
               "  2 on bad usage or inputs that are unreadable or not comparable (different data, tasks, limits).\n"
               "  Prints a Markdown summary for a pull-request comment; --verdict FILE writes the verdict as JSON.\n",
            CHECK_DEFAULT_MAX_DROP, CHECK_DEFAULT_ALPHA);
}

static int number(const char *flag, const char *s, double *out) {
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (errno || end == s || *end) {
        fprintf(stderr, "xsa-eval check: %s %s: not a number\n", flag, s);
        return 2;
    }
    return 0;
}

int cmd_check(int argc, char **argv) {
    struct check_options opt = {.max_drop = CHECK_DEFAULT_MAX_DROP, .alpha = CHECK_DEFAULT_ALPHA,
                                .iters = COMPARE_DEFAULT_ITERS, .seed = COMPARE_DEFAULT_SEED, .metric = "auto"};
    const char *verdict_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        double x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { check_usage(stdout); return 0; }
        else if (!strcmp(a, "--baseline") && has_val) opt.baseline_path = argv[++i];
        else if (!strcmp(a, "--results") && has_val) opt.results_path = argv[++i];
        else if (!strcmp(a, "--verdict") && has_val) verdict_path = argv[++i];
        else if (!strcmp(a, "--metric") && has_val) opt.metric = argv[++i];
        else if (!strcmp(a, "--max-drop") && has_val) { if (number(a, argv[++i], &opt.max_drop)) return 2; }
        else if (!strcmp(a, "--alpha") && has_val) { if (number(a, argv[++i], &opt.alpha)) return 2; }
        else if (!strcmp(a, "--iters") && has_val) {
            if (number(a, argv[++i], &x)) return 2;
            if (!(x >= 1 && x <= 1e7) || x != (int)x) { fprintf(stderr, "xsa-eval check: --iters must be an integer in [1, 10000000]\n"); return 2; }
            opt.iters = (int)x;
        } else if (!strcmp(a, "--seed") && has_val) {
            if (number(a, argv[++i], &x)) return 2;
            if (!(x >= 1 && x <= 9007199254740992.0) || x != (double)(unsigned long long)x) { fprintf(stderr, "xsa-eval check: --seed must be a positive integer\n"); return 2; }
            opt.seed = (uint64_t)x;
        } else {
            fprintf(stderr, "xsa-eval check: unknown argument or missing value: %s (see xsa-eval check --help)\n", a);
            return 2;
        }
    }
    xsa_error oerr = {0};
    if (verdict_path && outdir_check_file("--verdict", verdict_path, &oerr)) {
        fprintf(stderr, "xsa-eval check: %s\n", oerr.msg);
        return 2;
    }
    if (!opt.baseline_path || !opt.results_path) {
        fprintf(stderr, "xsa-eval check: --baseline BASE.json and --results NEW.json are required\n");
        return 2;
    }
    if (strcmp(opt.metric, "auto") && strcmp(opt.metric, "acc") && strcmp(opt.metric, "acc_norm")) {
        fprintf(stderr, "xsa-eval check: --metric %s: expected auto, acc or acc_norm\n", opt.metric);
        return 2;
    }
    struct results base = {0}, cand = {0};
    struct check_verdict v = {0};
    struct sbuf md = {0}, js = {0};
    xsa_error err = {0};
    int rc = results_read_json(&base, opt.baseline_path, &err);
    if (!rc) rc = results_read_json(&cand, opt.results_path, &err);
    if (!rc) rc = check_evaluate(&base, &cand, &opt, &v, &err);
    if (!rc && (check_markdown(&base, &cand, &v, &opt, &md) || (verdict_path && check_verdict_json(&v, &opt, &js))))
        rc = xsa_fail(&err, XSA_ERUNTIME, "out of memory");
    if (!rc && verdict_path) rc = file_write_atomic(verdict_path, js.s, js.n, &err);
    if (!rc) {
        fwrite(md.s, 1, md.n, stdout);
        fflush(stdout);
        rc = v.pass ? 0 : XSA_EREGRESSION;
    } else {
        fprintf(stderr, "xsa-eval check: %s\n", err.msg);
        if (rc == XSA_EREGRESSION) rc = XSA_EBADINPUT;
    }
    results_free(&base);
    results_free(&cand);
    check_verdict_free(&v);
    sbuf_free(&md);
    sbuf_free(&js);
    return rc;
}
