// compare.h: paired comparison of two results files (A = baseline, e.g. SA; B = candidate,
// e.g. XSA) on the same documents: per task the delta of the chosen metric in points, a
// paired percentile-bootstrap interval over documents (seeded) and an exact McNemar p-value
// on per-document correctness; averages over the paper's eight tasks and over all tasks.
// A task's delta is *real* when its McNemar p, Holm-adjusted over the tasks compared (one
// family: docs/statistics.md), is < alpha and its (1 - alpha) interval excludes 0.
//
// Entry points:
//   compare_results()        numbers only (check and the tests use it);
//   compare_write_report()   numbers + Markdown report + two SVG charts beside it, and
//                            optionally the JSON (`run` with two models and `compare -o`
//                            / `--json` call it).
#ifndef XSA_EVAL_COMPARE_H
#define XSA_EVAL_COMPARE_H

#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"
#include "eval/results.h"

#define COMPARE_DEFAULT_ITERS 10000
#define COMPARE_DEFAULT_SEED 1234

struct compare_options {
    const char *metric;       // "auto" (NULL too): each task's preferred metric; or "acc", "acc_norm"
    int force;                // compare incomparable inputs anyway; the report is stamped FORCED
    int iters;                // bootstrap replicates (<= 0: COMPARE_DEFAULT_ITERS)
    uint64_t seed;            // bootstrap seed (0: COMPARE_DEFAULT_SEED)
    double alpha;             // significance level (<= 0: 0.05); intervals are (1 - alpha)
    const char *label_a;      // model labels in the report (NULL: the models' names)
    const char *label_b;
    const char *path_a;       // the results files, for the report's provenance (may be NULL)
    const char *path_b;
    const char *command;      // the command line that made the report (may be NULL)
};

// Points closer than this are one value where a rule compares them (check's --max-drop, an
// interval that touches 0): a delta is a ratio of whole counts whose last bits depend on how
// the sum ran (every task down 6 of 400 averages to -1.5000000000000002).
#define COMPARE_EPS_POINTS 1e-9

struct compare_row {          // one task
    char task[64];
    char metric[24];
    int n;                    // paired documents
    double a, a_se, b, b_se;  // metric values (fractions) and lm-eval stderr (NAN: N/A)
    double delta, lo, hi;     // B - A in points, with its (1 - alpha) bootstrap interval
    long n10, n01;            // docs A right & B wrong, A wrong & B right (McNemar's b and c)
    double p;                 // exact two-sided McNemar p-value
    double p_holm;            // p Holm-adjusted over the comparison's n_family tasks (p itself for one)
    int real;                 // interval excludes 0 and p_holm < alpha
    int has_ppl;              // LAMBADA: perplexities beside the accuracy
    double ppl_a, ppl_b;
};

struct compare_avg {          // mean over a group of tasks of each task's chosen metric
    int present;
    int n_tasks;
    double a, a_se, b, b_se;  // se: sqrt(sum se_i^2) / k (tasks are independent samples)
    double delta, lo, hi;     // points; interval: bootstrap resampling docs within each task (NAN:
                              // every task has one document)
    int real;                 // interval excludes 0
    int n_one_doc;            // tasks of one document: constants in the resampled average
};

struct comparison {
    int n_rows;
    struct compare_row *rows;    // (n_rows) tasks of A that B also has, in A's order
    int n_family;                // tasks Holm's correction covers (n_rows; 1: no correction)
    struct compare_avg paper;    // the XSA paper's eight tasks (those present)
    struct compare_avg all;      // every compared task
    int forced;                  // inputs were not comparable; compared because of --force
    char not_comparable[1024];   // why ("" when comparable)
    double alpha, level;
    int iters;
    uint64_t seed;
};

// The fewest bootstrap resamples for n tests' 1 - alpha / n intervals: 2 n / alpha, rounded up
// (a double: a tiny alpha would overflow an int). Exact where that is a whole number, such as
// 1875 for 9 tests at 0.0096, which alpha / n then 2 / that rounded up to 1876.
double compare_min_iters(int n, double alpha);

// Why `a` and `b` are not comparable ("" when they are): task sets, limits, num_fewshot,
// data digests. Returns 1 when not comparable.
int compare_inputs_differ(const struct results *a, const struct results *b, char *why, size_t cap);

// Fills `out`. Refuses (XSA_EBADINPUT, message names the difference and --force) when the
// inputs are not comparable or a task's doc ids differ between files, unless opt->force (then
// the documents both files have are paired, and out->not_comparable says what differed), or
// when the chosen metric is missing. Documents are resampled in doc_id order and tasks in
// registry order, so the intervals depend on the data and the seed, not on a file's layout.
// Free with comparison_free().
int compare_results(const struct results *a, const struct results *b, const struct compare_options *opt,
                    struct comparison *out, xsa_error *err);
void comparison_free(struct comparison *c);

#endif
