// cmd_compare.c: `xsa-eval compare A.json B.json [-o report.md] [--metric auto|acc|acc_norm]
// [--force] [--alpha A] [--iters N] [--seed S]`: paired comparison of two saved results.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "eval/compare.h"
#include "eval/outdir.h"
#include "reports/compare_report.h"
#include "reports/report.h"

enum { F_FORCE = 256 };

static const struct cli_flag flags[] = {
    {"output", 'o', "FILE", "write the Markdown report there, with FILE_delta.svg and FILE_acc.svg beside it"},
    {"force", F_FORCE, NULL, "compare inputs on different data / tasks / limits; the report says FORCED"},
};

static const struct cli_command cmd = {
    "compare", "A.json B.json [flags]",
    "Paired comparison of two results files (A = baseline, e.g. SA; B = candidate, e.g. XSA): per\n"
    "task the delta in points, a paired bootstrap interval over documents and an exact McNemar\n"
    "p-value; averages over the paper's eight tasks and all tasks. Without -o: Markdown on stdout,\n"
    "no charts.\n",
    flags, (int)(sizeof flags / sizeof flags[0]), 0, 1};

struct compare_args {
    struct compare_options opt;
    struct cli_stats st;
    const char *out;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct compare_args *a = ctx;
    if (key == 'o') a->out = v;
    else if (key == F_FORCE) a->opt.force = 1;
    else return cli_stats_flag(&cmd, &a->st, key, v);
    return 0;
}

int cmd_compare(int argc, char **argv) {
    struct compare_args a = {.st = {"auto", 0.05, COMPARE_DEFAULT_ITERS, COMPARE_DEFAULT_SEED}};
    const char *files[3];
    int n_files, rc = cli_parse(&cmd, argc, argv, on_flag, &a, files, 3, &n_files);
    if (rc) return rc < 0 ? 0 : rc;
    struct compare_options opt = a.opt;
    opt.metric = a.st.metric, opt.alpha = a.st.alpha, opt.iters = a.st.iters, opt.seed = a.st.seed;
    const char *out = a.out;
    if (n_files != 2) return cli_fail(&cmd, "expected exactly two results files, A.json B.json (got %d)", n_files);
    xsa_error err = {0};
    if (out && outdir_check_file("-o", out, &err)) return cli_fail(&cmd, "%s", err.msg);
    struct results ra = {0}, rb = {0};
    struct sbuf line = {0};
    rc = results_read_json(&ra, files[0], &err);
    if (!rc) rc = results_read_json(&rb, files[1], &err);
    if (!rc) {
        report_command_line(argc, argv, &line);
        opt.path_a = files[0];
        opt.path_b = files[1];
        opt.command = line.s;
        rc = compare_write_report(&ra, &rb, &opt, out, &err);
    }
    if (rc) fprintf(stderr, "xsa-eval compare: %s\n", err.msg);
    else if (out) fprintf(stderr, "xsa-eval compare: wrote %s\n", out);
    results_free(&ra);
    results_free(&rb);
    sbuf_free(&line);
    return rc;
}
