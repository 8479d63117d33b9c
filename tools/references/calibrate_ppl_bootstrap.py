#!/usr/bin/env python3
"""Coverage of `ppl`'s paired bootstrap interval (eval/stats.h's ratio form: whole units
resampled, the delta the difference of the two models' per-target mean nats) by simulation.
The interval is computed by the real C function, stats_paired_bootstrap_ratio_ci from
eval/stats.c, built here into a temporary shared library and called through ctypes (`ppl`
itself needs two models; eval/ppl_summary.c hands that function each unit's summed nats and
target count).

Documents (units) are drawn i.i.d.: a length w (log-normal, median ~245 tokens), a difficulty,
and a per-token difference B - A of delta0 + gamma * (log w - 5.5) + noise, so that under
gamma != 0 the per-target difference depends on the document's length (the true value, the
ratio E[sum d] / E[w], is taken from 4,000,000 documents). Counts how often the 95% interval
covers it, and how often it excludes 0, for a few numbers of units.

    python3 -m tools.references.calibrate_ppl_bootstrap [--reps N]

Writes nothing into the repository. Needs numpy and a C compiler (cc); a few minutes.
"""
import argparse
import ctypes
import os
import subprocess
import tempfile

import numpy as np

from tools.pylib.paths import ROOT

SOURCES = ["eval/stats.c", "eval/mt19937.c", "common/xalloc.c", "common/error.c"]
D = ctypes.POINTER(ctypes.c_double)


def load_stats(tmp):
    so = os.path.join(tmp, "libstats.so")
    cjson = subprocess.run(["pkg-config", "--cflags", "libcjson"], capture_output=True, text=True).stdout.split()
    subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-fPIC", "-shared", "-I" + ROOT, *cjson,
                    "-I/usr/include/cjson", *[os.path.join(ROOT, s) for s in SOURCES], "-o", so, "-lm", "-lcjson"],
                   check=True)
    lib = ctypes.CDLL(so)
    f = lib.stats_paired_bootstrap_ratio_ci
    f.argtypes = [D, D, D, ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_double, D, D, D]
    f.restype = ctypes.c_int
    return f


def ratio_ci(f, a, b, w, iters, seed, level):
    a, b, w = (np.ascontiguousarray(x, dtype=np.float64) for x in (a, b, w))
    d, lo, hi = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    rc = f(a.ctypes.data_as(D), b.ctypes.data_as(D), w.ctypes.data_as(D), len(a), iters, seed, level,
           ctypes.byref(d), ctypes.byref(lo), ctypes.byref(hi))
    assert rc == 0, rc
    return d.value, lo.value, hi.value


def documents(rng, n, delta0, gamma):
    """Per-document summed nats of A and B and target counts."""
    w = np.maximum(2, np.round(np.exp(rng.normal(5.5, 1.0, n))))
    mu = rng.normal(3.2, 0.5, n)
    e = delta0 + gamma * (np.log(w) - 5.5) + rng.normal(0, 0.05, n)
    a = w * mu + rng.normal(0, 1.5, n) * np.sqrt(w)
    b = a + w * e + rng.normal(0, 0.3, n) * np.sqrt(w)
    return a, b, w


def truth(delta0, gamma):
    if gamma == 0:
        return delta0
    a, b, w = documents(np.random.default_rng(99), 4_000_000, delta0, gamma)
    return float((b - a).sum() / w.sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=2000, help="bootstrap resamples per interval")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        f = load_stats(tmp)
        for delta0, gamma in ((0.0, 0.0), (-0.02, 0.01)):
            t = truth(delta0, gamma)
            for units in (3, 5, 10, 30, 100, 400):
                rng = np.random.default_rng(20261207 + units)
                cover = ex0 = 0
                for _ in range(args.reps):
                    _, lo, hi = ratio_ci(f, *documents(rng, units, delta0, gamma), args.iters, 1234, 0.95)
                    cover += lo <= t <= hi
                    ex0 += lo > 0 or hi < 0
                print("delta0 %+.3f gamma %.3f (true delta %+.5f), %3d units: 95%% interval covers %.3f, "
                      "excludes 0 %.3f (%d replicates)" % (delta0, gamma, t, units, cover / args.reps,
                                                            ex0 / args.reps, args.reps), flush=True)


if __name__ == "__main__":
    main()
