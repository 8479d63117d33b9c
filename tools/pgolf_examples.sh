#!/usr/bin/env bash
# The two real parameter-golf fork artifacts of ../shared/benchdata/models/parameter_golf_forks
# (NeoMakesGames and DigitalSword99), scored on the real benchmark files of ../shared/benchdata
# by `xsa-eval run`, and their comparison written to reports/examples/pgolf_forks.md (+ SVGs).
# Each artifact is linked into
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
# The report names its charts compare_<A>_vs_<B>_*.svg and the data folder as given: renamed to
# pgolf_forks*, and the folder written as $XSA_SHARED/benchdata (the repository cites no
# checkout-relative path).
stem=$(basename "$(ls "$W"/results/compare_*.md)" .md)
for f in "$W"/results/compare_*; do
    sed -e "s/$stem/pgolf_forks/g" -e "s#$S#\$XSA_SHARED/benchdata#g" "$f" > "$E/pgolf_forks${f##*/$stem}"
done
ls "$E"/pgolf_forks*
