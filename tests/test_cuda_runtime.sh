#!/usr/bin/env bash
# The CUDA backend's run-time loading on a machine without a usable GPU: `--device cuda` exits
# 3 with a line saying what is missing (the library, its CUDA libraries, the driver or a GPU),
# `--device auto` falls back to the CPU with a note, and --dtype is checked. Passes with or
# without build/libxsa_cuda.so. On a machine with a GPU the cases that need its absence skip.
. "$(dirname "$0")/lib.sh"
M=tests/fixtures/models/llama_gqa
LP="$XSA_BIN logprobs --model $M --tokens 1,2,3"
if [ ! -f "$M/model.safetensors" ]; then skip all "$M absent"; finish; exit; fi

has_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then has_gpu=1; fi

expect_exit bad_dtype 2 "--dtype fp8: unknown dtype; use bfloat16 or float32" -- $LP --device cpu --dtype fp8
expect_exit cpu_accepts_float32 0 "^pos" -- $LP --device cpu --dtype float32
expect_exit cpu_accepts_bfloat16 0 "^pos" -- $LP --device cpu --dtype bfloat16
expect_exit bad_index 2 "GPU index must be a number" -- $LP --device cuda:-1

# No library at all: a copy of the binary in an empty folder finds none beside it.
mkdir -p "$TMP/bin"
cp "$XSA_BIN" "$TMP/bin/xsa-eval"
LPB="$TMP/bin/xsa-eval logprobs --model $M --tokens 1,2,3"
expect_exit no_library_cuda 3 "--device cuda: the CUDA backend is not available: libxsa_cuda.so not found" -- $LPB --device cuda
expect_exit no_library_auto 0 "no usable GPU \(libxsa_cuda.so not found.*using the CPU backend" -- $LPB --device auto
# --quiet: no notes, this one included (the scores on stdout stay).
out=$($LPB --device auto --quiet 2>&1 >/dev/null)
[ -z "$out" ] && pass quiet_no_fallback_note || fail quiet_no_fallback_note "$out"

# XSA_CUDA_LIB names the library: one that is not there is named, not passed over for another.
expect_exit cuda_lib_env_missing 3 "the CUDA backend is not available: XSA_CUDA_LIB=$TMP/nope.so: no such library" -- env XSA_CUDA_LIB="$TMP/nope.so" $LPB --device cuda

# A library file that cannot be loaded (here: not an ELF file) is named with the loader's reason.
echo "not a shared object" >"$TMP/bin/libxsa_cuda.so"
expect_exit broken_library 3 "libxsa_cuda.so cannot be loaded: .*are the CUDA libraries installed" -- $LPB --device cuda:0

LIB=$(dirname "$XSA_BIN")/build/libxsa_cuda.so
# The entry points are exported with C linkage (backend.c and bench_cuda.c dlsym them by name).
if [ -f "$LIB" ] && command -v nm >/dev/null 2>&1; then
    syms=$(nm -D --defined-only "$LIB" 2>/dev/null)
    for s in xsa_cuda_backend_open xsa_cuda_gemm_tflops xsa_cuda_attention_probe; do
        if echo "$syms" | grep -qE " T $s\$"; then pass "exports_$s"; else fail "exports_$s" "$LIB does not export $s"; fi
    done
else
    skip exports "$LIB not built or nm missing"
fi
# The one-shot GPU check script must at least parse (it only ever runs on a borrowed GPU).
if bash -n tools/gpu-check.sh 2>"$TMP/gc.err"; then pass gpu_check_parses; else fail gpu_check_parses "$(head -1 "$TMP/gc.err")"; fi
if [ "$has_gpu" = 1 ]; then
    skip no_gpu_messages "a GPU is present (tools/gpu-check.sh covers it)"
elif [ -f "$LIB" ]; then
    # The real library on a machine without a GPU: it loads, then says what is missing.
    expect_exit gpu_missing_cuda 3 "--device cuda: the CUDA backend is not available: (no NVIDIA driver|no usable GPU|no GPU found)" -- $LP --device cuda
    expect_exit gpu_missing_cuda_index 3 "--device cuda:3: the CUDA backend is not available" -- $LP --device cuda:3
    expect_exit gpu_missing_auto 0 "no usable GPU \(the CUDA backend is not available.*using the CPU backend" -- $LP --device auto
    # auto's fallback gives the CPU's numbers.
    if [ "$($LP --device auto 2>/dev/null)" = "$($LP --device cpu 2>/dev/null)" ]; then pass auto_equals_cpu
    else fail auto_equals_cpu "auto and cpu outputs differ"; fi
else
    skip gpu_missing "$LIB not built (no nvcc)"
fi
finish
