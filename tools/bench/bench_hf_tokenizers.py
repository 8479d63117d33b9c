#!/usr/bin/env python3
"""Encoding speed of the Python `tokenizers` library on the tokenizer.json fixtures, with the
same input and method as bench/bench_tokenizer.c (one thread, encode() per line, no special
tokens), then runs build/bench/bench_tokenizer when built and prints both side by side.

Usage: TOKENIZERS_PARALLELISM=false python3 -m tools.bench.bench_hf_tokenizers [FILE]   (repo root)
"""
import os
import subprocess
import sys
import time

os.environ["TOKENIZERS_PARALLELISM"] = "false"
from tokenizers import Tokenizer  # noqa: E402
from tools.pylib.cli import help_flag


NAMES = ["gpt2", "llama3", "hf_sp", "hf_metaspace", "norm_mix", "split_mix"]
SHARED = "../shared/benchdata/lambada_openai/lambada_test.jsonl"
MIN_BYTES = 8 << 20


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else (SHARED if os.path.exists(SHARED) else
                                                   "tests/fixtures/tokenizers/corpus.txt")
    raw = open(path, "rb").read()
    reps = max(1, -(-MIN_BYTES // max(1, len(raw))))
    # The C side splits on b"\n" and takes bytes; invalid UTF-8 becomes U+FFFD on both sides.
    lines = [l.decode("utf-8", errors="replace") for l in raw.split(b"\n")]
    if raw.endswith(b"\n"):
        lines.pop()
    ours = {}
    exe = "build/bench/bench_tokenizer"
    if os.path.exists(exe):
        out = subprocess.run([exe, path], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[0] in NAMES:
                ours[f[0]] = (float(f[1]), int(f[2]))
    print(f"input {path}: {len(lines)} lines, {len(raw) / 1e6:.2f} MB x {reps} repeats, one thread")
    print(f"{'tokenizer':14} {'HF MB/s':>9} {'ours MB/s':>10} {'ratio':>7} {'tokens HF':>10} {'ours':>10}")
    for name in NAMES:
        tok = Tokenizer.from_file(f"tests/fixtures/tokenizers/{name}/tokenizer.json")
        n = 0
        t0 = time.perf_counter()
        for _ in range(reps):
            for line in lines:
                n += len(tok.encode(line, add_special_tokens=False).ids)
        mbs = len(raw) * reps / 1e6 / (time.perf_counter() - t0)
        o = ours.get(name)
        ratio = f"{o[0] / mbs:7.2f}" if o else "      -"
        print(f"{name:14} {mbs:9.2f} {o[0] if o else float('nan'):10.2f} {ratio} {n // reps:10d} "
              f"{o[1] if o else -1:10d}")


if __name__ == "__main__":
    help_flag(__doc__)  # before anything is written
    main()
