// pgolf_arch.c: a parameter-golf checkpoint's architecture settings (pgolf_arch.h): the
// sidecar xsa_eval.json beside it, or --arch FILE, in the family's hyperparameter names.
#include "model/pgolf_arch.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "model/model.h"

#define PG_ARCH_MAX_BYTES (1u << 20)

static const char *g_arch_file;  // --arch: one per process, set by the command line

void model_set_arch_file(const char *path) { g_arch_file = path; }

const char *pg_arch_file(void) { return g_arch_file; }

const char *const pg_arch_names[A_N] = {
    "NUM_LAYERS", "MODEL_DIM", "NUM_HEADS", "NUM_KV_HEADS", "VOCAB_SIZE", "XSA_LAST_N", "ROPE_DIMS", "SHARED_CYCLE_LEN",
    "NUM_RECURRENCE_PASSES", "USE_SWIGLU", "TIE_EMBEDDINGS", "TRAIN_SEQ_LEN", "EVAL_SEQ_LEN", "ROTARY_TRAIN_SEQ_LEN",
    "SKIP_AFTER_BLOCK", "BIGRAM_VOCAB_SIZE", "BIGRAM_DIM", "LN_SCALE", "VE_ENABLED", "VE_DIM", "TRIGRAM", "DTG_ENABLED",
    "GATED_ATTENTION", "VALUE_RESIDUAL", "DISABLE_LAYER0_ATTN", "PARALLEL_RESIDUAL", "PARALLEL_START_LAYER",
    "PARALLEL_START_LAYER_IS_PHYSICAL", "NUM_LOOPS", "LOOP_START", "LOOP_END",
    "PARALLEL_RESIDUAL_START",
    "SMEAR_GATE_BOS_FIX",
    "NUM_UNIQUE_BLOCKS", "EFFECTIVE_DEPTH", "DEPTH_LORA_RANK", "BIGRAM_BUCKETS",
    "MLP_MULT", "LOGIT_SOFTCAP", "ROPE_BASE", "QK_GAIN_INIT", "NEGATIVE_SLOPE", "SPARSE_ATTN_GATE_SCALE",
    "VE_LAYERS", "RECUR_LAYERS", "REPEAT_UNTIE_MLP_LAYERS", "CANON_AC_LAYERS", "REPEAT_UNTIE_MLP", "PARALLEL_FINAL_LANE"};

void pg_sidecar_path(const char *path, char *out, size_t n) {
    const char *slash = strrchr(path, '/');
    snprintf(out, n, "%.*s/xsa_eval.json", slash ? (int)(slash - path) : 1, slash ? path : ".");
}

// A layer list as the records read it, [int(x) for x in s.split(",") if x.strip()]. VE_LAYERS
// keeps its order (a layer named twice would share one scale there, so it is refused); the
// others are sets, sorted as the record's sorted(set(...)).
static int parse_layer_list(struct pg_arch *a, int k, const cJSON *e, struct pg_list *out, xsa_error *err) {
    if (!cJSON_IsString(e))
        return xsa_fail(err, XSA_EBADINPUT, "%s: %s must be a string of comma-separated layer indices, such as \"9,10\"", a->path, pg_arch_names[k]);
    const char *s = e->valuestring;
    snprintf(out->text, sizeof out->text, "%s", s);
    out->n = 0;
    while (*s) {
        const char *end = strchr(s, ',');
        if (!end) end = s + strlen(s);
        const char *p = s, *q = end;
        while (p < q && isspace((unsigned char)*p)) p++;
        while (q > p && isspace((unsigned char)q[-1])) q--;
        int v = 0;
        const char *r = p;
        while (r < q && isdigit((unsigned char)*r) && v < MODEL_MAX_LAYERS) v = v * 10 + (*r++ - '0');
        if (r < q || v >= MODEL_MAX_LAYERS)
            return xsa_fail(err, XSA_EBADINPUT, "%s: %s \"%.64s\" is not a comma-separated list of layer indices below %d, such as \"9,10\"", a->path,
                            pg_arch_names[k], e->valuestring, MODEL_MAX_LAYERS);
        int dup = 0;
        for (int i = 0; i < out->n && p < q; i++) dup |= out->v[i] == v;
        if (dup && k == A_VE_LAYERS) return xsa_fail(err, XSA_EBADINPUT, "%s: VE_LAYERS \"%.64s\" names layer %d twice", a->path, e->valuestring, v);
        if (p < q && !dup) out->v[out->n++] = v;
        s = *end ? end + 1 : end;
    }
    for (int i = 1; i < out->n && k != A_VE_LAYERS; i++)  // insertion sort: a few layers
        for (int j = i; j > 0 && out->v[j - 1] > out->v[j]; j--) {
            int t = out->v[j];
            out->v[j] = out->v[j - 1], out->v[j - 1] = t;
        }
    a->set[k] = 1;
    return 0;
}

// One of three words (a mode setting) into *out, its index.
static int parse_mode(struct pg_arch *a, int k, const cJSON *e, const char *const words[3], const char *record, int *out, xsa_error *err) {
    for (int i = 0; i < 3 && cJSON_IsString(e); i++)
        if (!strcmp(e->valuestring, words[i])) {
            *out = i, a->set[k] = 1;
            return 0;
        }
    return xsa_fail(err, XSA_EBADINPUT, "%s: %s must be \"%s\", \"%s\" or \"%s\", as the %s record reads it", a->path, pg_arch_names[k], words[0], words[1],
                    words[2], record);
}

// A string setting: a layer list, or a mode (REPEAT_UNTIE_MLP, PARALLEL_FINAL_LANE).
static int parse_string_setting(struct pg_arch *a, int k, const cJSON *e, xsa_error *err) {
    static const char *const untie[3] = {"none", "down", "full"}, *const lanes[3] = {"mean", "attn", "mlp"};
    if (k == A_PARALLEL_FINAL_LANE) return parse_mode(a, k, e, lanes, "2026-04-10", &a->lanes_final, err);
    if (k == A_REPEAT_UNTIE_MLP) return parse_mode(a, k, e, untie, "2026-03-31", &a->untie_mode, err);
    struct pg_list *l = k == A_VE_LAYERS ? &a->ve : k == A_RECUR_LAYERS ? &a->recur : k == A_REPEAT_UNTIE_MLP_LAYERS ? &a->untie : &a->canon;
    return parse_layer_list(a, k, e, l, err);
}

int pg_read_arch(struct pg_arch *a, const char *model_path, xsa_error *err) {
    memset(a, 0, sizeof *a);
    if (g_arch_file) snprintf(a->path, sizeof a->path, "%s", g_arch_file);
    else pg_sidecar_path(model_path, a->path, sizeof a->path);
    if (!g_arch_file && dir_exists(a->path))
        return xsa_fail(err, XSA_EBADINPUT, "%s: a folder where the checkpoint's architecture file should be; make it "
                        "the JSON file, or pass --arch FILE", a->path);
    if (!g_arch_file && access(a->path, F_OK) != 0) {  // (a FIFO there is refused by name below)
        a->path[0] = '\0';
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = file_read_regular(a->path, PG_ARCH_MAX_BYTES, &text, &len, err);
    if (rc) return rc;
    cJSON *r = json_read_whole(text, len, JSON_KEYS_UNIQUE, a->path, err), *e;
    free(text);
    if (!r) return XSA_EBADINPUT;
    if (!cJSON_IsObject(r)) {
        cJSON_Delete(r);
        return xsa_fail(err, XSA_EBADINPUT, "%s: not a JSON object of architecture settings (such as {\"NUM_LAYERS\": 9})", a->path);
    }
    const cJSON *fam = cJSON_GetObjectItemCaseSensitive(r, "FAMILY");
    // modded-nanogpt's settings are its own (model/mnanogpt.c reads them)
    a->mnanogpt = cJSON_IsString(fam) && !strcmp(fam->valuestring, "modded-nanogpt");
    if (fam && !a->mnanogpt && !(cJSON_IsString(fam) && !strcmp(fam->valuestring, "parameter-golf")))
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: FAMILY must be \"parameter-golf\" or \"modded-nanogpt\"", a->path);
    cJSON_ArrayForEach(e, r) {
        if (rc || a->mnanogpt) break;
        if (e == fam) continue;
        int k = 0;
        while (k < A_N && strcmp(e->string, pg_arch_names[k])) k++;
        if (k == A_N) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: \"%.64s\" is not a parameter-golf setting xsa-eval reads (NUM_LAYERS, MODEL_DIM, NUM_HEADS, NUM_KV_HEADS, MLP_MULT, VOCAB_SIZE, XSA_LAST_N, LOGIT_SOFTCAP, ROPE_BASE, ROPE_DIMS, ...; a modded-nanogpt file's says \"FAMILY\": \"modded-nanogpt\")",
                          a->path, e->string);
            break;
        }
        if (k >= A_VE_LAYERS) {
            if ((rc = parse_string_setting(a, k, e, err))) break;
            continue;
        }
        double v = cJSON_IsBool(e) ? (cJSON_IsTrue(e) ? 1 : 0) : e->valuedouble;
        if (!(cJSON_IsNumber(e) || cJSON_IsBool(e)) || !isfinite(v) || v < (k == A_PARALLEL_RESIDUAL_START ? -1 : 0) || v > 1e9 ||
            (k < A_MLP_MULT && v != floor(v))) {
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s must be a %s up to 1e9", a->path, e->string,
                          k == A_PARALLEL_RESIDUAL_START ? "whole number from -1 (none)" : k < A_MLP_MULT ? "non-negative whole number" : "non-negative number");
            break;
        }
        a->v[k] = v, a->set[k] = 1;
    }
    cJSON_Delete(r);
    return rc;
}

// A value the shapes determine: the sidecar must agree when it gives it.
int pg_agree(const struct pg_arch *a, int k, double shape_value, const char *what, const char *path, xsa_error *err) {
    if (!a->set[k] || a->v[k] == shape_value) return 0;
    return xsa_fail(err, XSA_EBADINPUT, "%s: %s = %.15g disagrees with %s, whose %s gives %.15g; fix the architecture file", a->path, pg_arch_names[k], a->v[k],
                    path, what, shape_value);
}

double pg_arch_or(const struct pg_arch *a, int k, double dflt) { return a->set[k] ? a->v[k] : dflt; }

int pg_list_has(const struct pg_list *l, int v) {
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v) return 1;
    return 0;
}

