// cli.h: the one command-line parser of every subcommand. A command is a table of flags;
// cli_parse runs getopt_long over it (--name VALUE, --name=VALUE, a short -x VALUE where the
// table gives one; flags and positional arguments in any order), hands each flag to the
// command's handler, and prints --help from the same table. Bad usage is one line on stderr,
// "xsa-eval CMD: ... (see xsa-eval CMD --help)", and exit 2.
#ifndef XSA_CLI_CLI_H
#define XSA_CLI_CLI_H

#include <stdio.h>

#include "data/data.h"
#include "model/hub_cache.h"

#define CLI_KEY_DATA 1000  // keys from here up are the data-source flags (cli_data_flag)
#define CLI_KEY_STATS 1100 // and from here up to the statistics flags
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)  // a numeric default, as help text

struct cli_flag {
    const char *name;  // long name, without "--"
    int key;           // what the handler receives: a short option letter ('o') or an id >= 256
    const char *arg;   // the value's placeholder ("FILE"), or NULL for a switch
    const char *help;  // one line for --help
};

// Or'ed into a valued flag's key: given twice, it is refused rather than its second value
// silently replacing the first, as other flags' do (a script's defaults then overrides). For
// inputs whose second value a user may take for "both", such as check's --results (the
// handler receives the key without this bit).
#define CLI_ONCE (1 << 20)

struct cli_command {
    const char *name;               // "compare"
    const char *usage;              // what follows "usage: xsa-eval NAME "
    const char *about;              // lines printed after the flags (may be NULL)
    const struct cli_flag *flags;   // (n_flags)
    int n_flags;
    int data_flags;                 // 1: the data-source flags of run and download are accepted too
    int stats_flags;                // CLI_STATS_ALL: the statistics flags of compare and check are accepted
                                    // too; CLI_STATS_ALPHA: --alpha alone (ppl: no accuracy, and an interval
                                    // that is no bootstrap: --iters and --seed are refused by name)
};

enum { CLI_STATS_ALL = 1, CLI_STATS_ALPHA = 2 };

// What the statistics flags (--metric, --alpha, --iters, --seed) set; the caller fills the defaults.
struct cli_stats {
    const char *metric;             // auto | acc | acc_norm
    double alpha;                   // in (0, 1)
    int iters;                      // bootstrap resamples, 1 .. 10^7
    unsigned long long seed;        // 1 .. 2^53 (exact in JSON)
};

// Handles one flag; returns 0, or 2 after printing why the value is bad.
typedef int (*cli_handler)(void *ctx, int key, const char *value);

// Parses argv[1..] (argv itself is left as typed, for provenance). The positional arguments,
// in order, go to pos (room for max_pos; one more is "unexpected argument"), their count to
// *n_pos. Returns 0, 2 for bad usage (said on stderr), or -1 when --help was printed on stdout
// (the command then exits 0).
int cli_parse(const struct cli_command *c, int argc, char **argv, cli_handler h, void *ctx, const char **pos,
              int max_pos, int *n_pos);
// One line on stderr in the parser's form, then 2: `return cli_fail(c, "--x and --y contradict");`.
int cli_fail(const struct cli_command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// A --model argument as the commands take it: a path, or a Hugging Face repo id
// (org/name[@revision], model/hub_cache.h) resolved to its cache snapshot, downloaded into the
// cache when missing unless `ho` says offline. On success *path is what to load and *used (may
// be NULL) the resolved repo, or NULL for a path; otherwise the reason is on stderr and the exit
// code returned. hub: storage that outlives *path.
int cli_model_path(const struct cli_command *c, const char **path, const struct hub_fetch_options *ho,
                   struct hub_model *hub, const struct hub_model **used);

// Typed values, each checked in full (no trailing junk) and against its range; 2 after
// printing "CMD: --flag VALUE: expected ..." otherwise.
int cli_int(const struct cli_command *c, const char *flag, const char *s, long lo, long hi, int *out);
// A number in the open interval (lo, hi) when open, else the closed [lo, hi].
int cli_double(const struct cli_command *c, const char *flag, const char *s, double lo, double hi, int open,
               double *out);

// The data-source flags `run` and `download` share (--cache-dir, --offline, --datasets-server,
// --hf-endpoint, --originals-mirror, --source, --ca-bundle, --allow-data-change, --strict-data): their
// handler, for keys >= CLI_KEY_DATA.
int cli_data_flag(struct data_options *d, int key, const char *value);
// The statistics flags' handler, for keys >= CLI_KEY_STATS: 0, or 2 after printing why.
int cli_stats_flag(const struct cli_command *c, struct cli_stats *st, int key, const char *value);
// After parsing: enough resamples for the interval's ends (--iters at least 2/alpha, so that
// each tail holds a replicate beyond the end; only for CLI_STATS_ALL): 0, or 2
// after printing why.
int cli_stats_check(const struct cli_command *c, const struct cli_stats *st);
// `xsa-eval --version` and `info --version`: the version, and whether MPI is built in
// (data-parallel runs, docs/distributed.md). Returns 0.
int cli_print_version(void);

#endif
