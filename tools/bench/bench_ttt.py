"""`xsa-eval ppl --ttt` beside a record's own TTT function (PyTorch, float32 on the CPU, the same
thread count; 2026-03-23's eval_val_sliding_ttt, 2026-04-06/08's, 2026-04-09's eval_val_ttt), one
after the other in one run: wall time of each, the ratio, and both val_loss / val_bpb (they agree
to ~1e-8; tests/test_pgolf_ttt.c holds the bound).

The model is a parameter-golf final_model.pt with its xsa_eval.json (e.g. the record's shape at
random weights: python3 -m tools.fixtures.make_pgolf_fixtures --script RECORD --arch ARCH.json
--tokenizer fineweb_1024_bpe.model --make-random DIR --formats pt), the stream a token shard.

Usage (from the repository root; torch, sentencepiece, numpy):
  python3 -m tools.bench.bench_ttt --script RECORD/train_gpt.py --model DIR/final_model.pt --shard S.bin \\
      --tokenizer fineweb_1024_bpe.model --seq-len 2048 --stride 512 --threads 2 \\
      --set "TTT_LR=0.002 TTT_EPOCHS=1 TTT_CHUNK_TOKENS=8192 TTT_FREEZE_BLOCKS=0 TTT_BATCH_SEQS=4"
"""
import argparse
import json
import os
import subprocess
import tempfile
import time
import warnings

import numpy as np
import torch

from tools.fixtures import make_pgolf_fixtures as mpf
from tools.fixtures import make_pgolf_ttt_fixture as ttt
from tools.fixtures.make_pgolf_eval_fixtures import read_shard


def settings(mod, text):
    s = ttt.defaults(mod)
    for word in text.replace(",", " ").split():
        k, v = word.split("=")
        s[k] = float(v) if k in ("TTT_LR", "TTT_MOMENTUM", "TTT_GRAD_CLIP") else int(v)
    return s


def torch_side(a, mod, s):
    import sentencepiece as spm
    torch.set_num_threads(a.threads)
    arch = json.load(open(os.path.join(os.path.dirname(a.model), "xsa_eval.json")))
    model = mpf.build_model(mod, arch).float()
    sd = mpf.load_state(mod, model, a.model)
    model.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)
    tokens = torch.from_numpy(read_shard(a.shard).astype(np.int64))
    tokens = tokens[: (tokens.numel() - 1) // a.seq_len * a.seq_len + 1]
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    luts = mod.build_sentencepiece_luts(sp, arch["VOCAB_SIZE"], torch.device("cpu"))
    t0 = time.perf_counter()
    loss, bpb = ttt.run_ttt(mod, model, s, tokens, luts, a.score_batch, seq_len=a.seq_len, stride=a.stride)
    return time.perf_counter() - t0, loss, bpb


def ours(a, s):
    spec = " ".join(f"{k}={v}" for k, v in s.items())
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "o.json")
        cmd = [a.xsa_eval, "ppl", "--model", a.model, "--tokens-file", a.shard, "--tokenizer", a.tokenizer,
               "--context", str(a.seq_len), "--stride", str(a.stride), "--ttt", "--ttt-set", spec,
               "--threads", str(a.threads), "--json", out]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t0
        r = json.load(open(out))
    m = r["models"][0] if "models" in r else r
    return dt, m["nats_per_token"], m["bits_per_byte"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--script", required=True, help="the record's train_gpt.py")
    ap.add_argument("--model", required=True)
    ap.add_argument("--shard", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--stride", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--score-batch", type=int, default=32, help="2026-03-23's batch_seqs (windows per scoring forward)")
    ap.add_argument("--set", default="", help="TTT settings over the record's defaults")
    ap.add_argument("--xsa-eval", default="./xsa-eval")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    mod = mpf.import_script(a.script)
    ttt.prepare(mod)
    s = settings(mod, a.set)
    t_ours, l_ours, b_ours = ours(a, s)
    t_ref, l_ref, b_ref = torch_side(a, mod, s)
    print(f"settings {' '.join(f'{k}={v}' for k, v in s.items())}, seq_len {a.seq_len}, stride {a.stride}, threads {a.threads}")
    print(f"xsa-eval ppl --ttt        {t_ours:8.1f} s  val_loss {l_ours:.9f}  val_bpb {b_ours:.9f}")
    print(f"the record's TTT (torch fp32) {t_ref:8.1f} s  val_loss {l_ref:.9f}  val_bpb {b_ref:.9f}")
    print(f"ratio torch / xsa-eval    {t_ref / t_ours:.2f}x   |val_loss difference| {abs(l_ours - l_ref):.2e}")


if __name__ == "__main__":
    main()
