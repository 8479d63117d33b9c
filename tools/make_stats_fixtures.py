#!/usr/bin/env python3
"""Writes the reference values for eval/mt19937.c, eval/metrics.c and eval/stats.c to
tests/fixtures/stats/{rng,metrics,stats}.json.

    python3 tools/make_stats_fixtures.py [--out tests/fixtures/stats] [--py312 PYTHON>=3.12]

(with pyenv, e.g. --py312 ~/.pyenv/versions/3.12.1/bin/python3; --py312 '' skips the 3.12 part)

Every number comes from the real libraries, never from the C code under test:
- rng.json: CPython's random.Random (random(), getrandbits, _randbelow, choices, sample,
  shuffle) for several seeds, including seeds of 1, 2 and 3 32-bit words.
- metrics.json: lm-eval's own functions (lm_eval.api.metrics: mean, mean_stderr, perplexity,
  bootstrap_stderr with DISABLE_MULTIPROC so the real single-process chunk loop runs) under
  this interpreter, and the same function sources (inspect.getsource) executed by a second
  interpreter >= 3.12 (--py312), whose builtin sum() is Neumaier-compensated. Also numpy.argmax
  per-doc multiple-choice cases.
- stats.json: McNemar exact p-values from statsmodels (and scipy.stats.binomtest), binomial
  cdf/pmf from scipy, Wilson intervals from statsmodels, and paired bootstrap intervals from an
  independent implementation of the procedure documented in eval/stats.h (random + numpy).

JSON floats are written with repr(), which round-trips exactly; infinities as "-inf" strings.
Runs in a few seconds. Needs: numpy, scipy, statsmodels, lm-eval (pip install lm-eval).
"""
import argparse
import inspect
import json
import math
import os
import random
import subprocess
import sys

import numpy as np
import scipy
import scipy.stats
import statsmodels
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

os.environ["DISABLE_MULTIPROC"] = "1"  # lm-eval's bootstrap: the real in-process chunk loop
import lm_eval  # noqa: E402
import lm_eval.api.metrics as lm_metrics  # noqa: E402


def sum_semantics(exe):
    """'neumaier' when the interpreter's sum() compensates (CPython >= 3.12), else 'naive'."""
    code = "print('neumaier' if sum([1.0, 1e100, 1.0, -1e100]) == 2.0 else 'naive')"
    return subprocess.run([exe, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def finite_or_str(x):
    """JSON has no infinities: write them as the strings "inf" / "-inf" (strtod reads them)."""
    return x if math.isfinite(x) else repr(x)


def seed_words(n):
    n = abs(n)
    words = []
    while True:
        words.append(n & 0xFFFFFFFF)
        n >>= 32
        if n == 0:
            return words


# ---- rng.json ---------------------------------------------------------------------------------

def make_rng():
    seeds = [0, 1, 42, 1234, 2**32 + 5, 2**64 + 3]
    streams = []
    for s in seeds:
        r = random.Random(s)
        streams.append({"seed_words": seed_words(s), "seed": str(s),
                        "random": [r.random() for _ in range(1300)]})
    raw = []
    for s in (0, 2**64 + 3):
        r = random.Random(s)
        raw.append({"seed_words": seed_words(s), "uint32": [r.getrandbits(32) for _ in range(700)]})
    bits = []
    r = random.Random(99)
    for k in (1, 7, 31, 32, 33, 40, 63, 64, 1, 64):
        bits.append({"k": k, "value": str(r.getrandbits(k))})
    below = []
    r = random.Random(5)
    for n in (1, 2, 3, 7, 8, 100, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 7, 2**63 + 5):
        below.append({"n": str(n), "value": str(r._randbelow(n))})
    choices = []
    for seed, n, k in ((0, 10, 50), (7, 5153, 300), (99, 3, 30), (1, 1, 5), (3, 2**20 + 3, 100)):
        choices.append({"seed": seed, "n": n, "k": k,
                        "picks": random.Random(seed).choices(range(n), k=k)})
    samples = []
    # setsize = 21 (+ 4**ceil(log(3k, 4)) for k > 5); n <= setsize -> pool branch, else set.
    cases = [(1234, 10, 3), (1234, 21, 5), (1234, 22, 5), (1234, 85, 6), (1234, 86, 6),
             (1234, 1000, 1), (1234, 1119, 5), (1234, 40, 40), (1234, 1000, 100),
             (1234, 1045, 100), (1234, 1046, 100), (1234, 5000, 100), (3, 10000, 3000),
             (0, 2251, 25), (1234, 0, 0), (1234, 9, 0)]
    for seed, n, k in cases:
        setsize = 21 + (4 ** math.ceil(math.log(k * 3, 4)) if k > 5 else 0)
        samples.append({"seed": seed, "n": n, "k": k,
                        "branch": "pool" if n <= setsize else "set",
                        "picks": random.Random(seed).sample(range(n), k)})
    shuffles = []
    for seed, n in ((5, 10), (1234, 100), (0, 1), (0, 2)):
        x = list(range(n))
        random.Random(seed).shuffle(x)
        shuffles.append({"seed": seed, "n": n, "perm": x})
    return {"generator": "tools/make_stats_fixtures.py", "python": sys.version.split()[0],
            "streams": streams, "raw": raw, "getrandbits": bits, "randbelow": below,
            "choices": choices, "sample": samples, "shuffle": shuffles}


# ---- metrics.json -----------------------------------------------------------------------------

# lm-eval's functions, by source, for the second interpreter (it has no lm_eval installed).
LM_FUNCS = [lm_metrics.mean, lm_metrics.perplexity, lm_metrics.sample_stddev,
            lm_metrics.mean_stderr]
PY312_DRIVER = r'''
import json, math, random, sys
from typing import Callable, Sequence, TypeVar
T = TypeVar("T")
def register_aggregation(name):
    return lambda f: f
%s
%s
def bootstrap(f, xs, iters):  # bootstrap_stderr's loop: chunk seeds in order, one process
    chunk = min(1000, iters)
    res = []
    for i in range(iters // chunk):
        res.extend(_bootstrap_internal(f, chunk)((i, xs)))
    return sample_stddev(res)
job = json.load(sys.stdin)
out = {"arrays": [], "bootstrap": []}
for a in job["arrays"]:
    x = a["x"]
    out["arrays"].append({"mean": mean(x), "mean_stderr": mean_stderr(x) if len(x) > 1 else None,
                          "perplexity": perplexity(x)})
for b in job["bootstrap"]:
    out["bootstrap"].append(bootstrap(perplexity, b["x"], b["iters"]))
json.dump(out, sys.stdout)
'''


def lm_source():
    src = "\n".join(inspect.getsource(f) for f in LM_FUNCS)
    return src.replace('@register_aggregation("mean")', "").replace(
        '@register_aggregation("perplexity")', "")


def make_metrics(py312):
    rng = random.Random(20240601)
    arrays = []

    def add(name, x):
        arrays.append({"name": name, "x": x})

    add("ones_n2", [1.0, 1.0])
    add("zero_one_n2", [0.0, 1.0])
    add("zero_one_n3", [0.0, 1.0, 1.0])
    for n in (10, 100, 5153):
        add("bern_n%d" % n, [float(rng.random() < 0.4) for _ in range(n)])
    arc = [1.0] * 1034 + [0.0] * (2376 - 1034)
    rng.shuffle(arc)
    add("pythia160m_arc_easy", arc)
    for n in (7, 50, 500, 5153):
        add("lls_n%d" % n, [-rng.uniform(0.01, 30.0) for _ in range(n)])
    add("lls_wide_n300", [-math.exp(rng.uniform(-8.0, 6.0)) for _ in range(300)])
    add("single", [-3.5])
    for a in arrays:
        x = a["x"]
        a["mean"] = lm_metrics.mean(x)
        a["mean_stderr"] = lm_metrics.mean_stderr(x) if len(x) > 1 else None
        a["perplexity"] = lm_metrics.perplexity(x)

    by_name = {a["name"]: a for a in arrays}
    arc_ref = by_name["pythia160m_arc_easy"]
    assert arc_ref["mean"] == 0.4351851851851852, arc_ref["mean"]
    # The last bits of the stderr depend on the order of the 1s (we do not have pythia's).
    assert abs(arc_ref["mean_stderr"] - 0.010173216430370908) < 1e-15, arc_ref["mean_stderr"]

    boots = []
    for name, iters in (("lls_n50", 100000), ("lls_n500", 10000), ("lls_n7", 2500),
                        ("lls_n7", 999), ("zero_one_n3", 1000), ("lls_wide_n300", 3000)):
        x = by_name[name]["x"]
        boots.append({"array": name, "iters": iters,
                      "stderr": lm_metrics.bootstrap_stderr(lm_metrics.perplexity, x, iters)})

    alt = None
    if py312:
        sem = sum_semantics(py312)
        src = PY312_DRIVER % (lm_source(), inspect.getsource(lm_metrics._bootstrap_internal))
        job = {"arrays": [{"x": a["x"]} for a in arrays],
               "bootstrap": [{"x": by_name[b["array"]]["x"], "iters": b["iters"]} for b in boots]}
        res = subprocess.run([py312, "-c", src], input=json.dumps(job), capture_output=True,
                             text=True, check=True)
        got = json.loads(res.stdout)
        ver = subprocess.run([py312, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
        alt = {"python": ver, "sum": sem, "arrays": got["arrays"], "bootstrap": got["bootstrap"]}

    # Per-doc multiple choice: numpy.argmax over lls and lls / character length.
    mc = []
    cases = [
        ([-1.0, -1.0, -2.0], [3.0, 3.0, 3.0], 1),        # tie -> first index
        ([-4.0, -2.0, -2.0, -8.0], [4.0, 2.0, 2.0, 8.0], 3),  # normalised all -1.0 -> 0
        ([-5.0, -3.0], [10.0, 2.0], -100),               # gold -100: always wrong
        ([-5.0, -3.0], [10.0, 2.0], 2),                  # gold out of range
        ([-5.0, -3.0], [10.0, 2.0], 0),
        ([-0.0, -3.0], [0.0, 2.0], 0),                   # 0/0 = nan wins argmax (numpy)
        ([-1.0, -3.0], [0.0, 2.0], 1),                   # -1/0 = -inf
        ([-7.25], [5.0], 0),                             # one choice
        ([float("-inf"), -9.0, float("-inf")], [1.0, 2.0, 3.0], 1),
    ]
    for _ in range(20):
        k = rng.choice([2, 3, 4, 5])
        lls = [-rng.uniform(0.5, 40.0) for _ in range(k)]
        lens = [float(rng.randint(1, 60)) for _ in range(k)]
        cases.append((lls, lens, rng.randrange(k)))
    with np.errstate(divide="ignore", invalid="ignore"):
        for lls, lens, gold in cases:
            pred = int(np.argmax(lls))
            pred_norm = int(np.argmax(np.array(lls) / np.array(lens)))
            g = gold if 0 <= gold < len(lls) else -100
            mc.append({"lls": [finite_or_str(v) for v in lls], "len": lens, "gold": gold, "pred": pred, "pred_norm": pred_norm,
                       "acc": 1.0 if pred == g else 0.0, "acc_norm": 1.0 if pred_norm == g else 0.0})

    return {"generator": "tools/make_stats_fixtures.py", "python": sys.version.split()[0],
            "sum": sum_semantics(sys.executable), "lm_eval": lm_eval.__version__,
            "numpy": np.__version__, "reference": "lm_eval.api.metrics (real functions)",
            "arrays": arrays, "bootstrap": boots, "alt": alt, "mc_docs": mc}


# ---- stats.json -------------------------------------------------------------------------------

def paired_bootstrap(ds, iters, seed, level):
    """The procedure documented in eval/stats.h, written from the doc (multi-task form)."""
    rnd = random.Random(seed)
    tot = 0.0
    for d in ds:
        s = 0.0
        for v in d:
            s += v
        tot += s / len(d)
    delta = tot / len(ds)
    reps = []
    for _ in range(iters):
        tot = 0.0
        for d in ds:
            n = len(d)
            s = 0.0
            for _ in range(n):
                s += d[math.floor(rnd.random() * n)]
            tot += s / n
        reps.append(tot / len(ds))
    lo, hi = np.quantile(np.array(reps), [(1 - level) / 2, (1 + level) / 2])
    return delta, float(lo), float(hi)


def make_stats():
    pairs = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (5, 5), (3, 9), (10, 40), (40, 10),
             (25, 26), (100, 130), (300, 350), (350, 300), (2000, 2100), (0, 60), (0, 1074),
             (7, 700), (1, 2000), (4999, 5101), (12000, 12500), (50000, 51000), (0, 30),
             (8, 16), (30000, 28000)]
    mc = []
    for b, c in pairs:
        p_sm = float(mcnemar([[0, b], [c, 0]], exact=True).pvalue)
        p_bt = float(scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue) if b + c else 1.0
        mc.append({"b": b, "c": c, "p": p_sm, "p_binomtest": p_bt})
    binom = []
    for k, n in ((0, 1), (1, 1), (0, 10), (3, 10), (5, 10), (7, 10), (9, 10), (10, 10),
                 (17, 40), (30, 40), (500, 1000), (480, 1000), (400, 1000), (650, 1000),
                 (20, 4000), (1900, 4100), (3, 200), (15, 31), (16, 31), (1, 1080)):
        binom.append({"k": k, "n": n, "cdf": float(scipy.stats.binom.cdf(k, n, 0.5)),
                      "pmf": float(scipy.stats.binom.pmf(k, n, 0.5))})

    rng = random.Random(777)
    boot = []

    def add(name, tasks, iters, seed, level):
        ds = [[bv - av for av, bv in zip(a, b)] for a, b in tasks]
        delta, lo, hi = paired_bootstrap(ds, iters, seed, level)
        boot.append({"name": name, "a": [a for a, _ in tasks], "b": [b for _, b in tasks],
                     "iters": iters, "seed": seed, "level": level,
                     "delta": delta, "lo": lo, "hi": hi})

    def bern(n, p):
        return [float(rng.random() < p) for _ in range(n)]

    add("acc_n50", [(bern(50, 0.5), bern(50, 0.6))], 1000, 0, 0.95)
    add("acc_n400", [(bern(400, 0.4), bern(400, 0.45))], 2000, 12345, 0.95)
    add("ll_n300", [([-rng.uniform(1, 30) for _ in range(300)],
                     [-rng.uniform(1, 30) for _ in range(300)])], 1500, 2**40 + 9, 0.9)
    add("n1", [([0.0], [1.0])], 10, 3, 0.95)
    add("level_99_iters_7", [(bern(20, 0.5), bern(20, 0.5))], 7, 8, 0.99)
    add("multi_3", [(bern(30, 0.5), bern(30, 0.7)), (bern(17, 0.3), bern(17, 0.3)),
                    (bern(50, 0.6), bern(50, 0.5))], 800, 7, 0.95)

    wilson = []
    z = float(scipy.stats.norm.isf(0.025))
    for k, n in ((0, 10), (10, 10), (1034, 2376), (3, 7), (50, 100), (1, 1), (0, 1),
                 (2999, 5153)):
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        wilson.append({"k": k, "n": n, "lo": float(lo), "hi": float(hi)})

    return {"generator": "tools/make_stats_fixtures.py", "python": sys.version.split()[0],
            "numpy": np.__version__, "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__, "mcnemar": mc, "binom": binom,
            "paired_bootstrap": boot, "wilson_z": z, "wilson": wilson}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/stats")
    ap.add_argument("--py312", default="python3.12",
                    help="an interpreter >= 3.12 for the Neumaier-sum references ('' to skip)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    py312 = args.py312
    if py312 and sum_semantics(py312) != "neumaier":
        sys.exit("%s: sum() is not compensated; pass a Python >= 3.12" % py312)
    for name, fn in (("rng", make_rng), ("metrics", lambda: make_metrics(py312)),
                     ("stats", make_stats)):
        path = os.path.join(args.out, name + ".json")
        with open(path + ".tmp", "w") as f:
            json.dump(fn(), f, separators=(",", ":"))
            f.write("\n")
        os.replace(path + ".tmp", path)
        print("wrote", path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
