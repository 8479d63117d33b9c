#!/usr/bin/env bash
# The offline demo (tools/demo.sh, `make demo`): runs it into a temp folder and checks the two
# results files, the comparison report, the bundled checkpoints' XSA declarations, that the
# trained models beat chance on their memorised rows, and that the committed
# reports/examples/demo.md still matches the checkpoints.
. "$(dirname "$0")/lib.sh"
TASKS="arc_easy arc_challenge boolq hellaswag lambada_openai openbookqa piqa social_iqa winogrande"
OUT=$TMP/out REP=$TMP/rep/demo.md

XSA_BIN=$XSA_BIN DEMO_OUT=$OUT DEMO_REPORT=$REP bash tools/demo.sh >"$TMP/demo.log" 2>&1; rc=$?
if [ $rc -eq 0 ]; then pass demo_exit_0; else fail demo_exit_0 "exit $rc"; head -5 "$TMP/demo.log" | sed 's/^/    /'; fi
if grep -q "^demo: report   $REP" "$TMP/demo.log"; then pass demo_prints_paths; else fail demo_prints_paths "no 'demo: report' line"; fi

# One results file per model, valid JSON, nine tasks, the right XSA layers recorded.
for m in sa:none xsa:all; do
    name=${m%%:*} want=${m##*:}
    n=$(ls "$OUT/$name"/results_*.json 2>/dev/null | wc -l)
    if [ "$n" -ne 1 ]; then fail "results_$name" "$n results files, wanted 1"; continue; fi
    if ! command -v python3 >/dev/null; then skip "results_$name" "no python3 to parse JSON"; continue; fi
    if msg=$(python3 - "$OUT/$name"/results_*.json "$want" $TASKS 2>&1 <<'EOF'
import json, sys
path, want, tasks = sys.argv[1], sys.argv[2], sys.argv[3:]
r = json.load(open(path))
missing = [t for t in tasks if t not in r["results"]]
assert not missing, f"tasks missing: {missing}"
got = r["xsa_eval"]["model"]["xsa_layers"]
assert got == want, f"xsa_layers {got!r}, wanted {want!r}"
EOF
    ); then pass "results_$name"; else fail "results_$name" "$(echo "$msg" | tail -1)"; fi
done

# The models memorised their rows: every task's preferred metric beats chance for both.
if command -v python3 >/dev/null; then
    if msg=$(python3 - "$OUT"/sa/results_*.json "$OUT"/xsa/results_*.json 2>&1 <<'EOF'
import json, sys
chance = {"arc_easy": .25, "arc_challenge": .25, "boolq": .5, "hellaswag": .25, "lambada_openai": 0,
          "openbookqa": .25, "piqa": .5, "social_iqa": 1 / 3, "winogrande": .5}
for path in sys.argv[1:]:
    r = json.load(open(path))
    for task, c in chance.items():
        metric = r["xsa_eval"]["data"][task]["preferred_metric"]
        v = r["results"][task][metric + ",none"]
        assert v > c + 0.1, f"{path}: {task} {metric} {v} not above chance {c:.2f}"
EOF
    ); then pass above_chance; else fail above_chance "$(echo "$msg" | tail -1)"; fi
else
    skip above_chance "no python3 to parse JSON"
fi

# The comparison report: every task, both averages, the note, relative chart links.
missing=""
for t in $TASKS; do grep -qsE "^\| $t \| acc(_norm)? \|" "$REP" || missing="$missing $t"; done
grep -qsF '| **paper (8 tasks)** | mean |' "$REP" || missing="$missing paper-average"
grep -qsF '| **all (9 tasks)** | mean |' "$REP" || missing="$missing all-average"
if [ -z "$missing" ]; then pass report_rows; else fail report_rows "missing rows:$missing"; fi
if grep -qs '^> \*\*Pipeline demonstration, not a benchmark result.\*\*' "$REP"; then pass report_note
else fail report_note "no pipeline-demonstration note"; fi
if grep -qsF '](demo_delta.svg)' "$REP" && grep -qsF '](demo_acc.svg)' "$REP" \
    && [ -s "$TMP/rep/demo_delta.svg" ] && [ -s "$TMP/rep/demo_acc.svg" ]; then pass report_charts
else fail report_charts "charts missing or not linked relatively"; fi

# The committed example was made from the committed checkpoints (rerun `make demo-example` if not).
# It was made on one CPU's kernels; another kernel may round a log-likelihood differently in
# the last bits, which can move a printed perplexity by one unit of its last digit but no
# prediction. So the words must match and every number within one unit of its last digit.
rows() { grep -sE '^\| (\*\*)?[a-z_]+( \([0-9] tasks\)\*\*)? \| (acc|acc_norm|mean) \||perplexity \(lower' "$1"; }
same_rows() {
    python3 - <(rows "$1") <(rows "$2") <<'EOF'
import re, sys
num = re.compile(r"[-+]?\d+(?:\.\d+)?")
a, b = (open(p).read().splitlines() for p in sys.argv[1:3])
assert a and len(a) == len(b), f"{len(a)} rows vs {len(b)}"
for x, y in zip(a, b):
    assert num.sub("#", x) == num.sub("#", y), f"row text differs:\n  {x}\n  {y}"
    for u, v in zip(num.findall(x), num.findall(y)):
        unit = 10 ** -len(u.split(".")[1]) if "." in u else 1
        assert abs(float(u) - float(v)) <= unit * 1.001, f"{u} vs {v} in:\n  {x}\n  {y}"
EOF
}
if ! command -v python3 >/dev/null; then
    skip committed_demo_in_sync "no python3 to compare the reports"
elif [ -f reports/examples/demo.md ] && msg=$(same_rows reports/examples/demo.md "$REP" 2>&1); then
    pass committed_demo_in_sync
else
    fail committed_demo_in_sync "reports/examples/demo.md differs from a fresh run; run: make demo-example"
    echo "$msg" | tail -3 | sed 's/^/    /'
fi

# Without DEMO_REPORT the report goes under DEMO_OUT, and the committed copy is left alone.
before=$(sha256sum reports/examples/demo.md 2>/dev/null)
XSA_BIN=$XSA_BIN DEMO_OUT=$TMP/out2 bash tools/demo.sh >"$TMP/demo2.log" 2>&1
if [ -s "$TMP/out2/demo.md" ] && grep -q "^demo: report   $TMP/out2/demo.md" "$TMP/demo2.log" \
    && [ "$(sha256sum reports/examples/demo.md 2>/dev/null)" = "$before" ]; then
    pass default_report_under_out
else
    fail default_report_under_out "no $TMP/out2/demo.md, or reports/examples/demo.md was rewritten"
fi

# A second run replaces, not adds, results files.
XSA_BIN=$XSA_BIN DEMO_OUT=$OUT DEMO_REPORT=$REP bash tools/demo.sh >/dev/null 2>&1
n=$(ls "$OUT"/sa/results_*.json "$OUT"/xsa/results_*.json 2>/dev/null | wc -l)
[ "$n" -eq 2 ] && pass rerun_one_file_each || fail rerun_one_file_each "$n results files after two runs"

# The checkpoints declare what they are.
expect_exit info_xsa_all 0 "xsa layers +all \(4 of 4; source: config\)" -- "$XSA_BIN" info --model demo/xsa
expect_exit info_sa_none 0 "xsa layers +none" -- "$XSA_BIN" info --model demo/sa

# Errors: a missing binary is named, with how to build it.
expect_exit demo_no_binary 2 "demo: $TMP/nope not found; build it first" -- env XSA_BIN="$TMP/nope" DEMO_OUT="$OUT" DEMO_REPORT="$REP" bash tools/demo.sh

finish
