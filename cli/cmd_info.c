// cmd_info.c: `xsa-eval info --model PATH [--xsa SPEC] [--json]`: what a checkpoint is.
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/fileio.h"
#include "eval/trend.h"
#include "model/hub_cache.h"
#include "model/model.h"
#include "model/tokenizer.h"

enum { F_XSA = 256, F_JSON, F_CONFIG, F_ARCH, F_VERSION, F_OFFLINE, F_QUIET, F_HF_ENDPOINT, F_CA_BUNDLE, F_TOKENIZER };

static const struct cli_flag flags[] = {
    {"model", 'm', "PATH", "checkpoint directory (config.json + safetensors), torch.save file, llm.c or llama2.c .bin file, parameter-golf artifact, or a Hub repo id ORG/NAME[@REV] (required)"},
    {"xsa", F_XSA, "SPEC", "all | none | last:N | i,j,...  (overrides config.json's xsa_layers)"},
    {"json", F_JSON, NULL, "print one JSON object instead of text"},
    {"config", F_CONFIG, "FILE", "config.json of a bare state-dict .pt or of a folder of weights without one (default: the one beside it)"},
    {"arch", F_ARCH, "FILE", "architecture of a parameter-golf artifact (default: xsa_eval.json beside it)"},
    {"tokenizer", F_TOKENIZER, "FILE", "the tokenizer to report (default: the one beside the checkpoint)"},
    {"version", F_VERSION, NULL, "print the version and whether MPI is built in (no --model needed)"},
    {"offline", F_OFFLINE, NULL, "a repo id: only the Hugging Face cache, never the network (also HF_HUB_OFFLINE=1)"},
    {"quiet", F_QUIET, NULL, "no download progress or notes"},
    {"hf-endpoint", F_HF_ENDPOINT, "URL", "a repo id: the Hub or a mirror (default $HF_ENDPOINT or https://huggingface.co)"},
    {"ca-bundle", F_CA_BUNDLE, "FILE", "a repo id: CA certificates for TLS (default: the system's)"},
};

static const struct cli_command cmd = {"info",
                                       "--model PATH|ORG/NAME[@REV] [--xsa SPEC] [--arch FILE] [--config FILE] [--tokenizer FILE] [--json] [--offline] | --version",
                                       NULL, flags, (int)(sizeof flags / sizeof flags[0]), 0, 0};

struct info_args {
    const char *model, *xsa, *config, *tokenizer;
    int json, version;
    struct hub_fetch_options hub;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct info_args *a = ctx;
    if (key == F_ARCH) model_set_arch_file(v);
    else if (key == 'm') a->model = v;
    else if (key == F_XSA) a->xsa = v;
    else if (key == F_CONFIG) a->config = v;
    else if (key == F_TOKENIZER) a->tokenizer = v;
    else if (key == F_VERSION) a->version = 1;
    else if (key == F_OFFLINE) a->hub.offline = 1;
    else if (key == F_QUIET) a->hub.quiet = 1;
    else if (key == F_HF_ENDPOINT) a->hub.endpoint = v;
    else if (key == F_CA_BUNDLE) a->hub.ca_bundle = v;
    else a->json = 1;
    return 0;
}

static const char *rope_name(enum rope_style r) {
    return r == ROPE_HALF ? "half (rotate_half)" : r == ROPE_ADJACENT ? "adjacent pairs" : r == ROPE_HALF_NEG ? "half, parameter-golf sign" : "none";
}

// The MLP's activation, as config.json names it (gated: SwiGLU).
static const char *act_name(const struct model_config *c) {
    return c->mlp_relu2 ? (c->mlp_leaky_slope != 0 ? "leaky_relu2" : "relu2") : model_mlp_gated(c) ? "swiglu" : c->mlp_relu ? "relu" : c->gelu_exact ? "gelu" : "gelu_new";
}

static const char *rope_scaling_name(enum rope_scaling s) {
    static const char *names[] = {"default", "linear", "llama3", "dynamic", "yarn"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

// The step run would record without --step, and where it found it (results' step_source names).
struct info_step {
    const char *from;  // NULL: none
    long long step;
};

static void print_text(const struct model *m, const char *xsa, const char *tok, const char *tok_err,
                       const struct info_step *st) {
    const struct model_config *c = &m->cfg;
    printf("model          %s\n", m->path);
    printf("format         %s\n", m->format);
    printf("architecture   %s\n", model_arch_name(m));
    printf("layers         %d\n", c->n_layer);
    printf("d_model        %d\n", c->d_model);
    printf("heads          %d (kv heads %d)\n", c->n_head, c->n_kv_head);
    printf("head_dim       %d\n", c->head_dim);
    printf("d_ff           %d\n", c->d_ff);
    printf("activation     %s\n", act_name(c));
    printf("vocab          %d\n", c->vocab_size);
    printf("context        %d\n", c->max_seq_len);
    printf("parameters     %lld (%.2fM)\n", m->n_params, (double)m->n_params / 1e6);
    printf("dtype          %s\n", m->dtype);
    printf("rope           %s", rope_name(c->rope));
    if (c->rope != ROPE_NONE) printf(", theta %g", (double)c->rope_theta);
    if (c->rope_scaling == ROPE_SCALE_LINEAR) printf(", linear scaling x%g", (double)c->rope_factor);
    if (c->rope_scaling == ROPE_SCALE_LLAMA3)
        printf(", llama3 scaling x%g (low %g, high %g, original context %g)", (double)c->rope_factor,
               (double)c->rope_low_freq, (double)c->rope_high_freq, (double)c->rope_orig_ctx);
    if (c->rope_scaling == ROPE_SCALE_DYNAMIC)
        printf(", dynamic scaling x%g (positions below %d)", (double)c->rope_factor, c->max_seq_len);
    if (c->rope_scaling == ROPE_SCALE_YARN)
        printf(", yarn scaling x%g (original context %g, beta %g/%g, attention factor %g)", (double)c->rope_factor,
               (double)c->rope_orig_ctx, (double)c->rope_beta_fast, (double)c->rope_beta_slow, (double)c->rope_attn_factor);
    if (c->rope_dims) printf(", first %d dims", c->rope_dims);
    printf("\nnorm eps       %g\n", (double)c->norm_eps);
    char feat[512];
    model_describe_features(m, feat, sizeof feat);
    if (feat[0]) printf("features       %s\n", feat);
    printf("tied head      %s\n", c->tied_head ? "yes" : "no");
    printf("bos / eos      %d / %d\n", c->bos_id, c->eos_id);
    if (c->xsa_unknown)
        printf("xsa layers     unknown: gated XSA gates (attn.xsa_alpha) but no XSA_LAST_N; set it in xsa_eval.json or "
               "--arch, or give --xsa last:N (nothing scores it until then)\n");
    else printf("xsa layers     %s (%d of %d; source: %s)\n", xsa, model_xsa_count(c), c->n_layer, m->xsa_source);
    printf("weights sha256 %s\n", m->weights_sha256);
    if (st->from)
        printf("train step     %lld (%s)\n", st->step,
               !strcmp(st->from, "checkpoint")    ? "saved in the checkpoint"
               : !strcmp(st->from, "config.json") ? "from its config.json"
               : !strcmp(st->from, "revision")    ? "from the Hub revision's name"
               : !strcmp(st->from, "trainer_state") ? "from its trainer_state.json"
                                                  : "from its path's name");
    if (tok) printf("tokenizer      %s\n", tok);
    else printf("tokenizer      not found (%s)\n", tok_err);
}

static void print_json(const struct model *m, const char *xsa, const char *tok, const struct info_step *st) {
    const struct model_config *c = &m->cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON *layers = cJSON_CreateArray();
    for (int l = 0; l < c->n_layer; l++)
        if (c->xsa[l]) cJSON_AddItemToArray(layers, cJSON_CreateNumber(l));
    cJSON_AddStringToObject(o, "model", m->path);
    cJSON_AddStringToObject(o, "format", m->format);
    cJSON_AddStringToObject(o, "architecture", model_arch_name(m));
    cJSON_AddStringToObject(o, "rope_scaling", rope_scaling_name(c->rope_scaling));
    cJSON_AddNumberToObject(o, "rope_dims", c->rope != ROPE_NONE ? model_rope_dims(c) : 0);
    cJSON_AddNumberToObject(o, "sliding_window", c->sliding_window);
    cJSON_AddNumberToObject(o, "n_layer", c->n_layer);
    cJSON_AddNumberToObject(o, "d_model", c->d_model);
    cJSON_AddNumberToObject(o, "n_head", c->n_head);
    cJSON_AddNumberToObject(o, "n_kv_head", c->n_kv_head);
    cJSON_AddNumberToObject(o, "head_dim", c->head_dim);
    cJSON_AddNumberToObject(o, "d_ff", c->d_ff);
    cJSON_AddStringToObject(o, "activation", act_name(c));
    cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(o, "max_seq_len", c->max_seq_len);
    cJSON_AddNumberToObject(o, "n_params", (double)m->n_params);
    cJSON_AddStringToObject(o, "dtype", m->dtype);
    cJSON_AddStringToObject(o, "rope", c->rope == ROPE_HALF ? "half" : c->rope == ROPE_ADJACENT ? "adjacent" : c->rope == ROPE_HALF_NEG ? "half_neg" : "none");
    char num[32];  // floats printed at their own precision, not as widened doubles
    snprintf(num, sizeof num, "%.9g", (double)c->rope_theta);
    cJSON_AddRawToObject(o, "rope_theta", num);
    snprintf(num, sizeof num, "%.7g", (double)c->norm_eps);
    cJSON_AddRawToObject(o, "norm_eps", num);
    cJSON_AddBoolToObject(o, "tied_head", c->tied_head);
    char feat[512];
    model_describe_features(m, feat, sizeof feat);
    cJSON_AddStringToObject(o, "features", feat);
    cJSON_AddNumberToObject(o, "n_blocks", c->n_blocks ? c->n_blocks : c->n_layer);
    snprintf(num, sizeof num, "%.7g", (double)c->logit_softcap);
    cJSON_AddRawToObject(o, "logit_softcap", num);
    cJSON_AddNumberToObject(o, "bos_id", c->bos_id);
    cJSON_AddNumberToObject(o, "eos_id", c->eos_id);
    if (st->from) {
        cJSON_AddNumberToObject(o, "train_step", (double)st->step);
        cJSON_AddStringToObject(o, "train_step_source", st->from);
    }
    if (m->weights_prefix[0]) cJSON_AddStringToObject(o, "weights_prefix", m->weights_prefix);
    cJSON_AddStringToObject(o, "xsa", xsa);
    cJSON_AddItemToObject(o, "xsa_layers", layers);
    cJSON_AddStringToObject(o, "xsa_source", c->xsa_unknown ? "unknown" : m->xsa_source);
    cJSON_AddStringToObject(o, "weights_sha256", m->weights_sha256);
    if (tok) cJSON_AddStringToObject(o, "tokenizer", tok);
    else cJSON_AddNullToObject(o, "tokenizer");
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    printf("%s\n", s);
    free(s);
}

int cmd_info(int argc, char **argv) {
    struct info_args a = {0};
    int n_pos, rc = cli_parse(&cmd, argc, argv, on_flag, &a, NULL, 0, &n_pos);
    if (rc) return rc < 0 ? 0 : rc;
    if (a.version) return cli_print_version();
    const char *model_path = a.model, *xsa_spec = a.xsa;
    int json = a.json;
    if (!model_path) return cli_fail(&cmd, "--model is required");
    if (a.tokenizer && !file_exists(a.tokenizer))
        return cli_fail(&cmd, "--tokenizer %s: no such file (a tokenizer.json, SentencePiece .model or llama2.c .bin)",
                        a.tokenizer);
    struct hub_model hub;
    const struct hub_model *used = NULL;
    if ((rc = cli_model_path(&cmd, &model_path, &a.hub, &hub, &used))) return rc;
    xsa_error err = {0};
    struct model m;
    rc = model_load_config(&m, model_path, a.config, &err);
    if (rc) {
        fprintf(stderr, "xsa-eval info: %s\n", err.msg);
        return rc;
    }
    if (!a.hub.quiet) model_print_notes(&m);
    if (xsa_spec) {
        rc = model_apply_xsa_spec(&m.cfg, xsa_spec, &err);
        if (rc) {
            fprintf(stderr, "xsa-eval info: %s: %s\n", model_path, err.msg);
            model_free(&m);
            return rc;
        }
        snprintf(m.xsa_source, sizeof m.xsa_source, "--xsa");
    }
    char xsa[512], tok[4096];
    model_xsa_describe(&m.cfg, xsa, sizeof xsa);
    xsa_error terr = {0};
    int have_tok = 0;
    if (a.tokenizer) {  // reported as given (checked to be a file before the model was read)
        have_tok = 1;
        snprintf(tok, sizeof tok, "%s", a.tokenizer);
    } else {
        have_tok = tokenizer_find(model_path, tok, sizeof tok, &terr) == 0;
    }
    struct info_step st = {0};  // as run finds it (eval/run.c), so info shows what run records
    char step_note[TREND_NOTE_MAX] = "";
    st.from = trend_checkpoint_step(model_path, m.has_train_step ? &m.train_step : NULL, used ? used->revision : NULL, &st.step,
                                    step_note, sizeof step_note);
    if (step_note[0] && !a.hub.quiet) fprintf(stderr, "xsa-eval: note: %s\n", step_note);
    if (json) print_json(&m, xsa, have_tok ? tok : NULL, &st);
    else print_text(&m, xsa, have_tok ? tok : NULL, terr.msg, &st);
    model_free(&m);
    return 0;
}
