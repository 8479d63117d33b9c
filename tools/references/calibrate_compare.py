#!/usr/bin/env python3
"""Calibration of `compare` / `check` by simulation: synthetic pairs of results files (the real
layout, tools/fixtures/make_compare_fixtures.py's build_run) scored by the real ./xsa-eval
binary (`compare --json -`: per-task delta, 1 - alpha interval, McNemar p raw and
Holm-adjusted, compare's *real*; and `check --verdict -`: the gate), replicated, and the rates
compared with the nominal alpha.

Per task and document, (A, B) correctness is drawn i.i.d. from a 2x2 table with
P(A=1, B=0) = q and P(A=0, B=1) = q + delta (A's accuracy is the task's row of SA_ACC).
Under the null (delta = 0 everywhere) the two models are exchangeable and every rejection is
a false alarm; with delta != 0 the intervals' coverage of the true delta is counted, and the
power: how often a task whose delta is not 0 reads *real* (in its true direction).

compare's *real* is counted three ways from the same replicates: uncorrected (each task's
interval excludes 0 and p < alpha: compare before Holm), Holm (compare now: the interval and
the Holm-adjusted p < alpha) and, with --bonferroni (a second compare call at alpha / tasks),
Bonferroni for both the interval and p. "Some task real" is the family-wise rate: under the
null, the share of replicates where any task reads real; with deltas, where any task whose
true delta is 0 does.

    make xsa-eval && python3 -m tools.references.calibrate_compare [--reps N] [--only NAME]
                     [--no-check] [--bonferroni]

The files depend on --seed only (not on which calls run), so --no-check rates come from the
same replicates as a full run's.

Prints one table per setting. Writes nothing into the repository (files go to a temporary
folder). Slow-ish: one `check` call per replicate; `--iters` lowers the bootstrap resamples
(the default here, 2000, moves a 95% percentile by well under its own Monte Carlo error).
Needs numpy.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

from tools.fixtures.make_compare_fixtures import SA_ACC, TASKS, build_run, emit
from tools.pylib.paths import ROOT

BIN = os.path.join(ROOT, "xsa-eval")
ALPHA = 0.05
OPTS = {"bin": BIN}

# name: (docs per task ("full": each task's whole split, no --limit), q (each discordant
# direction), per-task true delta in points (None: 0), replicates)
SETTINGS = {
    "null_n400": (400, 0.08, None, 400),
    "null_n50": (50, 0.08, None, 400),
    "null_n10": (10, 0.08, None, 400),
    "null_full": ("full", 0.08, None, 200),
    "alt_n400": (400, 0.08, [3, -2, 0, 4, -3, 1, 2, 0, -1], 300),
    "alt_n50": (50, 0.08, [3, -2, 0, 4, -3, 1, 2, 0, -1], 300),
    "alt_full": ("full", 0.08, [3, -2, 0, 4, -3, 1, 2, 0, -1], 100),
}


def draw_pair(rng, n, p, q, delta):
    """(a, b) 0/1 arrays: P(1,0) = q, P(0,1) = q + delta, P(1,1) = p - q, P(0,0) = rest."""
    probs = np.array([p - q, q, q + delta, 1 - p - q - delta])  # 11, 10, 01, 00
    assert (probs >= 0).all(), probs
    cell = rng.choice(4, size=n, p=probs)
    a = ((cell == 0) | (cell == 1)).astype(float)
    b = ((cell == 0) | (cell == 2)).astype(float)
    return a, b


def make_files(rng, n_all, q, deltas, d):
    pa, pb = {}, {}
    for i, (tn, metrics, pref, _, rows, _) in enumerate(TASKS):
        n = rows if n_all == "full" else n_all
        pa[tn], pb[tn] = {"doc_id": list(range(n))}, {"doc_id": list(range(n))}
        for m in metrics:
            if m == "perplexity":
                ll = -np.round(rng.gamma(2.0, 1.85, n), 6) - 1e-3
                pa[tn][m], pb[tn][m] = ll, ll
                continue
            dl = (deltas[i] / 100.0 if deltas else 0.0) if m == pref else 0.0
            pa[tn][m], pb[tn][m] = draw_pair(rng, n, SA_ACC[tn][m], q, dl)
    fa, fb = os.path.join(d, "a.json"), os.path.join(d, "b.json")
    for path, pd, name in ((fa, pa, "sa"), (fb, pb, "xsa")):
        with open(path, "w") as f:
            limit = max(t[4] for t in TASKS) if n_all == "full" else n_all  # (full: a --limit above every split)
            f.write(emit(build_run(name, "none" if name == "sa" else "all", pd, name, limit=limit)) + "\n")
    return fa, fb


def run_check(fa, fb, iters, max_drop):
    r = subprocess.run(["nice", "-n", "10", OPTS["bin"], "check", "--baseline", fa, "--results", fb, "--verdict", "-",
                        "--iters", str(iters), "--max-drop", str(max_drop), "--alpha", str(ALPHA)],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("check failed (%d): %s" % (r.returncode, r.stderr.strip()))
    v = json.loads(r.stdout)
    assert (r.returncode == 1) == (not v["pass"]), "exit code and verdict disagree"
    return v


def run_compare(fa, fb, iters, alpha):
    r = subprocess.run(["nice", "-n", "10", OPTS["bin"], "compare", fa, fb, "--json", "-", "--iters", str(iters),
                        "--alpha", repr(alpha)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("compare failed (%d): %s" % (r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def excl0(ci):
    return ci[0] > 1e-9 or ci[1] < -1e-9


def gate(v, max_drop):
    """check's rule (docs/ci-workflow.md), recomputed from the verdict for another --max-drop."""
    eps, a = 1e-9, v.get("test_alpha", ALPHA)  # (files from before the Bonferroni gate have no test_alpha)
    t = any(x["delta"] < -max_drop - eps and x["mcnemar_p"] < a and x["ci"][1] < -eps for x in v["tasks"])
    g = v["average"]
    return t or (g["delta"] < -max_drop - eps and g["ci"][1] < -eps)


def ci_rate(k, n):
    """k/n with a Wilson 95% interval (the Monte Carlo error of the rate)."""
    p, z = k / n, 1.959963984540054
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return "%.3f [%.3f, %.3f]" % (p, max(0, c - h), min(1, c + h))


def simulate(name, reps, iters, seed, do_check=True, bonferroni=False):
    n, q, deltas, default_reps = SETTINGS[name]
    reps = reps or default_reps
    rng = np.random.default_rng(seed)
    T = len(TASKS)
    keys = ("p", "p_holm", "ci", "real_raw", "real", "real_bonf", "cover", "any_raw", "any", "any_bonf", "any_p",
            "avg_ex0", "avg_cover", "alt_tasks", "pow_raw", "pow", "pow_bonf", "sign_err",
            "p_test", "real_test", "any_test", "gate1", "gate0", "gate1_drop_task", "gate1_avg")
    c = {k: 0 for k in keys}
    by = {}  # |true delta| -> [tasks, real uncorrected, real Holm, real Bonferroni], in its direction
    true_avg = (sum(deltas) / T) if deltas else 0.0
    level = None
    family = None
    with tempfile.TemporaryDirectory() as d:
        for _ in range(reps):
            fa, fb = make_files(rng, n, q, deltas, d)
            cj = run_compare(fa, fb, iters, ALPHA)
            bj = run_compare(fa, fb, iters, ALPHA / T) if bonferroni else None
            family = cj["family_tasks"]
            anyr = dict(raw=False, holm=False, bonf=False)
            any_p = False
            for i, x in enumerate(cj["tasks"]):
                true = deltas[i] if deltas else 0.0
                ex0 = excl0(x["ci"])
                raw = ex0 and x["mcnemar_p"] < ALPHA
                holm = ex0 and x["mcnemar_p_holm"] < ALPHA
                assert holm == x["real"], "compare's real is not the Holm rule: %r" % x
                bonf = bj is not None and excl0(bj["tasks"][i]["ci"]) and bj["tasks"][i]["mcnemar_p"] < ALPHA / T
                c["p"] += x["mcnemar_p"] < ALPHA
                c["p_holm"] += x["mcnemar_p_holm"] < ALPHA
                c["ci"] += ex0
                c["real_raw"] += raw
                c["real"] += holm
                c["real_bonf"] += bonf
                c["cover"] += x["ci"][0] - 1e-9 <= true <= x["ci"][1] + 1e-9
                any_p |= x["mcnemar_p"] < ALPHA
                if true == 0:  # a false alarm when real
                    anyr["raw"] |= raw
                    anyr["holm"] |= holm
                    anyr["bonf"] |= bonf
                else:  # power: real, in the true direction
                    right = (x["delta"] > 0) == (true > 0)
                    c["alt_tasks"] += 1
                    c["pow_raw"] += raw and right
                    c["pow"] += holm and right
                    c["pow_bonf"] += bonf and right
                    c["sign_err"] += holm and not right
                    k = by.setdefault(abs(true), [0, 0, 0, 0])
                    k[0] += 1
                    k[1] += raw and right
                    k[2] += holm and right
                    k[3] += bonf and right
            g = cj["average"]["all"]
            c["any_raw"] += anyr["raw"]
            c["any"] += anyr["holm"]
            c["any_bonf"] += anyr["bonf"]
            c["any_p"] += any_p
            c["avg_ex0"] += excl0(g["ci"])
            c["avg_cover"] += g["ci"][0] - 1e-9 <= true_avg <= g["ci"][1] + 1e-9
            if not do_check:
                continue
            v = run_check(fa, fb, iters, 1.0)
            level = 1 - v.get("test_alpha", ALPHA)
            any_test = False
            for i, x in enumerate(v["tasks"]):
                ex0 = excl0(x["ci"])
                c["p_test"] += x["mcnemar_p"] < v.get("test_alpha", ALPHA)
                c["real_test"] += ex0 and x["mcnemar_p"] < v.get("test_alpha", ALPHA)
                any_test |= ex0 and x["mcnemar_p"] < v.get("test_alpha", ALPHA)
                c["gate1_drop_task"] += x["regressed"]
            c["any_test"] += any_test
            c["gate1"] += not v["pass"]
            c["gate1_avg"] += v["average"]["regressed"]
            c["gate0"] += gate(v, 0.0)
    tt = reps * T
    n_null = sum(1 for x in (deltas or [0] * T) if x == 0)
    print("## %s: %s docs/task, 9 tasks, q = %.2f each way, deltas %s, %d replicates, --iters %d, seed %d"
          % (name, n, q, deltas or "0", reps, iters, seed))
    print("binary %s; compare's Holm family: %s tasks" % (OPTS["bin"], family))
    print("compare, per task (%d task-replicates):" % tt)
    print("  McNemar p < %.2f                 %s" % (ALPHA, ci_rate(c["p"], tt)))
    print("  Holm-adjusted p < %.2f           %s" % (ALPHA, ci_rate(c["p_holm"], tt)))
    print("  %g%% interval excludes 0         %s" % (100 - 100 * ALPHA, ci_rate(c["ci"], tt)))
    print("  'real', uncorrected (before)     %s" % ci_rate(c["real_raw"], tt))
    print("  'real', Holm (now)               %s" % ci_rate(c["real"], tt))
    if bonferroni:
        print("  'real', Bonferroni p + interval  %s" % ci_rate(c["real_bonf"], tt))
    print("  interval covers true delta       %s" % ci_rate(c["cover"], tt))
    if c["alt_tasks"]:
        at = c["alt_tasks"]
        print("compare, power (%d task-replicates with a true delta != 0; real in its direction):" % at)
        print("  uncorrected (before)             %s" % ci_rate(c["pow_raw"], at))
        print("  Holm (now)                       %s" % ci_rate(c["pow"], at))
        if bonferroni:
            print("  Bonferroni p + interval          %s" % ci_rate(c["pow_bonf"], at))
        print("  Holm real in the wrong direction %d" % c["sign_err"])
        for dl in sorted(by):
            k = by[dl]
            print("  |delta| %g points (%d): uncorrected %s, Holm %s%s" % (
                dl, k[0], ci_rate(k[1], k[0]), ci_rate(k[2], k[0]),
                ", Bonferroni %s" % ci_rate(k[3], k[0]) if bonferroni else ""))
    print("per replicate (%d; family-wise: some task of the %d with true delta 0 reads real):" % (reps, n_null))
    print("  some task 'real', uncorrected    %s" % ci_rate(c["any_raw"], reps))
    print("  some task 'real', Holm (now)     %s" % ci_rate(c["any"], reps))
    if bonferroni:
        print("  some task 'real', Bonferroni     %s" % ci_rate(c["any_bonf"], reps))
    print("  some task p < 0.05               %s" % ci_rate(c["any_p"], reps))
    print("  average interval excl. 0         %s" % ci_rate(c["avg_ex0"], reps))
    print("  average covers true (%+.3f)      %s" % (true_avg, ci_rate(c["avg_cover"], reps)))
    if do_check:
        print("check (each test at %.4g, intervals %.4g):" % (1 - level, level))
        print("  per task: McNemar p < %-.4g     %s" % (1 - level, ci_rate(c["p_test"], tt)))
        print("  per task: both at that level    %s" % ci_rate(c["real_test"], tt))
        print("  some task both at that level    %s" % ci_rate(c["any_test"], reps))
        print("  check fails, --max-drop 1       %s (a task: %d task-regressions, the average: %d)"
              % (ci_rate(c["gate1"], reps), c["gate1_drop_task"], c["gate1_avg"]))
        print("  check fails, --max-drop 0       %s" % ci_rate(c["gate0"], reps))
    sys.stdout.flush()
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=0, help="replicates per setting (default: the setting's)")
    ap.add_argument("--iters", type=int, default=2000, help="bootstrap resamples per check call")
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--only", action="append", choices=sorted(SETTINGS), help="run only these settings")
    ap.add_argument("--bin", default=BIN, help="the xsa-eval to run (default: the tree's)")
    ap.add_argument("--no-check", action="store_true", help="skip the check calls (compare's rates only)")
    ap.add_argument("--bonferroni", action="store_true",
                    help="also compare at alpha / tasks: the Bonferroni rule for both interval and p")
    args = ap.parse_args()
    OPTS["bin"] = args.bin
    if not os.access(args.bin, os.X_OK):
        sys.exit("%s: build it first (make xsa-eval)" % args.bin)
    for name in args.only or SETTINGS:
        simulate(name, args.reps, args.iters, args.seed, not args.no_check, args.bonferroni)


if __name__ == "__main__":
    main()
