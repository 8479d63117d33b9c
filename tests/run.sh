#!/usr/bin/env bash
# Runs every C test program (build/tests/test_*) and shell test (tests/test_*.sh), adds up
# their "N passed, N failed, N skipped" lines and ends with the total on its own line.
# Usage: XSA_BIN=./xsa-eval BUILD=build bash tests/run.sh [name-filter]
#        TESTS_C_ONLY=1 ...: the C test programs only
#        TESTS_KERNELS=1 ...: the C test programs but those of tests/kernel_free.txt (CI runs
#                             these again under each forced kernel)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
export XSA_BIN=${XSA_BIN:-./xsa-eval}
filter=${1:-}
passed=0 failed=0 skipped=0 broken=""
kernel_free=" "
[ -n "${TESTS_KERNELS:-}" ] && kernel_free=" $(sed -e 's/#.*//' tests/kernel_free.txt | tr -s ' \n' ' ')"
for t in "$BUILD"/tests/test_* tests/test_*.sh; do
    [ -e "$t" ] || continue
    case "$t" in *.d|*.o) continue ;; esac
    [ -n "${TESTS_C_ONLY:-}${TESTS_KERNELS:-}" ] && [[ "$t" == *.sh ]] && continue
    [[ "$kernel_free" == *" $(basename "$t") "* ]] && continue
    [ -n "$filter" ] && [[ "$t" != *"$filter"* ]] && continue
    name=$(basename "$t")
    echo "== $name"
    if [[ "$t" == *.sh ]]; then out=$(bash "$t" 2>&1); rc=$?; else out=$("$t" 2>&1); rc=$?; fi
    echo "$out" | grep -v '^ok ' 
    line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    if [ -z "$line" ]; then
        echo "  $name: exited $rc without a summary line"; failed=$((failed + 1)); broken="$broken $name"; continue
    fi
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p'); s=${s:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; broken="$broken $name"; fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done
[ -n "$broken" ] && echo "broken:$broken"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
