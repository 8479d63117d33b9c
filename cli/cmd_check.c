// cmd_check.c: `xsa-eval check --baseline BASE.json --results NEW.json [--max-drop POINTS]
// [--alpha A] [--verdict FILE]`: the CI regression gate (rule in eval/check.h).
// Exit 0: no regression; 1: a regression; 2: bad usage or incomparable / unreadable inputs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "eval/check.h"
#include "eval/outdir.h"
#include "reports/check_report.h"

enum { F_BASELINE = 256, F_RESULTS, F_VERDICT, F_MAX_DROP };

static const struct cli_flag flags[] = {
    {"baseline", F_BASELINE | CLI_ONCE, "BASE.json", "results of the accepted checkpoint (required)"},
    {"results", F_RESULTS | CLI_ONCE, "NEW.json", "results of the candidate (required)"},
    {"max-drop", F_MAX_DROP, "POINTS", "largest drop in points that passes (default " CLI_STR(CHECK_DEFAULT_MAX_DROP) ")"},
    {"verdict", F_VERDICT | CLI_ONCE, "FILE", "also write the verdict as JSON (- for stdout, then alone there)"},
};

static const struct cli_command cmd = {
    "check", "--baseline BASE.json --results NEW.json [flags]",
    "Fails (exit 1) when a task drops by more than POINTS significantly (exact McNemar p < A / m and\n"
    "the 1 - A / m paired bootstrap interval below 0), or the average over all tasks drops by more\n"
    "than POINTS with its 1 - A / m interval below 0; m = tasks + 1 (the average), 1 for one task:\n"
    "Bonferroni, so that a candidate no different from the baseline fails with probability at most A.\n"
    "Exit 0 otherwise; 2 on bad usage or inputs that are unreadable or not comparable (different\n"
    "data, tasks, limits); 3 when the summary or the verdict could not be written (a regression's 1\n"
    "comes first). Prints a Markdown summary for a pull-request comment.\n",
    flags, (int)(sizeof flags / sizeof flags[0]), 0, 1};

struct check_args {
    struct check_options opt;
    struct cli_stats st;
    const char *verdict_path;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct check_args *a = ctx;
    switch (key) {
    case F_BASELINE: a->opt.baseline_path = v; return 0;
    case F_RESULTS: a->opt.results_path = v; return 0;
    case F_VERDICT: a->verdict_path = v; return 0;
    case F_MAX_DROP: return cli_double(&cmd, "--max-drop", v, 0, 100, 0, &a->opt.max_drop);
    }
    return cli_stats_flag(&cmd, &a->st, key, v);
}

int cmd_check(int argc, char **argv) {
    struct check_args a = {.opt = {.max_drop = CHECK_DEFAULT_MAX_DROP},
                           .st = {"auto", CHECK_DEFAULT_ALPHA, COMPARE_DEFAULT_ITERS, COMPARE_DEFAULT_SEED}};
    int n_pos, rc = cli_parse(&cmd, argc, argv, on_flag, &a, NULL, 0, &n_pos);
    if (rc) return rc < 0 ? 0 : rc;  // (--iters against --alpha: check_evaluate, which knows the gate's m tests)
    struct check_options opt = a.opt;
    opt.metric = a.st.metric, opt.alpha = a.st.alpha, opt.iters = a.st.iters, opt.seed = a.st.seed;
    const char *verdict_path = a.verdict_path;
    xsa_error oerr = {0};
    if (verdict_path && outdir_check_file("--verdict", verdict_path, &oerr)) return cli_fail(&cmd, "%s", oerr.msg);
    if (!opt.baseline_path || !opt.results_path)
        return cli_fail(&cmd, "--baseline BASE.json and --results NEW.json are required");
    const char *ins[2] = {opt.baseline_path, opt.results_path}, *vflag = "--verdict";
    if (verdict_path && outdir_check_outputs(1, &vflag, &verdict_path, 2, ins, &oerr)) return cli_fail(&cmd, "%s", oerr.msg);
    struct results base = {0}, cand = {0};
    struct check_verdict v = {0};
    struct sbuf md = {0}, js = {0};
    xsa_error err = {0};
    rc = results_read_json(&base, opt.baseline_path, &err);
    if (!rc) rc = results_read_json(&cand, opt.results_path, &err);
    if (!rc) rc = check_evaluate(&base, &cand, &opt, &v, &err);
    int evaluated = !rc;
    if (!rc) check_markdown(&base, &cand, &v, &opt, &md);
    if (!rc && verdict_path && check_verdict_json(&v, &opt, &js))
        rc = xsa_fail(&err, XSA_ERUNTIME, "%s: the verdict JSON could not be built", verdict_path);
    if (!rc && verdict_path) rc = outdir_write_set(1, &verdict_path, (const char *const *)&js.s, &js.n, &err);
    if (rc) {
        fprintf(stderr, "xsa-eval check: %s\n", err.msg);
        if (rc == XSA_EREGRESSION) rc = XSA_EBADINPUT;
    }
    if (evaluated) {  // the summary still goes out when only the verdict file failed
        if (!outdir_is_stdout(verdict_path)) {  // else stdout is the verdict JSON alone
            fwrite(md.s, 1, md.n, stdout);
            fflush(stdout);
        }
        if (!v.pass) rc = XSA_EREGRESSION;  // a regression's 1 comes first
    }
    results_free(&base);
    results_free(&cand);
    check_verdict_free(&v);
    sbuf_free(&md);
    sbuf_free(&js);
    return rc;
}
