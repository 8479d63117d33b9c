// cmd_tasks.c: `xsa-eval tasks [--cache-dir DIR] [--json]`: every task with its groups,
// split, size, source dataset and what the cache holds (verified: digest and row count).
#include <stdio.h>
#include <string.h>

#include "data/cache.h"
#include "data/data.h"
#include "eval/commands.h"
#include "tasks/task.h"

int cmd_tasks(int argc, char **argv) {
    const char *cache_dir = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: xsa-eval tasks [--cache-dir DIR] [--json]\n"
                   "  lists the tasks, their groups, split, size, source dataset, and whether a verified copy is cached\n");
            return 0;
        } else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--cache-dir") && i + 1 < argc) cache_dir = argv[++i];
        else if (!strncmp(argv[i], "--cache-dir=", 12)) cache_dir = argv[i] + 12;
        else {
            fprintf(stderr, "xsa-eval tasks: unknown flag '%s' (see xsa-eval tasks --help)\n", argv[i]);
            return 2;
        }
    }
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
            cJSON_AddBoolToObject(o, "cached", cached);
            if (cached) {
                cJSON_AddNumberToObject(o, "rows", (double)e.rows);
                cJSON_AddStringToObject(o, "sha256", e.sha256);
                cJSON_AddStringToObject(o, "source", e.source);
                cJSON_AddStringToObject(o, "url", e.url);
                cJSON_AddStringToObject(o, "revision", e.revision);
                cJSON_AddStringToObject(o, "time", e.time);
            } else {
                cJSON_AddStringToObject(o, "why", why);
            }
            cJSON_AddItemToArray(arr, o);
        } else {
            char c[160] = "no";
            if (cached) snprintf(c, sizeof c, "%ld rows, sha256 %.12s, %.10s (%s)", e.rows, e.sha256, e.time, e.source);
            else if (strncmp(why, "not cached", 10)) snprintf(c, sizeof c, "no: invalid copy (run xsa-eval download --force --tasks %s)", t->name);
            printf("%-15s %-10s %-11s %6d  %-36s %s\n", t->name, t->groups, t->split, t->n_docs, ds, c);
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
