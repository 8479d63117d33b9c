#!/usr/bin/env python3
"""xsa-eval against lm-evaluation-harness on this CPU: same checkpoint, same rows, timed in one run.

For each model the same Hugging Face checkpoint is scored twice, one after the other:
  lm-eval   lm_eval.simple_evaluate with HFLM (float32, CPU, batch_size 1: its default batching),
            log_samples, bootstrap_iters 100000 (its default)
  xsa-eval  `./xsa-eval run --device cpu --log-samples` as a subprocess (default --batch-tokens,
            shared prefixes on)
and the script prints both wall times, the ratio, and checks that every doc gets the same
prediction (argmax of the choices' log-likelihoods, and of the length-normalised ones where the
task has acc_norm; LAMBADA: the greedy flag), the same per-doc metrics, and every
log-likelihood within 1e-4, or 1e-5 relative for long sums (torch sums float32 log-probabilities
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
    """Runs lm-eval and xsa-eval a.repeat times each, alternately (this machine's speed drifts
    by 10-20% from minute to minute), checks every run's predictions, reports medians."""
    print("== %s: %s, tasks %s, --limit %d, %d run(s) each" % (name, ckpt, ",".join(tasks), limit, a.repeat),
          flush=True)
    extra = ["--threads", str(a.threads)] if a.threads else []
    lm_walls, lm_model, lm_tok, xs_walls, xs_score, bad = [], [], [], [], [], []
    for rep in range(a.repeat):
        lm_out, lm_wall, scoring, max_len, n_params = timed_lm_eval(ckpt, tok, tasks, limit, a.batch_size)
        print("   lm-eval  %.1f s (loglikelihood %.1f s of which tokenizing %.1f s, %d requests)" %
              (lm_wall, scoring["s"], scoring["tokenize_s"], scoring["requests"]), flush=True)
        res, xs, xs_wall, cmd = run_xsa(ckpt, tokbin, tasks, limit, data_dir, out, extra)
        tm = res["xsa_eval"]["timing"]
        print("   xsa-eval %.1f s (score %.1f s, %d requests)  %s" % (xs_wall, tm["score_s"], tm["requests"], cmd),
              flush=True)
        lm_walls.append(lm_wall)
        lm_model.append(scoring["s"] - scoring["tokenize_s"])
        lm_tok.append(scoring["tokenize_s"])
        xs_walls.append(xs_wall)
        xs_score.append(tm["score_s"])
        b, n_docs, n_req, worst = compare(lm_out, xs, tasks)
        bad += ["run %d: %s" % (rep + 1, x) for x in b]
    lm_wall, xs_wall = median(lm_walls), median(xs_walls)
    scoring = {"s": median(lm_model) + median(lm_tok), "tokenize_s": median(lm_tok)}
    tm = dict(tm, score_s=median(xs_score))
    metr = {}
    for t in tasks:
        for k, v in lm_out["results"][t].items():
            if k.endswith(",none") and "stderr" not in k and isinstance(v, (int, float)):
                ov = res["results"][t].get(k)
                metr["%s/%s" % (t, k.split(",")[0])] = (v, ov)
    for k, (v, ov) in metr.items():
        tol = 1e-4 * abs(v) if "perplexity" in k else 1e-6
        if ov is None or not abs(ov - v) <= tol:
            bad.append("%s: %s vs lm-eval %s" % (k, ov, v))
    rec = {"model": name, "checkpoint": ckpt, "n_params": n_params, "max_length": max_len, "tasks": tasks,
           "limit": limit, "docs": n_docs, "requests": n_req,
           "lm_eval": {"wall_s": lm_wall, "loglikelihood_s": scoring["s"], "tokenize_s": scoring["tokenize_s"],
                       "batch_size": a.batch_size,
                       "torch_threads": torch.get_num_threads()},
           "xsa_eval": {"wall_s": xs_wall, "score_s": tm["score_s"], "tokenize_s": tm["tokenize_s"],
                        "tokens_scored": tm["tokens_scored"], "tokens_computed": tm["tokens_computed"],
                        "command": cmd, "device_desc": res["xsa_eval"]["backend"]["device_desc"]},
           "runs": {"lm_eval_wall_s": lm_walls, "lm_eval_model_s": lm_model, "xsa_eval_wall_s": xs_walls,
                    "xsa_eval_score_s": xs_score},
           "speedup_wall": lm_wall / xs_wall,
           "speedup_wall_no_lm_eval_tokenizer": (lm_wall - scoring["tokenize_s"]) / xs_wall,
           "speedup_scoring": (scoring["s"] - scoring["tokenize_s"]) / max(tm["score_s"], 1e-9),
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
    ap.add_argument("--batch-size", default=1, help="lm-eval's batch size (default 1, its default)")
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
    if str(a.batch_size).isdigit():
        a.batch_size = int(a.batch_size)
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
    print("| model | params | docs | requests | lm-eval wall s | (its tokenizing s) | xsa-eval wall s | wall speedup "
          "| wall speedup w/o lm-eval tokenizing | lm-eval model s | xsa-eval model s | model speedup "
          "| identical predictions | worst abs dll |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in recs:
        le, xe = r["lm_eval"], r["xsa_eval"]
        print("| %s | %.2fM | %d | %d | %.1f | %.1f | %.1f | **%.1fx** | %.1fx | %.1f | %.2f | %.1fx | %s | %.1e |" % (
            r["model"], r["n_params"] / 1e6, r["docs"], r["requests"], le["wall_s"], le["tokenize_s"], xe["wall_s"],
            r["speedup_wall"], r["speedup_wall_no_lm_eval_tokenizer"], le["loglikelihood_s"] - le["tokenize_s"],
            xe["score_s"], r["speedup_scoring"], "yes" if not r["n_mismatches"] else "NO (%d)" % r["n_mismatches"],
            r["worst_ll_diff"]))
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"torch": torch.__version__, "data": data_dir, "runs": recs}, f, indent=1)
    print("summary: %s" % os.path.join(a.out, "summary.json"))
    return 1 if any(r["n_mismatches"] for r in recs) or not recs else 0


if __name__ == "__main__":
    sys.exit(main())
