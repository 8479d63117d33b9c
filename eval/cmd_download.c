// cmd_download.c: `xsa-eval download --tasks LIST`: fetch, verify and cache benchmark data,
// so later runs (and --offline runs) read it from the cache. Exit 0 when every task is
// cached and valid, 2 for bad usage, 3 when any task could not be fetched or verified.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "eval/commands.h"
#include "tasks/task.h"

static void download_usage(FILE *f) {
    fprintf(f,
            "usage: xsa-eval download --tasks LIST [flags]\n"
            "  --tasks LIST            task names and groups (all, paper), comma-separated\n"
            "  --cache-dir DIR         cache folder (default $XDG_CACHE_HOME/xsa-eval or ~/.cache/xsa-eval)\n"
            "  --datasets-server URL   dataset viewer API (default " DATA_DEFAULT_DATASETS_SERVER ")\n"
            "  --hf-endpoint URL       Hugging Face Hub (default $HF_ENDPOINT or " DATA_DEFAULT_HF_ENDPOINT ")\n"
            "  --originals-mirror URL  fetch the authors' https://host/path files as URL/host/path\n"
            "  --source LIST           sources to try, in order (default " DATA_DEFAULT_SOURCES ")\n"
            "  --ca-bundle FILE        PEM certificates to trust (TLS verification is always on)\n"
            "  --allow-data-change     accept row counts or digests that differ from the registry's pins\n"
            "  --force                 download again even when a valid copy is cached\n"
            "  --offline               only verify what is cached; never touch the network\n"
            "  --quiet                 no progress bar or notes\n");
}

// Returns the value of `--name VALUE` or `--name=VALUE` at argv[*i], advancing *i; NULL when argv[*i] is not it.
static const char *flag_value(int argc, char **argv, int *i, const char *name, int *missing) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n)) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) { *missing = 1; return NULL; }
    return argv[++*i];
}

int cmd_download(int argc, char **argv) {
    struct data_options opt = {0};
    const char *tasks = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing = 0;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { download_usage(stdout); return 0; }
        else if ((v = flag_value(argc, argv, &i, "--tasks", &missing))) tasks = v;
        else if ((v = flag_value(argc, argv, &i, "--cache-dir", &missing))) opt.cache_dir = v;
        else if ((v = flag_value(argc, argv, &i, "--datasets-server", &missing))) opt.datasets_server = v;
        else if ((v = flag_value(argc, argv, &i, "--hf-endpoint", &missing))) opt.hf_endpoint = v;
        else if ((v = flag_value(argc, argv, &i, "--originals-mirror", &missing))) opt.originals_mirror = v;
        else if ((v = flag_value(argc, argv, &i, "--source", &missing))) opt.sources = v;
        else if ((v = flag_value(argc, argv, &i, "--ca-bundle", &missing))) opt.ca_bundle = v;
        else if (!strcmp(argv[i], "--allow-data-change")) opt.allow_data_change = 1;
        else if (!strcmp(argv[i], "--force")) opt.force = 1;
        else if (!strcmp(argv[i], "--offline")) opt.offline = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) opt.quiet = 1;
        else {
            fprintf(stderr, "xsa-eval download: %s '%s' (see xsa-eval download --help)\n",
                    missing ? "missing value after" : "unknown flag", argv[i]);
            return 2;
        }
        if (missing) {
            fprintf(stderr, "xsa-eval download: missing value after '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!tasks) {
        fprintf(stderr, "xsa-eval download: --tasks LIST is required (e.g. --tasks all)\n");
        return 2;
    }
    if (opt.offline && opt.force) {
        fprintf(stderr, "xsa-eval download: --force and --offline contradict each other\n");
        return 2;
    }
    const struct task_def *list[64];
    int n = 0;
    xsa_error err = {0};
    if (task_expand_list(tasks, list, 64, &n, &err)) {
        fprintf(stderr, "xsa-eval download: %s\n", err.msg);
        return 2;
    }
    int worst = 0;
    for (int i = 0; i < n; i++) {
        xsa_error_clear(&err);
        int was_cached = 0;
        long rows = 0;
        char sha[65], source[512];
        int rc = data_download_task(list[i], &opt, &was_cached, &rows, sha, source, &err);
        if (rc) {
            fprintf(stderr, "xsa-eval: %s\n", err.msg);
            if (rc > worst) worst = rc;
            continue;
        }
        printf("%-15s %6ld rows  sha256 %.16s  %s  %s\n", list[i]->name, rows, sha,
               was_cached ? "cached    " : "downloaded", source);
        fflush(stdout);
    }
    return worst;
}
