#!/usr/bin/env bash
# The two real parameter-golf fork artifacts of ../shared/benchdata/models/parameter_golf_forks
# (NeoMakesGames and DigitalSword99), scored on the real benchmark files of ../shared/benchdata
# by `xsa-eval run`, and their comparison written to reports/examples/pgolf_forks.md (+ SVGs and
# the two results files in reports/examples/pgolf_forks_results/). Each artifact is linked into
# its own folder of build/pgolf_examples/ with its architecture (tests/fixtures/pgolf_real/
# *.arch.json) as xsa_eval.json and the family's SentencePiece model as tokenizer.model; the
# folder stays, so an interrupted run resumes from its journal when rerun.
# Usage: bash tools/pgolf_examples.sh [extra run flags, e.g. --limit 200 --threads 2]
set -euo pipefail
cd "$(dirname "$0")/.."
S=${XSA_SHARED:-../shared}/benchdata
W=build/pgolf_examples
for fork in NeoMakesGames DigitalSword99; do
    mkdir -p "$W/$fork"
    ln -sfn "$(realpath "$S/models/parameter_golf_forks/${fork}_final_model.int8.ptz")" "$W/$fork/$fork.int8.ptz"
    ln -sfn "$(realpath "$S/models/parameter_golf_sp1024/fineweb_1024_bpe.model")" "$W/$fork/tokenizer.model"
    cp "tests/fixtures/pgolf_real/$fork.arch.json" "$W/$fork/xsa_eval.json"
done
rm -f "$W"/results/compare_*
./xsa-eval run --model "$W/NeoMakesGames/NeoMakesGames.int8.ptz" --model "$W/DigitalSword99/DigitalSword99.int8.ptz" \
    --tasks all --data-dir "$S" --offline --device cpu --output "$W/results" --quiet "$@"
E=reports/examples
mkdir -p "$E/pgolf_forks_results"
for f in "$W"/results/compare_*; do  # compare_<A>_vs_<B>{.md,_acc.svg,_delta.svg}
    stem=$(basename "$(ls "$W"/results/compare_*.md)" .md)
    cp "$f" "$E/pgolf_forks$(basename "$f" | sed "s/^$stem//")"
done
for fork in NeoMakesGames DigitalSword99; do
    cp "$(ls -t "$W"/results/"$fork"*/results_*.json | head -1)" "$E/pgolf_forks_results/$fork.json"
done
ls "$E"/pgolf_forks*
