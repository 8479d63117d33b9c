// main.c: dispatches `xsa-eval <subcommand> ...`; a bare `xsa-eval --model ...` means `run`.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/signals.h"
#include "common/version.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"run", cmd_run, "score one model, or two to compare (default when the first flag is --model)"},
    {"download", cmd_download, "fetch, verify and cache benchmark data"},
    {"tasks", cmd_tasks, "list tasks, groups, sizes, sources and what is cached"},
    {"info", cmd_info, "describe a checkpoint: architecture, parameters, dtype, XSA layers, tokenizer"},
    {"tokenize", cmd_tokenize, "stdin lines -> token ids"},
    {"logprobs", cmd_logprobs, "per-token log-probabilities of a token sequence or text"},
    {"ppl", cmd_ppl, "per-token loss by position, bits per byte, KL between two models"},
    {"probe", cmd_probe, "per-layer attention similarity bias: cos(y, v) before/after XSA, a_ii"},
    {"compare", cmd_compare, "compare two results files (SA vs XSA): deltas, intervals, p-values"},
    {"report", cmd_report, "markdown report of any number of results files"},
    {"check", cmd_check, "CI gate: fail when results regress against a baseline"},
};

static void usage(FILE *f) {
    fprintf(f, "xsa-eval %s: is my XSA checkpoint better than my SA checkpoint downstream?\n\n", XSA_EVAL_VERSION);
    fprintf(f, "usage: xsa-eval <command> [flags]   (xsa-eval <command> --help for its flags; --version)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
}

// A command's output that did not reach stdout (a full disk, a closed pipe, /dev/full) is an
// error: a CI step must not read a truncated report as the whole one.
static int finish(const char *name, int rc) {
    errno = 0;
    int flushed = fflush(stdout) == 0, why = errno;
    // (a command that failed has said why, its own failure to write included: one error line)
    if ((flushed && !ferror(stdout)) || rc >= 2) return rc;
    // (errno says why only when this flush failed; an earlier failed write left just the flag)
    // (run's files are written before its table and paths reach stdout: only the printout is lost)
    fprintf(stderr, "xsa-eval %s: writing standard output failed%s%s%s; what it printed is incomplete%s\n", name,
            !flushed && why ? " (" : "", !flushed && why ? strerror(why) : "", !flushed && why ? ")" : "",
            !rc && !strcmp(name, "run") ? " (the results files were written: see the --output folder)" : "");
    return rc ? rc : 3;
}

// SIGINT or SIGTERM outside run's scoring (which finishes its batch and keeps its journal): exit
// 130 for either, as documented, not 143 for SIGTERM. Outputs are renamed into place whole, so
// nothing half-written is left under its name.
static void on_interrupt(int sig) {
    static const char i[] = "xsa-eval: interrupted (SIGINT)\n", t[] = "xsa-eval: interrupted (SIGTERM)\n";
    ssize_t w = sig == SIGINT ? write(STDERR_FILENO, i, sizeof i - 1) : write(STDERR_FILENO, t, sizeof t - 1);
    (void)w;
    _exit(130);
}

int main(int argc, char **argv) {
    signals_catch(on_interrupt, NULL);
    // A file past `ulimit -f` fails its write (EFBIG), said and cleaned up, instead of killing us.
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return finish("--help", 0);
    }
    if (!strcmp(argv[1], "--version")) {
        return finish("--version", cli_print_version());
    }
    if (argv[1][0] == '-') return finish("run", cmd_run(argc, argv));  // bare `xsa-eval --model ... --tasks ...`
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return finish(argv[1], commands[i].fn(argc - 1, argv + 1));
    fprintf(stderr, "xsa-eval: unknown command '%s' (run 'xsa-eval --help' for the list)\n", argv[1]);
    return 2;
}
