#!/usr/bin/env python3
"""Checks tools/convert/convert_nanogpt.py against nanoGPT's own model: random-weight GPTs (with and
without biases) are built by nanoGPT's model.py, saved as train.py saves them, converted, and
scored three ways on the same tokens:
  nanogpt   nanoGPT's GPT.forward (with targets, so logits come at every position), float64
  hf        transformers' GPT2LMHeadModel loaded from the converted folder, float64
  xsa-eval  `xsa-eval logprobs --device cpu` on the converted folder (fp32)
and prints the largest log-probability differences; exits 1 past the tolerances (1e-9 for hf,
1e-4 for xsa-eval, the fp32 tolerance of the parity tests).

    python3 -m tools.references.check_convert_nanogpt --nanogpt PATH/TO/nanoGPT [--xsa-eval ./xsa-eval]

PATH/TO/nanoGPT is a checkout of karpathy/nanoGPT (its model.py is imported from there; none
of it is part of this repository). Needs torch, safetensors and transformers.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import torch

from tools.pylib.hf_models import randomize
from tools.pylib.paths import ROOT



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nanogpt", required=True, help="a karpathy/nanoGPT checkout (holds model.py)")
    ap.add_argument("--xsa-eval", default=os.path.join(ROOT, "xsa-eval"))
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.nanogpt))
    from model import GPT, GPTConfig  # nanoGPT's
    from transformers import GPT2LMHeadModel

    worst = {"hf": 0.0, "xsa-eval": 0.0}
    bad = False
    with tempfile.TemporaryDirectory() as tmp:
        for bias, compiled in ((True, False), (False, True)):
            args = dict(n_layer=3, n_head=4, n_embd=64, block_size=128, bias=bias, vocab_size=500, dropout=0.0)
            model = GPT(GPTConfig(**args))
            randomize(model, 7 if bias else 8)
            model.eval()
            sd = model.state_dict()
            if compiled:  # torch.compile's prefix, as train.py saves a compiled model's raw state dict
                sd = {"_orig_mod." + k: v for k, v in sd.items()}
            ckpt = os.path.join(tmp, "ckpt_%d.pt" % bias)
            torch.save({"model": sd, "model_args": args, "iter_num": 0, "best_val_loss": 0.0, "config": {}}, ckpt)
            out = os.path.join(tmp, "hf_%d" % bias)
            subprocess.run([sys.executable, "-m", "tools.convert.convert_nanogpt", ckpt, out], cwd=ROOT, check=True)

            g = torch.Generator().manual_seed(3)
            toks = torch.randint(0, args["vocab_size"], (1, 90), generator=g)
            with torch.no_grad():
                ref = torch.log_softmax(model.double()(toks, targets=toks)[0][0], -1)  # (T, V)
                hf = GPT2LMHeadModel.from_pretrained(out, dtype=torch.float64, attn_implementation="eager").eval()
                hl = torch.log_softmax(hf(toks).logits[0], -1)
            tl = toks[0].tolist()
            ref_lp = [float(ref[p - 1, tl[p]]) for p in range(1, len(tl))]
            hf_lp = [float(hl[p - 1, tl[p]]) for p in range(1, len(tl))]
            r = subprocess.run([a.xsa_eval, "logprobs", "--model", out, "--device", "cpu",
                                "--tokens", ",".join(map(str, tl))], capture_output=True, text=True)
            if r.returncode:
                sys.exit("xsa-eval logprobs failed: %s" % r.stderr)
            xs_lp = [float(line.split("\t")[2]) for line in r.stdout.splitlines()
                     if line and line.split("\t")[0].isdigit()]
            if len(xs_lp) != len(ref_lp):
                sys.exit("xsa-eval printed %d log-probabilities, expected %d" % (len(xs_lp), len(ref_lp)))
            d_hf = max(abs(x - y) for x, y in zip(hf_lp, ref_lp))
            d_xs = max(abs(x - y) for x, y in zip(xs_lp, ref_lp))
            worst["hf"], worst["xsa-eval"] = max(worst["hf"], d_hf), max(worst["xsa-eval"], d_xs)
            ok = d_hf <= 1e-9 and d_xs <= 1e-4 and all(map(math.isfinite, xs_lp))
            bad |= not ok
            print("bias=%s%s: %d positions, max |hf - nanoGPT| %.2g, max |xsa-eval - nanoGPT| %.2g  %s" %
                  (bias, ", _orig_mod. prefix" if compiled else "", len(ref_lp), d_hf, d_xs, "ok" if ok else "FAIL"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
