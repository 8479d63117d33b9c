// cmd_report.c: `xsa-eval report RESULTS.json... [-o report.md]`: a model-by-task table of any
// number of results files (preferred metric +- stderr), with a bar chart beside the report.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/xalloc.h"
#include "common/fileio.h"
#include "eval/outdir.h"
#include "reports/report.h"

static const struct cli_flag flags[] = {
    {"output", 'o', "FILE", "write the report there with FILE_acc.svg beside it (default: stdout, no chart)"},
};

static const struct cli_command cmd = {
    "report", "RESULTS.json... [-o report.md]",
    "Markdown table of each task's preferred metric (acc_norm where lm-eval defines it, else acc)\n"
    "+- stderr for every results file, group averages, model headers and provenance.\n",
    flags, 1, 0, 0};

static int on_flag(void *ctx, int key, const char *v) {
    if (key == 'o') *(const char **)ctx = v;
    return 0;
}

int cmd_report(int argc, char **argv) {
    const char *out = NULL;
    const char **paths = xsa_calloc((size_t)argc + 1, sizeof *paths);
    int n = 0, rc = cli_parse(&cmd, argc, argv, on_flag, &out, paths, argc, &n);
    xsa_error oerr = {0};
    if (!rc && out && outdir_check_file("-o", out, &oerr)) rc = cli_fail(&cmd, "%s", oerr.msg);
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
    if (!rc) {
        report_command_line(argc, argv, &cmd);
        if (out) report_chart_paths(out, &full, &rel);
        report_markdown(rp, paths, n, cmd.s, out ? rel.s : NULL, &md);
    }
    if (!rc && !out) fwrite(md.s, 1, md.n, stdout);
    if (!rc && out) {
        report_chart(rp, n, &svg);
        sbuf_printf(&svg_path, "%s_acc.svg", full.s);
        const char *files[2] = {svg_path.s, out}, *data[2] = {svg.s, md.s};
        size_t lens[2] = {svg.n, md.n};
        rc = outdir_write_set(2, files, data, lens, &err);
        if (!rc) fprintf(stderr, "xsa-eval report: wrote %s\n", out);
    }
    if (rc) fprintf(stderr, "xsa-eval report: %s\n", err.msg);
    for (int i = 0; i < n; i++) results_free(&rs[i]);
    free(rs);
    free(rp);
    free(paths);
    sbuf_free(&md); sbuf_free(&cmd); sbuf_free(&full); sbuf_free(&rel); sbuf_free(&svg); sbuf_free(&svg_path);
    return rc;
}
