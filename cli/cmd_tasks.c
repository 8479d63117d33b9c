// cmd_tasks.c: `xsa-eval tasks [--cache-dir DIR] [--json]`: every task with its groups,
// split, size, source dataset, what the cache holds (verified: digest and row count) and whether
// it is the registry's pinned content, then the sources each task is downloaded from, in order.
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "data/cache.h"
#include "data/data.h"
#include "tasks/task.h"

enum { F_CACHE_DIR = 256, F_JSON };

static const struct cli_flag flags[] = {
    {"cache-dir", F_CACHE_DIR, "DIR", "dataset cache to report on (default $XDG_CACHE_HOME/xsa-eval)"},
    {"json", F_JSON, NULL, "one JSON array instead of a table"},
};

static const struct cli_command cmd = {
    "tasks", "[--cache-dir DIR] [--json]",
    "Lists the tasks, their groups, split, size, source dataset, whether a verified copy is cached (and\n"
    "is the pinned content), and the sources each task is downloaded from, in the order they are tried.\n",
    flags, 2, 0, 0};

struct tasks_args {
    const char *cache_dir;
    int json;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct tasks_args *a = ctx;
    if (key == F_CACHE_DIR) a->cache_dir = v;
    else a->json = 1;
    return 0;
}

int cmd_tasks(int argc, char **argv) {
    struct tasks_args a = {0};
    int n_pos, rc = cli_parse(&cmd, argc, argv, on_flag, &a, NULL, 0, &n_pos);
    if (rc) return rc < 0 ? 0 : rc;
    const char *cache_dir = a.cache_dir;
    int json = a.json;
    int n = 0;
    const struct task_def *reg = task_registry(&n);
    xsa_error err = {0};
    char root[4096];
    if (cache_root_dir(cache_dir, root, sizeof root, &err)) {
        fprintf(stderr, "xsa-eval tasks: %s\n", err.msg);
        return err.code;
    }
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    if (!json) {
        printf("cache: %s\n", root);
        printf("%-15s %-10s %-11s %6s  %-36s %s\n", "task", "groups", "split", "docs", "source dataset", "cached");
    }
    for (int i = 0; i < n; i++) {
        const struct task_def *t = &reg[i];
        struct cache_entry e;
        int cached = 0;
        char why[600] = "";
        xsa_error_clear(&err);
        if (data_cache_status(t, cache_dir, &cached, &e, why, sizeof why, &err)) {
            cached = 0;
            snprintf(why, sizeof why, "%.599s", err.msg);
        }
        char ds[200];
        snprintf(ds, sizeof ds, "%s/%s", t->hf_dataset, t->hf_config ? t->hf_config : "default");
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "task", t->name);
            cJSON_AddStringToObject(o, "groups", t->groups);
            cJSON_AddStringToObject(o, "split", t->split);
            cJSON_AddNumberToObject(o, "docs", t->n_docs);
            cJSON_AddStringToObject(o, "dataset", t->hf_dataset);
            cJSON_AddStringToObject(o, "config", t->hf_config ? t->hf_config : "default");
            cJSON_AddStringToObject(o, "fewshot_split", t->fewshot_split);
            if (t->canonical_sha256) cJSON_AddStringToObject(o, "pinned_sha256", t->canonical_sha256);
            else cJSON_AddNullToObject(o, "pinned_sha256");
            struct data_sources_desc sd;
            data_task_sources(t, &sd);
            cJSON *src = cJSON_AddObjectToObject(o, "sources");
            cJSON_AddStringToObject(src, "viewer", sd.viewer);
            if (sd.hub[0]) cJSON_AddStringToObject(src, "hub", sd.hub);
            if (sd.original[0]) cJSON_AddStringToObject(src, "original", sd.original);
            cJSON_AddBoolToObject(o, "cached", cached);
            if (cached) {
                cJSON_AddNumberToObject(o, "rows", (double)e.rows);
                cJSON_AddStringToObject(o, "sha256", e.sha256);
                cJSON_AddStringToObject(o, "source", e.source);
                cJSON_AddStringToObject(o, "url", e.url);
                cJSON_AddStringToObject(o, "revision", e.revision);
                cJSON_AddStringToObject(o, "time", e.time);
                int pin = data_pinned(t, e.sha256);
                if (pin < 0) cJSON_AddNullToObject(o, "pinned");
                else cJSON_AddBoolToObject(o, "pinned", pin);
            } else {
                cJSON_AddStringToObject(o, "why", why);
            }
            cJSON_AddItemToArray(arr, o);
        } else {
            char c[4400] = "no";
            int pin = cached ? data_pinned(t, e.sha256) : -1;
            if (cached)
                snprintf(c, sizeof c, "%ld rows, sha256 %.12s, %.10s (%s), %s", e.rows, e.sha256, e.time, e.source,
                         pin > 0 ? "pinned" : pin == 0 ? "NOT the pinned rows" : "no pin");
            else if (strncmp(why, "not cached", 10)) {
                // The command names this cache, not the default one (quoted for the shell when not plain).
                const char *q = cache_dir && strpbrk(cache_dir, " \"$`\\") ? "'" : "";
                snprintf(c, sizeof c, "no: invalid copy (run xsa-eval download --force --tasks %s%s%s%s%s)", t->name,
                         cache_dir ? " --cache-dir " : "", q, cache_dir ? cache_dir : "", q);
            }
            printf("%-15s %-10s %-11s %6d  %-36s %s\n", t->name, t->groups, t->split, t->n_docs, ds, c);
        }
    }
    if (!json) {
        printf("\nsources, tried in this order (viewer: the dataset viewer; hub: the repository's file; original: "
               "the authors' files):\n");
        for (int i = 0; i < n; i++) {
            struct data_sources_desc sd;
            data_task_sources(&reg[i], &sd);
            printf("%-15s viewer %s\n", reg[i].name, sd.viewer);
            if (sd.hub[0]) printf("%-15s hub %s\n", "", sd.hub);
            printf("%-15s original %s\n", "", sd.original[0] ? sd.original : "none");
        }
    }
    if (json) {
        char *s = cJSON_Print(arr);
        if (s) printf("%s\n", s);
        cJSON_free(s);
        cJSON_Delete(arr);
    }
    return 0;
}
