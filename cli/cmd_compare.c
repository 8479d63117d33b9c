// cmd_compare.c: `xsa-eval compare A.json B.json [-o report.md] [--json FILE] [--metric auto|acc|acc_norm]
// [--force] [--alpha A] [--iters N] [--seed S]`: paired comparison of two saved results; with
// more pairs (A1 B1 A2 B2 ...), the scaling table (reports/scaling_report.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/xalloc.h"
#include "eval/compare.h"
#include "eval/outdir.h"
#include "reports/compare_report.h"
#include "reports/report.h"
#include "reports/scaling_report.h"

#define COMPARE_MAX_PAIRS 64

enum { F_FORCE = 256, F_JSON };

static const struct cli_flag flags[] = {
    {"output", 'o', "FILE", "write the Markdown report there, with FILE_delta.svg and FILE_acc.svg beside it "
                            "(pairs: FILE_scaling.svg)"},
    {"force", F_FORCE, NULL, "compare inputs on different data / tasks / limits; the report says FORCED"},
    {"json", F_JSON | CLI_ONCE, "FILE", "also every number as JSON (one pair; - for stdout, then alone there)"},
};

static const struct cli_command cmd = {
    "compare", "A.json B.json [A2.json B2.json ...] [flags]",
    "Paired comparison of two results files (A = baseline, e.g. SA; B = candidate, e.g. XSA): per\n"
    "task the delta in points, a paired bootstrap interval over documents and an exact McNemar\n"
    "p-value, raw and Holm-adjusted over the tasks compared (a task is real when its interval\n"
    "excludes 0 and its Holm p < A, so that with no difference anywhere some task reads real with\n"
    "probability at most A); averages over the paper's eight tasks and all tasks. Without -o: Markdown on stdout,\n"
    "no charts. More pairs (A1 B1 A2 B2 ..., at most 64): the scaling table, one row per pair labelled\n"
    "by A's parameter count, with a chart of the average delta against parameter count\n"
    "(FILE_scaling.svg). Every pair is one size, SA then XSA, run as the first pair was.\n",
    flags, (int)(sizeof flags / sizeof flags[0]), 0, 1};

struct compare_args {
    struct compare_options opt;
    struct cli_stats st;
    const char *out;
    const char *json;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct compare_args *a = ctx;
    if (key == 'o') a->out = v;
    else if (key == F_FORCE) a->opt.force = 1;
    else if (key == F_JSON) a->json = v;
    else return cli_stats_flag(&cmd, &a->st, key, v);
    return 0;
}

// Pairs of files: the scaling table.
static int compare_pairs(const char *const *files, int n_files, const struct compare_options *opt, const char *out,
                         xsa_error *err) {
    int n = n_files / 2, rc = 0;
    struct results *rs = xsa_calloc((size_t)n_files, sizeof *rs);
    const struct results *ra[COMPARE_MAX_PAIRS], *rb[COMPARE_MAX_PAIRS];
    const char *pa[COMPARE_MAX_PAIRS], *pb[COMPARE_MAX_PAIRS];
    for (int i = 0; i < n_files && !rc; i++) rc = results_read_json(&rs[i], files[i], err);
    for (int i = 0; i < n; i++) ra[i] = &rs[2 * i], rb[i] = &rs[2 * i + 1], pa[i] = files[2 * i], pb[i] = files[2 * i + 1];
    if (!rc) rc = scaling_write_report(ra, rb, pa, pb, n, opt, out, err);
    for (int i = 0; i < n_files; i++) results_free(&rs[i]);
    free(rs);
    return rc;
}

// The pairs of files the command line named (argc, argv: for the report's provenance).
static int compare_files(int argc, char **argv, const char *const *files, int n_files, const struct compare_args *ap) {
    struct compare_args a = *ap;
    int rc;
    struct compare_options opt = a.opt;
    opt.metric = a.st.metric, opt.alpha = a.st.alpha, opt.iters = a.st.iters, opt.seed = a.st.seed;
    const char *out = a.out;
    if (n_files < 2 || n_files % 2)
        return cli_fail(&cmd, "expected results files in pairs, A.json B.json [A2.json B2.json ...] (got %d)", n_files);
    xsa_error err = {0};
    const char *oflags[2] = {"-o", "--json"}, *outs[2] = {out, a.json};
    if (a.json && n_files > 2) return cli_fail(&cmd, "--json writes one pair's comparison; give one pair A.json B.json");
    if ((out && outdir_check_file("-o", out, &err)) || (a.json && outdir_check_file("--json", a.json, &err)) ||
        outdir_check_outputs(2, oflags, outs, n_files, files, &err))
        return cli_fail(&cmd, "%s", err.msg);
    struct sbuf line = {0};
    if (n_files > 2) {
        report_command_line(argc, argv, &line);
        opt.command = line.s;
        rc = compare_pairs(files, n_files, &opt, out, &err);
        if (rc) fprintf(stderr, "xsa-eval compare: %s\n", err.msg);
        else if (out && !outdir_is_stdout(out)) fprintf(stderr, "xsa-eval compare: wrote %s\n", out);
        sbuf_free(&line);
        return rc;
    }
    struct results ra = {0}, rb = {0};
    rc = results_read_json(&ra, files[0], &err);
    if (!rc) rc = results_read_json(&rb, files[1], &err);
    if (!rc) {
        report_command_line(argc, argv, &line);
        opt.path_a = files[0];
        opt.path_b = files[1];
        opt.command = line.s;
        rc = compare_write_report(&ra, &rb, &opt, out, a.json, &err);
    }
    if (rc) fprintf(stderr, "xsa-eval compare: %s\n", err.msg);
    else if (out && !outdir_is_stdout(out)) fprintf(stderr, "xsa-eval compare: wrote %s\n", out);
    if (!rc && a.json && !outdir_is_stdout(a.json)) fprintf(stderr, "xsa-eval compare: wrote %s\n", a.json);
    results_free(&ra);
    results_free(&rb);
    sbuf_free(&line);
    return rc;
}

int cmd_compare(int argc, char **argv) {
    struct compare_args a = {.st = {"auto", 0.05, COMPARE_DEFAULT_ITERS, COMPARE_DEFAULT_SEED}};
    const char **files = xsa_calloc((size_t)argc + 1, sizeof *files);  // every argument could be a file
    int n_files, rc = cli_parse(&cmd, argc, argv, on_flag, &a, files, argc, &n_files);
    if (!rc) rc = cli_stats_check(&cmd, &a.st);
    if (!rc && n_files > 2 * COMPARE_MAX_PAIRS)
        rc = cli_fail(&cmd, "%d results files: at most %d pairs (%d files) make one table", n_files, COMPARE_MAX_PAIRS,
                      2 * COMPARE_MAX_PAIRS);
    if (rc) {
        free(files);
        return rc < 0 ? 0 : rc;
    }
    rc = compare_files(argc, argv, files, n_files, &a);
    free(files);
    return rc;
}
