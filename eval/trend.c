// trend.c: series and training step of a results file (trend.h).
#include "eval/trend.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json_read.h"

#define TREND_CONFIG_MAX (1 << 20)
#define TREND_STEP_MAX 2147483647LL  // as run --step takes

// "step" in <model path>/config.json (the last one, as Python's json reads a repeated key): 1
// found, 0 not. A "step" that is no whole number from 0 to TREND_STEP_MAX is named in `note`.
static int config_step(const char *model_path, long long *step, char *note, size_t note_n) {
    char path[4200], *text = NULL;
    size_t len;
    xsa_error e = {0};
    snprintf(path, sizeof path, "%s/config.json", model_path);
    if (!model_path[0] || !file_exists(path) || file_read_all(path, TREND_CONFIG_MAX, &text, &len, &e)) return 0;
    cJSON *j = json_read_whole(text, len, JSON_KEYS_LAST_WINS, path, &e);
    const cJSON *s = json_last_item(j, "step");
    int ok = cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble <= (double)TREND_STEP_MAX &&
             s->valuedouble == (double)(long long)s->valuedouble;
    if (ok) *step = (long long)s->valuedouble;
    if (s && !ok) {
        char *v = cJSON_PrintUnformatted(s);
        snprintf(note, note_n, "%s: \"step\": %.40s is not a whole number from 0 to %lld; no step recorded (give "
                 "--step N)", path, v ? v : "?", TREND_STEP_MAX);
        free(v);
    }
    cJSON_Delete(j);
    free(text);
    return ok;
}

// The Hugging Face Trainer's trainer_state.json holds its log_history, a few hundred bytes a
// logged step: room for millions of them.
#define TREND_TRAINER_STATE_MAX (256L << 20)

// The Hugging Face Trainer's trainer_state.json beside the model: in model_path, or in a model file's folder.
static void trainer_state_path(const char *model_path, char *path, size_t n) {
    struct stat st;
    const char *slash = strrchr(model_path, '/');
    if (!stat(model_path, &st) && S_ISDIR(st.st_mode)) snprintf(path, n, "%s/trainer_state.json", model_path);
    else if (slash) snprintf(path, n, "%.*s/trainer_state.json", (int)(slash - model_path), model_path);
    else snprintf(path, n, "trainer_state.json");
}

// "global_step" of trainer_state.json at `path`: 1 found, 0 not. A file that is no JSON object,
// or a global_step that is no whole number from 0 to TREND_STEP_MAX, is named in `note`.
static int trainer_state_step(const char *path, long long *step, char *note, size_t note_n) {
    char *text = NULL;
    size_t len;
    xsa_error e = {0};
    if (!file_exists(path)) return 0;
    cJSON *j = file_read_all(path, TREND_TRAINER_STATE_MAX, &text, &len, &e) ? NULL
               : json_read_whole(text, len, JSON_KEYS_LAST_WINS, path, &e);
    const cJSON *s = cJSON_IsObject(j) ? json_last_item(j, "global_step") : NULL;
    int ok = cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble <= (double)TREND_STEP_MAX &&
             s->valuedouble == (double)(long long)s->valuedouble;
    if (ok) *step = (long long)s->valuedouble;
    if (!cJSON_IsObject(j)) {
        snprintf(note, note_n, "%s: not read (%.300s); no step taken from it", path,
                 e.msg[0] ? e.msg : "not a JSON object");
    } else if (!ok) {
        char *v = s ? cJSON_PrintUnformatted(s) : NULL;
        snprintf(note, note_n, "%s: \"global_step\": %.40s is not a whole number from 0 to %lld; no step taken from it",
                 path, v ? v : "(none)", TREND_STEP_MAX);
        free(v);
    }
    cJSON_Delete(j);
    free(text);
    return ok;
}

// 1 when the digits ended at p[i] end a step: the name ends, an extension follows, or OLMo's
// -tokensNB / -unsharded do.
static int step_ends(const char *p, size_t n, size_t i) {
    return i == n || p[i] == '.' || (n - i >= 7 && !strncmp(p + i, "-tokens", 7)) || (n - i >= 10 && !strncmp(p + i, "-unsharded", 10));
}

// The digits after a step keyword in the n bytes at p. At the start of the name: step, iter or
// ckpt ('_', '-' or nothing before the digits), or checkpoint-N (the Hugging Face Trainer's; not
// accelerate's checkpoint_N, a count of saves). Later in the name only step, after a byte that is
// no letter or digit (state_step010000.pt, global_step=5.ckpt, epoch=3-step=1000.ckpt,
// stage1-step1000-tokens5B), '_', '-', '=' or nothing before the digits. The digits end as
// step_ends says, so that dates and settings (ckpt_2024-05-01, ckpt-3_lr-0.1) are no steps.
// 1 and *step set for the first keyword that reads so.
static int keyword_step(const char *p, size_t n, long long *step) {
    static const char *key[] = {"checkpoint", "step", "iter", "ckpt"};
    for (size_t at = 0; at < n; at++) {
        if (at && isalnum((unsigned char)p[at - 1])) continue;
        for (size_t k = 0; k < sizeof key / sizeof *key; k++) {
            size_t l = strlen(key[k]), i = at + l;
            int checkpoint = k == 0;
            if (i >= n || strncmp(p + at, key[k], l) || (at && strcmp(key[k], "step"))) continue;
            if (checkpoint ? p[i] != '-' : !(p[i] == '_' || p[i] == '-' || (at && p[i] == '=') || isdigit((unsigned char)p[i])))
                continue;
            if (!isdigit((unsigned char)p[i])) i++;
            size_t d0 = i;
            long long v = 0;
            while (i < n && p[i] >= '0' && p[i] <= '9' && v <= TREND_STEP_MAX) v = v * 10 + (p[i++] - '0');
            if (i > d0 && v <= TREND_STEP_MAX && step_ends(p, n, i)) return *step = v, 1;
        }
    }
    return 0;
}

// llm.c's model_%08d.bin (train_gpt2.cu writes one every --checkpoint_every steps).
static int llmc_step(const char *p, size_t n, long long *step) {
    if (n != 18 || strncmp(p, "model_", 6) || strncmp(p + 14, ".bin", 4)) return 0;
    long long v = 0;
    for (size_t i = 6; i < 14; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (p[i] - '0');
    }
    return *step = v, 1;
}

static int name_step(const char *p, size_t n, long long *step) { return keyword_step(p, n, step) || llmc_step(p, n, step); }

int trend_name_step(const char *name, long long *step) { return name_step(name, strlen(name), step); }

// The checkpoint's own name, and for a file its folder's: a folder further up (a run's working
// directory named iter3, say) says nothing of this checkpoint.
static int path_step(const char *p, long long *step) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && p[b - 1] != '/') b--;
    if (name_step(p + b, n - b, step)) return 1;
    if (!memchr(p + b, '.', n - b) || b < 2) return 0;  // a folder's name: nothing more to read
    size_t e = b - 1, a = e;
    while (a > 0 && p[a - 1] != '/') a--;
    return name_step(p + a, e - a, step);
}

const char *trend_checkpoint_step(const char *model_path, const long long *saved, const char *revision, long long *step, char *note,
                                  size_t note_n) {
    note[0] = '\0';
    if (config_step(model_path, step, note, note_n)) return "config.json";
    if (saved) return *step = *saved, "checkpoint";
    // The folder as it is, not as typed: `--model .` inside step_200 is at step 200.
    char *real = realpath(model_path, NULL);
    long long named;
    int found = path_step(real ? real : model_path, &named);
    free(real);
    char ts_path[4200], ts_note[4600] = "";
    const char *from = NULL;
    trainer_state_path(model_path, ts_path, sizeof ts_path);
    if (model_path[0] && trainer_state_step(ts_path, step, ts_note, sizeof ts_note)) {
        from = "trainer_state";
        // The Trainer counted it when it saved these weights; a folder may be renamed or copied.
        if (found && named != *step)
            snprintf(ts_note, sizeof ts_note, "%s: global_step %lld, but the checkpoint's name reads step %lld; "
                     "recording %lld (the Trainer's count, saved with the weights; --step N records another)",
                     ts_path, *step, named, *step);
    } else if (found) {
        from = "path", *step = named;
    } else if (revision && trend_name_step(revision, step)) {  // Pythia's step143000, OLMo's stage1-step1000-tokens5B
        from = "revision";
    }
    size_t used = strlen(note);
    if (ts_note[0]) snprintf(note + used, note_n - used, "%s%s", used ? "; " : "", ts_note);
    return from;
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
                    "config.json or name its folder step_N before run scores it, or give report --trend --steps LIST", results_path, r->model.path);
}

const char *trend_series(const struct results *r) {
    const char *x = r->model.xsa_layers;
    return !x[0] || !strcmp(x, "none") || !strcmp(x, "[]") ? "SA" : "XSA";
}

void trend_default_series(const struct results *const *rs, int n, char (*names)[TREND_SERIES_MAX]) {
    const char *first = NULL;  // the first XSA file's layers
    int mixed = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(trend_series(rs[i]), "XSA")) {
            if (!first) first = rs[i]->model.xsa_layers;
            else mixed |= strcmp(first, rs[i]->model.xsa_layers) != 0;
        }
    for (int i = 0; i < n; i++) {
        const char *s = trend_series(rs[i]), *x = rs[i]->model.xsa_layers;
        if (!mixed || strcmp(s, "XSA")) snprintf(names[i], TREND_SERIES_MAX, "%s", s);
        else if (!strcmp(x, "all")) snprintf(names[i], TREND_SERIES_MAX, "XSA (all layers)");
        else snprintf(names[i], TREND_SERIES_MAX, "XSA (layers %s)", x);
    }
}
