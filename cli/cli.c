// cli.c: the command-line parser every subcommand uses (cli.h).
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/version.h"
#include "common/xalloc.h"
#include "eval/compare.h"
#include "eval/dist.h"

#define KEY(f) ((f)->key & ~CLI_ONCE)  // what getopt and the handlers see

enum {
    DATA_CACHE_DIR = CLI_KEY_DATA, DATA_OFFLINE, DATA_DATASETS_SERVER, DATA_HF_ENDPOINT, DATA_ORIGINALS_MIRROR,
    DATA_SOURCE, DATA_CA_BUNDLE, DATA_ALLOW_CHANGE, DATA_STRICT,
};

static const struct cli_flag data_flags[] = {
    {"cache-dir", DATA_CACHE_DIR, "DIR", "dataset cache (default $XDG_CACHE_HOME/xsa-eval or ~/.cache/xsa-eval)"},
    {"offline", DATA_OFFLINE, NULL, "never touch the network (only what is cached or local)"},
    {"datasets-server", DATA_DATASETS_SERVER, "URL", "dataset viewer API (default " DATA_DEFAULT_DATASETS_SERVER ")"},
    {"hf-endpoint", DATA_HF_ENDPOINT, "URL", "Hugging Face Hub (default $HF_ENDPOINT or " DATA_DEFAULT_HF_ENDPOINT ")"},
    {"originals-mirror", DATA_ORIGINALS_MIRROR, "URL", "fetch the authors' https://host/path files as URL/host/path"},
    {"source", DATA_SOURCE, "LIST", "sources to try, in order (default " DATA_DEFAULT_SOURCES ")"},
    {"ca-bundle", DATA_CA_BUNDLE, "FILE", "PEM certificates to trust (TLS verification is always on)"},
    {"allow-data-change", DATA_ALLOW_CHANGE, NULL, "accept row counts or file digests that differ from the registry's pins"},
    {"strict-data", DATA_STRICT, NULL, "refuse canonical rows whose digest differs from the registry's pin (default: warn)"},
};
#define N_DATA_FLAGS ((int)(sizeof data_flags / sizeof data_flags[0]))

enum { STATS_METRIC = CLI_KEY_STATS, STATS_ALPHA, STATS_ITERS, STATS_SEED };

static const struct cli_flag stats_flags[] = {
    {"metric", STATS_METRIC, "M", "auto (acc_norm where lm-eval defines it, else acc) | acc | acc_norm"},
    {"alpha", STATS_ALPHA, "A", "significance level; intervals are 1 - A (default 0.05); compare: p Holm-adjusted over its tasks; check: each of its m tests at A / m"},
    {"iters", STATS_ITERS, "N", "bootstrap resamples (default " CLI_STR(COMPARE_DEFAULT_ITERS) ")"},
    {"seed", STATS_SEED, "S", "bootstrap seed (default " CLI_STR(COMPARE_DEFAULT_SEED) ")"},
};
#define N_STATS_FLAGS ((int)(sizeof stats_flags / sizeof stats_flags[0]))

static int cli_u64(const struct cli_command *c, const char *flag, const char *s, unsigned long long lo,
                   unsigned long long hi, unsigned long long *out);

int cli_stats_flag(const struct cli_command *c, struct cli_stats *st, int key, const char *value) {
    switch (key) {
    case STATS_METRIC:
        if (strcmp(value, "auto") && strcmp(value, "acc") && strcmp(value, "acc_norm"))
            return cli_fail(c, "--metric %s: expected auto, acc or acc_norm", value);
        st->metric = value;
        return 0;
    case STATS_ALPHA: return cli_double(c, "--alpha", value, 0, 1, 1, &st->alpha);
    case STATS_ITERS:
    case STATS_SEED:
        if (c->stats_flags == CLI_STATS_ALPHA)
            return cli_fail(c, "--%s: %s's interval is a cluster-robust t interval, not a bootstrap: it draws no resamples "
                               "(docs/statistics.md); drop --%s", key == STATS_ITERS ? "iters" : "seed", c->name,
                            key == STATS_ITERS ? "iters" : "seed");
        return key == STATS_ITERS ? cli_int(c, "--iters", value, 1, 10000000, &st->iters)
                                  : cli_u64(c, "--seed", value, 1, 1ULL << 53, &st->seed);
    }
    return 1;
}

int cli_stats_check(const struct cli_command *c, const struct cli_stats *st) {
    if (c->stats_flags != CLI_STATS_ALL) return 0;  // (no resamples: ppl, probe)
    double need = compare_min_iters(1, st->alpha);
    if (st->iters < need)
        return cli_fail(c, "--iters %d: too few resamples for a 1 - %g interval; give at least %.15g (2 / alpha)%s",
                        st->iters, st->alpha, need, need > 10000000 ? ", above the most --iters takes: raise --alpha" : "");
    return 0;
}

int cli_data_flag(struct data_options *d, int key, const char *value) {
    switch (key) {
    case DATA_CACHE_DIR: d->cache_dir = value; break;
    case DATA_OFFLINE: d->offline = 1; break;
    case DATA_DATASETS_SERVER: d->datasets_server = value; break;
    case DATA_HF_ENDPOINT: d->hf_endpoint = value; break;
    case DATA_ORIGINALS_MIRROR: d->originals_mirror = value; break;
    case DATA_SOURCE: d->sources = value; break;
    case DATA_CA_BUNDLE: d->ca_bundle = value; break;
    case DATA_ALLOW_CHANGE: d->allow_data_change = 1; break;
    case DATA_STRICT: d->strict_data = 1; break;
    default: return 1;
    }
    return 0;
}

static void print_flags(const struct cli_flag *f, int n, FILE *out) {
    for (int i = 0; i < n; i++) {
        char left[64];
        if (KEY(&f[i]) < 256) snprintf(left, sizeof left, "-%c, --%s%s%s", KEY(&f[i]), f[i].name, f[i].arg ? " " : "",
                                     f[i].arg ? f[i].arg : "");
        else snprintf(left, sizeof left, "--%s%s%s", f[i].name, f[i].arg ? " " : "", f[i].arg ? f[i].arg : "");
        fprintf(out, "  %-24s %s\n", left, f[i].help);
    }
}

static void cli_usage(const struct cli_command *c, FILE *f) {
    fprintf(f, "usage: xsa-eval %s %s\n", c->name, c->usage);
    print_flags(c->flags, c->n_flags, f);
    if (c->data_flags) print_flags(data_flags, N_DATA_FLAGS, f);
    int alpha = c->stats_flags == CLI_STATS_ALPHA;  // (stats_flags[1] is --alpha)
    if (c->stats_flags) print_flags(stats_flags + alpha, alpha ? 1 : N_STATS_FLAGS, f);
    fprintf(f, "  %-24s %s\n", "-h, --help", "this text");
    if (c->about) fprintf(f, "%s", c->about);
}

int cli_fail(const struct cli_command *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "xsa-eval %s: ", c->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see xsa-eval %s --help)\n", c->name);
    va_end(ap);
    return 2;
}

int cli_parse(const struct cli_command *c, int argc, char **argv, cli_handler h, void *ctx, const char **pos,
              int max_pos, int *n_pos) {
    int s0 = c->stats_flags == CLI_STATS_ALPHA;  // (stats_flags[0] is --metric; --iters and --seed stay known, to
                                                 // be refused by name)
    int nd = c->data_flags ? N_DATA_FLAGS : 0, n = c->n_flags + nd + (c->stats_flags ? N_STATS_FLAGS - s0 : 0);
    struct option *lo = xsa_calloc((size_t)n + 2, sizeof *lo);
    const struct cli_flag **by = xsa_calloc((size_t)n + 1, sizeof *by);
    const char **given = xsa_calloc((size_t)n + 1, sizeof *given);  // (n) each valued flag's first value
    char **av = xsa_calloc((size_t)argc + 1, sizeof *av);  // getopt reorders what it parses
    char shorts[128] = ":h";
    *n_pos = 0;
    for (int i = 0; i < n; i++) {
        const struct cli_flag *f = i < c->n_flags        ? &c->flags[i]
                                   : i < c->n_flags + nd ? &data_flags[i - c->n_flags]
                                                         : &stats_flags[s0 + i - c->n_flags - nd];
        by[i] = f;
        lo[i] = (struct option){f->name, f->arg ? required_argument : no_argument, NULL, KEY(f)};
        size_t k = strlen(shorts);
        if (KEY(f) < 256 && k + 2 < sizeof shorts) {
            shorts[k] = (char)KEY(f);
            shorts[k + 1] = f->arg ? ':' : '\0';
            shorts[k + 2] = '\0';
        }
    }
    lo[n] = (struct option){"help", no_argument, NULL, 'h'};
    memcpy(av, argv, (size_t)argc * sizeof *av);
    av[argc] = NULL;
    optind = 1;
    opterr = 0;
    int rc = 0, key, li;
    while (!rc && (li = -1, key = getopt_long(argc, av, shorts, lo, &li)) != -1) {
        // A long flag is its whole name: getopt_long also takes a prefix (--lim for --limit),
        // which --help does not list and a later flag could make mean another one.
        const char *typed = li >= 0 ? av[optind - 1 - (optarg && optarg == av[optind - 1])] : NULL;
        size_t typed_len = typed ? strcspn(typed + 2, "=") : 0;
        if (typed && typed_len != strlen(lo[li].name)) {
            rc = cli_fail(c, "unknown flag '--%.*s'; did you mean --%s?", (int)typed_len, typed + 2, lo[li].name);
        } else if (key == 'h') {
            cli_usage(c, stdout);
            rc = -1;
        } else if (key == ':') {
            rc = cli_fail(c, "%s needs a value", av[optind - 1]);
        } else if (key == '?') {
            rc = cli_fail(c, "unknown flag '%s'", av[optind - 1]);
        } else {
            int i = 0;
            while (i < n && KEY(by[i]) != key) i++;
            if (i < n && (by[i]->key & CLI_ONCE) && given[i])
                rc = cli_fail(c, "--%s given twice (%s, then %s); give it once", by[i]->name, given[i], optarg);
            else if (i < n && by[i]->arg) given[i] = optarg;
            if (!rc) rc = i < n ? h(ctx, key, optarg) : cli_fail(c, "unknown flag '%s'", av[optind - 1]);
        }
    }
    for (int i = optind; !rc && i < argc; i++) {
        if (*n_pos >= max_pos) rc = cli_fail(c, "unexpected argument '%s'", av[i]);
        else pos[(*n_pos)++] = av[i];
    }
    free(lo);
    free(by);
    free(given);
    free(av);
    return rc;
}

int cli_int(const struct cli_command *c, const char *flag, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return cli_fail(c, "%s %s: expected a whole number from %ld to %ld", flag, s, lo, hi);
    *out = (int)v;
    return 0;
}

static int cli_u64(const struct cli_command *c, const char *flag, const char *s, unsigned long long lo,
                   unsigned long long hi, unsigned long long *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || s[0] == '-' || v < lo || v > hi)
        return cli_fail(c, "%s %s: expected a whole number from %llu to %llu", flag, s, lo, hi);
    *out = v;
    return 0;
}

int cli_double(const struct cli_command *c, const char *flag, const char *s, double lo, double hi, int open,
               double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (strspn(s, "0123456789.eE+-") != strlen(s)) end = (char *)s;  // decimal only: no 0x10, inf, nan
    int in = open ? v > lo && v < hi : v >= lo && v <= hi;
    if (!*s || *end || errno || !in)
        return cli_fail(c, "%s %s: expected a number in %c%g, %g%c", flag, s, open ? '(' : '[', lo, hi, open ? ')' : ']');
    *out = v;
    return 0;
}

int cli_model_path(const struct cli_command *c, const char **path, const struct hub_fetch_options *ho,
                   struct hub_model *hub, const struct hub_model **used) {
    if (used) *used = NULL;
    struct stat st;
    if (!hub_is_repo_id(*path) && lstat(*path, &st) != 0 && errno == ENOENT)
        return cli_fail(c, "--model %s: no such file or folder, nor a Hugging Face repo id (org/name[@revision])", *path);
    if (!hub_is_repo_id(*path)) return 0;
    xsa_error err = {0};
    int rc = hub_fetch(*path, ho, hub, &err);
    if (rc) {
        fprintf(stderr, "xsa-eval %s: %s\n", c->name, err.msg);
        return rc;
    }
    *path = hub->path;
    if (used) *used = hub;
    return 0;
}

int cli_print_version(void) {
    printf("xsa-eval %s\nMPI: %s\n", XSA_EVAL_VERSION, dist_build_desc());
    return 0;
}
