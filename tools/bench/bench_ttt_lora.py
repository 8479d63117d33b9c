"""`xsa-eval ppl --ttt` on a model of the 2026-04-10 family beside the record's own LoRA TTT
(eval_val_ttt_lora, or 2026-04-14's eval_val_ttt_phased with PHASED_TTT_ENABLED=1; PyTorch float32
on the CPU, the same thread count), one after the other in one run: wall time of each, the ratio,
and both val_loss / val_bpb. Both draw each document's adapters from xsa-eval's generator
(tools/fixtures/make_pgolf_lora_ttt_fixture.py puts it in the record's place), so they agree to
float32 rounding.

The model is a final_model.pt with its xsa_eval.json (the record's shape at random weights:
python3 -m tools.fixtures.make_pgolf_fixtures --script RECORD --arch ARCH.json --tokenizer
fineweb_1024_bpe.model --make-random DIR --formats pt). The documents are the first --docs rows of a
JSON-lines file (--field), each BOS and its SentencePiece ids, as one stream.

Usage (from the repository root; torch, sentencepiece, numpy, brotli):
  python3 -m tools.bench.bench_ttt_lora --script RECORD/train_gpt.py --model DIR/final_model.pt \\
      --jsonl ../shared/benchdata/lambada_openai/lambada_test.jsonl --docs 96 --tokenizer fineweb_1024_bpe.model \\
      --seq-len 1024 --threads 2 --set "TTT_BATCH_SIZE=16"
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

from tools.fixtures import make_pgolf_eval_fixtures as mpe
from tools.fixtures import make_pgolf_fixtures as mpf
from tools.fixtures import make_pgolf_lora_ttt_fixture as lora

STRINGS = ("TTT_OPTIMIZER",)
FLOATS = ("TTT_LORA_LR", "TTT_WEIGHT_DECAY", "TTT_BETA1", "TTT_BETA2", "GLOBAL_TTT_LR", "GLOBAL_TTT_MOMENTUM",
          "GLOBAL_TTT_WARMUP_START_LR", "GLOBAL_TTT_GRAD_CLIP")


NAMES = ("TTT_LORA_RANK", "TTT_LORA_LR", "TTT_CHUNK_SIZE", "TTT_EVAL_SEQ_LEN", "TTT_BATCH_SIZE", "TTT_GRAD_STEPS",
         "TTT_WEIGHT_DECAY", "TTT_BETA1", "TTT_BETA2", "TTT_K_LORA", "TTT_MLP_LORA", "TTT_O_LORA", "TTT_OPTIMIZER")
PHASE_NAMES = ("PHASED_TTT_PREFIX_DOCS", "PHASED_TTT_NUM_PHASES", "GLOBAL_TTT_LR", "GLOBAL_TTT_MOMENTUM", "GLOBAL_TTT_EPOCHS",
               "GLOBAL_TTT_CHUNK_TOKENS", "GLOBAL_TTT_BATCH_SEQS", "GLOBAL_TTT_WARMUP_START_LR", "GLOBAL_TTT_WARMUP_CHUNKS",
               "GLOBAL_TTT_GRAD_CLIP", "GLOBAL_TTT_RESPECT_DOC_BOUNDARIES")


def settings(mod, text):
    """The record's code's defaults (its Hyperparameters; they differ between records: 2026-04-14's
    TTT_CHUNK_SIZE is 48) under --set's words, all of them given to both sides."""
    s = {}
    for word in text.replace(",", " ").split():
        k, v = word.split("=")
        s[k] = v if k in STRINGS else float(v) if k in FLOATS else int(v)
    h = mod.Hyperparameters
    for k in NAMES + (PHASE_NAMES if s.get("PHASED_TTT_ENABLED") else ()):
        v = getattr(h, k.lower(), None)
        if k not in s and v is not None:
            s[k] = int(v) if isinstance(v, bool) else v
    return dict(sorted(s.items()))


def stream(a, path):
    """The documents as one shard at path: BOS, then each row's ids; returns the token count."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    ids = []
    with open(a.jsonl) as f:
        for i, line in enumerate(f):
            if i == a.docs:
                break
            ids += [1] + sp.encode(json.loads(line)[a.field])
    mpe.write_shard(path, ids)
    return len(ids)


def torch_side(a, mod, s, shard):
    import sentencepiece as spm
    torch.set_num_threads(a.threads)
    arch = json.load(open(os.path.join(os.path.dirname(a.model), "xsa_eval.json")))
    model = mpf.build_model(mod, arch).float()
    sd = mpf.load_state(mod, model, a.model)
    model.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)
    tokens = torch.from_numpy(mpe.read_shard(shard).astype(np.int64))
    tokens = tokens[: (tokens.numel() - 1) // a.seq_len * a.seq_len + 1]  # load_validation_tokens
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    luts = mod.build_sentencepiece_luts(sp, arch["VOCAB_SIZE"], torch.device("cpu"))
    t0 = time.perf_counter()
    loss, bpb = lora.run_model(mod, model, tokens, luts, dict(s, EVAL_SEQ_LEN=a.seq_len))
    return time.perf_counter() - t0, loss, bpb


def ours(a, s, shard):
    spec = " ".join(f"{k}={v}" for k, v in s.items())
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "o.json")
        cmd = [a.xsa_eval, "ppl", "--model", a.model, "--tokens-file", shard, "--tokenizer", a.tokenizer,
               "--context", str(a.seq_len), "--ttt", "--ttt-set", spec, "--threads", str(a.threads), "--json", out,
               "-o", os.path.join(d, "o.md")]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        m = json.load(open(out))["models"][0]
    return wall, m["nats_per_token"], m["bits_per_byte"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--script", required=True, help="the record's train_gpt.py (2026-04-10, or 2026-04-14 for phases)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--jsonl", required=True, help="documents, one JSON object a line")
    ap.add_argument("--field", default="text")
    ap.add_argument("--docs", type=int, default=96)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--seq-len", type=int, default=2048, help="EVAL_SEQ_LEN (the stream is cut to whole sequences)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--set", default="", help="the record's settings by their names, as --ttt-set takes them")
    ap.add_argument("--xsa-eval", default="./xsa-eval")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    mpe.install_flash()
    mod = lora.prepare_script(a.script)
    s = settings(mod, a.set)
    with tempfile.TemporaryDirectory() as d:
        shard = os.path.join(d, "docs.bin")
        n = stream(a, shard)
        w_ours, l_ours, b_ours = ours(a, s, shard)
        w_torch, l_torch, b_torch = torch_side(a, mod, s, shard)
    print(f"{a.docs} documents, {n} tokens (cut to whole sequences of {a.seq_len}), {a.threads} threads, settings: "
          + " ".join(f"{k}={v}" for k, v in s.items()))
    print("| | wall | val_loss | val_bpb |\n|---|---:|---:|---:|")
    print(f"| `xsa-eval ppl --ttt` | {w_ours:.1f} s | {l_ours:.9f} | {b_ours:.9f} |")
    print(f"| the record's function, torch {torch.__version__.split('+')[0]} fp32 | {w_torch:.1f} s | {l_torch:.9f} | {b_torch:.9f} |")
    print(f"xsa-eval / torch speed: {w_torch / w_ours:.2f}x; val_loss differs by {l_ours - l_torch:.3g}")


if __name__ == "__main__":
    main()
