#!/usr/bin/env bash
# Checks tests/kernel_free.txt against the built test programs: each C test it names must exist
# and meet its rule, read from the binary and its source: no global symbol of kernels/'s objects
# linked in, no OpenBLAS function called, none of XSA_CPU_GEMM, XSA_CPU_ATTN, XSA_CPU_PACK or
# OPENBLAS_CORETYPE in the binary, no XSA_BIN in the source (a test that runs xsa-eval reaches the
# kernels through it). Exit 1 naming each test that fails, so none drops out of CI's kernel runs.
# Usage: BUILD=build bash tests/kernel_free_check.sh (after the test programs are built)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
objs=$(find "$BUILD/kernels" -name '*.o')
[ -n "$objs" ] || { echo "kernel_free_check: no objects under $BUILD/kernels: build first" >&2; exit 2; }
ksyms=$(mktemp)
trap 'rm -f "$ksyms"' EXIT
# shellcheck disable=SC2086
nm -g --defined-only $objs | awk 'NF == 3 { print $3 }' | sort -u > "$ksyms"
bad=0 n=0
while read -r name; do
    case "$name" in ''|'#'*) continue ;; esac
    n=$((n + 1))
    bin=$BUILD/tests/$name src=tests/$name.c why=""
    if [ ! -f "$src" ] || [ ! -x "$bin" ]; then
        why="no $src or $bin"
    else
        k=$(nm --defined-only "$bin" | awk 'NF == 3 { print $3 }' | sort -u | comm -12 - "$ksyms" | head -n 3 | paste -sd, -)
        [ -n "$k" ] && why="links kernels/ code ($k)"
        b=$(nm -u "$bin" | grep -oE '(cblas_|openblas_)[A-Za-z0-9_]*' | head -n 3 | paste -sd, - || true)
        [ -n "$b" ] && why="${why:+$why; }calls OpenBLAS ($b)"
        grep -qaE 'XSA_CPU_(GEMM|ATTN|PACK)|OPENBLAS_CORETYPE' "$bin" && why="${why:+$why; }reads a kernel variable"
        grep -q 'XSA_BIN' "$src" && why="${why:+$why; }runs xsa-eval (XSA_BIN)"
    fi
    if [ -n "$why" ]; then
        echo "kernel_free_check: $name is in tests/kernel_free.txt but $why: take it off the list"
        bad=$((bad + 1))
    fi
done < tests/kernel_free.txt
[ "$bad" -eq 0 ] || exit 1
echo "kernel_free_check: $n tests kernel-free"
