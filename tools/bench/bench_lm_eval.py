#!/usr/bin/env python3
"""xsa-eval against lm-evaluation-harness on this CPU: same checkpoint, same rows, timed in one run.

For each model the same Hugging Face checkpoint is scored twice, one after the other:
  lm-eval   lm_eval.simple_evaluate with HFLM (float32, CPU), at each --batch-size in turn (default
            1,8,32: its default and the sizes users pick), log_samples, bootstrap_iters 100000 (its default)
  xsa-eval  `./xsa-eval run --device cpu --log-samples` as a subprocess (default --batch-tokens,
            shared prefixes on)
and the script prints the wall times, the ratio to lm-eval at its fastest batch size and at each,
and checks that every doc gets the same prediction (argmax of the choices' log-likelihoods, and
of the length-normalised ones where the task has acc_norm; LAMBADA: the greedy flag), the same
per-doc metrics, and every log-likelihood within 1e-4, or 1e-5 relative for long sums (torch sums float32 log-probabilities
in float32; the random 25M model's peaked logits give sums of -300 over dozens of tokens).
lm-eval tokenizes inside loglikelihood; that time is measured apart (stories260K's tokenizer is
a pure-Python port of llama2.c's encoder, slow), and the speedups are also given without it.

Models:
  stories260K  ../shared/benchdata/models/stories260K (llama2.c), converted to a Hugging Face
               Llama by tools/fixtures/make_real_parity_fixtures.py's convert_model; tokenizer tok512.bin
               (xsa-eval reads it directly, lm-eval through make_tokenizer's Python port)
  random25m    a random-weight Llama of ~25M parameters, weights drawn by
               make_model_fixtures.randomize, with the byte-level BPE tokenizer.json of
               tests/fixtures/tokenizers/gpt2 (700 tokens), context 1024, in two shapes, each run in
               turn (--random-shape):
                 tiny25m  d 384, 6 layers, 6 heads / 2 KV heads, MLP 1536, a tied 32000-wide
                          embedding (25.3M): shaped like small real checkpoints (llama2.c's
                          stories15M/42M, TinyStories), half of the parameters in the embedding
                 body26m  d 512, 8 layers, 8 heads / 4 KV heads, MLP 1536, the tokenizer's 703-wide
                          head (25.9M): nearly everything in the blocks, as in parameter-golf's
                          1024-token models; the hardest case for a speedup (lm-eval's wasted
                          logits are cheap there)
Data: the real files of ../shared/benchdata (eight tasks; HellaSwag is left out because
benchdata only holds a text dump of it that lm-eval cannot read), or, when ../shared is absent,
the synthetic rows of tests/fixtures/data (nine tasks, random25m only).

    python3 -m tools.bench.bench_lm_eval [--models stories260K,random25m] [--limit-stories 40]
                                   [--limit-random 4] [--random-vocab N] [--repeat N]
                                   [--random-shape tiny25m,body26m]
                                   [--out /tmp/xsa_bench_lm_eval]

Writes OUT/summary.json with every figure; nothing in the repository is written.
"""
import argparse
import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import time

import torch

from tools.fixtures import make_parity_fixtures, make_real_parity_fixtures
from tools.pylib.hf_models import randomize, save_with_tokenizer, vocab_size_of
from tools.pylib.paths import ROOT
from tools.references.llama2c_reference import hf_llama_from_bin
from tools.references.llama2c_tokenizer_reference import hf_tokenizer

REAL_TASKS = ["arc_easy", "arc_challenge", "boolq", "lambada_openai", "openbookqa", "piqa", "social_iqa",
              "winogrande"]
FIXTURE_TASKS = REAL_TASKS[:3] + ["hellaswag"] + REAL_TASKS[3:]
GPT2_TOK = os.path.join(ROOT, "tests", "fixtures", "tokenizers", "gpt2", "tokenizer.json")


def build_stories(bd, out):
    """The HF conversion of stories260K saved as a checkpoint folder; returns (dir, xsa tokenizer, hf tokenizer)."""
    d = os.path.join(out, "stories260K_hf")
    m = hf_llama_from_bin(os.path.join(bd, "models", "stories260K", "stories260K.bin"))
    if os.path.isdir(d):
        shutil.rmtree(d)
    m.save_pretrained(d, safe_serialization=True)
    tokbin = os.path.join(bd, "models", "stories260K", "tok512.bin")
    return d, tokbin, hf_tokenizer(tokbin)


# Shapes of the random llama: "body26m" has 25.9M parameters with the tokenizer's 703-wide
# head (most of them in the blocks); "tiny25m" has 25.3M with a tied 32000-wide embedding,
# shaped like small real checkpoints (about half of the parameters in the embedding).
RANDOM_SHAPES = {
    "body26m": dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=8, num_attention_heads=8,
                    num_key_value_heads=4, tie_word_embeddings=False),
    "tiny25m": dict(hidden_size=384, intermediate_size=1536, num_hidden_layers=6, num_attention_heads=6,
                    num_key_value_heads=2, tie_word_embeddings=True, vocab=32000),
}


def build_random25m(out, seed=25, vocab=0, shape="body26m"):
    """vocab > the tokenizer's: a logits width padded like real checkpoints' (GPT-2 50257,
    Llama 32000); lm-eval's log-softmax runs over all of it at every position."""
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    kw = dict(RANDOM_SHAPES[shape])
    vocab = max(vocab, kw.pop("vocab", 0))
    name = "random25m" if shape == "body26m" else shape
    d = os.path.join(out, name + "_hf" if not vocab else "%s_v%d_hf" % (name, vocab))
    cfg = LlamaConfig(vocab_size=max(vocab, vocab_size_of(GPT2_TOK)), max_position_embeddings=1024,
                      rope_theta=10000.0, bos_token_id=0, eos_token_id=0, **kw)
    torch.manual_seed(seed)
    m = LlamaForCausalLM(cfg).float().eval()
    randomize(m, seed)
    save_with_tokenizer(m, d, GPT2_TOK)
    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(d, "tokenizer.json"), bos_token="<|endoftext|>",
                                  eos_token="<|endoftext|>")
    return d, None, tok


def timed_lm_eval(ckpt, tok, tasks, limit, batch_size):
    """Times simple_evaluate end to end, and separately the time spent inside loglikelihood."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32).eval()
    lm = HFLM(pretrained=model, tokenizer=tok, batch_size=batch_size, device="cpu", dtype="float32")
    scoring = {"s": 0.0, "requests": 0, "tokenize_s": 0.0}
    real_ll, real_enc = lm.loglikelihood, lm.tok_encode

    def timed_enc(*a, **kw):  # lm-eval tokenizes inside loglikelihood (_encode_pair)
        t = time.perf_counter()
        out = real_enc(*a, **kw)
        scoring["tokenize_s"] += time.perf_counter() - t
        return out
    lm.tok_encode = timed_enc

    def timed_ll(requests, *a, **kw):
        t = time.perf_counter()
        out = real_ll(requests, *a, **kw)
        scoring["s"] += time.perf_counter() - t
        scoring["requests"] += len(requests)
        return out
    lm.loglikelihood = timed_ll
    t0 = time.perf_counter()
    out = lm_eval.simple_evaluate(model=lm, tasks=tasks, num_fewshot=0, limit=limit, log_samples=True,
                                  bootstrap_iters=100000)
    wall = time.perf_counter() - t0
    return out, wall, scoring, lm.max_length, sum(p.numel() for p in model.parameters())


def run_xsa(ckpt, tokbin, tasks, limit, data_dir, out, extra):
    odir = os.path.join(out, "xsa_" + os.path.basename(ckpt))
    if os.path.isdir(odir):
        shutil.rmtree(odir)
    cmd = [os.path.join(ROOT, "xsa-eval"), "run", "--model", ckpt, "--tasks", ",".join(tasks), "--limit", str(limit),
           "--data-dir", data_dir, "--device", "cpu", "--log-samples", "--quiet", "--output", odir] + extra
    if tokbin:
        cmd += ["--tokenizer", tokbin]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("xsa-eval failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    sub = os.path.join(odir, os.path.basename(ckpt))
    res = json.load(open(glob.glob(os.path.join(sub, "results_*.json"))[0]))
    samples = {}
    for t in tasks:
        with open(glob.glob(os.path.join(sub, "samples_%s_*.jsonl" % t))[0], encoding="utf-8") as f:
            samples[t] = {s["doc_id"]: s for s in (json.loads(l) for l in f if l.strip())}
    return res, samples, wall, " ".join(cmd)


def argmax(xs):
    best = 0
    for i, x in enumerate(xs):
        if x > xs[best]:
            best = i
    return best


def compare(out, xsa_samples, tasks):
    """Per-doc predictions, per-doc metrics and log-likelihoods of lm-eval vs xsa-eval."""
    bad, n_docs, n_req, worst = [], 0, 0, 0.0
    for t in tasks:
        for s in out["samples"][t]:
            d = s["doc_id"]
            ours = xsa_samples[t].get(d)
            if ours is None:
                bad.append("%s doc %d: missing in xsa-eval's samples" % (t, d))
                continue
            n_docs += 1
            lls = [float(r[0][0]) for r in s["resps"]]
            greedy = [bool(r[0][1]) for r in s["resps"]]
            ol = [q["logprob"] for q in ours["requests"]]
            og = [bool(q["greedy"]) for q in ours["requests"]]
            if len(ol) != len(lls):
                bad.append("%s doc %d: %d requests vs %d" % (t, d, len(ol), len(lls)))
                continue
            for a, b in zip(ol, lls):
                n_req += 1
                worst = max(worst, abs(a - b))
                if not abs(a - b) <= max(1e-4, 1e-5 * abs(b)):
                    bad.append("%s doc %d: ll %.9g vs lm-eval %.9g" % (t, d, a, b))
            if og != greedy:
                bad.append("%s doc %d: greedy flags differ" % (t, d))
            if argmax(ol) != argmax(lls):
                bad.append("%s doc %d: prediction %d vs lm-eval %d" % (t, d, argmax(ol), argmax(lls)))
            for k in ("acc", "acc_norm", "pred_norm"):
                if k in s and k in ours and float(s[k]) != float(ours[k]):
                    bad.append("%s doc %d: %s %s vs lm-eval %s" % (t, d, k, ours[k], s[k]))
    return bad, n_docs, n_req, worst


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def bench_model(name, ckpt, tokbin, tok, tasks, limit, data_dir, out, a):
    """Runs lm-eval (at each of a.batch_sizes) and xsa-eval a.repeat times each, alternately (this
    machine's speed drifts by 10-20% from minute to minute), checks every run's predictions, and
    reports medians: xsa-eval against lm-eval at its fastest batch size and at batch size 1."""
    print("== %s: %s, tasks %s, --limit %d, %d run(s) each, lm-eval batch sizes %s" %
          (name, ckpt, ",".join(tasks), limit, a.repeat, ",".join(str(b) for b in a.batch_sizes)), flush=True)
    extra = ["--threads", str(a.threads)] if a.threads else []
    lm = {bs: {"wall": [], "model": [], "tok": []} for bs in a.batch_sizes}
    xs_walls, xs_score, bad = [], [], []
    for rep in range(a.repeat):
        for bs in a.batch_sizes:
            lm_out, lm_wall, scoring, max_len, n_params = timed_lm_eval(ckpt, tok, tasks, limit, bs)
            print("   lm-eval  batch %s: %.1f s (loglikelihood %.1f s of which tokenizing %.1f s, %d requests)" %
                  (bs, lm_wall, scoring["s"], scoring["tokenize_s"], scoring["requests"]), flush=True)
            lm[bs]["wall"].append(lm_wall)
            lm[bs]["model"].append(scoring["s"] - scoring["tokenize_s"])
            lm[bs]["tok"].append(scoring["tokenize_s"])
            res, xs, xs_wall, cmd = run_xsa(ckpt, tokbin, tasks, limit, data_dir, out, extra)
            tm = res["xsa_eval"]["timing"]
            print("   xsa-eval %.1f s (score %.1f s, %d requests)  %s" % (xs_wall, tm["score_s"], tm["requests"],
                                                                          cmd), flush=True)
            xs_walls.append(xs_wall)
            xs_score.append(tm["score_s"])
            b, n_docs, n_req, worst = compare(lm_out, xs, tasks)
            bad += ["run %d, lm-eval batch %s: %s" % (rep + 1, bs, x) for x in b]
            for t in tasks:
                for k, v in lm_out["results"][t].items():
                    if k.endswith(",none") and "stderr" not in k and isinstance(v, (int, float)):
                        ov = res["results"][t].get(k)
                        tol = 1e-4 * abs(v) if "perplexity" in k else 1e-6
                        if ov is None or not abs(ov - v) <= tol:
                            bad.append("lm-eval batch %s: %s/%s: %s vs lm-eval %s" % (bs, t, k, ov, v))
    xs_wall = median(xs_walls)
    tm = dict(tm, score_s=median(xs_score))
    per_bs = {}
    for bs, r in lm.items():
        w, m, tk = median(r["wall"]), median(r["model"]), median(r["tok"])
        per_bs[str(bs)] = {"wall_s": w, "model_s": m, "tokenize_s": tk, "runs_wall_s": r["wall"],
                           "runs_model_s": r["model"], "speedup_wall": w / xs_wall,
                           "speedup_wall_no_lm_eval_tokenizer": (w - tk) / xs_wall,
                           "speedup_scoring": m / max(tm["score_s"], 1e-9)}
    best = min(per_bs, key=lambda k: per_bs[k]["wall_s"])
    b1 = per_bs.get("1")
    rec = {"model": name, "checkpoint": ckpt, "n_params": n_params, "max_length": max_len, "tasks": tasks,
           "limit": limit, "docs": n_docs, "requests": n_req,
           "lm_eval": {"by_batch_size": per_bs, "fastest_batch_size": best, "torch_threads": torch.get_num_threads()},
           "xsa_eval": {"wall_s": xs_wall, "score_s": tm["score_s"], "tokenize_s": tm["tokenize_s"],
                        "tokens_scored": tm["tokens_scored"], "tokens_computed": tm["tokens_computed"],
                        "command": cmd, "device_desc": res["xsa_eval"]["backend"]["device_desc"],
                        "runs_wall_s": xs_walls, "runs_score_s": xs_score},
           "speedup_wall": per_bs[best]["speedup_wall"],
           "speedup_wall_no_lm_eval_tokenizer": per_bs[best]["speedup_wall_no_lm_eval_tokenizer"],
           "speedup_scoring": per_bs[best]["speedup_scoring"],
           "speedup_wall_batch1": b1["speedup_wall"] if b1 else None,
           "worst_ll_diff": worst, "mismatches": bad[:50], "n_mismatches": len(bad)}
    print("   docs %d, requests %d, worst |ll - lm-eval| %.2g, mismatches %d%s" %
          (n_docs, n_req, worst, len(bad), "" if not bad else ": " + "; ".join(bad[:5])), flush=True)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--models", default="stories260K,random25m")
    ap.add_argument("--limit-stories", type=int, default=40)
    ap.add_argument("--limit-random", type=int, default=4)
    ap.add_argument("--batch-size", default="1,8,32",
                    help="lm-eval's batch sizes, comma-separated, each run in turn (default 1,8,32: its default "
                         "and what users pick on a CPU); xsa-eval is compared with the fastest")
    ap.add_argument("--threads", type=int, default=0, help="torch and xsa-eval threads (0: all cores)")
    ap.add_argument("--out", default="/tmp/xsa_bench_lm_eval")
    ap.add_argument("--random-shape", default="tiny25m,body26m",
                    help="shapes of the random llama, comma-separated, each benchmarked in turn (%s; default "
                         "tiny25m,body26m)" % ", ".join(sorted(RANDOM_SHAPES)))
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each side, alternately; medians are reported (default 1)")
    ap.add_argument("--random-vocab", type=int, default=0,
                    help="logits width of the random llama (default: the tokenizer's 703; e.g. 32000 as real models)")
    a = ap.parse_args()
    shapes = a.random_shape.split(",")
    for sh in shapes:
        if sh not in RANDOM_SHAPES:
            sys.exit("unknown --random-shape %r (%s)" % (sh, ", ".join(sorted(RANDOM_SHAPES))))
    if a.threads:
        torch.set_num_threads(a.threads)
    a.batch_sizes = [int(b) if b.isdigit() else b for b in str(a.batch_size).split(",") if b]
    os.makedirs(a.out, exist_ok=True)
    bd = os.path.join(a.shared, "benchdata")
    real = os.path.isfile(os.path.join(bd, "models", "stories260K", "stories260K.bin"))
    if real:
        make_real_parity_fixtures.install_loader(bd)
        tasks, data_dir = REAL_TASKS, bd
    else:
        print("note: %s absent: tests/fixtures/data (synthetic rows) and random25m only" % bd)
        make_parity_fixtures.install_local_loader()
        tasks, data_dir = FIXTURE_TASKS, os.path.join(ROOT, "tests", "fixtures", "data")
    runs = []  # (name, shape): random25m once per shape
    for name in a.models.split(","):
        if name not in ("stories260K", "random25m"):
            sys.exit("unknown model %r (stories260K, random25m)" % name)
        runs += [(name, sh) for sh in shapes] if name == "random25m" else [(name, None)]
    recs = []
    for name, shape in runs:
        with contextlib.redirect_stdout(sys.stderr):  # transformers / lm-eval chatter
            if name == "stories260K":
                if not real:
                    continue
                ckpt, tokbin, tok = build_stories(bd, a.out)
                limit = a.limit_stories
            else:
                ckpt, tokbin, tok = build_random25m(a.out, vocab=a.random_vocab, shape=shape)
                limit = a.limit_random
        label = name if shape is None else "%s (%s)" % (name, shape)
        recs.append(bench_model(label, ckpt, tokbin, tok, tasks, limit, data_dir, a.out, a))
    print("\nwall: whole run (data, tokenizing, scoring, metrics with 100000 bootstrap iterations, logs);"
          " model: lm-eval's loglikelihood minus its tokenizing vs xsa-eval's scheduler+backend time;"
          " medians of %d run(s) each" % a.repeat)
    print("| model | params | docs | requests | lm-eval batch size | lm-eval wall s | (its tokenizing s) "
          "| xsa-eval wall s | wall speedup | wall speedup w/o lm-eval tokenizing | lm-eval model s "
          "| xsa-eval model s | model speedup | identical predictions | worst abs dll |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in recs:
        le, xe = r["lm_eval"], r["xsa_eval"]
        for bs, x in le["by_batch_size"].items():
            fast = bs == le["fastest_batch_size"]
            print("| %s | %.2fM | %d | %d | %s%s | %.1f | %.1f | %.1f | %s%.1fx%s | %.1fx | %.1f | %.2f | %.1fx | %s | %.1e |" % (
                r["model"], r["n_params"] / 1e6, r["docs"], r["requests"], bs, " (fastest)" if fast else "",
                x["wall_s"], x["tokenize_s"], xe["wall_s"], "**" if fast else "", x["speedup_wall"],
                "**" if fast else "", x["speedup_wall_no_lm_eval_tokenizer"], x["model_s"], xe["score_s"],
                x["speedup_scoring"], "yes" if not r["n_mismatches"] else "NO (%d)" % r["n_mismatches"],
                r["worst_ll_diff"]))
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"torch": torch.__version__, "data": data_dir, "runs": recs}, f, indent=1)
    print("summary: %s" % os.path.join(a.out, "summary.json"))
    return 1 if any(r["n_mismatches"] for r in recs) or not recs else 0


if __name__ == "__main__":
    sys.exit(main())
