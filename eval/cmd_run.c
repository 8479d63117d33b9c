// cmd_run.c: `xsa-eval run` (and bare `xsa-eval --model ... --tasks ...`): flags -> run_evaluate.
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/commands.h"
#include "eval/run.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: xsa-eval [run] --model PATH [--model PATH2] --tasks LIST [flags]\n"
            "  --tasks LIST          names and groups: all (nine tasks), paper (the XSA paper's eight), arc_easy,...\n"
            "  --device D            auto | cpu | cuda[:N] (default auto)\n"
            "  --dtype T             GPU weights: bfloat16 (default) | float32 (for parity runs); the CPU is float32\n"
            "  --xsa SPEC            all | none | last:N | i,j,..  (overrides the checkpoint's xsa_layers)\n"
            "  --tokenizer FILE      tokenizer.json, SentencePiece .model or llama2.c tokenizer.bin\n"
            "  --num-fewshot K       few-shot examples (lm-eval's sampler, seed 1234; default 0)\n"
            "  --limit N             first N documents of each task (0 < N < 1: that fraction of them, rounded up)\n"
            "  --output DIR          results folder (default ./results)\n"
            "  --log-samples         one JSONL per task with every request's tokens and scores\n"
            "  --batch-tokens N      tokens per backend call (default: sized for the device, 4096 on the CPU,\n"
            "                        65536 on a GPU or as many as fit in its memory)\n"
            "  --no-share            one row per request (no shared prefixes)\n"
            "  --add-bos | --no-add-bos   BOS handling (default: the tokenizer's own, as lm-eval >= 0.4.9.2)\n"
            "  --max-length N        context window (default: the model's)\n"
            "  --threads N           CPU threads (default: all cores)\n"
            "  --data-dir DIR        local data: <task>/<split>.jsonl, or the original authors' files (docs/data-dir.md)\n"
            "  --cache-dir DIR       dataset cache (default $XDG_CACHE_HOME/xsa-eval)\n"
            "  --offline             never touch the network\n"
            "  --datasets-server URL, --hf-endpoint URL, --originals-mirror URL, --source LIST, --ca-bundle FILE,\n"
            "  --allow-data-change   data sources and integrity, as for xsa-eval download\n"
            "  --no-resume           ignore the journal a killed run of the same command left (default: resume)\n"
            "  --cache-requests DIR  reuse requests scored by earlier runs of the same model (kept in DIR)\n"
            "  --quiet               no progress line\n");
}

enum {
    OPT_XSA = 1000, OPT_TOKENIZER, OPT_FEWSHOT, OPT_LIMIT, OPT_LOG_SAMPLES, OPT_BATCH_TOKENS, OPT_DATA_DIR,
    OPT_CACHE_DIR, OPT_OFFLINE, OPT_NO_SHARE, OPT_QUIET, OPT_ADD_BOS, OPT_NO_ADD_BOS, OPT_THREADS, OPT_MAX_LENGTH,
    OPT_DATASETS_SERVER, OPT_HF_ENDPOINT, OPT_CA_BUNDLE, OPT_ALLOW_DATA_CHANGE, OPT_DTYPE, OPT_ORIGINALS_MIRROR, OPT_SOURCE,
    OPT_NO_RESUME, OPT_CACHE_REQUESTS,
};

static int parse_int(const char *flag, const char *s, int lo, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > 1 << 30) {
        fprintf(stderr, "xsa-eval run: %s expects an integer >= %d, got '%s'\n", flag, lo, s);
        return 2;
    }
    *out = (int)v;
    return 0;
}

// --limit N (the first N documents) or, as lm-eval, a fraction F in (0, 1): the first
// ceil(F * documents) of each task; a number >= 1 with a fractional part is truncated (int(F)).
static int parse_limit(const char *s, struct run_options *o) {
    if (!strpbrk(s, ".eE")) {
        char *end;
        long v = strtol(s, &end, 10);
        if (!*s || *end || v < 1 || v > 1 << 30) {
            fprintf(stderr, "xsa-eval run: --limit expects an integer >= 1 or a fraction in (0, 1), got '%s'\n", s);
            return 2;
        }
        o->limit = (int)v;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !(v > 0) || v > 1 << 30) {
        fprintf(stderr, "xsa-eval run: --limit expects an integer >= 1 or a fraction in (0, 1), got '%s'\n", s);
        return 2;
    }
    if (v < 1) o->limit_fraction = v;
    else o->limit = (int)v;
    return 0;
}

int cmd_run(int argc, char **argv) {
    static const struct option longopts[] = {
        {"model", required_argument, 0, 'm'}, {"tasks", required_argument, 0, 't'},
        {"device", required_argument, 0, 'd'}, {"output", required_argument, 0, 'o'},
        {"xsa", required_argument, 0, OPT_XSA}, {"tokenizer", required_argument, 0, OPT_TOKENIZER},
        {"num-fewshot", required_argument, 0, OPT_FEWSHOT}, {"limit", required_argument, 0, OPT_LIMIT},
        {"log-samples", no_argument, 0, OPT_LOG_SAMPLES}, {"batch-tokens", required_argument, 0, OPT_BATCH_TOKENS},
        {"data-dir", required_argument, 0, OPT_DATA_DIR}, {"cache-dir", required_argument, 0, OPT_CACHE_DIR},
        {"offline", no_argument, 0, OPT_OFFLINE}, {"no-share", no_argument, 0, OPT_NO_SHARE},
        {"quiet", no_argument, 0, OPT_QUIET}, {"add-bos", no_argument, 0, OPT_ADD_BOS},
        {"no-add-bos", no_argument, 0, OPT_NO_ADD_BOS}, {"threads", required_argument, 0, OPT_THREADS},
        {"max-length", required_argument, 0, OPT_MAX_LENGTH},
        {"datasets-server", required_argument, 0, OPT_DATASETS_SERVER},
        {"hf-endpoint", required_argument, 0, OPT_HF_ENDPOINT}, {"ca-bundle", required_argument, 0, OPT_CA_BUNDLE},
        {"allow-data-change", no_argument, 0, OPT_ALLOW_DATA_CHANGE}, {"dtype", required_argument, 0, OPT_DTYPE},
        {"originals-mirror", required_argument, 0, OPT_ORIGINALS_MIRROR}, {"source", required_argument, 0, OPT_SOURCE},
        {"no-resume", no_argument, 0, OPT_NO_RESUME}, {"cache-requests", required_argument, 0, OPT_CACHE_REQUESTS},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct run_options o = {
        .device = "auto", .limit = -1, .output = "results", .batch_tokens = 0, .share = 1, .add_bos = -1,
        .resume = 1,
    };
    // The command line as typed, for the results' provenance.
    static char command[4096];
    size_t cl = 0;
    cl += (size_t)snprintf(command, sizeof command, "xsa-eval%s", argc > 0 && !strcmp(argv[0], "run") ? " run" : "");
    for (int i = 1; i < argc && cl < sizeof command; i++)
        cl += (size_t)snprintf(command + cl, sizeof command - cl, " %s", argv[i]);
    o.command = command;
    optind = 1;
    opterr = 0;
    int c, rc;
    while ((c = getopt_long(argc, argv, ":m:t:d:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (o.n_models == RUN_MAX_MODELS) {
                fprintf(stderr, "xsa-eval run: at most %d --model flags (one model, or two to compare)\n", RUN_MAX_MODELS);
                return 2;
            }
            o.models[o.n_models++] = optarg;
            break;
        case 't': o.tasks = optarg; break;
        case 'd': o.device = optarg; break;
        case 'o': o.output = optarg; break;
        case OPT_XSA: o.xsa = optarg; break;
        case OPT_TOKENIZER: o.tokenizer = optarg; break;
        case OPT_FEWSHOT: if ((rc = parse_int("--num-fewshot", optarg, 0, &o.num_fewshot))) return rc; break;
        case OPT_LIMIT: if ((rc = parse_limit(optarg, &o))) return rc; break;
        case OPT_LOG_SAMPLES: o.log_samples = 1; break;
        case OPT_BATCH_TOKENS: if ((rc = parse_int("--batch-tokens", optarg, 1, &o.batch_tokens))) return rc; break;
        case OPT_DATA_DIR: o.data.data_dir = optarg; break;
        case OPT_CACHE_DIR: o.data.cache_dir = optarg; break;
        case OPT_OFFLINE: o.data.offline = 1; break;
        case OPT_NO_SHARE: o.share = 0; break;
        case OPT_QUIET: o.quiet = o.data.quiet = 1; break;
        case OPT_ADD_BOS: o.add_bos = 1; break;
        case OPT_NO_ADD_BOS: o.add_bos = 0; break;
        case OPT_THREADS: if ((rc = parse_int("--threads", optarg, 0, &o.threads))) return rc; break;
        case OPT_MAX_LENGTH: if ((rc = parse_int("--max-length", optarg, 1, &o.max_length))) return rc; break;
        case OPT_DATASETS_SERVER: o.data.datasets_server = optarg; break;
        case OPT_HF_ENDPOINT: o.data.hf_endpoint = optarg; break;
        case OPT_CA_BUNDLE: o.data.ca_bundle = optarg; break;
        case OPT_ALLOW_DATA_CHANGE: o.data.allow_data_change = 1; break;
        case OPT_DTYPE: o.dtype = optarg; break;
        case OPT_ORIGINALS_MIRROR: o.data.originals_mirror = optarg; break;
        case OPT_SOURCE: o.data.sources = optarg; break;
        case OPT_NO_RESUME: o.resume = 0; break;
        case OPT_CACHE_REQUESTS:
            if (!*optarg) {
                fprintf(stderr, "xsa-eval run: --cache-requests '': empty path; name a folder\n");
                return 2;
            }
            o.cache_requests = optarg;
            break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "xsa-eval run: %s needs a value (see xsa-eval run --help)\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "xsa-eval run: unknown flag '%s' (see xsa-eval run --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "xsa-eval run: unexpected argument '%s' (see xsa-eval run --help)\n", argv[optind]);
        return 2;
    }
    if (o.n_models == 0 || !o.tasks) {
        fprintf(stderr, "xsa-eval run: --model and --tasks are required (e.g. xsa-eval run --model ckpt/ --tasks all)\n");
        return 2;
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
    xsa_error err = {0};
    rc = run_evaluate(&o, &err);
    if (rc) fprintf(stderr, "xsa-eval run: %s\n", err.msg);
    return rc;
}
