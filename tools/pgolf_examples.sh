#!/usr/bin/env bash
# The two real parameter-golf fork artifacts of ../shared/benchdata/models/parameter_golf_forks
# (NeoMakesGames and DigitalSword99), scored on the real benchmark files of ../shared/benchdata
# by `xsa-eval run`, and their comparison written to reports/examples/pgolf_forks.md (+ SVGs).
# Each artifact gets its architecture (tests/fixtures/pgolf_real/*.arch.json) as an
# xsa_eval.json beside a link to it, and the family's SentencePiece model as tokenizer.model.
# Usage: bash tools/pgolf_examples.sh [extra run flags, e.g. --limit 200 --threads 2]
set -euo pipefail
cd "$(dirname "$0")/.."
S=${XSA_SHARED:-../shared}/benchdata
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for fork in NeoMakesGames DigitalSword99; do
    mkdir -p "$W/$fork"
    ln -s "$(realpath "$S/models/parameter_golf_forks/${fork}_final_model.int8.ptz")" "$W/$fork/$fork.int8.ptz"
    ln -s "$(realpath "$S/models/parameter_golf_sp1024/fineweb_1024_bpe.model")" "$W/$fork/tokenizer.model"
    cp "tests/fixtures/pgolf_real/$fork.arch.json" "$W/$fork/xsa_eval.json"
done
./xsa-eval run --model "$W/NeoMakesGames/NeoMakesGames.int8.ptz" --model "$W/DigitalSword99/DigitalSword99.int8.ptz" \
    --tasks all --data-dir "$S" --offline --device cpu --output "$W/results" --quiet "$@"
E=reports/examples
for f in "$W"/results/compare_*; do
    base=$(basename "$f")
    cp "$f" "$E/pgolf_forks${base#compare_NeoMakesGames.int8.ptz_vs_DigitalSword99.int8.ptz}"
done
mkdir -p "$E/pgolf_forks_results"
for fork in NeoMakesGames DigitalSword99; do cp "$W/results/$fork.int8.ptz"/results_*.json "$E/pgolf_forks_results/$fork.json"; done
ls "$E"/pgolf_forks*
