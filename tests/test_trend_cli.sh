#!/usr/bin/env bash
# `compare` with pairs (the scaling table) and `report --trend` (training curves), on copies of
# the results fixtures given other parameter counts and training steps.
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/results
X=$(cd "$(dirname "$XSA_BIN")" && pwd)/$(basename "$XSA_BIN")
with() {  # SRC OUT SED-EXPR: a fixture copy with one edit
    sed "$3" "$F/$1.json" > "$TMP/$2.json"
}
# Scaling: the 124M pair and a "1.3B" pair (the same files with another n_params and weights).
with sa sa_big 's/"n_params": 124439808/"n_params": 1300000000/; s/"weights_sha256": "87e1/"weights_sha256": "bbbb/'
with xsa xsa_big 's/"n_params": [0-9]*/"n_params": 1300000000/; s/"weights_sha256": "639f/"weights_sha256": "bbbb/'
mkdir -p "$TMP/s" "$TMP/t"
if $X compare "$TMP/sa_big.json" "$TMP/xsa_big.json" $F/sa.json $F/xsa.json --iters 200 -o "$TMP/s/scaling.md" 2>"$TMP/err"; then
    rows=$(grep -E '^\| (124M|1.3B) \|' "$TMP/s/scaling.md" | head -2 | cut -d'|' -f2 | tr -d ' ' | tr '\n' ,)
    if [ "$rows" = "124M,1.3B," ] && grep -q '| 124M | sa-125m | xsa-125m | +1.50 |' "$TMP/s/scaling.md" &&
       grep -q '<polyline' "$TMP/s/scaling_scaling.svg" && grep -q '(log scale)' "$TMP/s/scaling_scaling.svg"; then
        pass scaling_table_sorted_by_params
    else fail scaling_table_sorted_by_params "rows '$rows'"; fi
else fail scaling_table_sorted_by_params "exit $?: $(head -1 "$TMP/err")"; fi
expect_exit odd_files 2 "in pairs" -- $X compare $F/sa.json $F/xsa.json $F/sa.json
expect_exit pair_not_comparable 2 "pair 2 .*xsa_other_data.json" -- $X compare "$TMP/sa_big.json" "$TMP/xsa_big.json" $F/sa.json $F/xsa_other_data.json --iters 50
# Pairs that make no scaling table: a shell glob over folders that hold a rerun's second file pairs
# SA with SA and XSA with XSA; a pair given twice; two sizes in one row. --force takes them, FORCED.
expect_exit pair_one_model_twice 2 "pair 1 \(.*sa.json, .*sa.json\) is one model twice .*pair 2 \(.*xsa.json, .*xsa.json\) is one model twice" -- \
    $X compare $F/sa.json $F/sa.json $F/xsa.json $F/xsa.json --iters 50
expect_exit pair_repeated 2 "pair 2 repeats pair 1" -- $X compare $F/sa.json $F/xsa.json $F/sa.json $F/xsa.json --iters 50
expect_exit pair_two_sizes 2 "pair 2 .* pairs 124439808 parameters with 1300000000" -- $X compare $F/sa.json $F/xsa.json $F/sa.json "$TMP/xsa_big.json" --iters 50
$X compare $F/sa.json $F/sa.json $F/xsa.json $F/xsa.json --iters 50 --force -o "$TMP/s/forced.md" 2>/dev/null &&
    grep -q "FORCED: not a scaling table: pair 1 .* is one model twice" "$TMP/s/forced.md" && pass pair_forced_says_so ||
    fail pair_forced_says_so "no FORCED note"
# Other shots across pairs, forced: the report says so too.
with xsa xsa_shots "s/\"num_fewshot\": 0/\"num_fewshot\": 5/; s/\"weights_sha256\": \"639f/\"weights_sha256\": \"cccc/"
with sa sa_shots "s/\"num_fewshot\": 0/\"num_fewshot\": 5/; s/\"weights_sha256\": \"87e1/\"weights_sha256\": \"cccc/; s/\"n_params\": 124439808/\"n_params\": 350000000/"
$X compare $F/sa.json $F/xsa.json "$TMP/sa_shots.json" "$TMP/xsa_shots.json" --iters 50 --force -o "$TMP/s/forced2.md" 2>/dev/null &&
    grep -q "FORCED: not a scaling table: pair 2 .* was not run as pair 1" "$TMP/s/forced2.md" && pass pair_forced_limits_says_so ||
    fail pair_forced_limits_says_so "no FORCED note"
# A chart's x labels are the table's (263K, 1.3B), and one document per task has no interval.
grep -q '>1.3B</text>' "$TMP/s/scaling_scaling.svg" && grep -q '>124M</text>' "$TMP/s/scaling_scaling.svg" &&
    pass scaling_chart_labels || fail scaling_chart_labels "$(grep -o '>[0-9.e+]*[KMB]*</text>' "$TMP/s/scaling_scaling.svg" | head -3)"

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
# One step per series (a flat line): the y axis spans a readable range and a score axis stays in
# [0, 100] (it ran 99.9 .. 100.1, or -1e-9 .. 1e-9, before).
mkdir -p "$TMP/flat"
$X report --trend "$TMP/sa_100.json" "$TMP/xsa_100.json" -o "$TMP/flat/f.md" 2>/dev/null
got=$(python3 - "$TMP"/flat/f_trend_*.svg <<'EOF'
import re, sys
for p in sys.argv[1:]:
    ys = [float(v) for v in re.findall(r'text-anchor="end" fill="#555555">([-0-9.e+]+)</text>', open(p).read())]
    if not ys or min(ys) < 0 or max(ys) > 100 or max(ys) - min(ys) < 1: print(p, ys); break
EOF
)
[ -z "$got" ] && ls "$TMP"/flat/f_trend_*.svg >/dev/null 2>&1 && pass trend_flat_axis_readable || fail trend_flat_axis_readable "$got"
# A folder at one chart's name: exit 2, and no other chart or report of the set is left.
mkdir -p "$TMP/tx/tr_trend_average.svg"
expect_exit trend_chart_folder 2 "tr_trend_average.svg: is a folder; nothing was written" -- $X report --trend "$TMP/sa_300.json" "$TMP/sa_100.json" "$TMP/xsa_100.json" "$TMP/xsa_300.json" -o "$TMP/tx/tr.md"
left=$(ls "$TMP/tx" | grep -v '^tr_trend_average.svg$')
[ -z "$left" ] && pass trend_chart_folder_nothing_left || fail trend_chart_folder_nothing_left "$left"
expect_exit trend_no_step 2 "no training step for checkpoints/sa-125m: score it with run --step N" -- $X report --trend $F/sa.json
# --steps: the steps of files run without one (or other steps than they record), one per file.
expect_exit trend_no_step_hint 2 "no training step for checkpoints/sa-125m: .*or give report --trend --steps LIST" -- $X report --trend $F/sa.json
$X report --trend --steps "100, 300" --series s,s $F/sa.json $F/xsa.json > "$TMP/steps.md" 2>&1
[ "$(grep -Eo '^\| [0-9]+ \|' "$TMP/steps.md" | tr -d '| ' | tr '\n' ,)" = "100,300," ] && pass trend_steps_flag || fail trend_steps_flag "$(head -c 300 "$TMP/steps.md")"
expect_exit trend_steps_count 2 "--steps 100 names 1 steps for 2 results files" -- $X report --trend --steps 100 $F/sa.json $F/xsa.json
expect_exit trend_steps_more 2 "--steps 1,2,3 names more steps than the 2 results files" -- $X report --trend --steps 1,2,3 $F/sa.json $F/xsa.json
expect_exit trend_steps_bad 2 "--steps 100,1e3: step 2 \(\"1e3\"\) is no whole number from 0 to 2147483647" -- $X report --trend --steps 100,1e3 $F/sa.json $F/xsa.json
expect_exit trend_steps_negative 2 "step 1 \(\"-5\"\) is no whole number" -- $X report --trend --steps -5,3 $F/sa.json $F/xsa.json
expect_exit steps_needs_trend 2 "--steps applies only with --trend" -- $X report --steps 1 $F/sa.json
# run records the step it finds (config.json's, else a step_N folder of the real path: `--model .`
# inside step_200 is at step 200), so the curve no longer depends on where report runs or on the
# checkpoint folder still being there. One document per task: no stderr, so the average has none.
RUN="--tasks arc_easy,boolq --limit 1 --data-dir $PWD/tests/fixtures/data --allow-data-change --offline --device cpu --quiet"
mkdir -p "$TMP/ck/step_200" "$TMP/ck/final"
cp demo/sa/* "$TMP/ck/step_200/" && cp demo/sa/* "$TMP/ck/final/"
sed -i 's/^{/{"step": 250,/' "$TMP/ck/final/config.json"
(cd "$TMP/ck/step_200" && "$X" run --model . $RUN --output "$TMP/st") >/dev/null 2>&1
"$X" run --model "$TMP/ck/final" $RUN --output "$TMP/st2" >/dev/null 2>&1
S200=$(ls "$TMP"/st/step_200/results_*.json 2>/dev/null) S250=$(ls "$TMP"/st2/final/results_*.json 2>/dev/null)
grep -q '"step": 200,' "$S200" && grep -q '"step_source": "path"' "$S200" && grep -q '"step": 250,' "$S250" &&
    grep -q '"step_source": "config.json"' "$S250" && pass run_records_step || fail run_records_step "$(grep -h step "$S200" "$S250" | head -4)"
# A folder further up (a working directory named iter3) says nothing of the checkpoint; a repeated
# "step" is read as Python reads it (the last); one that is no whole number gets a note, no step.
mkdir -p "$TMP/ck/iter3/runs/final" "$TMP/ck/dup" "$TMP/ck/str"
cp demo/sa/* "$TMP/ck/iter3/runs/final/"; cp demo/sa/* "$TMP/ck/dup/"; cp demo/sa/* "$TMP/ck/str/"
sed -i 's/^{/{"step": 100, "step": 200,/' "$TMP/ck/dup/config.json"
sed -i 's/^{/{"step": "300",/' "$TMP/ck/str/config.json"
(cd "$TMP/ck/iter3" && "$X" run --model runs/final $RUN --output "$TMP/st3") >/dev/null 2>&1
"$X" run --model "$TMP/ck/dup" $RUN --output "$TMP/st4" >/dev/null 2>&1
"$X" run --model "$TMP/ck/str" ${RUN/--quiet/} --output "$TMP/st5" >/dev/null 2>"$TMP/st5.err"
! grep -q '"step"' "$TMP"/st3/final/results_*.json && grep -q '"step": 200,' "$TMP"/st4/dup/results_*.json &&
    ! grep -q '"step"' "$TMP"/st5/str/results_*.json && grep -q 'config.json: "step": "300" is not a whole number' "$TMP/st5.err" &&
    pass run_step_rules || fail run_step_rules "$(grep -h '"step' "$TMP"/st[345]/*/results_*.json | head -3; head -2 "$TMP/st5.err")"
rm -rf "$TMP/ck"
# Every task of one document: the average has no interval either, and nothing is "real".
expect_exit one_doc_average_no_interval 0 "no interval: every task has a single document" -- $X compare "$S200" "$S250"
expect_exit trend_steps_recorded 0 "^\| 250 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$" -- bash -c 'cd / && "$0" report --trend "$1" "$2"' "$X" "$S200" "$S250"
# XSA files with other XSA layers (the checkpoint's own last two, or --xsa all) are separate curves,
# named by their layers; one curve joined them, with nothing said, before.
with xsa xsa_last2_500 's/"xsa_layers": "all"/"xsa_layers": "10,11"/; s/"num_fewshot": 0,/"num_fewshot": 0, "step": 500,/'
$X report --trend "$TMP/xsa_100.json" "$TMP/xsa_300.json" "$TMP/xsa_last2_500.json" "$TMP/sa_100.json" -o "$TMP/t/mixed.md" 2>"$TMP/err"
all=$(awk '/^## /{f=($0 == "## XSA (all layers)")} f && /^\| [0-9]/{print $2}' "$TMP/t/mixed.md" | tr '\n' ,)
two=$(awk '/^## /{f=($0 == "## XSA (layers 10,11)")} f && /^\| [0-9]/{print $2}' "$TMP/t/mixed.md" | tr '\n' ,)
[ "$all" = "100,300," ] && [ "$two" = "500," ] && grep -qx '## SA' "$TMP/t/mixed.md" && ! grep -qx '## XSA' "$TMP/t/mixed.md" &&
    pass trend_xsa_layers_separate || fail trend_xsa_layers_separate "all '$all', 10,11 '$two': $(grep '^## ' "$TMP/t/mixed.md" | tr '\n' ' ')"
expect_exit trend_duplicate 2 "second SA file at step 100" -- $X report --trend "$TMP/sa_100.json" "$TMP/sa_100.json"
expect_exit trend_series_count 2 "--series a names 1 series for 2" -- $X report --trend --series a "$TMP/sa_100.json" "$TMP/sa_300.json"
expect_exit trend_series_named 0 "^## base" -- $X report --trend --series base,base "$TMP/sa_100.json" "$TMP/sa_300.json"
$X report --trend --series "base, base " "$TMP/sa_100.json" "$TMP/sa_300.json" 2>&1 | grep -c '^## ' | grep -qx 1 &&
    pass trend_series_trimmed || fail trend_series_trimmed "\"base\" and \" base \" are two series"
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
# Chart links percent-encode what Markdown would misread in a file name (spaces, parentheses, &).
mkdir -p "$TMP/names"
$X compare $F/sa.json $F/xsa.json --iters 50 -o "$TMP/names/R&D (v1).md" >/dev/null 2>&1 &&
    grep -qF '](R%26D%20%28v1%29_delta.svg)' "$TMP/names/R&D (v1).md" && [ -f "$TMP/names/R&D (v1)_delta.svg" ] &&
    pass chart_link_encoded || fail chart_link_encoded "$(grep -o '](.*svg)' "$TMP/names/R&D (v1).md" | head -2)"
# A link that leads nowhere (/dev/stdout with standard output closed, say) is refused, not replaced.
ln -s "$TMP/nowhere/x" "$TMP/dangling.md"
expect_exit dangling_link_refused 2 "-o .*dangling.md: cannot write" -- $X compare $F/sa.json $F/xsa.json --iters 50 -o "$TMP/dangling.md"
[ -L "$TMP/dangling.md" ] && pass dangling_link_kept || fail dangling_link_kept "the link was replaced"
# The models' tables say what trend reads: the training step and where run found it (the
# results' step_source), a wrapper's name dropped from the tensor names, and XSA none declared.
with sa sa_stepped 's/"num_fewshot": 0,/"num_fewshot": 0, "step": 1200, "step_source": "checkpoint",/; s/"xsa_source": "config"/"xsa_source": "none", "weights_prefix": "model."/'
out=$($X compare "$TMP/sa_stepped.json" $F/xsa.json --iters 50 2>&1)
if echo "$out" | grep -qF '| training step | 1200 (from checkpoint) |' && echo "$out" | grep -qF '| weights prefix | `model.` dropped from every tensor name |' &&
   echo "$out" | grep -qF '| XSA layers | none (none declared) |' && [ "$(echo "$out" | grep -c '| training step |')" = 1 ]; then
    pass model_table_step_prefix
else fail model_table_step_prefix "$(echo "$out" | grep -E 'training step|weights prefix|XSA layers')"; fi
# XSA given first: the report says its deltas are SA - XSA (and the usual order says nothing)
expect_exit compare_xsa_first_note 0 "^> A is the XSA model and B the SA one: every delta below is SA - XSA" -- $X compare $F/xsa.json $F/sa.json --iters 50
if $X compare $F/sa.json $F/xsa.json --iters 50 | grep -q "A is the XSA model"; then fail compare_sa_first_no_note "note in the usual order"
else pass compare_sa_first_no_note; fi
finish
