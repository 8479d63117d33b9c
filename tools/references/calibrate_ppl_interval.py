#!/usr/bin/env python3
"""Coverage of `ppl`'s interval for the delta B - A of two models' nats per target, by simulation.
Units (documents, or a stream's windows) are drawn i.i.d. and three 95% intervals of the ratio
sum(b - a) / sum(w) are computed on each sample:

- `new`: ppl's, the real C function stats_cluster_ratio_ci from eval/stats.c (CR2 standard error,
  t on Bell-McCaffrey degrees of freedom), built here into a temporary shared library and
  called through ctypes (`ppl` itself needs two models; eval/ppl_summary.c hands that function
  each unit's summed nats and target count);
- `old`: what ppl computed before, the percentile cluster bootstrap (whole units resampled,
  the ratio of the resample's sums, numpy's 'linear' quantiles), here with numpy's generator;
- `cr1`: statsmodels' OLS of the per-target differences on a constant with cov_type='cluster'
  and use_t=True (CR1 factor G / (G - 1), t on G - 1 degrees of freedom), in closed form
  (checked against statsmodels itself on the first samples).

With --candidates, also the others considered (docs/statistics.md): CR0, CR2 and CR3 (the
jackknife form) with t on G - 1 df, CR1 with Bell-McCaffrey df, and a studentized (bootstrap-t)
interval on CR1 standard errors (up to 100 units; 999 resamples).

Documents: a length w (log-normal, median ~245 targets), a difficulty, and a per-token
difference B - A of delta0 + gamma * (log w - 5.5) + noise, so that under gamma != 0 the
per-target difference depends on the document's length (the true value, the ratio
E[sum d] / E[w], is taken from 4,000,000 documents). `windows` gives every unit 256 targets
(a stream's windows). Counts how often each interval covers the true delta, and how often it
excludes 0 (`ppl`'s *real*; under the null, a false alarm), for a few numbers of units.

    python3 -m tools.references.calibrate_ppl_interval [--reps N] [--units 3,5,10,30,100,400]

With --stream, a token shard instead (`ppl --tokens-file`): documents of log-normal length
(median 400 tokens, sd of the log 1.0: mean 660, one in 100 over 4,100), each starting with its
BOS, laid end to end in a stream of 16,384 to 1,048,576 tokens and cut into eval_val's windows of
1024 targets advancing by 1024 or 128 (targets past the last whole window dropped, as ppl's
plan_windows does). Each document has its own per-token difference B - A, delta0 + u (u ~ N(0, tau)), and
each token noise (sd sigma). ppl's interval (the C function) is computed twice on each stream:
over windows (ppl's units for shards before 2026-12) and over documents (each target counted in
the document it lies in, whichever window scored it); the rows count how often each covers the
true delta0 and how often it excludes 0 (*real*).

    python3 -m tools.references.calibrate_ppl_interval --stream [--reps N]

Writes nothing into the repository. Needs numpy, scipy, statsmodels and a C compiler (cc); about
ten minutes at the defaults (--stream: a few minutes).
"""
import argparse
import ctypes
import math
import os
import subprocess
import tempfile

import numpy as np
import scipy.stats
import statsmodels.api as sm

from tools.pylib.paths import ROOT

SOURCES = ["eval/stats.c", "eval/mt19937.c", "common/xalloc.c", "common/error.c"]
D = ctypes.POINTER(ctypes.c_double)


class RatioCI(ctypes.Structure):
    _fields_ = [(k, ctypes.c_double) for k in ("delta", "se", "df", "lo", "hi")]


def load_stats(tmp):
    so = os.path.join(tmp, "libstats.so")
    cjson = subprocess.run(["pkg-config", "--cflags", "libcjson"], capture_output=True, text=True).stdout.split()
    subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-fPIC", "-shared", "-I" + ROOT, *cjson,
                    "-I/usr/include/cjson", *[os.path.join(ROOT, s) for s in SOURCES], "-o", so, "-lm", "-lcjson"],
                   check=True)
    f = ctypes.CDLL(so).stats_cluster_ratio_ci
    f.argtypes = [D, D, D, ctypes.c_int, ctypes.c_double, ctypes.POINTER(RatioCI)]
    f.restype = ctypes.c_int
    return f


def new_ci(f, a, b, w, level):
    a, b, w = (np.ascontiguousarray(x, dtype=np.float64) for x in (a, b, w))
    r = RatioCI()
    rc = f(a.ctypes.data_as(D), b.ctypes.data_as(D), w.ctypes.data_as(D), len(a), level, ctypes.byref(r))
    assert rc == 0, rc
    return r.lo, r.hi


def old_ci(rng, a, b, w, level, iters):
    d = b - a
    j = rng.integers(0, len(d), size=(iters, len(d)))
    reps = d[j].sum(1) / w[j].sum(1)
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return lo, hi


def cr1_ci(a, b, w, level):
    d, G, N = b - a, len(a), w.sum()
    delta = d.sum() / N
    se = math.sqrt(G / (G - 1) * ((d - delta * w) ** 2).sum()) / N
    q = scipy.stats.t.ppf((1 + level) / 2, G - 1)
    return delta - q * se, delta + q * se


def candidate_cis(rng, a, b, w, level):
    """The intervals considered besides ppl's (--candidates): name -> (lo, hi)."""
    d, G, N = b - a, len(a), w.sum()
    delta = d.sum() / N
    r, p = d - delta * w, w / N
    q = scipy.stats.t.ppf((1 + level) / 2, G - 1)
    bm = 1 / ((p ** 2).sum() + (p ** 2 / (1 - p)).sum() ** 2 - (p ** 4 / (1 - p) ** 2).sum())  # = eval/stats.h's df
    out = {}
    for name, v, qq in (("cr0", (r ** 2).sum() / N ** 2, q), ("cr2_t", (r ** 2 / (1 - p)).sum() / N ** 2, q),
                        ("cr3_t", (G - 1) / G * (r ** 2 / (1 - p) ** 2).sum() / N ** 2, q),
                        ("cr1_bm", G / (G - 1) * (r ** 2).sum() / N ** 2, scipy.stats.t.ppf((1 + level) / 2, bm))):
        out[name] = (delta - qq * math.sqrt(v), delta + qq * math.sqrt(v))
    if G <= 100:
        se = math.sqrt(G / (G - 1) * (r ** 2).sum()) / N
        j = rng.integers(0, G, size=(999, G))
        dd, ww = d[j], w[j]
        db = dd.sum(1) / ww.sum(1)
        seb = np.sqrt(G / (G - 1) * ((dd - db[:, None] * ww) ** 2).sum(1)) / ww.sum(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tb = (db - delta) / seb
        tl, th = np.quantile(tb[np.isfinite(tb)], [(1 - level) / 2, (1 + level) / 2])
        out["boot_t"] = (delta - th * se, delta - tl * se)
    return out


def check_cr1_against_statsmodels(a, b, w, level, rng):
    """The closed form above is statsmodels' interval: per-target rows summing to each unit's d."""
    y, g = [], []
    for k, (dk, wk) in enumerate(zip(b - a, w)):
        v = rng.normal(0, 1, int(wk))
        y += list(v - v.mean() + dk / wk)  # w[k] targets whose sum is d[k]
        g += [k] * int(wk)
    res = sm.OLS(np.array(y), np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": np.array(g)}, use_t=True)
    lo, hi = res.conf_int(1 - level)[0]
    mine = cr1_ci(a, b, w, level)
    assert abs(lo - mine[0]) < 1e-9 and abs(hi - mine[1]) < 1e-9, ((lo, hi), mine)


def documents(rng, n, delta0, gamma, windows=False):
    """Per-unit summed nats of A and B and target counts."""
    w = np.full(n, 256.0) if windows else np.maximum(2, np.round(np.exp(rng.normal(5.5, 1.0, n))))
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


def stream_units(rng, n_tokens, context, stride, delta0, tau, sigma):
    """One stream's per-unit summed differences and target counts, by window and by document."""
    k = int(n_tokens / 600) + 64
    lens = np.maximum(2, np.round(np.exp(rng.normal(math.log(400), 1.0, k)))).astype(np.int64)
    while lens.sum() < n_tokens:
        lens = np.concatenate([lens, lens])  # (never at these sizes: k documents hold ~1.1 n_tokens)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    starts = starts[starts < n_tokens]  # documents' BOS positions in the stream
    u = delta0 + rng.normal(0, tau, len(starts))
    usable = (n_tokens - 1) // context * context  # targets 1 .. usable (ppl.c's doc_last_target)
    # window starts (first target of each window): 1, then every stride targets after the first context
    wstart = np.concatenate([[1], np.arange(context + 1, usable + 1, stride)])
    cuts = np.union1d(wstart, starts[(starts >= 1) & (starts <= usable)])
    seg_n = np.diff(np.append(cuts, usable + 1))
    doc = np.searchsorted(starts, cuts, side="right") - 1  # the document a target lies in: last BOS at or before it
    win = np.searchsorted(wstart, cuts, side="right") - 1
    seg_d = seg_n * u[doc] + sigma * np.sqrt(seg_n) * rng.normal(0, 1, len(seg_n))
    out = {}
    for name, g in (("windows", win), ("documents", doc)):
        w = np.bincount(g, weights=seg_n)
        d = np.bincount(g, weights=seg_d)
        keep = w > 0
        out[name] = (d[keep], w[keep])
    return out


def main_stream(args, f):
    level = 0.95
    print("stream simulation: documents log-normal (median 400 tokens, sdlog 1.0), %d replicates per row, seed "
          "20261208 + row" % args.reps)
    rows = []
    for n_tokens in (16384, 65536, 262144, 1048576):
        for context, stride in ((1024, 1024), (1024, 128)):
            for delta0, tau in ((0.0, 0.05), (0.0, 0.0), (-0.01, 0.05)):
                rows.append((n_tokens, context, stride, delta0, tau))
    for i, (n_tokens, context, stride, delta0, tau) in enumerate(rows):
        rng = np.random.default_rng(20261208 + i)
        cover = {"windows": 0, "documents": 0}
        real = dict(cover)
        units = {k: [] for k in cover}
        for _ in range(args.reps):
            for k, (d, w) in stream_units(rng, n_tokens, context, stride, delta0, tau, 1.0).items():
                lo, hi = new_ci(f, np.zeros_like(d), d, w, level)
                cover[k] += lo <= delta0 <= hi
                real[k] += lo > 0 or hi < 0
                units[k].append(len(d))
        print("tokens %7d context %d stride %4d delta0 %+.2f tau %.2f: units windows %d documents %.0f | covers "
              "windows %.3f documents %.3f | real windows %.3f documents %.3f"
              % (n_tokens, context, stride, delta0, tau, np.mean(units["windows"]), np.mean(units["documents"]),
                 cover["windows"] / args.reps, cover["documents"] / args.reps, real["windows"] / args.reps,
                 real["documents"] / args.reps), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=2000, help="the old bootstrap's resamples per interval")
    ap.add_argument("--units", default="2,3,5,10,30,100,400")
    ap.add_argument("--candidates", action="store_true", help="also the other intervals considered")
    ap.add_argument("--stream", action="store_true", help="a token shard's windows vs its documents as units")
    args = ap.parse_args()
    level = 0.95
    with tempfile.TemporaryDirectory() as tmp:
        f = load_stats(tmp)
        if args.stream:
            return main_stream(args, f)
        for name, delta0, gamma, windows in (("null", 0.0, 0.0, False), ("length-dependent", -0.02, 0.01, False),
                                             ("null, windows", 0.0, 0.0, True)):
            t = truth(delta0, gamma)
            for units in (int(u) for u in args.units.split(",")):
                rng = np.random.default_rng(20261207 + units)
                boot = np.random.default_rng(1234 + units)
                cand = np.random.default_rng(777 + units)
                cover = {"old": 0, "cr1": 0, "new": 0}
                ex0 = dict(cover)
                extra = {}
                for rep in range(args.reps):
                    a, b, w = documents(rng, units, delta0, gamma, windows)
                    if rep < 3:
                        check_cr1_against_statsmodels(a, b, w, level, np.random.default_rng(rep))
                    for k, (lo, hi) in (("old", old_ci(boot, a, b, w, level, args.iters)), ("cr1", cr1_ci(a, b, w, level)),
                                        ("new", new_ci(f, a, b, w, level))):
                        cover[k] += lo <= t <= hi
                        ex0[k] += lo > 0 or hi < 0
                    for k, (lo, hi) in (candidate_cis(cand, a, b, w, level) if args.candidates else {}).items():
                        extra[k] = extra.get(k, 0) + (lo <= t <= hi)
                print("%-16s (true delta %+.5f) %3d units: 95%% interval covers old %.3f, cr1 %.3f, new %.3f; "
                      "excludes 0 old %.3f, cr1 %.3f, new %.3f (%d replicates)"
                      % (name, t, units, *(cover[k] / args.reps for k in cover), *(ex0[k] / args.reps for k in ex0),
                         args.reps) + "".join("; %s covers %.3f" % (k, v / args.reps) for k, v in extra.items()),
                      flush=True)


if __name__ == "__main__":
    main()
