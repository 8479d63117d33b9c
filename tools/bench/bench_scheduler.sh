#!/usr/bin/env bash
# The scheduler benchmark and the lm-evaluation-harness comparison, side by side in one run.
#
#   1. build/bench/bench_scheduler: shared prefixes vs --no-share on the CPU backend, per task and
#      in total (requests, tokens requested / computed, sharing ratio, tokens/s, requests/s), over
#      ../shared/benchdata (or tests/fixtures/data), stories260K and a random ~26M llama
#   2. tools/bench/bench_lm_eval.py: the same checkpoints and rows through lm-eval 0.4 (HFLM, float32,
#      batch sizes 1, 8 and 32) and `xsa-eval run`, timed one after the other, the ratios, identical predictions
#
# Usage: tools/bench/bench_scheduler.sh            (from the repository root; full size takes ~20 minutes on 2 busy cores; BENCH_LIMIT=400 about 8)
# Sizes (environment): BENCH_LIMIT (docs per task, stories260K, default 0 = full size),
#   BENCH_LIMIT_BIG (random 26M llama, default 8), LM_LIMIT_STORIES (default 40),
#   LM_LIMIT_RANDOM (default 4), LM_REPEAT (runs of each side, medians; default 1),
#   LM_RANDOM_VOCAB (logits width of the random llama; default its tokenizer's 703),
#   LM_RANDOM_SHAPE (shapes of the random llama, default tiny25m,body26m: see tools/bench/bench_lm_eval.py),
#   BENCH_OUT (default /tmp/xsa_bench_lm_eval).
# lm-eval's side needs: pip install torch transformers "lm-eval[hf]" datasets
set -euo pipefail
cd "$(dirname "$0")/../.."

make -j2 xsa-eval build/bench/bench_scheduler >/dev/null

echo "## 1. scheduler: shared prefixes vs one row per request (bench/bench_scheduler.c)"
echo
./build/bench/bench_scheduler --limit "${BENCH_LIMIT:-0}" --limit-big "${BENCH_LIMIT_BIG:-8}"
echo
echo "## 2. xsa-eval vs lm-evaluation-harness, same checkpoint and rows, this CPU (tools/bench/bench_lm_eval.py)"
echo
python3 -m tools.bench.bench_lm_eval --limit-stories "${LM_LIMIT_STORIES:-40}" --limit-random "${LM_LIMIT_RANDOM:-4}" \
    --repeat "${LM_REPEAT:-1}" --random-vocab "${LM_RANDOM_VOCAB:-0}" --random-shape "${LM_RANDOM_SHAPE:-tiny25m,body26m}" \
    --out "${BENCH_OUT:-/tmp/xsa_bench_lm_eval}" 2>"${BENCH_OUT:-/tmp/xsa_bench_lm_eval}.log"
