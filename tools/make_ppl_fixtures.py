"""References for `xsa-eval ppl` (tests/test_ppl.c), from PyTorch/transformers and from
parameter-golf's own train_gpt.py, never from xsa-eval:

  tests/fixtures/ppl/reference.json
    "windows": per-target NLL of demo/sa and demo/xsa (XSA in every layer, hooked into
      transformers' Llama as tools/make_model_fixtures.py does) and KL(A || B) over the full
      vocabulary, on documents of tests/fixtures/tokenizers/corpus.txt, each document
      [BOS] + encode(text, add_special_tokens=False), windows of --context 32 --stride 12
      computed here independently (each target once, with up to 32 tokens of context).
    "bpb_fixture": parameter-golf's build_sentencepiece_luts + eval_val (imported from a
      checkout of openai/parameter-golf's train_gpt.py, not copied) on the committed shard
      tests/fixtures/ppl/corpus_sp600.bin (corpus.txt encoded with the committed
      tests/fixtures/tokenizers/sp_bpe/tokenizer.model), model demo/sa, TRAIN_SEQ_LEN 64.
    "bpb_shared": the same with ../shared/benchdata's fineweb_1024_bpe.model on the first 60
      LAMBADA test passages (joined by "\n"), TRAIN_SEQ_LEN 128; the shard is not committed
      (the test rebuilds it from the real text).

Usage: /tmp/tv/bin/python tools/make_ppl_fixtures.py --parameter-golf DIR_WITH_train_gpt.py
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from transformers import LlamaForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model_fixtures import install_xsa  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests/fixtures/ppl")


def load(name, xsa):
    m = LlamaForCausalLM.from_pretrained(os.path.join(ROOT, "demo", name), torch_dtype=torch.float32).eval()
    if xsa:
        install_xsa(m, list(range(m.config.num_hidden_layers)))
    return m


@torch.no_grad()
def window_logprobs(model, tokens, context, stride):
    """[(target index j, log_softmax row over V)] for every target, each scored once."""
    out, e, last = [], 0, len(tokens) - 1
    while e < last:
        e2 = min(e + (context if e == 0 else stride), last)
        b = max(0, e2 - context)
        lp = torch.log_softmax(model(torch.tensor([tokens[b:e2]])).logits[0].double(), -1)
        for j in range(e + 1, e2 + 1):
            out.append((j, j - b, lp[j - 1 - b]))
        e = e2
    return out


def windows_reference():
    tok = Tokenizer.from_file(os.path.join(ROOT, "demo/sa/tokenizer.json"))
    bos = json.load(open(os.path.join(ROOT, "demo/sa/config.json")))["bos_token_id"]
    lines = [l for l in open(os.path.join(ROOT, "tests/fixtures/tokenizers/corpus.txt"), encoding="utf-8").read().split("\n")
             if len(l.strip()) > 40][:6]
    a, b = load("sa", False), load("xsa", True)
    docs = []
    for text in lines:
        ids = [bos] + tok.encode(text, add_special_tokens=False).ids
        ra, rb = window_logprobs(a, ids, 32, 12), window_logprobs(b, ids, 32, 12)
        nll_a = [-float(r[2][ids[r[0]]]) for r in ra]
        nll_b = [-float(r[2][ids[r[0]]]) for r in rb]
        kl = [float((ra[i][2].exp() * (ra[i][2] - rb[i][2])).sum()) for i in range(len(ra))]
        top_a = [int(torch.argmax(r[2])) for r in ra]
        top_b = [int(torch.argmax(r[2])) for r in rb]
        docs.append({"text": text, "tokens": ids, "ctx": [r[1] for r in ra], "nll_a": nll_a, "nll_b": nll_b,
                     "kl": kl, "top_a": top_a, "top_b": top_b, "bytes": len(text.encode("utf-8"))})
    return {"context": 32, "stride": 12, "docs": docs}


def write_shard(path, ids):
    header = [20240520, 1, len(ids)] + [0] * 253
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(np.asarray(ids, dtype="<u2").tobytes())


class LossModel(torch.nn.Module):
    """What eval_val calls: model(x, y) -> mean cross-entropy (natural log)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, y):
        logits = self.m(x).logits.float()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="mean")


def pg_bpb(tg, sp_path, shard, seq_len, model):
    sp = spm.SentencePieceProcessor(model_file=sp_path)
    luts = tg.build_sentencepiece_luts(sp, model.config.vocab_size, torch.device("cpu"))
    val = tg.load_validation_tokens(shard, seq_len)

    class Args:
        val_batch_size = seq_len * 4
        train_seq_len = seq_len

    loss, bpb = tg.eval_val(Args, LossModel(model), 0, 1, torch.device("cpu"), 1, val, *luts)
    return {"seq_len": seq_len, "val_loss": loss, "val_bpb": bpb, "tokens": int(val.numel())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parameter-golf", required=True, help="folder with openai/parameter-golf's train_gpt.py")
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    args = ap.parse_args()
    sys.path.insert(0, args.parameter_golf)
    import train_gpt as tg  # parameter-golf's own functions

    os.makedirs(OUT, exist_ok=True)
    ref = {"windows": windows_reference()}
    sa = load("sa", False)
    sp600 = os.path.join(ROOT, "tests/fixtures/tokenizers/sp_bpe/tokenizer.model")
    text = open(os.path.join(ROOT, "tests/fixtures/tokenizers/corpus.txt"), encoding="utf-8").read()
    shard = os.path.join(OUT, "corpus_sp600.bin")
    write_shard(shard, spm.SentencePieceProcessor(model_file=sp600).encode(text))
    ref["bpb_fixture"] = pg_bpb(tg, sp600, shard, 64, sa)
    fw = os.path.join(args.shared, "benchdata/models/parameter_golf_sp1024/fineweb_1024_bpe.model")
    lam = os.path.join(args.shared, "benchdata/lambada_openai/lambada_test.jsonl")
    if os.path.exists(fw) and os.path.exists(lam):
        passages = [json.loads(l)["text"] for l in open(lam, encoding="utf-8")][:60]
        ids = spm.SentencePieceProcessor(model_file=fw).encode("\n".join(passages))
        tmp = "/tmp/xsa_ppl_shared_shard.bin"
        write_shard(tmp, ids)
        ref["bpb_shared"] = pg_bpb(tg, fw, tmp, 128, sa)
        ref["bpb_shared"]["n_passages"] = 60
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)
    print(json.dumps({k: v for k, v in ref.items() if k != "windows"}, indent=1))


if __name__ == "__main__":
    main()
