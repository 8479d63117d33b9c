#!/usr/bin/env bash
# Command-line basics: help, version, unknown commands, and the one parser every subcommand
# uses (eval/cli.c): the same forms and messages everywhere.
. "$(dirname "$0")/lib.sh"
expect_exit help 0 "usage: xsa-eval" -- "$XSA_BIN" --help
expect_exit version 0 "^xsa-eval [0-9]" -- "$XSA_BIN" --version
expect_exit unknown_command 2 "unknown command 'frobnicate'" -- "$XSA_BIN" frobnicate
expect_exit no_args 2 "usage" -- "$XSA_BIN"

F=tests/fixtures/results
# --name=VALUE works for every command (check used to refuse it), flags after positionals too.
expect_exit check_equals_form 0 "PASS" -- "$XSA_BIN" check --baseline=$F/xsa.json --results=$F/xsa.json --seed=7 --iters=400
expect_exit compare_flags_after_files 0 "^# xsa-125m \(A\) vs xsa-125m \(B\)" -- "$XSA_BIN" compare $F/xsa.json $F/xsa.json --iters=200
# --seed is one integer type in compare and check; ranges are said the same way.
for c in "compare $F/sa.json $F/xsa.json" "check --baseline $F/sa.json --results $F/xsa.json"; do
    name=${c%% *}
    expect_exit "${name}_seed_integer" 2 "--seed 1.5: expected a whole number from 1 to 9007199254740992" -- $XSA_BIN $c --seed 1.5
    expect_exit "${name}_alpha_range" 2 "--alpha 1: expected a number in \(0, 1\)" -- $XSA_BIN $c --alpha 1
done
# Every command: one form for an unknown flag and for a missing value, and --help from the table.
for c in run download tasks info tokenize logprobs compare report check; do
    expect_exit "${c}_unknown_flag" 2 "^xsa-eval $c: unknown flag '--frob' \(see xsa-eval $c --help\)$" -- "$XSA_BIN" $c --frob
    expect_exit "${c}_help" 0 "^usage: xsa-eval $c .*|^  -h, --help +this text$" -- "$XSA_BIN" $c --help
done
# A flag is its whole name: getopt_long alone would take --lim for --limit and --hel for --help,
# prefixes that --help does not list and that a later flag could make mean something else.
for c in run download tasks info tokenize logprobs ppl probe compare report check; do
    expect_exit "${c}_abbreviated_flag" 2 "^xsa-eval $c: unknown flag '--hel'; did you mean --help\? \(see xsa-eval $c --help\)$" -- \
        "$XSA_BIN" $c --hel
done
expect_exit run_abbreviated_limit 2 "^xsa-eval run: unknown flag '--lim'; did you mean --limit\?" -- \
    "$XSA_BIN" run --model demo/sa --tasks piqa --lim 3 --offline --cache-dir "$TMP/empty-cache"
expect_exit check_abbreviated_equals 2 "^xsa-eval check: unknown flag '--base'; did you mean --baseline\?" -- \
    "$XSA_BIN" check --base=$F/xsa.json --results $F/xsa.json
# A folder where a file is read names itself as one (not fread's "Is a directory").
expect_exit compare_folder_input 2 "^xsa-eval compare: tests/fixtures/results: a folder, not a file; give the file itself$" -- \
    "$XSA_BIN" compare $F/xsa.json tests/fixtures/results
for c in "run --tasks" "download --tasks" "tasks --cache-dir" "info --model" "tokenize --tokenizer" "logprobs --model" \
         "compare -o" "report -o" "check --verdict"; do
    expect_exit "${c%% *}_missing_value" 2 "^xsa-eval ${c%% *}: ${c#* } needs a value" -- "$XSA_BIN" $c
done
finish
