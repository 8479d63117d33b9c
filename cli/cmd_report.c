// cmd_report.c: `xsa-eval report RESULTS.json... [-o report.md]`: a model-by-task table of any
// number of results files (preferred metric +- stderr), with a bar chart beside the report;
// with --trend, training curves (reports/trend_report.h).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/xalloc.h"
#include "common/fileio.h"
#include "eval/outdir.h"
#include "eval/trend.h"
#include "reports/report.h"
#include "reports/trend_report.h"

enum { F_TREND = 256, F_SERIES, F_STEPS };

static const struct cli_flag flags[] = {
    {"output", 'o', "FILE", "write the report there with FILE_acc.svg beside it (--trend: FILE_trend_<task>.svg; "
                            "default: stdout, no chart)"},
    {"trend", F_TREND, NULL, "training curves: score against training step per series, task and average"},
    {"series", F_SERIES, "LIST", "with --trend: one series name per file, comma-separated (default SA or XSA; "
                                "XSA (layers 2,3) and so on when the XSA files' layers differ)"},
    {"steps", F_STEPS, "LIST", "with --trend: one training step per file, comma-separated (default: the step each "
                               "file records)"},
};

static const struct cli_command cmd = {
    "report", "RESULTS.json... [-o report.md] [--trend [--series LIST] [--steps LIST]]",
    "Markdown table of each task's preferred metric (acc_norm where lm-eval defines it, else acc)\n"
    "+- stderr for every results file, group averages, model headers and provenance.\n"
    "--trend groups the files by series and training step (the step run recorded: its --step N, else\n"
    "\"step\" in the checkpoint's config.json or the step its torch.save file records, else global_step of\n"
    "the Hugging Face Trainer's trainer_state.json beside it, else a step_N / iter_N / ckpt_N /\n"
    "checkpoint-N name of it or its file's folder, or of its Hub revision; --steps gives them all) and\n"
    "charts each task and the average against step with a +- 1 stderr band (FILE_trend_<task>.svg).\n",
    flags, 4, 0, 0};

struct report_args {
    const char *out, *series, *steps;
    int trend;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct report_args *a = ctx;
    if (key == 'o') a->out = v;
    else if (key == F_TREND) a->trend = 1;
    else if (key == F_SERIES) a->series = v;
    else if (key == F_STEPS) a->steps = v;
    return 0;
}

// --steps LIST: one whole number from 0 to 2^31 - 1 per results file, into steps[0..n).
static int parse_steps(const char *list, long long *steps, int n, xsa_error *err) {
    const char *p = list;
    for (int i = 0;; i++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32] = "", *end = NULL;
        if (len < sizeof item) memcpy(item, p, len), item[len] = '\0';
        errno = 0;
        long long v = len < sizeof item ? strtoll(item, &end, 10) : -1;
        while (end && (*end == ' ' || *end == '\t')) end++;
        if (i == n)
            return xsa_fail(err, XSA_EBADINPUT, "--steps %s names more steps than the %d results files", list, n);
        if (!end || end == item || *end || errno || v < 0 || v > 2147483647)
            return xsa_fail(err, XSA_EBADINPUT, "--steps %s: step %d (\"%.*s\") is no whole number from 0 to 2147483647",
                            list, i + 1, (int)(len < 40 ? len : 40), p);
        steps[i] = v;
        if (!comma) {
            if (i + 1 < n)
                return xsa_fail(err, XSA_EBADINPUT, "--steps %s names %d steps for %d results files; give one per file", list,
                                i + 1, n);
            return 0;
        }
        p = comma + 1;
    }
}

// --trend: each file's series and step, then the curves.
static int report_trend(const struct results *const *rp, const char *const *paths, int n, const char *series_list,
                        const char *steps_list, const char *command, const char *out, xsa_error *err) {
    const char **series = xsa_calloc((size_t)n, sizeof *series);
    long long *steps = xsa_calloc((size_t)n, sizeof *steps);
    char *list = series_list ? xsa_strdup(series_list) : NULL;
    char (*named)[TREND_SERIES_MAX] = list ? NULL : xsa_calloc((size_t)n, sizeof *named);
    if (named) trend_default_series(rp, n, named);
    int rc = steps_list ? parse_steps(steps_list, steps, n, err) : 0;
    char *rest = list, *tok = list ? strsep(&rest, ",") : NULL;
    for (int i = 0; i < n && !rc; i++) {
        if (tok) {  // "SA, XSA" names the series "XSA", not " XSA"
            while (*tok == ' ' || *tok == '\t') tok++;
            for (size_t e = strlen(tok); e > 0 && (tok[e - 1] == ' ' || tok[e - 1] == '\t'); e--) tok[e - 1] = '\0';
        }
        if (list && !tok)
            rc = xsa_fail(err, XSA_EBADINPUT, "--series %s names %d series for %d results files; give one per file",
                          series_list, i, n);
        else if (list && !*tok)
            rc = xsa_fail(err, XSA_EBADINPUT, "--series %s: name %d is empty; give one name per file", series_list, i + 1);
        series[i] = list ? tok : named[i];
        if (!rc && !steps_list) rc = trend_step(rp[i], paths[i], &steps[i], err);
        if (list) tok = strsep(&rest, ",");
    }
    if (!rc && tok) rc = xsa_fail(err, XSA_EBADINPUT, "--series %s names more series than the %d results files", series_list, n);
    if (!rc) rc = trend_write_report(rp, paths, series, steps, n, command, out, err);
    free(series);
    free(steps);
    free(list);
    free(named);
    return rc;
}

int cmd_report(int argc, char **argv) {
    struct report_args a = {0};
    const char **paths = xsa_calloc((size_t)argc + 1, sizeof *paths);
    int n = 0, rc = cli_parse(&cmd, argc, argv, on_flag, &a, paths, argc, &n);
    const char *out = a.out;
    if (!rc && a.series && !a.trend) rc = cli_fail(&cmd, "--series applies only with --trend");
    if (!rc && a.steps && !a.trend) rc = cli_fail(&cmd, "--steps applies only with --trend");
    xsa_error oerr = {0};
    const char *oflag = "-o";
    if (!rc && out && (outdir_check_file("-o", out, &oerr) || outdir_check_outputs(1, &oflag, &out, n, paths, &oerr)))
        rc = cli_fail(&cmd, "%s", oerr.msg);
    if (!rc && n == 0) rc = cli_fail(&cmd, "expected one or more results files");
    if (rc) {
        free(paths);
        return rc < 0 ? 0 : rc;
    }
    struct results *rs = xsa_calloc((size_t)n, sizeof *rs);
    const struct results **rp = xsa_calloc((size_t)n, sizeof *rp);
    xsa_error err = {0};
    for (int i = 0; i < n && !rc; i++) {
        rc = results_read_json(&rs[i], paths[i], &err);
        rp[i] = &rs[i];
    }
    struct sbuf md = {0}, cmd = {0}, full = {0}, rel = {0}, svg = {0}, svg_path = {0};
    int charts = 0;
    if (!rc) {
        report_command_line(argc, argv, &cmd);
        charts = report_chart_paths(out, &full, &rel);
    }
    if (!rc && a.trend) {
        rc = report_trend(rp, paths, n, a.series, a.steps, cmd.s, out, &err);
        if (!rc && out && !outdir_is_stdout(out)) fprintf(stderr, "xsa-eval report: wrote %s\n", out);
    } else if (!rc) {
        report_markdown(rp, paths, n, cmd.s, charts ? rel.s : NULL, &md);
    }
    if (!rc && !out && !a.trend) fwrite(md.s, 1, md.n, stdout);
    if (!rc && out && !a.trend) {
        if (charts) report_chart(rp, n, &svg);
        sbuf_printf(&svg_path, "%s_acc.svg", full.s);
        const char *files[2] = {svg_path.s, out}, *data[2] = {svg.s, md.s};
        size_t lens[2] = {svg.n, md.n};
        rc = outdir_write_set(2 - !charts, files + !charts, data + !charts, lens + !charts, &err);
        if (!rc && !outdir_is_stdout(out)) fprintf(stderr, "xsa-eval report: wrote %s\n", out);
    }
    if (rc) fprintf(stderr, "xsa-eval report: %s\n", err.msg);
    for (int i = 0; i < n; i++) results_free(&rs[i]);
    free(rs);
    free(rp);
    free(paths);
    sbuf_free(&md); sbuf_free(&cmd); sbuf_free(&full); sbuf_free(&rel); sbuf_free(&svg); sbuf_free(&svg_path);
    return rc;
}
