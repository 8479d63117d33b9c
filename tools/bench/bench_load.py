#!/usr/bin/env python3
"""Load time and peak memory of a ~100M-parameter checkpoint in three formats, xsa-eval beside
PyTorch, in one run:

    /tmp/tv/bin/python -m tools.bench.bench_load [--xsa ./xsa-eval] [--dir /tmp/xsa_bench_load] [--runs 3]

The checkpoint is one random GPT-2 (12 layers, width 768, vocabulary 32768: 111M parameters,
float32), written as
  - a Hugging Face folder with model.safetensors (save_pretrained),
  - the same folder with pytorch_model.bin (torch.save of the state dict),
  - a nanoGPT ckpt.pt (model_args, its nn.Linear state dict, an AdamW optimizer state after one
    step, as nanoGPT's train.py saves it: the file is about three times the weights).
Each measurement is a fresh process; wall time is the median of --runs, peak memory the largest
maximum resident set size (getrusage of the child).
  - xsa-eval: `xsa-eval info --model PATH` (reads the file, checks every weight is finite, takes
    the SHA-256 of the weights, prints the architecture): what every command does before scoring.
  - PyTorch: import torch, build the model, then load: safetensors.torch.load_file (safetensors;
    torch.load cannot read it) or torch.load(weights_only=True), then model.load_state_dict.
    The import and the construction are timed apart ("setup"); peak memory includes them.
The files are made once and kept in --dir (about 2.2 GB).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

LAYERS, WIDTH, HEADS, VOCAB, CTX = 12, 768, 12, 32768, 1024

# The PyTorch side, run in its own process: prints JSON {setup_s, load_s}.
TORCH_CHILD = r'''
import json, sys, time
t0 = time.perf_counter()
import torch
kind, path = sys.argv[1], sys.argv[2]
L, C, H, V, T = %d, %d, %d, %d, %d
if kind == "nanogpt":
    import torch.nn as nn
    class Block(nn.Module):  # nanoGPT's parameter names and nn.Linear layout
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(C); self.ln_2 = nn.LayerNorm(C)
            self.attn = nn.Module(); self.attn.c_attn = nn.Linear(C, 3 * C); self.attn.c_proj = nn.Linear(C, C)
            self.mlp = nn.Module(); self.mlp.c_fc = nn.Linear(C, 4 * C); self.mlp.c_proj = nn.Linear(4 * C, C)
    model = nn.Module()
    model.transformer = nn.ModuleDict(dict(wte=nn.Embedding(V, C), wpe=nn.Embedding(T, C),
                                           h=nn.ModuleList([Block() for _ in range(L)]), ln_f=nn.LayerNorm(C)))
    model.lm_head = nn.Linear(C, V, bias=False)
    model.lm_head.weight = model.transformer.wte.weight
else:
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config(vocab_size=V, n_positions=T, n_embd=C, n_layer=L, n_head=H, bos_token_id=0,
                                       eos_token_id=0, activation_function="gelu"))
t1 = time.perf_counter()
if kind == "safetensors":
    import safetensors.torch
    sd = safetensors.torch.load_file(path + "/model.safetensors")
elif kind == "bin":
    sd = torch.load(path + "/pytorch_model.bin", weights_only=True)
else:
    sd = torch.load(path, weights_only=True)["model"]
missing, unexpected = model.load_state_dict(sd, strict=False)
assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)  # safetensors: the tied head is not saved
t2 = time.perf_counter()
print(json.dumps({"setup_s": t1 - t0, "load_s": t2 - t1}))
''' % (LAYERS, WIDTH, HEADS, VOCAB, CTX)


def make_files(d, python):
    done = os.path.join(d, "done")
    if os.path.exists(done):
        return
    os.makedirs(d, exist_ok=True)
    code = r'''
import json, os, sys, torch, shutil
from transformers import GPT2Config, GPT2LMHeadModel
d = sys.argv[1]
L, C, H, V, T = %d, %d, %d, %d, %d
torch.manual_seed(0)
cfg = GPT2Config(vocab_size=V, n_positions=T, n_embd=C, n_layer=L, n_head=H, activation_function="gelu",
                 bos_token_id=0, eos_token_id=0)
m = GPT2LMHeadModel(cfg)
m.save_pretrained(os.path.join(d, "st"))
os.makedirs(os.path.join(d, "bin"), exist_ok=True)
m.config.save_pretrained(os.path.join(d, "bin"))
torch.save(m.state_dict(), os.path.join(d, "bin", "pytorch_model.bin"))
# nanoGPT: nn.Linear (out, in) weights under transformer.*, tied head, AdamW state.
sd = {}
for k, v in m.state_dict().items():
    if k.endswith((".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight")):
        v = v.t().contiguous()
    sd[k] = v
params = [torch.nn.Parameter(v.clone()) for k, v in sd.items() if k != "lm_head.weight"]
opt = torch.optim.AdamW(params, lr=1e-4)
for p in params:
    p.grad = torch.randn_like(p) * 1e-3
opt.step()
args = dict(n_layer=L, n_head=H, n_embd=C, block_size=T, bias=True, vocab_size=V, dropout=0.0)
torch.save({"model": sd, "optimizer": opt.state_dict(), "model_args": args, "iter_num": 1, "best_val_loss": 9.0,
            "config": {}}, os.path.join(d, "ckpt.pt"))
''' % (LAYERS, WIDTH, HEADS, VOCAB, CTX)
    subprocess.run([python, "-c", code, d], check=True)
    open(done, "w").close()


def measure(cmd):
    """(wall seconds, peak RSS in MiB, stdout) of one child process."""
    wrapper = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
               "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); w = time.perf_counter() - t; "
               "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode); "
               "sys.stdout.write(r.stdout); sys.stderr.write(r.stderr[-2000:])")
    p = subprocess.run([sys.executable, "-c", wrapper] + cmd, capture_output=True, text=True)
    first, _, rest = p.stdout.partition("\n")
    w, rss, rc = first.split()
    if int(rc) != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return float(w), int(rss) / 1024.0, rest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xsa", default="./xsa-eval")
    ap.add_argument("--dir", default="/tmp/xsa_bench_load")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    make_files(args.dir, sys.executable)
    d = args.dir
    cases = [("safetensors", os.path.join(d, "st"), "safetensors"),
             ("pytorch_model.bin", os.path.join(d, "bin"), "bin"),
             ("nanoGPT ckpt.pt", os.path.join(d, "ckpt.pt"), "nanogpt")]
    print("checkpoint: GPT-2 %d layers, width %d, vocabulary %d, float32; runs: %d (median time, max peak RSS)"
          % (LAYERS, WIDTH, VOCAB, args.runs))
    print("%-18s %10s | %-32s | %-40s" % ("format", "file MB", "xsa-eval info: time  peak RSS", "torch: setup + load = time  peak RSS"))
    for name, path, kind in cases:
        size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) if os.path.isdir(path) else os.path.getsize(path)
        xs, ts = [], []
        for _ in range(args.runs):
            w, rss, out = measure([args.xsa, "info", "--model", path])
            xs.append((w, rss))
            w, rss, out = measure([sys.executable, "-c", TORCH_CHILD, kind, path])
            j = json.loads(out.strip().splitlines()[-1])
            ts.append((w, rss, j["setup_s"], j["load_s"]))
        xw, xr = statistics.median(x[0] for x in xs), max(x[1] for x in xs)
        tw, tr = statistics.median(t[0] for t in ts), max(t[1] for t in ts)
        setup, load = statistics.median(t[2] for t in ts), statistics.median(t[3] for t in ts)
        print("%-18s %10.0f | %8.3f s %9.0f MiB          | %5.2f s + %5.3f s = %5.2f s %7.0f MiB"
              % (name, size / 1e6, xw, xr, setup, load, tw, tr))


if __name__ == "__main__":
    main()
