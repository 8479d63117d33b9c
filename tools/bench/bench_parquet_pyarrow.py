#!/usr/bin/env python3
"""The pyarrow side of bench/bench_parquet.c: the same file read into an Arrow table, into Python
rows (to_pylist, the closest to xsa-eval's JSON rows) and into JSONL; MB/s of Parquet bytes and
rows/s, best of REPEATS, one thread.
Usage: python3 -m tools.bench.bench_parquet_pyarrow FILE.parquet [REPEATS]"""
import json
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

from tools.pylib.cli import help_flag  # noqa: E402

help_flag(__doc__)

path = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
pa.set_cpu_count(1)
pa.set_io_thread_count(1)
data = open(path, "rb").read()
mb = len(data) / 1e6


def table():
    return pq.read_table(pa.BufferReader(data), use_threads=False)


for name, run in [("table", table),
                  ("rows", lambda: table().to_pylist()),
                  ("JSONL", lambda: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in table().to_pylist()))]:
    best = 1e30
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t0)
    n = table().num_rows
    print("pyarrow %s parquet -> %s: %d rows, %.2f MB file in %.4f s (best of %d): %.1f MB/s, %.0f rows/s"
          % (pa.__version__, name, n, mb, best, repeats, mb / best, n / best))
