#!/usr/bin/env bash
# `xsa-eval run`: usage errors, bad data rows, and what a run leaves behind.
. "$(dirname "$0")/lib.sh"
M=tests/fixtures/parity/models/gpt2_bpe
D=tests/fixtures/data
run() { "$XSA_BIN" run --quiet "$@"; }

expect_exit unknown_flag 2 "unknown flag '--frobnicate'" -- run --model $M --tasks piqa --frobnicate
expect_exit missing_model 2 "--model and --tasks are required" -- run --tasks piqa
expect_exit missing_tasks 2 "--model and --tasks are required" -- run --model $M
expect_exit three_models 2 "at most 2 --model" -- run --model $M --model $M --model $M --tasks piqa
expect_exit bad_limit 2 "--limit expects an integer >= 1" -- run --model $M --tasks piqa --limit 0
expect_exit unknown_task 2 "unknown task or group 'nosuchtask'.*arc_easy" -- run --model $M --tasks nosuchtask --data-dir $D
expect_exit missing_model_dir 2 "/nonexistent" -- run --model /nonexistent --tasks piqa --data-dir $D --allow-data-change
expect_exit pinned_row_count 2 "expected 1838" -- run --model $M --tasks piqa --data-dir $D --output "$TMP/o0"

# A row missing a field: the message names the file, the line and the field.
mkdir -p "$TMP/bad/piqa"
head -n 3 $D/piqa/validation.jsonl > "$TMP/bad/piqa/validation.jsonl"
echo '{"goal": "no solutions here", "label": 0}' >> "$TMP/bad/piqa/validation.jsonl"
expect_exit row_missing_field 2 "validation.jsonl:4.*sol1" -- run --model $M --tasks piqa --data-dir "$TMP/bad" --allow-data-change --output "$TMP/o1"
[ -e "$TMP/o1" ] && [ -n "$(find "$TMP/o1" -name 'results_*')" ] && fail no_partial_results "a results file was written" || pass no_partial_results

# Invalid UTF-8 in a row.
mkdir -p "$TMP/utf/piqa"
printf '{"goal": "bad \xff byte", "sol1": "a", "sol2": "b", "label": 0}\n' > "$TMP/utf/piqa/validation.jsonl"
expect_exit invalid_utf8 2 "UTF-8" -- run --model $M --tasks piqa --data-dir "$TMP/utf" --allow-data-change --output "$TMP/o2"

# An empty choice list.
mkdir -p "$TMP/empty/arc_easy"
echo '{"id": "x", "question": "q?", "choices": {"text": [], "label": []}, "answerKey": "A"}' > "$TMP/empty/arc_easy/test.jsonl"
expect_exit empty_choices 2 "test.jsonl:1" -- run --model $M --tasks arc_easy --data-dir "$TMP/empty" --allow-data-change --output "$TMP/o3"

# A label out of range is counted wrong (as lm-eval does) and reported.
expect_exit label_out_of_range 0 "label outside their choices" -- "$XSA_BIN" run --model $M --tasks hellaswag --data-dir $D --allow-data-change --output "$TMP/o4"

# The 96-token window of this checkpoint truncates long BoolQ requests; the results count them.
expect_exit truncation_reported 0 "left-truncated" -- "$XSA_BIN" run --model $M --tasks boolq --data-dir $D --allow-data-change --output "$TMP/o5"
f=$(find "$TMP/o5" -name 'results_*.json' | head -n 1)
if [ -n "$f" ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); n=d['xsa_eval']['truncated_requests']['boolq']; sys.exit(0 if n > 0 else 1)" "$f"; then
    pass truncation_counted_in_results
else
    fail truncation_counted_in_results "no truncated_requests.boolq > 0 in $f"
fi

# Bare form and the table on stdout.
expect_exit bare_form 0 "\| piqa \| acc \|" -- "$XSA_BIN" --model $M --tasks piqa --data-dir $D --allow-data-change --quiet --output "$TMP/o6"
finish
