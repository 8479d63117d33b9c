#!/usr/bin/env bash
# `compare` with pairs (the scaling table) and `report --trend` (training curves), on copies of
# the results fixtures given other parameter counts and training steps.
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/results
X=$XSA_BIN
with() {  # SRC OUT SED-EXPR: a fixture copy with one edit
    sed "$3" "$F/$1.json" > "$TMP/$2.json"
}
# Scaling: the 124M pair and a "1.3B" pair (the same files with another n_params).
with sa sa_big 's/"n_params": 124439808/"n_params": 1300000000/'
with xsa xsa_big 's/"n_params": [0-9]*/"n_params": 1300000000/'
mkdir -p "$TMP/s" "$TMP/t"
if $X compare "$TMP/sa_big.json" "$TMP/xsa_big.json" $F/sa.json $F/xsa.json --iters 200 -o "$TMP/s/scaling.md" 2>"$TMP/err"; then
    rows=$(grep -E '^\| (124M|1.3B) \|' "$TMP/s/scaling.md" | head -2 | cut -d'|' -f2 | tr -d ' ' | tr '\n' ,)
    if [ "$rows" = "124M,1.3B," ] && grep -q '| 124M | sa-125m | xsa-125m | +1.50 |' "$TMP/s/scaling.md" &&
       grep -q '<polyline' "$TMP/s/scaling_scaling.svg" && grep -q '(log scale)' "$TMP/s/scaling_scaling.svg"; then
        pass scaling_table_sorted_by_params
    else fail scaling_table_sorted_by_params "rows '$rows'"; fi
else fail scaling_table_sorted_by_params "exit $?: $(head -1 "$TMP/err")"; fi
expect_exit odd_files 2 "in pairs" -- $X compare $F/sa.json $F/xsa.json $F/sa.json
expect_exit pair_not_comparable 2 "pair 2 .*xsa_other_data.json" -- $X compare $F/sa.json $F/xsa.json $F/sa.json $F/xsa_other_data.json --iters 50

# Trend: steps from --step (the results' "step"), and from a step_N path component.
for s in 100 300; do
    with sa sa_$s "s/\"num_fewshot\": 0,/\"num_fewshot\": 0, \"step\": $s,/"
    with xsa xsa_$s "s#\"path\": \"checkpoints/xsa-125m\"#\"path\": \"checkpoints/xsa/step_$s\"#"
done
if $X report --trend "$TMP/sa_300.json" "$TMP/sa_100.json" "$TMP/xsa_100.json" "$TMP/xsa_300.json" -o "$TMP/t/trend.md" 2>"$TMP/err"; then
    steps=$(awk '/^## SA/{f=1} /^## XSA/{f=0} f && /^\| [0-9]/{print $2}' "$TMP/t/trend.md" | tr '\n' ,)
    if [ "$steps" = "100,300," ] && grep -q '^## XSA' "$TMP/t/trend.md" && [ -f "$TMP/t/trend_trend_average.svg" ] &&
       [ -f "$TMP/t/trend_trend_boolq.svg" ] && grep -q '<polygon' "$TMP/t/trend_trend_average.svg"; then
        pass trend_groups_by_series_and_step
    else fail trend_groups_by_series_and_step "steps '$steps'"; fi
else fail trend_groups_by_series_and_step "exit $?: $(head -1 "$TMP/err")"; fi
expect_exit trend_no_step 2 "no training step for checkpoints/sa-125m: run it with --step N" -- $X report --trend $F/sa.json
expect_exit trend_duplicate 2 "second SA file at step 100" -- $X report --trend "$TMP/sa_100.json" "$TMP/sa_100.json"
expect_exit trend_series_count 2 "--series a names 1 series for 2" -- $X report --trend --series a "$TMP/sa_100.json" "$TMP/sa_300.json"
expect_exit trend_series_named 0 "^## base" -- $X report --trend --series base,base "$TMP/sa_100.json" "$TMP/sa_300.json"
expect_exit series_needs_trend 2 "--series applies only with --trend" -- $X report --series a $F/sa.json
# A scaling table's rows must be run alike: a pair on other tasks is refused (a row's average would mean
# something else), and --force takes it.
expect_exit pair_other_tasks 2 "pair 2 .* was not run as pair 1 .*task sets differ" -- \
    $X compare "$TMP/sa_big.json" "$TMP/xsa_big.json" $F/xsa_three_tasks.json $F/xsa_three_tasks.json --iters 50
# A curve's points must be scored alike: another --limit or other data is refused; a task some files
# lack is left out of every curve, and the report says which.
with sa sa_lim "s/\"num_fewshot\": 0,/\"num_fewshot\": 0, \"step\": 500,/; s/\"limit\": 400/\"limit\": 500/g"
expect_exit trend_other_limit 2 "was run with --limit 400, .*sa_lim.json with --limit 500" -- \
    $X report --trend "$TMP/sa_100.json" "$TMP/sa_lim.json"
with xsa_three_tasks three_500 "s/\"num_fewshot\": 0,/\"num_fewshot\": 0, \"step\": 500,/"
expect_exit trend_left_out 0 "Left out, not in every file: arc_challenge, hellaswag, lambada_openai, openbookqa, social_iqa, winogrande" -- \
    $X report --trend --series s,s "$TMP/xsa_100.json" "$TMP/three_500.json"
expect_exit trend_series_empty 2 "--series a,,b: name 2 is empty" -- $X report --trend --series a,,b "$TMP/sa_100.json" "$TMP/sa_300.json" "$TMP/xsa_100.json"
# An output never replaces an input.
cp $F/sa.json $F/xsa.json "$TMP/"
expect_exit compare_output_is_input 2 "-o .*xsa.json is an input of this command" -- $X compare "$TMP/sa.json" "$TMP/xsa.json" -o "$TMP/xsa.json"
expect_exit trend_output_is_input 2 "-o .*sa_300.json is an input of this command" -- $X report --trend "$TMP/sa_100.json" "$TMP/sa_300.json" -o "$TMP/./sa_300.json"
expect_exit check_verdict_is_input 2 "--verdict .*sa.json is an input of this command" -- \
    $X check --baseline "$TMP/sa.json" --results "$TMP/xsa.json" --verdict "$TMP/sa.json"
cmp -s "$TMP/xsa.json" $F/xsa.json && cmp -s "$TMP/sa.json" $F/sa.json && pass inputs_unchanged || fail inputs_unchanged "an input was rewritten"
finish
