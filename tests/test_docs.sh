#!/usr/bin/env bash
# Documentation matches the program: every --flag named in README.md and docs/ exists in some
# subcommand's --help, and error messages suggest only flags the failing command has.
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
X=$XSA_BIN
F=tests/fixtures/results

help=$( ("$X" --help; for c in run download tasks info tokenize logprobs ppl probe compare report check; do
    "$X" "$c" --help || echo "HELP FAILED: $c"; done) 2>&1)
case $help in *"HELP FAILED"*) fail help_all "a subcommand's --help failed" ;; *) pass help_all ;; esac

# Flags of the helper scripts in tools/ and the benchmarks in bench/, not of xsa-eval: those
# their sources define (argparse names, case labels, strcmp'd strings).
tool_flags=" $(grep -ohE -- '"--[a-z][a-z0-9-]*"|--[a-z][a-z0-9-]*\)' tools/*.sh tools/*/*.py tools/*/*.sh bench/*.c |
    grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ') "
# Flags of the MPI and Slurm launchers that docs/distributed.md names, and valgrind's that
# docs/performance.md's instruction counts use, not of xsa-eval.
tool_flags="$tool_flags--mpi --kill-on-bad-exit --gpus-per-task --oversubscribe --bind-to --nodes --ntasks-per-node --gpus-per-node --cpus-per-task --tool "
missing=""
for f in README.md docs/*.md demo/README.md reports/examples/README.md; do
    for fl in $(grep -oE -- '(^|[^a-zA-Z0-9_-])--[a-z][a-z0-9-]*' "$f" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
        case $tool_flags in *" $fl "*) continue ;; esac
        echo "$help" | grep -qE -- "$fl([^a-z0-9-]|$)" || missing="$missing $f:$fl"
    done
done
if [ -z "$missing" ]; then pass documented_flags_exist; else fail documented_flags_exist "not in any --help:$missing"; fi

# check has no --force: its refusal must not tell the user to pass one to check.
out=$("$X" check --baseline $F/xsa.json --results $F/xsa_other_data.json 2>&1); rc=$?
if [ "$rc" -eq 2 ] && echo "$out" | grep -q "not comparable" && ! echo "$out" | grep -qE "or pass --force"; then
    pass check_refusal_hint
else
    fail check_refusal_hint "exit $rc: $out"
fi
expect_exit compare_refusal_hint 2 "compare --force" -- "$X" compare $F/xsa.json $F/xsa_other_data.json
# Usage mistakes in run's flags are exit 2 before any data is looked for (an empty cache here
# would otherwise give "not available offline", exit 3).
E="$TMP/empty-cache"
expect_exit run_bad_device_first 2 "^xsa-eval run: --device gpu: unknown device; use auto, cpu, cuda or cuda:N" -- \
    "$X" run --model demo/sa --tasks arc_easy --device gpu --offline --cache-dir "$E"
expect_exit run_bad_dtype_first 2 "^xsa-eval run: --dtype fp16: unknown dtype; use bfloat16 or float32" -- \
    "$X" run --model demo/sa --tasks arc_easy --dtype fp16 --offline --cache-dir "$E"
expect_exit run_limit_zero_hint 2 "--limit expects a whole number of documents from 1 to 1073741824 or a fraction in \(0, 1\), got '0'" -- \
    "$X" run --model demo/sa --tasks arc_easy --limit 0
# The repository stands alone: nothing cites notes that live beside a checkout (a user has no
# ../shared), and the program's code and docs do not point there at all; tests, tools and
# benchmarks may read ../shared/benchdata and skip without it.
cites=$(grep -rnE "reference/tasks\.md|anchors\.md|DESIGN\.md" --exclude-dir=.git --exclude-dir=build --exclude-dir=build-asan \
    --exclude=test_docs.sh . 2>/dev/null | head -3)
prod=$(grep -rn "\.\./shared" common data eval kernels model reports tasks 2>/dev/null | head -3)
if [ -z "$cites$prod" ]; then pass repository_stands_alone; else fail repository_stands_alone "$cites $prod"; fi
# README quotes the line `make test` ends with: the summary tests/run.sh prints.
summary=$(grep -E '^echo "\$passed passed' tests/run.sh | sed -E 's/^echo "//; s/"$//; s/\$[a-z]+/N/g')
if [ -n "$summary" ] && grep -qF "(ends with \"$summary\")" README.md; then pass readme_test_summary
else fail readme_test_summary "README does not quote run.sh's summary '$summary'"; fi
# Every key a results file holds is named in docs/results-format.md (the task names aside).
"$X" run --model demo/sa --tasks all --limit 2 --data-dir tests/fixtures/data --allow-data-change --offline --device cpu \
    --quiet --output "$TMP/keys" >/dev/null 2>&1
keys=$(cat "$TMP"/keys/sa/results_*.json 2>/dev/null | grep -oE '^ *"[A-Za-z0-9_,-]+":' | tr -d ' ":' | sort -u)
undoc=""
for k in $keys; do
    case " arc_easy arc_challenge boolq hellaswag lambada_openai openbookqa piqa social_iqa winogrande " in *" $k "*) continue ;; esac
    grep -qE -- "(^|[^A-Za-z0-9_])$k([^A-Za-z0-9_]|$)" docs/results-format.md || undoc="$undoc $k"
done
if [ -n "$keys" ] && [ -z "$undoc" ]; then pass results_keys_documented; else fail results_keys_documented "not in docs/results-format.md:${undoc:- (no results file)}"; fi
for d in lm-eval-semantics.md data-dir.md; do
    if ! grep -rqF "docs/$d" common data eval tasks README.md; then fail "cited_$d" "no code or README cites docs/$d"; else pass "cited_$d"; fi
done
finish
