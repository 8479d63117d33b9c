// cmd_run.c: `xsa-eval run` (and bare `xsa-eval --model ... --tasks ...`): flags -> run_evaluate.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "eval/run.h"
#include "model/hub_cache.h"
#include "reports/compare_report.h"
#include "reports/report.h"

enum {
    F_XSA = 256, F_STEP, F_TOKENIZER, F_FEWSHOT, F_LIMIT, F_LOG_SAMPLES, F_BATCH_TOKENS, F_DATA_DIR, F_NO_SHARE, F_QUIET,
    F_ADD_BOS, F_NO_ADD_BOS, F_THREADS, F_MAX_LENGTH, F_DTYPE, F_NO_RESUME, F_CACHE_REQUESTS, F_CONFIG, F_ARCH,
};

static const struct cli_flag flags[] = {
    {"model", 'm', "PATH", "checkpoint, or a Hub repo id ORG/NAME[@REV] (fetched into the Hugging Face cache); twice: two models, then their comparison"},
    {"tasks", 't', "LIST", "names and groups: all (nine tasks), paper (the XSA paper's eight), arc_easy,..."},
    {"device", 'd', "D", "auto | cpu | cuda[:N] (default auto)"},
    {"dtype", F_DTYPE, "T", "GPU weights: bfloat16 (default) | float32 (for parity runs); the CPU is float32"},
    {"xsa", F_XSA, "SPEC", "all | none | last:N | i,j,..  (overrides the xsa_layers of every model given)"},
    {"tokenizer", F_TOKENIZER, "FILE", "tokenizer.json, vocab.json (merges.txt beside it), SentencePiece .model or llama2.c tokenizer.bin"},
    {"config", F_CONFIG, "FILE", "config.json of a bare state-dict .pt or of a folder of weights without one (default: the one beside it)"},
    {"step", F_STEP, "N", "training step of the checkpoint, recorded in the results (for report --trend)"},
    {"arch", F_ARCH | CLI_ONCE, "FILE", "architecture of parameter-golf artifacts, for every model (default: "
                                        "xsa_eval.json beside each)"},
    {"num-fewshot", F_FEWSHOT, "K", "few-shot examples (lm-eval's sampler, seed 1234; default 0)"},
    {"limit", F_LIMIT, "N", "first N documents of each task (0 < N < 1: that fraction of them, rounded up)"},
    {"output", 'o', "DIR", "results folder (default ./results)"},
    {"log-samples", F_LOG_SAMPLES, NULL, "one JSONL per task with every request's tokens and scores"},
    {"batch-tokens", F_BATCH_TOKENS, "N", "tokens per backend call (default: 4096 on the CPU, 65536 or what fits on a GPU)"},
    {"no-share", F_NO_SHARE, NULL, "one row per request (no shared prefixes)"},
    {"add-bos", F_ADD_BOS, NULL, "always add BOS (default: the tokenizer's own, as lm-eval >= 0.4.9.2)"},
    {"no-add-bos", F_NO_ADD_BOS, NULL, "never add BOS"},
    {"max-length", F_MAX_LENGTH, "N", "context window (default: the model's)"},
    {"threads", F_THREADS, "N", "CPU threads (default: all cores)"},
    {"data-dir", F_DATA_DIR, "DIR", "local data: <task>/<split>.jsonl, or the original authors' files (docs/data-dir.md)"},
    {"no-resume", F_NO_RESUME, NULL, "ignore the journal a killed run of the same command left (default: resume)"},
    {"cache-requests", F_CACHE_REQUESTS, "DIR", "reuse requests scored by earlier runs of the same model (kept in DIR)"},
    {"quiet", F_QUIET, NULL, "no progress line"},
};

static const struct cli_command cmd = {"run", "--model PATH [--model PATH2] --tasks LIST [flags]", NULL, flags,
                                       (int)(sizeof flags / sizeof flags[0]), 1, 0};

// --limit N (the first N documents) or, as lm-eval, a fraction F in (0, 1): the first
// ceil(F * documents) of each task. N may be written as a float (100.0, 1e3, as lm-eval's float
// flag takes it); 2.9 is refused: lm-eval would quietly score int(2.9) = 2 documents.
static int bad_limit(const char *s) {
    return cli_fail(&cmd, "--limit expects a whole number of documents from 1 to %d or a fraction in (0, 1), got '%s'",
                    1 << 30, s);
}

static int parse_limit(const char *s, struct run_options *o) {
    if (!strpbrk(s, ".eE")) {
        char *end;
        long v = strtol(s, &end, 10);
        if (!*s || *end || v < 1 || v > 1 << 30) return bad_limit(s);
        o->limit = (int)v;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !(v > 0) || v > 1 << 30) return bad_limit(s);
    if (v >= 1 && v != floor(v))
        return cli_fail(&cmd, "--limit %s: a number of documents must be whole (lm-eval would take int(%s) = %d); "
                        "a fraction of each task is below 1", s, s, (int)v);
    if (v < 1) o->limit_fraction = v;
    else o->limit = (int)v;
    return 0;
}

static int on_flag(void *ctx, int key, const char *v) {
    struct run_options *o = ctx;
    switch (key) {
    case 'm':
        if (o->n_models == RUN_MAX_MODELS)
            return cli_fail(&cmd, "at most %d --model flags (one model, or two to compare)", RUN_MAX_MODELS);
        o->models[o->n_models++] = v;
        break;
    case 't': o->tasks = v; break;
    case 'd': o->device = v; break;
    case 'o': o->output = v; break;
    case F_XSA: o->xsa = v; break;
    case F_TOKENIZER: o->tokenizer = v; break;
    case F_CONFIG: o->config = v; break;
    case F_ARCH: model_set_arch_file(v); break;
    case F_FEWSHOT: return cli_int(&cmd, "--num-fewshot", v, 0, 1 << 30, &o->num_fewshot);
    case F_STEP: o->has_step = 1; return cli_int(&cmd, "--step", v, 0, 2147483647, &o->step);
    case F_LIMIT: return parse_limit(v, o);
    case F_LOG_SAMPLES: o->log_samples = 1; break;
    case F_BATCH_TOKENS: return cli_int(&cmd, "--batch-tokens", v, 1, 1 << 30, &o->batch_tokens);
    case F_DATA_DIR:
        if (!*v) return cli_fail(&cmd, "--data-dir '': empty path; name the folder of local data (docs/data-dir.md)");
        o->data.data_dir = v;
        break;
    case F_NO_SHARE: o->share = 0; break;
    case F_QUIET: o->quiet = o->data.quiet = 1; break;
    case F_ADD_BOS: o->add_bos = 1; break;
    case F_NO_ADD_BOS: o->add_bos = 0; break;
    case F_THREADS: return cli_int(&cmd, "--threads", v, 0, 1 << 30, &o->threads);
    case F_MAX_LENGTH: return cli_int(&cmd, "--max-length", v, 1, 1 << 30, &o->max_length);
    case F_DTYPE: o->dtype = v; break;
    case F_NO_RESUME: o->resume = 0; break;
    case F_CACHE_REQUESTS:
        if (!*v) return cli_fail(&cmd, "--cache-requests '': empty path; name a folder");
        o->cache_requests = v;
        break;
    default: cli_data_flag(&o->data, key, v);
    }
    return 0;
}

// Each model's table and results path on stdout as soon as it is written.
static void print_model(void *ctx, const struct results *r, const char *path) {
    (void)ctx;
    report_run_table(r, stdout);
    printf("\nresults: %s\n", path);
    fflush(stdout);
}

// Two models: their comparison beside the model folders.
static int write_comparison(void *ctx, const struct results *a, const char *path_a, const struct results *b,
                            const char *path_b, xsa_error *err) {
    const struct run_options *o = ctx;
    char md[4096];
    snprintf(md, sizeof md, "%s/compare_%s_vs_%s.md", o->output, a->model.name, b->model.name);
    struct compare_options co = {.path_a = path_a, .path_b = path_b, .command = o->command};
    int rc = compare_write_report(a, b, &co, md, NULL, err);
    if (!rc) printf("comparison: %s\n", md);
    return rc;
}

int cmd_run(int argc, char **argv) {
    struct run_options o = {
        .device = "auto", .limit = -1, .output = "results", .batch_tokens = 0, .share = 1, .add_bos = -1,
        .resume = 1,
    };
    // The command line, quoted as a shell reads it back, for the results' provenance (argv[0]:
    // "run", or the program of a bare `xsa-eval --model ...`).
    static struct sbuf command;
    command.n = 0;
    if (argc > 0 && !strcmp(argv[0], "run")) report_command_line(argc, argv, &command);
    else report_command_line(argc - 1, argv + 1, &command);
    o.command = command.s;
    o.model_done = print_model;
    o.pair_done = write_comparison;
    o.done_ctx = &o;
    int n_pos, rc = cli_parse(&cmd, argc, argv, on_flag, &o, NULL, 0, &n_pos);
    if (rc) return rc < 0 ? 0 : rc;
    if (o.n_models == 0 || !o.tasks)
        return cli_fail(&cmd, "--model and --tasks are required (e.g. xsa-eval run --model ckpt/ --tasks all)");
    // A model named org/name[@revision] is read from the Hugging Face cache in place (downloaded into it first).
    static struct hub_model hub[RUN_MAX_MODELS];
    struct hub_fetch_options ho = {.offline = o.data.offline, .quiet = o.quiet, .endpoint = o.data.hf_endpoint,
                                   .ca_bundle = o.data.ca_bundle};
    const char *typed[RUN_MAX_MODELS];  // (a repo id's path becomes its snapshot's)
    for (int m = 0; m < o.n_models; m++) {
        typed[m] = o.models[m];
        if ((rc = cli_model_path(&cmd, &o.models[m], &ho, &hub[m], &o.hub[m]))) return rc;
    }
    // One checkpoint named twice (demo/sa and ./demo/sa/) would be scored twice and compared
    // with itself: every other setting of run applies to both models alike.
    if (o.n_models == 2) {
        char *a = realpath(o.models[0], NULL), *b = a ? realpath(o.models[1], NULL) : NULL;
        if (b && !strcmp(a, b))
            rc = cli_fail(&cmd, "--model %s and --model %s are the same checkpoint (%s); give two different checkpoints "
                          "to compare, or one --model", typed[0], typed[1], a);
        free(a);
        free(b);
        if (rc) return rc;
    }
    // Spelling mistakes in --device / --dtype are usage errors: report them before any data is
    // fetched (the backend, which checks them fully, opens only after the data is ready).
    if (strcmp(o.device, "auto") && strcmp(o.device, "cpu") && strncmp(o.device, "cuda", 4)) {
        fprintf(stderr, "xsa-eval run: --device %s: unknown device; use auto, cpu, cuda or cuda:N\n", o.device);
        return 2;
    }
    if (o.dtype && strcmp(o.dtype, "bfloat16") && strcmp(o.dtype, "float32")) {
        fprintf(stderr, "xsa-eval run: --dtype %s: unknown dtype; use bfloat16 or float32\n", o.dtype);
        return 2;
    }
    // A spec for the XSA model given with two models would make the SA baseline an XSA model too.
    if (o.n_models == 2 && o.xsa && !o.quiet)
        fprintf(stderr, "xsa-eval: note: --xsa %s applies to both models; to set one model's XSA layers, put \"xsa_layers\" "
                        "in its config.json (or score each with its own run and compare the two results files)\n", o.xsa);
    xsa_error err = {0};
    rc = run_evaluate(&o, &err);
    if (rc) fprintf(stderr, "xsa-eval run: %s\n", err.msg);
    return rc;
}
