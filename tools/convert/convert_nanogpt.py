#!/usr/bin/env python3
"""Converts a nanoGPT checkpoint (train.py's ckpt.pt) into a Hugging Face GPT-2 checkpoint
folder that xsa-eval reads: config.json + model.safetensors (+ tokenizer.json when given).

    python3 -m tools.convert.convert_nanogpt CKPT.pt OUT_DIR [--tokenizer tokenizer.json]
                                     [--xsa all|none|last:N|i,j,...] [--eos-id N]

nanoGPT's GPT is GPT-2's architecture with three differences that the conversion carries:
  - nn.Linear weights, stored (out, in): GPT-2's Conv1D stores (in, out), so they are transposed;
  - nn.GELU() is the exact erf GELU: config.json says activation_function "gelu" (GPT-2's own
    checkpoints use the tanh approximation, "gelu_new");
  - bias=False models have no Linear or LayerNorm biases: they are written as zeros, which is
    the same function.
The head is tied to the token embedding, as in nanoGPT. `_orig_mod.` prefixes (torch.compile)
are dropped, and the causal-mask buffers of non-flash attention are skipped.

XSA is declared with --xsa (nanoGPT forks that train with Exclusive Self Attention keep the
same weights): "all", "none" (the default: plain attention), "last:N" or a list of layer
indices, written as config.json's "xsa_layers".

nanoGPT's GPT-2 BPE runs come with tiktoken's "gpt2" encoding: pass the tokenizer.json of
openai-community/gpt2 with --tokenizer. Character-level runs (meta.pkl) have no tokenizer
xsa-eval reads. Needs torch and safetensors (pip install torch safetensors); transformers is
not needed. tools/references/check_convert_nanogpt.py checks a conversion against nanoGPT's own model.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

import torch
from safetensors.torch import save_file

from tools.pylib.hf_models import parse_xsa_spec


def fail(msg):
    sys.exit("convert_nanogpt: " + msg)


def xsa_layers(spec, n_layer):
    """config.json's xsa_layers for an --xsa spec, or None for none."""
    if spec == "all":
        return "all"
    try:
        return parse_xsa_spec(spec, n_layer) or None
    except ValueError as e:
        fail(str(e))


def load(path):
    """(state dict with plain names, model_args) of a ckpt.pt."""
    try:
        ck = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # a truncated or foreign file: say which
        fail("%s: not a readable PyTorch checkpoint (%s)" % (path, e))
    if not isinstance(ck, dict) or "model" not in ck or "model_args" not in ck:
        fail("%s: no 'model' and 'model_args' entries: not a checkpoint written by nanoGPT's train.py" % path)
    sd = {}
    for k, v in ck["model"].items():
        sd[k[len("_orig_mod."):] if k.startswith("_orig_mod.") else k] = v
    return sd, dict(ck["model_args"])


def convert(sd, args):
    """The GPT-2 (Conv1D) state dict for nanoGPT's weights."""
    L, C, V = args["n_layer"], args["n_embd"], args["vocab_size"]
    need = ["transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight"]
    for i in range(L):
        need += ["transformer.h.%d.%s.weight" % (i, n) for n in
                 ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj")]
    missing = [k for k in need if k not in sd]
    if missing:
        fail("the state dict lacks %s%s: not nanoGPT's GPT (n_layer %d)" %
             (", ".join(missing[:3]), " ..." if len(missing) > 3 else "", L))
    out = {}

    def put(name, t):
        out[name] = t.detach().to(torch.float32).contiguous()

    def bias_of(prefix, n):
        b = sd.get(prefix + ".bias")
        return b if b is not None else torch.zeros(n)

    put("transformer.wte.weight", sd["transformer.wte.weight"])
    put("transformer.wpe.weight", sd["transformer.wpe.weight"])
    for i in range(L):
        p = "transformer.h.%d." % i
        for ln in ("ln_1", "ln_2"):
            put(p + ln + ".weight", sd[p + ln + ".weight"])
            put(p + ln + ".bias", bias_of(p + ln, C))
        for lin, n_out in (("attn.c_attn", 3 * C), ("attn.c_proj", C), ("mlp.c_fc", 4 * C), ("mlp.c_proj", C)):
            put(p + lin + ".weight", sd[p + lin + ".weight"].t())  # Linear (out, in) -> Conv1D (in, out)
            put(p + lin + ".bias", bias_of(p + lin, n_out))
    put("transformer.ln_f.weight", sd["transformer.ln_f.weight"])
    put("transformer.ln_f.bias", bias_of("transformer.ln_f", C))
    if "lm_head.weight" in sd and not torch.equal(sd["lm_head.weight"], sd["transformer.wte.weight"]):
        fail("lm_head.weight differs from transformer.wte.weight: nanoGPT ties them; this model does not")
    if out["transformer.wte.weight"].shape != (V, C):
        fail("transformer.wte.weight is %s, model_args say vocab_size %d, n_embd %d" %
             (tuple(out["transformer.wte.weight"].shape), V, C))
    return out


def config_json(args, xsa, eos_id):
    cfg = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": args["vocab_size"],
        "n_positions": args["block_size"],
        "n_embd": args["n_embd"],
        "n_layer": args["n_layer"],
        "n_head": args["n_head"],
        "n_inner": None,
        "activation_function": "gelu",  # nn.GELU(): erf
        "layer_norm_epsilon": 1e-5,
        "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "converted_from": "nanoGPT ckpt.pt (tools/convert/convert_nanogpt.py)",
    }
    # None (null) rather than absent: transformers' GPT2Config would otherwise assume 50256.
    cfg["bos_token_id"] = cfg["eos_token_id"] = eos_id
    if xsa is not None:
        cfg["xsa_layers"] = xsa
    return cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ckpt", help="nanoGPT's ckpt.pt")
    ap.add_argument("out", help="output folder (created; must not exist)")
    ap.add_argument("--tokenizer", help="tokenizer.json to copy beside the weights (GPT-2's for tiktoken gpt2 runs)")
    ap.add_argument("--xsa", default="none", help="layers with Exclusive Self Attention: all, none, last:N or i,j,...")
    ap.add_argument("--eos-id", type=int, default=None,
                    help="bos/eos token id (default: 50256, GPT-2's <|endoftext|>, when the vocabulary holds it)")
    a = ap.parse_args()
    if os.path.exists(a.out):
        fail("%s exists: name a new folder" % a.out)
    if a.tokenizer and not os.path.isfile(a.tokenizer):
        fail("--tokenizer %s: no such file" % a.tokenizer)
    sd, args = load(a.ckpt)
    for k in ("n_layer", "n_head", "n_embd", "block_size", "vocab_size"):
        if not isinstance(args.get(k), int) or args[k] <= 0:
            fail("model_args.%s is %r: expected a positive integer" % (k, args.get(k)))
    if args["n_embd"] % args["n_head"]:
        fail("n_embd %d is not a multiple of n_head %d" % (args["n_embd"], args["n_head"]))
    eos = a.eos_id if a.eos_id is not None else (50256 if args["vocab_size"] > 50256 else None)
    tensors = convert(sd, args)
    cfg = config_json(args, xsa_layers(a.xsa, args["n_layer"]), eos)
    parent = os.path.dirname(os.path.abspath(a.out))
    if not os.path.isdir(parent):
        fail("%s: no such folder to write into" % parent)
    tmp = tempfile.mkdtemp(dir=parent, prefix=os.path.basename(a.out) + ".partial-")
    try:
        save_file(tensors, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        with open(os.path.join(tmp, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        if a.tokenizer:
            shutil.copyfile(a.tokenizer, os.path.join(tmp, "tokenizer.json"))
        os.rename(tmp, a.out)  # nothing half-written under the name asked for
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    n = sum(t.numel() for t in tensors.values())
    print("%s: GPT-2 layout, %d layers, d %d, %d heads, vocab %d, %.2fM parameters (head tied), xsa %s" %
          (a.out, args["n_layer"], args["n_embd"], args["n_head"], args["vocab_size"], n / 1e6, a.xsa))


if __name__ == "__main__":
    main()
