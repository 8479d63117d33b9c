// trend.c: series and training step of a results file (trend.h).
#include "eval/trend.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"

#define TREND_CONFIG_MAX (1 << 20)
#define TREND_STEP_MAX 2147483647LL  // as run --step takes

// "step" in <model path>/config.json: 1 found, 0 not (no such file, or no whole step in it).
static int config_step(const char *model_path, long long *step) {
    char path[4200], *text = NULL;
    size_t len;
    xsa_error e = {0};
    snprintf(path, sizeof path, "%s/config.json", model_path);
    if (!model_path[0] || !file_exists(path) || file_read_all(path, TREND_CONFIG_MAX, &text, &len, &e)) return 0;
    cJSON *j = json_read_whole(text, len, JSON_KEYS_LAST_WINS, path, &e);  // as transformers reads it
    const cJSON *s = j ? cJSON_GetObjectItemCaseSensitive(j, "step") : NULL;
    int ok = cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble <= (double)TREND_STEP_MAX &&
             s->valuedouble == (double)(long long)s->valuedouble;
    if (ok) *step = (long long)s->valuedouble;
    cJSON_Delete(j);
    free(text);
    return ok;
}

// The last path component that reads step_N / iter_N / ckpt_N: 1 found, 0 not.
static int path_step(const char *p, long long *step) {
    static const char *pre[] = {"step", "iter", "ckpt"};
    int found = 0;
    while (*p) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        for (int k = 0; k < 3; k++) {
            size_t l = strlen(pre[k]), i = l;
            if (n <= l || strncmp(p, pre[k], l)) continue;
            if (p[i] == '_' || p[i] == '-') i++;
            size_t d0 = i;
            long long v = 0;
            while (i < n && p[i] >= '0' && p[i] <= '9' && v <= TREND_STEP_MAX) v = v * 10 + (p[i++] - '0');
            if (i > d0 && v <= TREND_STEP_MAX && (i == n || p[i] == '.')) *step = v, found = 1;
        }
        p += n + (end ? 1 : 0);
    }
    return found;
}

const char *trend_checkpoint_step(const char *model_path, long long *step) {
    if (config_step(model_path, step)) return "config.json";
    // The folder as it is, not as typed: `--model .` inside step_200 is at step 200.
    char *real = realpath(model_path, NULL);
    int found = path_step(real ? real : model_path, step);
    free(real);
    return found ? "path" : NULL;
}

int trend_step(const struct results *r, const char *results_path, long long *step, xsa_error *err) {
    if (r->has_step) {
        *step = r->step;
        return 0;
    }
    // A file from before run recorded the step: the model path it names (never the folder it
    // names now, which may be another checkpoint or gone).
    if (path_step(r->model.path, step)) return 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: no training step for %s: score it with run --step N, or put \"step\" in its "
                    "config.json or name its folder step_N before run scores it", results_path, r->model.path);
}

const char *trend_series(const struct results *r) {
    const char *x = r->model.xsa_layers;
    return !x[0] || !strcmp(x, "none") || !strcmp(x, "[]") ? "SA" : "XSA";
}
