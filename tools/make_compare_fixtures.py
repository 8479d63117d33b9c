#!/usr/bin/env python3
"""Synthetic results files for compare/report/check, and their reference statistics.

Writes tests/fixtures/results/*.json: results files in xsa-eval's layout (docs/results-format.md)
for an SA and an XSA checkpoint on all nine tasks (--limit 400), plus variants for the CI gate
(a planted significant regression, an insignificant drop, a drop of the average, other data, a
task subset, another limit, an lm-eval file without the xsa_eval block), and reference.json:
per-task and average statistics computed independently with numpy, scipy and statsmodels
(means, stderr, deltas, McNemar exact p-values, percentile paired-bootstrap intervals).

The files are written with the same byte layout as common/jsonw.c (objects one member per
line, arrays inline, doubles as %.17g), so the C reader + writer must reproduce them exactly.

Run from the repo root: python3 tools/make_compare_fixtures.py
"""
import hashlib
import json
import math
import os

import numpy as np
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar

OUT = "tests/fixtures/results"
LIMIT = 400
PAPER = ["arc_easy", "boolq", "hellaswag", "lambada_openai", "openbookqa", "piqa", "social_iqa", "winogrande"]
# name, metrics (lm-eval order), preferred, version, rows, split
TASKS = [
    ("arc_easy", ["acc", "acc_norm"], "acc_norm", 1.0, 2376, "test"),
    ("arc_challenge", ["acc", "acc_norm"], "acc_norm", 1.0, 1172, "test"),
    ("boolq", ["acc"], "acc", 2.0, 3270, "validation"),
    ("hellaswag", ["acc", "acc_norm"], "acc_norm", 1.0, 10042, "validation"),
    ("lambada_openai", ["perplexity", "acc"], "acc", 1.0, 5153, "test"),
    ("openbookqa", ["acc", "acc_norm"], "acc_norm", 1.0, 500, "test"),
    ("piqa", ["acc", "acc_norm"], "acc_norm", 1.0, 1838, "validation"),
    ("social_iqa", ["acc"], "acc", 0.0, 1954, "validation"),
    ("winogrande", ["acc"], "acc", 1.0, 1267, "validation"),
]
# SA accuracy per metric (fraction); XSA counts: (b = SA right & XSA wrong, c = SA wrong & XSA right)
SA_ACC = {
    "arc_easy": {"acc": 0.43, "acc_norm": 0.39}, "arc_challenge": {"acc": 0.19, "acc_norm": 0.23},
    "boolq": {"acc": 0.58}, "hellaswag": {"acc": 0.29, "acc_norm": 0.31}, "lambada_openai": {"acc": 0.33},
    "openbookqa": {"acc": 0.16, "acc_norm": 0.27}, "piqa": {"acc": 0.62, "acc_norm": 0.62},
    "social_iqa": {"acc": 0.37}, "winogrande": {"acc": 0.51},
}
XSA_BC = {  # per task and metric: discordant counts of the XSA run against SA
    "arc_easy": {"acc": (30, 36), "acc_norm": (28, 34)},
    "arc_challenge": {"acc": (20, 22), "acc_norm": (22, 24)},
    "boolq": {"acc": (40, 52)},
    "hellaswag": {"acc": (18, 24), "acc_norm": (16, 24)},
    "lambada_openai": {"acc": (10, 34)},       # a real gain: +6 points, p ~ 4e-4
    "openbookqa": {"acc": (25, 26), "acc_norm": (30, 32)},
    "piqa": {"acc": (24, 28), "acc_norm": (26, 30)},
    "social_iqa": {"acc": (35, 37)},
    "winogrande": {"acc": (45, 43)},
}


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


# ------------------------------------------------------------------ JSON in jsonw.c's layout
def q(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"': out.append('\\"')
        elif ch == '\\': out.append('\\\\')
        elif ch == '\n': out.append('\\n')
        elif ch == '\t': out.append('\\t')
        elif ch == '\r': out.append('\\r')
        elif o < 0x20: out.append('\\u%04x' % o)
        else: out.append(ch)
    out.append('"')
    return ''.join(out)


def emit(v, depth=0, inline=False):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, int): return "%d" % v
    if isinstance(v, float):
        if not math.isfinite(v): return "null"
        return "%.17g" % (v + 0.0 if v != 0 else 0.0)
    if isinstance(v, str): return q(v)
    if isinstance(v, list): return "[" + ", ".join(emit(x, depth + 1, True) for x in v) + "]"
    if isinstance(v, dict):
        if not v: return "{}"
        if inline: return "{" + ", ".join(q(k) + ": " + emit(x, depth + 1, True) for k, x in v.items()) + "}"
        ind = "  " * (depth + 1)
        body = ",\n".join(ind + q(k) + ": " + emit(x, depth + 1, False) for k, x in v.items())
        return "{\n" + body + "\n" + "  " * depth + "}"
    raise TypeError(type(v))


# ------------------------------------------------------------------ per-document data
def correctness(rng, n, acc):
    k = int(round(acc * n))
    x = np.zeros(n)
    x[rng.permutation(n)[:k]] = 1
    return x


def paired(rng, a, b_cnt, c_cnt):
    """B from A with exactly b_cnt 1->0 flips and c_cnt 0->1 flips at random documents."""
    b = a.copy()
    ones, zeros = np.flatnonzero(a == 1), np.flatnonzero(a == 0)
    b[rng.permutation(ones)[:b_cnt]] = 0
    b[rng.permutation(zeros)[:c_cnt]] = 1
    return b


def mean(x):  # lm-eval: Python left-to-right summation
    s = 0.0
    for v in x: s += float(v)
    return s / len(x)


def mean_stderr(x):
    mu = mean(x)
    return math.sqrt(sum((float(v) - mu) ** 2 for v in x) / (len(x) - 1)) / math.sqrt(len(x))


def ppl_stderr(ll, rng):
    n = len(ll)
    res = [math.exp(-ll[rng.integers(0, n, n)].mean()) for _ in range(1000)]
    return float(np.std(res, ddof=1))


def build_run(name, xsa_layers, per_doc, seed_tag, limit=LIMIT, tasks=None):
    tasks = tasks or [t[0] for t in TASKS]
    tdef = {t[0]: t for t in TASKS}
    results, versions, hib, nsamp, data, pd, trunc = {}, {}, {}, {}, {}, {}, {}
    rng = np.random.default_rng(99)
    for tn in tasks:
        _, metrics, pref, ver, rows, split = tdef[tn]
        n = len(per_doc[tn]["doc_id"])
        r = {"alias": tn}
        for m in metrics:
            x = per_doc[tn][m]
            if m == "perplexity":
                r["perplexity,none"] = math.exp(-mean(x))
                r["perplexity_stderr,none"] = ppl_stderr(np.array(x), rng)
            else:
                r[m + ",none"] = mean(x)
                r[m + "_stderr,none"] = mean_stderr(x)
        results[tn] = r
        versions[tn] = ver
        hib[tn] = {m: m != "perplexity" for m in metrics}
        nsamp[tn] = {"original": rows, "effective": n}
        data[tn] = {"source": "hf:%s (fixture)" % tn, "split": split,
                    "sha256": per_doc[tn].get("_sha", sha(tn + "-canonical")), "rows": rows,
                    "preprocessed": False, "preferred_metric": pref}
        pd[tn] = {"doc_id": [int(i) for i in per_doc[tn]["doc_id"]]}
        for m in metrics: pd[tn][m] = [float(v) for v in per_doc[tn][m]]
        trunc[tn] = 0
    groups = {}
    for g, members in (("paper", [t for t in tasks if t in PAPER]), ("all", tasks)):
        if members:
            vals = [results[t][data[t]["preferred_metric"] + ",none"] for t in members]
            groups[g] = {"acc,none": sum(vals) / len(vals), "n_tasks": len(members)}
    start, total = 1767225600.0, 125.25
    model = {"path": "checkpoints/" + name, "name": name, "format": "safetensors", "arch": "llama",
             "weights_sha256": sha("weights-" + seed_tag), "dtype": "F32", "n_params": 124439808,
             "n_layer": 12, "d_model": 768, "n_head": 12, "n_kv_head": 4, "vocab_size": 32000,
             "max_length": 1024, "xsa_layers": xsa_layers, "xsa_source": "config",
             "tokenizer": "checkpoints/%s/tokenizer.json" % name, "tokenizer_sha256": sha("tokenizer"),
             "add_bos": False}
    requests, computed, score_s = 11111, 900000, 120.5
    cmd = "xsa-eval run --model checkpoints/%s --tasks %s --limit %d --output results" % (
        name, "all" if len(tasks) == 9 else ",".join(tasks), limit)
    return {
        "results": results, "groups": groups, "group_subtasks": {t: [] for t in tasks},
        "versions": versions, "n-shot": {t: 0 for t in tasks}, "higher_is_better": hib, "n-samples": nsamp,
        "config": {"model": "xsa-eval", "model_args": "pretrained=checkpoints/" + name,
                   "model_num_parameters": 124439808, "model_dtype": "F32", "batch_size": "packed",
                   "device": "cuda:0", "limit": limit, "bootstrap_iters": 100000, "fewshot_seed": 1234},
        "date": start, "start_time": start, "end_time": start + total,
        "total_evaluation_time_seconds": "%.17g" % ((start + total) - start), "max_length": 1024,
        "model_name": name,
        "xsa_eval": {
            "version": "0.1.0", "command": cmd, "model": model,
            "backend": {"device": "cuda:0", "device_desc": "NVIDIA H200 (fixture)", "threads": 16},
            "data": data, "limit": limit, "num_fewshot": 0, "share_prefixes": True, "per_doc": pd,
            "truncated_requests": trunc,
            "timing": {"load_s": 1.25, "tokenize_s": 3.5, "score_s": score_s, "total_s": total,
                       "requests": requests, "tokens_scored": 30000, "tokens_computed": computed,
                       "tokens_per_s": computed / score_s, "requests_per_s": requests / score_s},
        },
    }


def write(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(emit(obj) + "\n")


# ------------------------------------------------------------------ reference statistics
def boot_ci(a, b, rng, iters=100000, level=0.95):
    n = len(a)
    d = np.asarray(b) - np.asarray(a)
    reps = np.concatenate([d[rng.integers(0, n, (min(10000, iters - s), n))].mean(axis=1)
                           for s in range(0, iters, 10000)]) * 100
    lo, hi = np.percentile(reps, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


def boot_ci_multi(pairs, rng, iters=100000, level=0.95):
    reps = np.zeros(iters)
    for a, b in pairs:
        d = np.asarray(b) - np.asarray(a)
        for s in range(0, iters, 10000):
            reps[s:s + 10000] += d[rng.integers(0, len(d), (min(10000, iters - s), len(d)))].mean(axis=1)
    reps = reps / len(pairs) * 100
    lo, hi = np.percentile(reps, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


def reference(A, B, level=0.95):
    rng = np.random.default_rng(2024)
    rows, pairs_all, pairs_paper = [], [], []
    for tn in A["results"]:
        pref = A["xsa_eval"]["data"][tn]["preferred_metric"]
        a = np.array(A["xsa_eval"]["per_doc"][tn][pref])
        b = np.array(B["xsa_eval"]["per_doc"][tn][pref])
        nb = int(((a == 1) & (b == 0)).sum())
        nc = int(((a == 0) & (b == 1)).sum())
        p_scipy = binomtest(nb, nb + nc, 0.5).pvalue if nb + nc else 1.0
        tab = [[int(((a == 1) & (b == 1)).sum()), nb], [nc, int(((a == 0) & (b == 0)).sum())]]
        p_sm = float(mcnemar(tab, exact=True).pvalue)
        assert abs(p_scipy - p_sm) <= 1e-12 * max(1, p_sm), (p_scipy, p_sm)
        lo, hi = boot_ci(a, b, rng, level=level)
        row = {"task": tn, "metric": pref, "n": len(a), "a": mean(a), "b": mean(b),
               "a_se": mean_stderr(a), "b_se": mean_stderr(b), "delta_pts": (mean(b) - mean(a)) * 100,
               "n10": nb, "n01": nc, "mcnemar_p": p_sm, "ci_lo": lo, "ci_hi": hi}
        if tn == "lambada_openai":
            row["ppl_a"] = A["results"][tn]["perplexity,none"]
            row["ppl_b"] = B["results"][tn]["perplexity,none"]
        rows.append(row)
        pairs_all.append((a, b))
        if tn in PAPER: pairs_paper.append((a, b))
    avgs = {}
    for g, pairs in (("paper", pairs_paper), ("all", pairs_all)):
        if not pairs: continue
        lo, hi = boot_ci_multi(pairs, rng, level=level)
        ma = sum(mean(a) for a, _ in pairs) / len(pairs)
        mb = sum(mean(b) for _, b in pairs) / len(pairs)
        avgs[g] = {"n_tasks": len(pairs), "a": ma, "b": mb, "delta_pts": (mb - ma) * 100, "ci_lo": lo, "ci_hi": hi}
    return {"tasks": rows, "average": avgs}


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20260301)
    sa, xsa = {}, {}
    for tn, metrics, pref, _, _, _ in TASKS:
        n = LIMIT
        sa[tn], xsa[tn] = {"doc_id": list(range(n))}, {"doc_id": list(range(n))}
        for m in metrics:
            if m == "perplexity":
                ll = -np.round(rng.gamma(2.0, 1.85, n), 6)
                sa[tn][m] = ll
                # A log-likelihood is a sum of log-probabilities: never above 0.
                xsa[tn][m] = np.minimum(np.round(ll + rng.normal(0.12, 0.4, n), 6), 0.0)
                continue
            a = correctness(rng, n, SA_ACC[tn][m])
            sa[tn][m] = a
            xsa[tn][m] = paired(rng, a, *XSA_BC[tn][m])
    write("sa.json", build_run("sa-125m", "none", sa, "sa"))
    XSA = build_run("xsa-125m", "all", xsa, "xsa")
    write("xsa.json", XSA)
    SA = build_run("sa-125m", "none", sa, "sa")

    def variant(edit):
        pd = {tn: {k: (np.array(v).copy() if k != "doc_id" else v) for k, v in xsa[tn].items()} for tn in xsa}
        edit(pd)
        return pd

    def drop(pd, tn, nb, nc):
        pref = {t[0]: t[2] for t in TASKS}[tn]
        pd[tn][pref] = paired(rng, pd[tn][pref], nb, nc)

    # A significant regression on one task (hellaswag acc_norm -6 points, p ~ 5e-5); the
    # average drops by 0.67 points only.
    reg = build_run("xsa-125m-step2", "all", variant(lambda pd: drop(pd, "hellaswag", 30, 6)), "reg")
    write("xsa_regressed.json", reg)
    # An insignificant drop larger than the allowed 1 point (openbookqa -2 points, p ~ 0.19).
    small = build_run("xsa-125m-step3", "all", variant(lambda pd: drop(pd, "openbookqa", 18, 10)), "small")
    write("xsa_small_drop.json", small)
    # Every task drops 1.5 points, none significant alone; the average's drop is.
    avg = build_run("xsa-125m-step4", "all", variant(lambda pd: [drop(pd, t[0], 14, 8) for t in TASKS]), "avg")
    write("xsa_avg_drop.json", avg)
    # The same run with other WinoGrande data (its digest differs).
    od = variant(lambda pd: None)
    od["winogrande"]["_sha"] = sha("winogrande-other-canonical")
    write("xsa_other_data.json", build_run("xsa-125m", "all", od, "xsa"))
    # Three tasks only; and the first 200 documents with --limit 200.
    write("xsa_three_tasks.json", build_run("xsa-125m", "all", xsa, "xsa", tasks=["arc_easy", "boolq", "piqa"]))
    lim = {tn: {k: v[:200] for k, v in xsa[tn].items()} for tn in xsa}
    write("xsa_limit200.json", build_run("xsa-125m", "all", lim, "xsa", limit=200))
    # An lm-eval results file: no xsa_eval block.
    plain = {k: v for k, v in XSA.items() if k != "xsa_eval"}
    write("lm_eval_plain.json", plain)

    ref = {"sa_vs_xsa": reference(SA, XSA), "xsa_vs_regressed": reference(XSA, reg),
           "xsa_vs_small_drop": reference(XSA, small), "xsa_vs_avg_drop": reference(XSA, avg)}
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
