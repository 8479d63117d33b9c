#!/usr/bin/env bash
# tools/compare_samples.sh OLD_BIN NEW_BIN: scores the same checkpoints and rows with two
# xsa-eval binaries (e.g. before and after a refactor) with --log-samples, and compares every
# samples file byte for byte: the demo's SA and XSA checkpoints on the nine fixture tasks, the
# parity gpt2, and stories260K on the real benchmark files of ../shared/benchdata (--limit 300;
# skipped when absent). Exit 0 when all are identical.
set -u
cd "$(dirname "$0")/.." || exit 2
[ $# -eq 2 ] || { echo "usage: tools/compare_samples.sh OLD_BIN NEW_BIN" >&2; exit 2; }
S=${XSA_SHARED:-../shared}/benchdata
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
score() {  # score BIN OUT
    local c="--device cpu --quiet --log-samples --offline --threads 2 --cache-dir $2/cache"
    "$1" run --model demo/sa --model demo/xsa --tasks all --data-dir tests/fixtures/data --allow-data-change \
        --output "$2/demo" $c >/dev/null 2>&1 || echo "$1: demo run failed"
    "$1" run --model tests/fixtures/parity/models/gpt2_bpe --tasks all --data-dir tests/fixtures/data \
        --allow-data-change --output "$2/gpt2" $c >/dev/null 2>&1 || echo "$1: gpt2 run failed"
    if [ -f "$S/models/stories260K/stories260K.bin" ]; then
        "$1" run --model "$S/models/stories260K/stories260K.bin" --tokenizer "$S/models/stories260K/tok512.bin" \
            --tasks all --data-dir "$S" --limit 300 --output "$2/s260" $c >/dev/null 2>&1 || echo "$1: stories260K run failed"
    fi
}
score "$1" "$W/a"
score "$2" "$W/b"
n=0 bad=0
for f in $(cd "$W/a" && find . -name 'samples_*.jsonl' | sort); do
    n=$((n + 1))
    stem=$(echo "$f" | sed -E 's/_[0-9T:.-]+(_[0-9a-f]{6})?\.jsonl$//')  # the run's stamp differs
    g=$(ls "$W/b/$stem"_*.jsonl 2>/dev/null | head -1)
    cmp -s "$W/a/$f" "$g" || { bad=$((bad + 1)); echo "differs: $f"; }
done
echo "$n samples files compared, $bad differ"
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
