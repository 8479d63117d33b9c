// cmd_download.c: `xsa-eval download --tasks LIST`: fetch, verify and cache benchmark data,
// so later runs (and --offline runs) read it from the cache. Exit 0 when every task is
// cached and valid, 2 for bad usage, 3 when any task could not be fetched or verified.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "data/data.h"
#include "tasks/task.h"

enum { F_TASKS = 256, F_FORCE, F_FEWSHOT, F_QUIET = 'q' };

static const struct cli_flag flags[] = {
    {"tasks", F_TASKS, "LIST", "task names and groups (all, paper), comma-separated (required)"},
    {"force", F_FORCE, NULL, "download again even when a valid copy is cached"},
    {"fewshot", F_FEWSHOT, NULL, "also the few-shot split (train; LAMBADA's is its test split), for --num-fewshot offline"},
    {"quiet", F_QUIET, NULL, "no progress bar or notes"},
};

static const struct cli_command cmd = {
    "download", "--tasks LIST [flags]",
    "Fetches, verifies and caches the tasks' data; with --offline only verifies what is cached.\n",
    flags, (int)(sizeof flags / sizeof flags[0]), 1, 0};

struct download_args {
    struct data_options opt;
    const char *tasks;
    int fewshot;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct download_args *a = ctx;
    if (key == F_TASKS) a->tasks = v;
    else if (key == F_FORCE) a->opt.force = 1;
    else if (key == F_FEWSHOT) a->fewshot = 1;
    else if (key == F_QUIET) a->opt.quiet = 1;
    else cli_data_flag(&a->opt, key, v);
    return 0;
}

int cmd_download(int argc, char **argv) {
    struct download_args a = {0};
    int n_pos, rc = cli_parse(&cmd, argc, argv, on_flag, &a, NULL, 0, &n_pos);
    if (rc) return rc < 0 ? 0 : rc;
    struct data_options opt = a.opt;
    const char *tasks = a.tasks;
    if (!tasks) return cli_fail(&cmd, "--tasks LIST is required (e.g. --tasks all)");
    if (opt.offline && opt.force) return cli_fail(&cmd, "--force and --offline contradict each other");
    const struct task_def *list[64];
    int n = 0;
    xsa_error err = {0};
    if (task_expand_list(tasks, list, 64, &n, &err)) {
        fprintf(stderr, "xsa-eval download: %s\n", err.msg);
        return 2;
    }
    int worst = 0;
    for (int i = 0; i < n; i++) {
        // The evaluated split, then (--fewshot) the few-shot split when it is another one.
        int splits = a.fewshot && strcmp(list[i]->fewshot_split, list[i]->split) ? 2 : 1;
        for (int k = 0; k < splits; k++) {
            xsa_error_clear(&err);
            int was_cached = 0;
            long rows = 0;
            char sha[65], source[512];
            const char *split = k ? list[i]->fewshot_split : NULL;
            int rc = data_download_task(list[i], split, &opt, &was_cached, &rows, sha, source, &err);
            if (rc) {
                fprintf(stderr, "xsa-eval: %s\n", err.msg);
                if (rc > worst) worst = rc;
                break;
            }
            int pin = k ? -1 : data_pinned(list[i], sha);
            char name[80];
            snprintf(name, sizeof name, "%s%s%s", list[i]->name, k ? "/" : "", k ? split : "");
            printf("%-15s %6ld rows  sha256 %.16s  %s  %s  %s\n", name, rows, sha, was_cached ? "cached    " : "downloaded",
                   source, pin > 0 ? "pinned" : pin == 0 ? "NOT-PINNED" : "no-pin");
            fflush(stdout);
        }
    }
    return worst;
}
