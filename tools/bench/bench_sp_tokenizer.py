#!/usr/bin/env python3
"""The Python side of bench/bench_sp_tokenizer.c: sentencepiece encode throughput on the same
lines (one encode call per line, as the C bench does; and one batched call).
Usage: python3 -m tools.bench.bench_sp_tokenizer [MODEL [TEXTFILE [REPEATS]]]"""
import sys
import time

import sentencepiece as spm

from tools.pylib.cli import help_flag  # noqa: E402

help_flag(__doc__)

model = sys.argv[1] if len(sys.argv) > 1 else "../shared/benchdata/models/parameter_golf_sp1024/fineweb_1024_bpe.model"
path = sys.argv[2] if len(sys.argv) > 2 else "../shared/benchdata/boolq/dev.jsonl"
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
sp = spm.SentencePieceProcessor(model_file=model)
data = open(path, "rb").read()
lines = data.split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
for name, run in [("per line", lambda: sum(len(sp.encode(l)) for l in lines)),
                  ("batched", lambda: sum(len(x) for x in sp.encode(lines)))]:
    best = 1e30
    for _ in range(repeats):
        t0 = time.perf_counter()
        tokens = run()
        best = min(best, time.perf_counter() - t0)
    print("sentencepiece %s: %d lines, %.2f MB, %d tokens in %.3f s (best of %d): %.2f MB/s, %.0f tokens/s"
          % (name, len(lines), len(data) / 1e6, tokens, best, repeats, len(data) / 1e6 / best, tokens / best))
