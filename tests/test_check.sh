#!/usr/bin/env bash
# `xsa-eval check`: every exit code (0 pass, 1 regression, 2 usage / unreadable / incomparable,
# 3 output not written)
# and the golden PR summary and verdict JSON in reports/examples/ (regenerate them with the
# commands in reports/examples/README.md when the format changes on purpose).
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/results
E=reports/examples
check() { "$XSA_BIN" check "$@"; }

expect_exit identical_inputs 0 "PASS" -- check --baseline $F/xsa.json --results $F/xsa.json
expect_exit planted_significant_regression 1 "hellaswag .*\*\*regressed\*\*" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json
expect_exit planted_insignificant_drop 0 "openbookqa .*drop, not significant" -- check --baseline $F/xsa.json --results $F/xsa_small_drop.json
expect_exit average_regression 1 "regression of the average" -- check --baseline $F/xsa.json --results $F/xsa_avg_drop.json
expect_exit larger_allowed_drop 0 "PASS" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json --max-drop 7
# (hellaswag's p ~ 7e-5 is above 0.0005 / 10)
expect_exit stricter_alpha 0 "PASS" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json --alpha 0.0005 --iters 40000
# One refusal naming what the gate's m tests need (it said 2 / alpha first, 200000, and then,
# given those, 2 m / alpha), and a need beyond --iters' range in a few digits, not 302.
expect_exit too_few_iters 2 "--iters 10000: too few resamples for the gate's 10 tests at 1e-05 / 10 each \(1 - 1e-06 intervals\); give at least 2000000 \(2 \* 10 / alpha\)" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json --alpha 0.00001
expect_exit too_few_iters_tiny_alpha 2 "give at least 2e\+301 \(2 \* 10 / alpha\), above the most --iters takes" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json --alpha 1e-300
# Each of the gate's 10 tests (9 tasks, the average) is at alpha / 10: its intervals need 20 / alpha resamples.
expect_exit too_few_iters_per_test 2 "--iters 10000: too few resamples for the gate's 10 tests at 0.001 / 10 each \(1 - 0.0001 intervals\); give at least 20000" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json --alpha 0.001
# Exactly 2 m / alpha is enough, also where alpha / m and 2 / that round above it in floating
# point: 8 tasks (m = 9) at 0.0096 need 1875, not 1876. One task: m = 1, 2 / alpha.
python3 - "$F/xsa.json" "$F/xsa_regressed.json" "$TMP" <<'PY'
import json, sys
def drop(o, ts):  # the results without the tasks ts
    if isinstance(o, dict):
        return {k: drop(v, ts) for k, v in o.items() if k not in ts}
    return [drop(v, ts) for v in o if v not in ts and not (isinstance(v, dict) and v.get("task") in ts)] if isinstance(o, list) else o
base, cand = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
json.dump(drop(base, ["winogrande"]), open(sys.argv[3] + "/eight.json", "w"))
json.dump(drop(cand, ["winogrande"]), open(sys.argv[3] + "/eight_regressed.json", "w"))
json.dump(drop(base, [t for t in base["results"] if t != "piqa"]), open(sys.argv[3] + "/one.json", "w"))
PY
expect_exit too_few_iters_one_task 2 "--iters 39: too few resamples for a 1 - 0.05 interval; give at least 40 \(2 / alpha\)" -- check --baseline "$TMP/one.json" --results "$TMP/one.json" --iters 39
expect_exit iters_one_task_2_over_alpha 0 "PASS" -- check --baseline "$TMP/one.json" --results "$TMP/one.json" --iters 40
expect_exit iters_exactly_2m_over_alpha 1 "hellaswag .*\*\*regressed\*\*" -- check --baseline "$TMP/eight.json" --results "$TMP/eight_regressed.json" --alpha 0.0096 --iters 1875
expect_exit iters_below_2m_over_alpha 2 "give at least 1875 \(2 \* 9 / alpha\)" -- check --baseline "$TMP/eight.json" --results "$TMP/eight_regressed.json" --alpha 0.0096 --iters 1874
# A drop significant for piqa tested alone (p ~ 0.024, 95% interval below 0) is not significant
# among the gate's 10 tests at 0.05 / 10 (Bonferroni): without the correction a candidate no
# different from its baseline failed about 16% of the time at --limit 400, not 5%
# (tools/references/calibrate_compare.py). At --alpha 0.3 (0.03 each) the same drop fails.
expect_exit bonferroni_marginal_drop_passes 0 "piqa .*drop, not significant" -- check --baseline $F/xsa.json --results $F/xsa_marginal_drop.json
expect_exit bonferroni_level_said 0 "Each of these 10 tests is at level 0.05 / 10" -- check --baseline $F/xsa.json --results $F/xsa_marginal_drop.json
expect_exit bonferroni_marginal_drop_looser_alpha 1 "piqa .*\*\*regressed\*\*" -- check --baseline $F/xsa.json --results $F/xsa_marginal_drop.json --alpha 0.3
expect_exit improvement_passes 0 "lambada_openai .*improved" -- check --baseline $F/sa.json --results $F/xsa.json
expect_exit missing_file 2 "^xsa-eval check: $F/nope.json: cannot open" -- check --baseline $F/xsa.json --results $F/nope.json
expect_exit mismatched_digests 2 "winogrande data differ" -- check --baseline $F/xsa.json --results $F/xsa_other_data.json
expect_exit different_tasks 2 "task sets differ" -- check --baseline $F/xsa.json --results $F/xsa_three_tasks.json
expect_exit different_limits 2 "limits differ" -- check --baseline $F/xsa.json --results $F/xsa_limit200.json
expect_exit lm_eval_file 2 "not an xsa-eval results file" -- check --baseline $F/lm_eval_plain.json --results $F/xsa.json
expect_exit no_baseline 2 "required" -- check --results $F/xsa.json
expect_exit bad_alpha 2 "alpha" -- check --baseline $F/xsa.json --results $F/xsa.json --alpha 2
expect_exit bad_max_drop 2 "--max-drop x: expected a number in \[0, 100\]" -- check --baseline $F/xsa.json --results $F/xsa.json --max-drop x
expect_exit negative_max_drop 2 "max-drop" -- check --baseline $F/xsa.json --results $F/xsa.json --max-drop -1
expect_exit unknown_flag 2 "unknown flag '--frob'" -- check --baseline $F/xsa.json --results $F/xsa.json --frob
expect_exit help 0 "usage: xsa-eval check" -- check --help

# One-line message on errors: nothing on stdout, one line on stderr.
out=$(check --baseline $F/xsa.json --results $F/xsa_other_data.json 2>"$TMP/err"); rc=$?
if [ $rc -eq 2 ] && [ -z "$out" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]; then pass one_line_error; else fail one_line_error "rc=$rc"; fi

# A gate never passes on a file that pairs documents wrongly, nor on a flag given twice.
python3 - "$F/xsa.json" "$TMP/zero_ids.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for pd in r["xsa_eval"]["per_doc"].values():
    pd["doc_id"] = [0] * len(pd["doc_id"])
json.dump(r, open(sys.argv[2], "w"))
PY
expect_exit baseline_repeated_doc_ids 2 "xsa_eval.per_doc.[a-z_]*.doc_id: document 0 stands twice" -- check --baseline "$TMP/zero_ids.json" --results $F/xsa_regressed.json
# Documents that do not pair: the message names both files, and the hint names compare's --force
# (check has none).
python3 - "$F/xsa_regressed.json" "$TMP/shift_ids.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pd = r["xsa_eval"]["per_doc"]["hellaswag"]
pd["doc_id"] = [d + 1000 for d in pd["doc_id"]]
json.dump(r, open(sys.argv[2], "w"))
PY
expect_exit unpaired_docs_hint 2 "hellaswag: document 0 of A \($F/xsa.json\) is not in B \($TMP/shift_ids.json\); .*\(xsa-eval compare --force pairs those both have\)" -- \
    check --baseline $F/xsa.json --results "$TMP/shift_ids.json"
expect_exit results_given_twice 2 "--results given twice" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json --results $F/xsa.json
expect_exit hex_max_drop 2 "--max-drop 0x10: expected a number" -- check --baseline $F/xsa.json --results $F/xsa_regressed.json --max-drop 0x10
# The PR comment that cannot be written whole is an error, not a pass.
check --baseline $F/xsa.json --results $F/xsa.json >/dev/full 2>"$TMP/err"; rc=$?
if [ $rc -eq 3 ] && grep -q "writing standard output failed" "$TMP/err"; then pass stdout_full_exit_3; else fail stdout_full_exit_3 "rc=$rc"; fi
# A regression is exit 1 whatever failed to be written (the failure is said on stderr).
check --baseline $F/xsa.json --results $F/xsa_regressed.json >/dev/full 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "writing standard output failed" "$TMP/err" && pass regression_stdout_full_exit_1 || fail regression_stdout_full_exit_1 "rc=$rc"
check --baseline $F/xsa.json --results $F/xsa_regressed.json --verdict /dev/full >"$TMP/s.md" 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "/dev/full: cannot write" "$TMP/err" && grep -q "regressed" "$TMP/s.md" && pass regression_verdict_full_exit_1 ||
    fail regression_verdict_full_exit_1 "rc=$rc"
# --verdict -: stdout is the verdict JSON alone (the summary is not printed after it).
check --baseline $F/xsa.json --results $F/xsa_regressed.json --verdict - >"$TMP/v.json" 2>/dev/null; rc=$?
[ $rc -eq 1 ] && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/v.json" && pass verdict_dash_stdout ||
    fail verdict_dash_stdout "rc=$rc"
expect_exit verdict_full_exit_3 3 "/dev/full: cannot write" -- check --baseline $F/xsa.json --results $F/xsa.json --verdict /dev/full

# Golden outputs: markdown on stdout and the verdict file, byte for byte.
for case in regressed small_drop; do
    check --baseline $F/xsa.json --results $F/xsa_$case.json --verdict "$TMP/v.json" >"$TMP/s.md" 2>/dev/null
    if cmp -s "$TMP/s.md" $E/check_$case.md; then pass golden_summary_$case
    else fail golden_summary_$case "differs from $E/check_$case.md"; diff "$TMP/s.md" $E/check_$case.md | head -5; fi
    if cmp -s "$TMP/v.json" $E/check_$case.verdict.json; then pass golden_verdict_$case
    else fail golden_verdict_$case "differs from $E/check_$case.verdict.json"; diff "$TMP/v.json" $E/check_$case.verdict.json | head -5; fi
done
# A drop of exactly --max-drop is no regression, and the summary does not call it a drop either:
# boolq down 28 of 400 (-7.000000000000001 points, p ~ 7e-9) under --max-drop 7, and every task down
# 6 of 400 (an average of -1.5000000000000002 with its interval below 0) under --max-drop 1.5.
python3 - "$F/xsa.json" "$TMP/drop7.json" "$TMP/drop_all6.json" <<'PY'
import json, math, sys
def drop(r, task, k):
    pd, res = r["xsa_eval"]["per_doc"][task], r["results"][task]
    for m in ("acc", "acc_norm"):
        if m not in pd:
            continue
        v = pd[m]
        for i in [i for i, x in enumerate(v) if x == 1][:k]:
            v[i] = 0
        n, mu = len(v), sum(v) / len(v)
        res[m + ",none"] = mu
        res[m + "_stderr,none"] = math.sqrt(sum((x - mu) ** 2 for x in v) / (n - 1)) / math.sqrt(n)
r = json.load(open(sys.argv[1])); drop(r, "boolq", 28); json.dump(r, open(sys.argv[2], "w"))
r = json.load(open(sys.argv[1]))
for t in list(r["xsa_eval"]["per_doc"]):
    drop(r, t, 6)
json.dump(r, open(sys.argv[3], "w"))
PY
expect_exit drop_of_exactly_max_drop_is_ok 0 "^\| boolq \| acc \| 61.00 \| 54.00 \| -7.00 \| .* \| ok \|$" -- \
    check --baseline $F/xsa.json --results "$TMP/drop7.json" --max-drop 7
expect_exit average_drop_of_exactly_max_drop_is_ok 0 "^\| \*\*average \(9 tasks\)\*\* \| .* \*\*-1.50\*\* \| \[-[0-9.]+, -[0-9.]+\] \| - \| ok \|$" -- \
    check --baseline $F/xsa.json --results "$TMP/drop_all6.json" --max-drop 1.5
# No verdict file is left behind when the inputs are refused.
rm -f "$TMP/v2.json"
check --baseline $F/xsa.json --results $F/xsa_other_data.json --verdict "$TMP/v2.json" >/dev/null 2>&1
if [ ! -e "$TMP/v2.json" ]; then pass no_verdict_on_error; else fail no_verdict_on_error "verdict written"; fi
finish
