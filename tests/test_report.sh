#!/usr/bin/env bash
# `xsa-eval compare` and `xsa-eval report`: golden Markdown + SVG (reports/examples/, made by
# the commands in reports/examples/README.md), refusals, --force stamping, usage errors.
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/results
E=reports/examples

# Golden comparison: written under $TMP, the temp folder normalised back to reports/examples/.
"$XSA_BIN" compare $F/sa.json $F/xsa.json -o "$TMP/sa_vs_xsa.md" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && pass compare_exit_0 || fail compare_exit_0 "exit $rc"
# (a TMPDIR with spaces is quoted in the recorded command: 'TMP/x.md' reads as E/x.md)
sed "s#'$TMP/\([^']*\)'#$E/\1#g; s#$TMP/#$E/#g" "$TMP/sa_vs_xsa.md" >"$TMP/sa_vs_xsa.norm.md"
for f in sa_vs_xsa.norm.md:sa_vs_xsa.md sa_vs_xsa_delta.svg:sa_vs_xsa_delta.svg sa_vs_xsa_acc.svg:sa_vs_xsa_acc.svg; do
    got=${f%%:*} want=${f##*:}
    if cmp -s "$TMP/$got" "$E/$want"; then pass "golden_$want"
    else fail "golden_$want" "differs"; diff "$TMP/$got" "$E/$want" | head -6; fi
done
if grep -q '!\[Per-task delta B - A with its 95% interval\](sa_vs_xsa_delta.svg)' "$TMP/sa_vs_xsa.md"; then pass chart_links_relative
else fail chart_links_relative "no relative link to the delta chart"; fi

"$XSA_BIN" report $F/sa.json $F/xsa.json $F/xsa_regressed.json -o "$TMP/report.md" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && pass report_exit_0 || fail report_exit_0 "exit $rc"
sed "s#'$TMP/\([^']*\)'#$E/\1#g; s#$TMP/#$E/#g" "$TMP/report.md" >"$TMP/report.norm.md"
if cmp -s "$TMP/report.norm.md" $E/report.md; then pass golden_report.md; else fail golden_report.md differs; diff "$TMP/report.norm.md" $E/report.md | head -6; fi
if cmp -s "$TMP/report_acc.svg" $E/report_acc.svg; then pass golden_report_acc.svg; else fail golden_report_acc.svg differs; fi

# To stdout without -o; one file is a valid report.
expect_exit compare_stdout 0 "^\| lambada_openai \| acc \| 33.00 ± 2.35 \| 39.00 ± 2.44 \| \+6.00 \|" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json
expect_exit report_one_file 0 "^\| boolq \| acc \| 61.00 ± 2.44 \|$" -- "$XSA_BIN" report $F/xsa.json
expect_exit compare_metric_acc 0 "^\| arc_easy \| acc \| 43.00" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json --metric acc --iters 200
expect_exit lambada_perplexity 0 "lambada_openai perplexity \(lower is better\): A 41.120, B 36.173" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json --iters 200
expect_exit report_perplexity_row 0 "^\| lambada_openai \| perplexity \|" -- "$XSA_BIN" report $F/sa.json $F/xsa.json

# Refusals and --force.
expect_exit compare_other_data 2 "not comparable: winogrande data differ.*--force" -- "$XSA_BIN" compare $F/xsa.json $F/xsa_other_data.json
expect_exit compare_other_tasks 2 "task sets differ" -- "$XSA_BIN" compare $F/sa.json $F/xsa_three_tasks.json
expect_exit compare_forced 0 "FORCED: inputs not comparable: winogrande data differ" -- "$XSA_BIN" compare $F/xsa.json $F/xsa_other_data.json --force --iters 200
expect_exit compare_forced_subset 0 "\*\*all \(3 tasks\)\*\*" -- "$XSA_BIN" compare $F/sa.json $F/xsa_three_tasks.json --force --iters 200
expect_exit compare_lm_eval_file 2 "per-document data needed" -- "$XSA_BIN" compare $F/lm_eval_plain.json $F/xsa.json
expect_exit compare_missing 2 "nope.json: cannot open" -- "$XSA_BIN" compare $F/sa.json $F/nope.json

# --json: every number, McNemar p raw and Holm-adjusted over the nine tasks (docs/results-format.md);
# with "-" stdout holds the JSON alone.
expect_exit compare_json_holm 0 '"task": "lambada_openai".*"mcnemar_p": 0.0003881309029, "mcnemar_p_holm": 0.003493178126, "real": true' -- "$XSA_BIN" compare $F/sa.json $F/xsa.json --json - --iters 200
expect_exit compare_json_family 0 '^  "family_tasks": 9,$' -- "$XSA_BIN" compare $F/sa.json $F/xsa.json --json - --iters 200
out=$("$XSA_BIN" compare $F/sa.json $F/xsa.json --json - --iters 200 2>/dev/null)
if [ "${out:0:1}" = "{" ] && ! grep -q "^| task" <<<"$out"; then pass compare_json_stdout_alone; else fail compare_json_stdout_alone "Markdown mixed into the JSON"; fi
"$XSA_BIN" compare $F/xsa.json $F/xsa_marginal_drop.json --iters 200 -o "$TMP/m.md" --json "$TMP/m.json" >/dev/null 2>&1; rc=$?
# piqa's drop: p 0.024 alone, not real over nine tasks (Holm), in both outputs
if [ $rc -eq 0 ] && grep -qE '"task": "piqa".*"mcnemar_p": 0.02[0-9]*, "mcnemar_p_holm": 0.[2-9][0-9]*, "real": false' "$TMP/m.json" &&
   grep -qE '^\| piqa \| acc_norm \|.*\| 0.024 \| 0.[2-9][0-9]* \| no \|$' "$TMP/m.md" && [ -f "$TMP/m_delta.svg" ]; then pass compare_json_and_report
else fail compare_json_and_report "exit $rc, or piqa's Holm p / real missing"; fi
expect_exit compare_json_one_pair 2 "--json writes one pair" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json $F/sa.json $F/xsa.json --json "$TMP/x.json"
expect_exit compare_json_same_as_o 2 "name the same file" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json -o "$TMP/same.md" --json "$TMP/same.md"
expect_exit compare_one_file 2 "expected results files in pairs, A.json B.json .*\(got 1\)" -- "$XSA_BIN" compare $F/sa.json
expect_exit compare_three_files 2 "in pairs.*got 3" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json $F/xsa.json
expect_exit compare_too_many_pairs 2 "130 results files: at most 64 pairs \(128 files\)" -- "$XSA_BIN" compare $(for i in $(seq 65); do echo $F/sa.json $F/xsa.json; done)
expect_exit compare_bad_metric 2 "expected auto, acc or acc_norm" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json --metric f1
expect_exit compare_bad_iters 2 "--iters" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json --iters 0
expect_exit compare_tiny_alpha 2 "--iters 10: too few resamples for a 1 - 1e-12 interval; give at least 2000000000000" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json --alpha 1e-12 --iters 10
expect_exit report_no_files 2 "expected one or more" -- "$XSA_BIN" report
expect_exit report_missing 2 "nope.json: cannot open" -- "$XSA_BIN" report $F/sa.json $F/nope.json
expect_exit compare_help 0 "usage: xsa-eval compare" -- "$XSA_BIN" compare --help
expect_exit report_help 0 "usage: xsa-eval report" -- "$XSA_BIN" report --help
# Nothing half-written on refusal.
"$XSA_BIN" compare $F/xsa.json $F/xsa_other_data.json -o "$TMP/refused.md" >/dev/null 2>&1
if [ ! -e "$TMP/refused.md" ] && [ ! -e "$TMP/refused_delta.svg" ]; then pass no_output_on_refusal; else fail no_output_on_refusal "files written"; fi
# Nothing non-finite or impossible is ever compared or reported: a null (overflowed) perplexity,
# an accuracy outside [0, 1], a positive log-likelihood, a summary that disagrees with the
# per-document values.
sed '0,/"perplexity,none": [-0-9.e+]*/s//"perplexity,none": null/' $F/xsa.json >"$TMP/ppl_null.json"
expect_exit report_ppl_overflow 2 "lambada_openai: perplexity is not a finite number" -- "$XSA_BIN" report "$TMP/ppl_null.json"
expect_exit compare_ppl_overflow 2 "lambada_openai: perplexity is not a finite number" -- "$XSA_BIN" compare $F/sa.json "$TMP/ppl_null.json" --iters 200
sed '0,/"acc,none": [-0-9.e+]*/s//"acc,none": 1.25/' $F/xsa.json >"$TMP/acc_big.json"
expect_exit compare_acc_above_1 2 "arc_easy: acc disagrees with its per-document values" -- "$XSA_BIN" compare $F/sa.json "$TMP/acc_big.json"
python3 - "$F/xsa.json" "$TMP" <<'EOF'
import json, sys
def edit(name, f):
    r = json.load(open(sys.argv[1]))
    f(r)
    json.dump(r, open(sys.argv[2] + "/" + name, "w"))
edit("acc_half.json", lambda r: r["xsa_eval"]["per_doc"]["piqa"]["acc"].__setitem__(0, 0.5))
edit("ll_positive.json", lambda r: r["xsa_eval"]["per_doc"]["lambada_openai"]["perplexity"].__setitem__(0, 0.25))
edit("per_doc_number.json", lambda r: r["xsa_eval"]["per_doc"]["arc_easy"].__setitem__("acc_norm", 5))
edit("summary_edited.json", lambda r: r["results"]["boolq"].__setitem__("acc,none", r["results"]["boolq"]["acc,none"] + 0.01))
EOF
expect_exit check_acc_not_0_or_1 2 "per_doc.piqa.acc holds an impossible value" -- "$XSA_BIN" check --baseline $F/xsa.json --results "$TMP/acc_half.json"
expect_exit report_positive_ll 2 "per_doc.lambada_openai.perplexity holds an impossible value" -- "$XSA_BIN" report "$TMP/ll_positive.json"
expect_exit per_doc_not_array 2 "per_doc.arc_easy.acc_norm must be an array \(one value per document\)" -- "$XSA_BIN" report "$TMP/per_doc_number.json"
expect_exit check_summary_edited 2 "boolq: acc disagrees with its per-document values" -- "$XSA_BIN" check --baseline "$TMP/summary_edited.json" --results $F/xsa.json

# A model name with a newline, HTML and Markdown in it is shown literally, never as markup.
python3 - "$F/xsa.json" "$TMP/evil.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["xsa_eval"]["model"]["name"] = "evil\n# Owned <script>alert(1)</script> | [x](http://a) *b*"
json.dump(r, open(sys.argv[2], "w"))
EOF
"$XSA_BIN" compare $F/sa.json "$TMP/evil.json" -o "$TMP/evil.md" >/dev/null 2>&1
"$XSA_BIN" report "$TMP/evil.json" >"$TMP/evil_report.md" 2>/dev/null
"$XSA_BIN" check --baseline $F/sa.json --results "$TMP/evil.json" >"$TMP/evil_check.md" 2>/dev/null
if [ -s "$TMP/evil.md" ] && [ -s "$TMP/evil_report.md" ] && [ -s "$TMP/evil_check.md" ] &&
    ! grep -qE '^# Owned|<script>|(^|[^\\])\[x\]\(http' "$TMP/evil.md" "$TMP/evil_report.md" "$TMP/evil_check.md" &&
    grep -qF 'evil \# Owned &lt;script&gt;' "$TMP/evil.md"; then pass model_name_shown_literally
else fail model_name_shown_literally "$(grep -hE "Owned" "$TMP"/evil*.md | head -2)"; fi

# Two runs of one model are named as such (same weights digest); two checkpoints are not.
out=$("$XSA_BIN" compare $F/sa.json $F/sa.json 2>&1)
echo "$out" | grep -q "Both runs scored the same model (weights sha256 \`" && pass same_model_noted || fail same_model_noted "$(echo "$out" | head -4)"
out=$("$XSA_BIN" compare $F/sa.json $F/xsa.json 2>&1)
echo "$out" | grep -q "same model" && fail different_models_not_noted "noted" || pass different_models_not_noted
# A chart beside -o is an output too: one that would replace an input is refused, nothing written.
cp $F/sa.json "$TMP/in_acc.svg"
expect_exit chart_would_replace_input 2 "in_acc.svg is an input of this command" -- "$XSA_BIN" compare "$TMP/in_acc.svg" $F/xsa.json -o "$TMP/in.md" --iters 200
if cmp -s "$TMP/in_acc.svg" $F/sa.json && [ ! -e "$TMP/in.md" ]; then pass chart_input_untouched; else fail chart_input_untouched "input replaced or report written"; fi
expect_exit report_chart_would_replace_input 2 "in_acc.svg is an input of this command" -- "$XSA_BIN" report "$TMP/in_acc.svg" -o "$TMP/in.md"
# A report into a stream has no charts (none is made beside /dev/stdout, none linked).
out=$("$XSA_BIN" compare $F/sa.json $F/xsa.json -o /dev/stdout --iters 200 2>/dev/null)
if echo "$out" | grep -q "^| lambada_openai | acc |" && ! echo "$out" | grep -q "## Charts" && [ ! -e /dev/stdout_delta.svg ]; then pass stream_report_no_charts
else fail stream_report_no_charts "charts linked or written"; fi
# -o - is standard output too; ./- is a file named "-".
out=$("$XSA_BIN" compare $F/sa.json $F/xsa.json -o - --iters 200 2>/dev/null)
if echo "$out" | grep -q "^| lambada_openai | acc |" && [ ! -e ./- ] && "$XSA_BIN" report $F/sa.json -o "$TMP/./-" 2>/dev/null &&
   grep -q "^# xsa-eval report" "$TMP/-"; then pass dash_output; else fail dash_output "stdout or $TMP/./- not as expected"; fi
rm -f ./- ./-_acc.svg ./-_delta.svg
# The delta chart names the interval the report uses.
"$XSA_BIN" compare $F/sa.json $F/xsa.json -o "$TMP/a01.md" --alpha 0.01 --iters 400 >/dev/null 2>&1
if grep -q "99% paired bootstrap interval" "$TMP/a01_delta.svg" && grep -q "99% CI" "$TMP/a01.md"; then pass delta_chart_level
else fail delta_chart_level "$(grep -o '[0-9.]*% paired bootstrap interval' "$TMP/a01_delta.svg")"; fi
# A perplexity near 1e270 (a badly broken model) is printed in scientific notation, whole, in
# the report and the comparison (not as hundreds of digits cut at a buffer's end).
python3 - "$F/sa.json" "$TMP/huge.json" <<'EOF'
import json, math, sys
r = json.load(open(sys.argv[1]))
lls = r["xsa_eval"]["per_doc"]["lambada_openai"]["perplexity"]
lls[:] = [v - 620 for v in lls]
r["results"]["lambada_openai"]["perplexity,none"] = math.exp(-sum(lls) / len(lls))
json.dump(r, open(sys.argv[2], "w"))
EOF
expect_exit report_huge_ppl 0 "\| lambada_openai \| perplexity \| [0-9]\.[0-9]{4}e\+270 ± " -- "$XSA_BIN" report "$TMP/huge.json"
expect_exit compare_huge_ppl 0 "perplexity \(lower is better\): A [0-9.]+, B [0-9]\.[0-9]{4}e\+270 \(B/A = [0-9]\.[0-9]{3}e\+2[0-9]{2}\)" -- "$XSA_BIN" compare $F/xsa.json "$TMP/huge.json" --iters 200
# Code spans keep their text exactly: a '|' is escaped only in a table cell, and a backtick in
# a path gets a longer fence instead of being dropped.
mkdir -p "$TMP/p|q" "$TMP/b\`t"
cp $F/sa.json "$TMP/p|q/a.json"; cp $F/xsa.json "$TMP/b\`t/b.json"
"$XSA_BIN" check --baseline "$TMP/p|q/a.json" --results "$TMP/b\`t/b.json" > "$TMP/spans.md" 2>/dev/null
if grep -qF "Baseline \`$TMP/p|q/a.json\`" "$TMP/spans.md" && grep -qF "\`\`$TMP/b\`t/b.json\`\`" "$TMP/spans.md"; then
    pass code_spans_exact
else fail code_spans_exact "$(grep -m2 -E 'Baseline|candidate' "$TMP/spans.md")"; fi
"$XSA_BIN" compare "$TMP/p|q/a.json" $F/xsa.json --iters 50 > "$TMP/spans2.md" 2>/dev/null
grep -qF "| results | \`$TMP/p\\|q/a.json\`" "$TMP/spans2.md" && grep -qF "Report command: \`xsa-eval compare '$TMP/p|q/a.json'" "$TMP/spans2.md" &&
    pass code_span_pipe_in_cell || fail code_span_pipe_in_cell "$(grep -m2 -E '^\| results|Report command' "$TMP/spans2.md")"
# A report that stdout cannot take whole is exit 3.
"$XSA_BIN" report $F/xsa.json >/dev/full 2>"$TMP/err"; rc=$?
if [ $rc -eq 3 ] && grep -q "writing standard output failed" "$TMP/err"; then pass report_stdout_full; else fail report_stdout_full "rc=$rc"; fi
# A killed report writer's temporary folder (its pid gone, untouched for 10 minutes) is removed by
# the next write into that folder; a live process's stays, and so does a recent one (a writer on
# another host sharing the folder has a pid this one cannot see).
dead=$(sh -c 'echo $$') dead2=$(sh -c 'echo $$')
mkdir -p "$TMP/rt/.xsa-report.tmp.$dead" "$TMP/rt/.xsa-report.tmp.$dead2" "$TMP/rt/.xsa-report.tmp.$$"
touch "$TMP/rt/.xsa-report.tmp.$dead/x_acc.svg" && touch -d '1 hour ago' "$TMP/rt/.xsa-report.tmp.$dead"
"$XSA_BIN" compare $F/sa.json $F/xsa.json -o "$TMP/rt/x.md" 2>/dev/null
left=$(ls -A "$TMP/rt" | sort | tr '\n' ' ')
want=$(printf '%s\n' ".xsa-report.tmp.$$" ".xsa-report.tmp.$dead2" x.md x_acc.svg x_delta.svg | sort | tr '\n' ' ')
[ "$left" = "$want" ] && pass report_tmp_swept || fail report_tmp_swept "left: $left"
finish
