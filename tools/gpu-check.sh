#!/usr/bin/env bash
# gpu-check.sh: the CUDA backend's checks on a machine with a GPU, in one command (under 5 min
# on one H200). Every section runs under a hard time limit, a failing section does not stop the
# next ones, and the end prints a PASS/FAIL summary; exit 1 when any check failed.
#   0. context: nvidia-smi, nvcc, driver, git revision, compiler, torch
#   1. build: xsa-eval, test_cuda_math, bench_cuda (C) and build/libxsa_cuda.so (nvcc); fails on
#      any warning. When the C part cannot build there (its -dev libraries are missing) and
#      build/gpu-bundle.tar.xz was carried (see --bundle), its prebuilt binaries are used.
#   2. the kernels' arithmetic on the CPU (build/tests/test_cuda_math)
#   3. preflight: one tiny model on the GPU; without it the GPU sections are skipped
#   4. every model fixture (tests/fixtures/models/*, llm.c's tests/fixtures/llmc/model_*.bin,
#      stories260K when ../shared exists), every
#      case of its reference.json: `xsa-eval logprobs --device cuda` against `--device cpu`:
#        float32:  |logprob difference| <= 2e-4 and identical greedy flags
#        bfloat16: |logprob difference| <= 0.25 nats, mean <= 0.03, greedy mismatches <= 1 per case
#      one line per fixture and dtype with the worst differences over its cases
#   5. device checks (bench_cuda --parity): the attention kernel alone against its serial twin,
#      XSA orthogonality, packed batches with prefixes and branches on random llama/gpt2 models
#      against the CPU; then again with the activations capped at 300 tokens (sub-batch split)
#   6. the benchmark: random ~1B llama over nine-task-shaped requests (tokens/s, requests/s, MFU
#      against cuBLAS's measured bf16 GEMM rate), then Hugging Face transformers on the same
#      requests (tools/bench/hf_gpu_bench.py) and the ratio. Targets printed, not failed on.
#   7. compute-sanitizer memcheck and racecheck on a fixture and on the attention probe
#   (5b, between 5 and 6: two MPI ranks on the one GPU against one process, when mpirun is there;
#    5c: `ppl --kl` and `ppl --split-docs` on the GPU against the CPU, the backend's distribution
#    chunks and rows after a cut; 5d: the models, statistics and test-time training the CUDA
#    backend does not run yet (olmo's clip_qkv and the Gemma families among them: their fixtures
#    are skipped in 4), refused
#    on --device cuda, on the CPU by auto; 5e: the CUDA
#    backend's probe statistics, XSA_CUDA_PROBE=1, against the CPU's)
# A GPU command that fails is run again with CUDA_LAUNCH_BLOCKING=1, so the error names the
# kernel launch (file:line) that failed.
#
# Usage: tools/gpu-check.sh [--quick]   on the GPU machine (--quick: small benchmark model)
#        tools/gpu-check.sh --bundle    on a build machine without a GPU: builds everything and
#            packs the binaries and their non-glibc shared libraries into build/gpu-bundle.tar.xz
#            (~15 MB) for machines that cannot build the C part; carry that path to the GPU machine.
# Environment: GPU_CHECK_BUDGET (seconds for the whole run, default 300; sections are cut to
#   fit, the last ones first), GPU_CHECK_LOGS=DIR (copy the detailed logs there, e.g. $OUT), GPU_CHECK_NO_PREFLIGHT=1
#   (run the GPU sections even when the preflight fails: dry-runs this script),
#   GPU_CHECK_USE_BUNDLE=1 (skip the C build, use the carried bundle), XSA_SHARED (the shared/
#   folder holding benchdata/models/stories260K; default ../shared), JOBS.
# --bundle stops at the first error (set -e); the check keeps going after a failure and
# handles every status itself (set -u -o pipefail only), so one bad section cannot hide the rest.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=check
QUICK=0
for arg in "$@"; do
    case "$arg" in
    --quick) QUICK=1 ;;
    --bundle) MODE=bundle ;;
    *) echo "usage: tools/gpu-check.sh [--quick | --bundle]" >&2; exit 2 ;;
    esac
done
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
BUNDLE_TGZ=build/gpu-bundle.tar.xz
BUNDLE=build/gpu-bundle

# ---- --bundle: on the build machine ------------------------------------------------------
if [ "$MODE" = bundle ]; then
    set -e
    [ "$JOBS" -gt 2 ] && JOBS=2
    make -j"$JOBS" xsa-eval build/libxsa_cuda.so build/tests/test_cuda_math build/bench/bench_cuda
    rm -rf "$BUNDLE" "$BUNDLE_TGZ"
    mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
    cp xsa-eval build/tests/test_cuda_math build/bench/bench_cuda build/libxsa_cuda.so "$BUNDLE/bin/"
    # Shared libraries of the C programs, except glibc's and libgcc_s (the GPU machine has newer ones).
    ldd xsa-eval build/bench/bench_cuda build/tests/test_cuda_math | awk '$3 ~ /^\// { print $3 }' | sort -u |
        while read -r lib; do
            case "$(basename "$lib")" in
            libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libresolv.so* | ld-linux* | libgcc_s.so*) ;;
            *) cp -L "$lib" "$BUNDLE/lib/" ;;
            esac
        done
    {
        echo "built $(date -u +%FT%TZ) on $(uname -n) ($(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1))"
        echo "git $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(git status --short 2>/dev/null | wc -l) changed file(s)"
        echo "sources sha256 $(cat kernels/cuda/* kernels/*.c kernels/*.h kernels/cpu/* bench/bench_cuda.c | sha256sum | cut -c1-16)"
    } >"$BUNDLE/BUILD_INFO"
    tar -C build -cJf "$BUNDLE_TGZ" gpu-bundle
    cat "$BUNDLE/BUILD_INFO"
    echo "bundle: $BUNDLE_TGZ ($(du -h "$BUNDLE_TGZ" | cut -f1)); on the GPU machine: carry it and run tools/gpu-check.sh"
    exit 0
fi

# ---- bookkeeping --------------------------------------------------------------------------
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-300}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
RES=$W/results
: >"$RES"
pass() { echo "PASS $*"; echo "PASS $*" >>"$RES"; }
fail() { echo "FAIL $*"; echo "FAIL $*" >>"$RES"; }
skip() { echo "SKIP $*"; echo "SKIP $*" >>"$RES"; }
info() { echo "info $*"; }
now() { date +%s; }
elapsed() { echo "$(($(now) - START)) s"; }
SECTION_END=0
# section NAME SECONDS: starts a section whose commands must end within SECONDS (and within
# the whole run's budget, keeping 10 s for the summary).
section() {
    local lim=$2 left=$((START + BUDGET - 10 - $(now)))
    [ "$lim" -gt "$left" ] && lim=$left
    SECTION_END=$(($(now) + lim))
    echo
    echo "== $1 (at $(elapsed), limit ${lim} s)"
}
# tmo SECONDS CMD...: CMD under a hard limit of SECONDS cut to the section's end; 124 on timeout.
tmo() {
    local lim=$1 left=$((SECTION_END - $(now)))
    shift
    [ "$lim" -gt "$left" ] && lim=$left
    if [ "$lim" -lt 2 ]; then echo "(no time left in this section for: $*)" >&2; return 124; fi
    timeout -k 5 "$lim" "$@"
}
# A GPU command's failure again with synchronous launches: the error then names the launch.
explain() {
    echo "   rerun with CUDA_LAUNCH_BLOCKING=1: $*"
    CUDA_LAUNCH_BLOCKING=1 tmo 60 "$@" 2>&1 | grep -v "^pos" | head -4 | sed 's/^/   | /' || true
}
keep_log() { if [ -n "${GPU_CHECK_LOGS:-}" ]; then { echo "##### $1"; cat "$2"; } >>"$W/detail.log" 2>/dev/null || true; fi; }

# ---- 0. context ---------------------------------------------------------------------------
section "context" 30
echo "date   $(date -u +%FT%TZ), $(uname -srm), $(nproc) cores"
echo "git    $(git rev-parse --short HEAD 2>/dev/null || echo '?') ($(git status --short 2>/dev/null | wc -l) changed file(s))"
if command -v nvidia-smi >/dev/null 2>&1; then
    tmo 20 nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv,noheader 2>&1 | sed 's/^/gpu    /' || echo "gpu    nvidia-smi failed"
else
    echo "gpu    nvidia-smi not found"
fi
NVCC=$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
echo "nvcc   ${NVCC:-not found} $([ -n "$NVCC" ] && "$NVCC" --version | grep -o 'release [^,]*, V[0-9.]*' || true)"
echo "cc     $(cc --version 2>/dev/null | head -1 || echo 'not found')"
echo "python $(tmo 20 python3 -c 'import sys; v = sys.version.split()[0]
try:
    import torch, transformers; print(v, "torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.cuda.is_available())
except Exception as e: print(v, "(no torch/transformers:", type(e).__name__, ")")' 2>/dev/null || echo '?')"
# ---- 1. build -----------------------------------------------------------------------------
section "build" 240
BIN=$ROOT
XSA=$ROOT/xsa-eval
MATH=$ROOT/build/tests/test_cuda_math
BENCH=$ROOT/build/bench/bench_cuda
CUDA_LIB=$ROOT/build/libxsa_cuda.so
HAVE_BIN=1
# Library folders for our programs only (never exported: python3/torch keep their own libraries).
OURLD=
# wrap NAME PROGRAM: $W/bin/NAME runs PROGRAM with OURLD in front of the loader's path.
wrap() {
    mkdir -p "$W/bin"
    cat >"$W/bin/$1" <<WRAP
#!/bin/sh
LD_LIBRARY_PATH="$OURLD\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$2" "\$@"
WRAP
    chmod +x "$W/bin/$1"
    echo "$W/bin/$1"
}
unpack_bundle() {
    [ -d "$BUNDLE/bin" ] || { [ -f "$BUNDLE_TGZ" ] && tar -C build -xJf "$BUNDLE_TGZ"; } || return 1
    [ -x "$BUNDLE/bin/xsa-eval" ] || return 1
    OURLD="$ROOT/$BUNDLE/lib"
    echo "bundle $(tr '\n' ';' <"$BUNDLE/BUILD_INFO")"
}
C_OK=0
if [ -n "${GPU_CHECK_USE_BUNDLE:-}" ]; then
    echo "GPU_CHECK_USE_BUNDLE is set: not building the C part" >"$W/build_c.log"
elif tmo 180 make -j"$JOBS" xsa-eval build/tests/test_cuda_math build/bench/bench_cuda >"$W/build_c.log" 2>&1; then
    C_OK=1
fi
if [ "$C_OK" = 1 ]; then
    if grep -qE "warning:|warning #" "$W/build_c.log"; then
        fail "build (C): warnings"; grep -E "warning:|warning #" "$W/build_c.log" | head -5
    else pass "build (C) here, no warnings"; fi
else
    tail -8 "$W/build_c.log" | sed 's/^/   | /'
    if unpack_bundle; then
        XSA=$ROOT/$BUNDLE/bin/xsa-eval MATH=$ROOT/$BUNDLE/bin/test_cuda_math BENCH=$ROOT/$BUNDLE/bin/bench_cuda
        if tmo 30 env LD_LIBRARY_PATH="$OURLD" "$XSA" logprobs --model tests/fixtures/models/llama_gqa --tokens 1,2 --device cpu >/dev/null 2>"$W/err"; then
            pass "build (C): not buildable here; using the prebuilt bundle"
        else fail "build (C): the bundle's xsa-eval does not run: $(head -1 "$W/err")"; HAVE_BIN=0; fi
    else
        fail "build (C) failed and no $BUNDLE_TGZ was carried (make one with tools/gpu-check.sh --bundle)"; HAVE_BIN=0
    fi
fi
keep_log build_c "$W/build_c.log"
if [ -z "$NVCC" ]; then
    fail "build (CUDA): nvcc not found"
    [ -f "$BUNDLE/bin/libxsa_cuda.so" ] && CUDA_LIB=$ROOT/$BUNDLE/bin/libxsa_cuda.so && info "using the bundle's libxsa_cuda.so"
elif rm -f build/libxsa_cuda.so && tmo 200 make NVCC="$NVCC" build/libxsa_cuda.so >"$W/build_cu.log" 2>&1; then
    if grep -qE "warning:|warning #|Warning:" "$W/build_cu.log"; then
        fail "build (CUDA): warnings"; grep -E "warning:|warning #|Warning:" "$W/build_cu.log" | head -5
    else pass "build (CUDA) here: build/libxsa_cuda.so (sm_80, sm_90, compute_90 PTX), no warnings"; fi
else
    tail -8 "$W/build_cu.log" | sed 's/^/   | /'
    fail "build (CUDA) failed"
    [ -f "$BUNDLE/bin/libxsa_cuda.so" ] && CUDA_LIB=$ROOT/$BUNDLE/bin/libxsa_cuda.so && info "using the bundle's libxsa_cuda.so"
fi
keep_log build_cu "$W/build_cu.log"
export XSA_CUDA_LIB=$CUDA_LIB
if [ -f "$CUDA_LIB" ]; then
    # cuBLAS for libxsa_cuda.so: the loader's path first, then the toolkit's folders, then the
    # cuBLAS that pip installed for torch.
    missing() { LD_LIBRARY_PATH="$OURLD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$CUDA_LIB" 2>&1 | grep "not found"; }
    for d in ${NVCC:+"$(dirname "$NVCC")/../lib64"} /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
        "$(python3 -c 'import nvidia.cublas as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)"; do
        missing >/dev/null || break
        [ -n "$d" ] && [ -d "$d" ] && OURLD="$OURLD${OURLD:+:}$(cd "$d" && pwd)"
    done
    LD_LIBRARY_PATH="$OURLD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$CUDA_LIB" | grep -E "cublas|not found" | sed 's/^\s*/ldd    /'
    M_LIBS=$(missing)
    [ -n "$M_LIBS" ] && fail "libxsa_cuda.so cannot load: $M_LIBS"
fi
echo "paths  library folders for our programs: ${OURLD:-none beyond the loader defaults}"
if [ "$HAVE_BIN" = 1 ]; then
    XSA=$(wrap xsa-eval "$XSA") MATH=$(wrap test_cuda_math "$MATH") BENCH=$(wrap bench_cuda "$BENCH")
fi

# ---- 2. arithmetic on the CPU -------------------------------------------------------------
section "kernel arithmetic on the CPU" 60
if [ "$HAVE_BIN" = 1 ] && tmo 60 "$MATH" >"$W/math.log" 2>&1; then pass "test_cuda_math: $(tail -1 "$W/math.log")"
elif [ "$HAVE_BIN" = 1 ]; then grep -E "FAIL|CHECK" "$W/math.log" | head -10; fail "test_cuda_math: $(tail -1 "$W/math.log")"
else skip "test_cuda_math: no binaries"; fi

# ---- 3. preflight -------------------------------------------------------------------------
section "preflight: a tiny model on the GPU" 60
GPU=0
PRE="$XSA logprobs --model tests/fixtures/models/llama_gqa --tokens 1,2,3 --device cuda"
if [ "$HAVE_BIN" = 1 ] && tmo 60 $PRE >"$W/pre.out" 2>"$W/pre.err"; then
    GPU=1; pass "preflight: $(grep -v '^pos' "$W/pre.out" | wc -l) logprobs from the GPU"
elif [ "$HAVE_BIN" = 1 ]; then
    fail "preflight: $(head -1 "$W/pre.err")"; explain $PRE
fi
[ -n "${GPU_CHECK_NO_PREFLIGHT:-}" ] && [ "$HAVE_BIN" = 1 ] && GPU=1
gpu_ok() { [ "$GPU" = 1 ] || { skip "$1: no usable GPU (see the preflight)"; return 1; }; }

# ---- 4. model fixtures --------------------------------------------------------------------
section "model fixtures: GPU against CPU" 110
if gpu_ok "model fixtures"; then
    MODELS=$(ls -d tests/fixtures/models/*/ 2>/dev/null || true)
    S=${XSA_SHARED:-../shared}/benchdata/models/stories260K
    [ -f "$S/stories260K.bin" ] && [ -f tests/fixtures/stories260K_reference.json ] && MODELS="$MODELS $S/stories260K.bin"
    MODELS="$MODELS $(ls tests/fixtures/llmc/model_*.bin 2>/dev/null || true)"  # llm.c's GPT-2 files
    for M in $MODELS; do
        M=${M%/}
        case "$M" in *_sharded) info "$M: skipped (the same weights as ${M%_sharded}; only the loader differs)"; continue ;; esac
        # olmo's clip_qkv runs on the CPU alone: such a fixture is checked as refused in 5d.
        if [ -f "$M/config.json" ] && grep -Eq '"clip_qkv": *[0-9]' "$M/config.json"; then
            info "$M: skipped here (clip_qkv: the CUDA backend refuses it; see 5d)"; continue
        fi
        # The Gemma families run on the CPU alone too (checked as refused in 5d).
        if [ -f "$M/config.json" ] && grep -Eq '"model_type": *"gemma' "$M/config.json"; then
            info "$M: skipped here (a Gemma family: the CUDA backend refuses it; see 5d)"; continue
        fi
        # ... and so do phi and opt (a head bias, a shared LayerNorm, q/k LayerNorms; learned
        # positions with an offset, ReLU, post-LN, project_in/out: checked as refused in 5d).
        if [ -f "$M/config.json" ] && grep -Eq '"model_type": *"(phi|opt)"' "$M/config.json"; then
            info "$M: skipped here (phi / opt: the CUDA backend refuses it; see 5d)"; continue
        fi
        # So do stablelm's qk_layernorm, smollm3's NoPE layers and granite's multipliers (see 5d).
        if [ -f "$M/config.json" ] && grep -Eq '"qk_layernorm": *true|"model_type": *"(smollm3|granite)"' "$M/config.json"; then
            info "$M: skipped here (qk_layernorm, NoPE layers or granite's multipliers: the CUDA backend refuses them; see 5d)"; continue
        fi
        REF="$M/reference.json"
        [ -f "$M" ] && REF=tests/fixtures/stories260K_reference.json
        case "$M" in */llmc/model_*.bin) REF=$(dirname "$M")/reference_$(basename "$M" .bin | sed 's/^model_//').json ;; esac
        [ -f "$REF" ] || { skip "$M: no reference.json"; continue; }
        # Each case: tokens and xsa spec, one per line ("1,2,3 all").
        if ! python3 -c 'import json,sys
for c in json.load(open(sys.argv[1]))["cases"]: print(",".join(str(int(t)) for t in c["tokens"]), c.get("xsa", "none"))' "$REF" >"$W/cases" 2>"$W/err"; then
            fail "$M: cannot read $REF: $(tail -1 "$W/err")"; continue
        fi
        declare -A NF=() WORST=() WMEAN=() WG=() NPOS=()
        # The first two failing cases of a fixture and dtype get a line each; the rest are counted.
        case_fail() {
            NF[$1]=$((NF[$1] + 1))
            if [ "${NF[$1]}" -le 2 ]; then fail "$M $2"; else echo "     $M $2"; fi
        }
        for DT in float32 bfloat16; do NF[$DT]=0 WORST[$DT]=0 WMEAN[$DT]=0 WG[$DT]=0 NPOS[$DT]=0; done
        i=0 ncase=$(wc -l <"$W/cases")
        while read -r TOKS XSAS; do
            if [ "$(now)" -ge "$SECTION_END" ]; then fail "$M: section time limit reached; $((ncase - i)) of $ncase cases not run"; break; fi
            i=$((i + 1))
            LP="$XSA logprobs --model $M --tokens $TOKS --xsa $XSAS"
            if ! tmo 30 $LP --device cpu >"$W/cpu" 2>"$W/err"; then
                for DT in float32 bfloat16; do case_fail "$DT" "case $i: cpu: $(head -1 "$W/err")"; done
                continue
            fi
            for DT in float32 bfloat16; do
                if ! tmo 30 $LP --device cuda --dtype "$DT" >"$W/gpu" 2>"$W/err"; then
                    case_fail "$DT" "case $i $DT: $(head -1 "$W/err")"
                    [ "${NF[$DT]}" = 1 ] && explain $LP --device cuda --dtype "$DT"
                    continue
                fi
                R=$(paste "$W/cpu" "$W/gpu" | tail -n +2 | awk -v dt="$DT" '
                    { d = $3 - $7; if (d < 0) d = -d; if (d > w) w = d; s += d; n++; if ($4 != $8) g++ }
                    END { m = n ? s / n : 0; ok = dt == "float32" ? (w <= 2e-4 && g == 0) : (w <= 0.25 && m <= 0.03 && g <= 1);
                          printf "%s %d %.3e %.3e %d\n", ok ? "ok" : "bad", n, w, m, g + 0 }')
                read -r verdict n w m g <<<"$R"
                if [ "$(wc -l <"$W/cpu")" != "$(wc -l <"$W/gpu")" ]; then verdict=bad; echo "   case $i $DT: cpu and gpu print different line counts"; fi
                NPOS[$DT]=$((NPOS[$DT] + n))
                WORST[$DT]=$(awk -v a="${WORST[$DT]}" -v b="$w" 'BEGIN { print (b + 0 > a + 0 ? b : a) }')
                WMEAN[$DT]=$(awk -v a="${WMEAN[$DT]}" -v b="$m" 'BEGIN { print (b + 0 > a + 0 ? b : a) }')
                [ "$g" -gt "${WG[$DT]}" ] && WG[$DT]=$g
                if [ "$verdict" != ok ]; then
                    case_fail "$DT" "case $i xsa=$XSAS $DT: $n positions, max |gpu - cpu| $w, mean $m, greedy mismatches $g"
                fi
            done
        done <"$W/cases"
        for DT in float32 bfloat16; do
            lims="<= 2e-4, greedy identical"
            [ "$DT" = bfloat16 ] && lims="<= 0.25, mean <= 0.03, greedy mismatches <= 1 per case"
            line="$M $DT: $i cases, ${NPOS[$DT]} positions, worst max |gpu - cpu| ${WORST[$DT]}, worst mean ${WMEAN[$DT]}, worst greedy mismatches ${WG[$DT]} ($lims)"
            if [ "${NF[$DT]}" = 0 ] && [ "$i" -gt 0 ]; then pass "$line"; else fail "$line; ${NF[$DT]} case(s) failed"; fi
        done
        unset NF WORST WMEAN WG NPOS
    done
fi

# ---- 5. device checks ---------------------------------------------------------------------
parity() {  # parity NAME LOG [ENV=VALUE]
    local name=$1 log=$2 rc=0
    shift 2
    env "$@" XSA_CUDA_LIB="$CUDA_LIB" timeout -k 5 $((SECTION_END - $(now) > 2 ? SECTION_END - $(now) : 2)) "$BENCH" --parity >"$log" 2>&1 || rc=$?
    # (pass and fail append to $RES, so the subshell of this pipeline still counts)
    grep -E "^(PASS|FAIL|info)" "$log" | while read -r l; do
        case "$l" in PASS*) pass "$name: ${l#PASS }" ;; FAIL*) fail "$name: ${l#FAIL }" ;; *) echo "$l" ;; esac
    done
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then fail "$name: timed out"
    elif [ "$rc" != 0 ] && ! grep -q "^FAIL" "$log"; then tail -5 "$log" | sed 's/^/   | /'; fail "$name: exit $rc without a verdict"; fi
    keep_log "$name" "$log"
}
section "device checks (bench_cuda --parity)" 90
if gpu_ok "device checks" && [ "$HAVE_BIN" = 1 ]; then parity parity "$W/parity.log"; fi
section "device checks with activations capped at 300 tokens (sub-batch split)" 60
if gpu_ok "split device checks" && [ "$HAVE_BIN" = 1 ]; then parity "split" "$W/parity2.log" XSA_CUDA_MAX_TOKENS=300; fi

# ---- 5b. two MPI ranks on one GPU (docs/distributed.md) -----------------------------------
# One H200: CUDA_VISIBLE_DEVICES=0 gives both ranks of `mpirun -np 2 ... --device cuda` GPU 0
# (each takes entry local_rank mod 1): the device assignment (both ranks open the GPU backend,
# results name it) and the gather (results and samples byte-identical to one process on the
# same GPU, float32 and bfloat16) on the demo model over the fixture tasks, with small batches
# so that both ranks score several. On 8 GPUs the same command without CUDA_VISIBLE_DEVICES
# gives one GPU per rank; build/bench/bench_dist times 1 against 2 ranks (CPU).
section "two MPI ranks on one GPU" 45
if gpu_ok "two ranks on one GPU"; then
    if ! command -v mpirun >/dev/null 2>&1 || ! "$XSA" --version 2>/dev/null | grep -q "MPI: Open"; then
        skip "two ranks on one GPU: no mpirun, or xsa-eval built without MPI (apt-get install libopenmpi-dev openmpi-bin; make)"
    else
        strip_results() { python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for k in ("date", "start_time", "end_time", "total_evaluation_time_seconds"): r.pop(k, None)
for k in ("timing", "command"): r["xsa_eval"].pop(k, None)
print(json.dumps(r, sort_keys=True))' "$1"; }
        for DT in float32 bfloat16; do
            DARGS=(run --model demo/sa --tasks all --data-dir tests/fixtures/data --allow-data-change --offline --device cuda
                   --dtype "$DT" --threads 1 --batch-tokens 512 --log-samples --quiet --cache-dir "$W/dp-cache")
            rm -rf "$W/dp1" "$W/dp2"
            if ! tmo 20 "$XSA" "${DARGS[@]}" --output "$W/dp1" >"$W/dp.log" 2>&1; then fail "two ranks $DT: the one-process run failed: $(tail -1 "$W/dp.log")"; continue; fi
            rc=0
            tmo 25 env CUDA_VISIBLE_DEVICES=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                mpirun --oversubscribe -np 2 "$XSA" "${DARGS[@]}" --output "$W/dp2" >"$W/dp.log" 2>&1 || rc=$?
            keep_log "two ranks $DT" "$W/dp.log"
            if [ "$rc" != 0 ]; then fail "two ranks on one GPU $DT: exit $rc: $(grep -m1 'xsa-eval' "$W/dp.log")"; continue; fi
            bad=0 n=0
            for f in "$W"/dp1/sa/samples_*.jsonl; do
                stem=$(basename "$f" | sed -E 's/_[0-9T:.-]+_[0-9a-f]{6}\.jsonl$//'); n=$((n + 1))
                cmp -s "$f" "$(ls "$W"/dp2/sa/"$stem"_*.jsonl 2>/dev/null | head -1)" || bad=$((bad + 1))
            done
            same=0
            [ "$(strip_results "$W"/dp1/sa/results_*.json)" = "$(strip_results "$W"/dp2/sa/results_*.json)" ] && same=1
            desc=$(grep -o '"device_desc": *"[^"]*"' "$W"/dp2/sa/results_*.json | head -1)
            if [ "$bad" = 0 ] && [ "$n" -gt 0 ] && [ "$same" = 1 ]; then
                pass "two MPI ranks on one GPU, $DT: results and $n samples files byte-identical to one process ($desc)"
            else fail "two MPI ranks on one GPU, $DT: $bad of $n samples files differ, results identical: $same"; fi
        done
    fi
fi

# ---- 5c. ppl and --kl on the GPU (eval/ppl.c, the backend's distribution chunks) -----------
# The CUDA path of the per-position full distributions has never run: the two demo models over
# README.md, windows of 128 with stride 96, on the GPU (float32) against the CPU: nats per token
# of each model and the mean KL(A || B) within 2e-4 relative, top-1 agreement within 1e-3.
section "ppl --kl and --split-docs: GPU against CPU" 60
if gpu_ok "ppl --kl"; then
    PARGS=(ppl --model demo/sa --model demo/xsa --text README.md --context 128 --stride 96 --kl --threads 2)
    if tmo 15 "$XSA" "${PARGS[@]}" --device cpu --json "$W/ppl_cpu.json" >/dev/null 2>"$W/ppl.log" &&
       tmo 20 "$XSA" "${PARGS[@]}" --device cuda --dtype float32 --json "$W/ppl_gpu.json" >/dev/null 2>>"$W/ppl.log"; then
        v=$(python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
rel = lambda x, y: abs(x - y) / max(abs(y), 1e-12)
w = max([rel(m["nats_per_token"], n["nats_per_token"]) for m, n in zip(b["models"], a["models"])] + [rel(b["kl"]["mean"], a["kl"]["mean"])])
t = abs(b["kl"]["top1_agreement"] - a["kl"]["top1_agreement"])
print("%s worst relative difference %.2g, top-1 agreement differs by %.2g" % ("ok" if w <= 2e-4 and t <= 1e-3 else "FAIL", w, t))' "$W/ppl_cpu.json" "$W/ppl_gpu.json" 2>&1)
        case $v in ok*) pass "ppl --kl on the GPU: ${v#ok }" ;; *) fail "ppl --kl on the GPU: $v" ;; esac
    else
        keep_log "ppl --kl" "$W/ppl.log"
        fail "ppl --kl on the GPU: $(grep -m1 'xsa-eval' "$W/ppl.log")"; explain "$XSA" "${PARGS[@]}" --device cuda
    fi
    # --split-docs: rows cut at each BOS, each after a one-token row holding the token before it
    # (batch.before, which the GPU does not read): eval_val's layout and sliding windows.
    for SPLIT in "--ranks 2 --val-batch-tokens 2048" "--stride 24"; do
        SARGS=(ppl --model demo/sa --tokens-file tests/fixtures/ppl/docs_sp1024.bin --tokenizer
               tests/fixtures/tokenizers/sp_bpe/tokenizer.model --split-docs --context 64 $SPLIT --threads 2)
        if tmo 15 "$XSA" "${SARGS[@]}" --device cpu --json "$W/split_cpu.json" >/dev/null 2>"$W/split.log" &&
           tmo 20 "$XSA" "${SARGS[@]}" --device cuda --dtype float32 --json "$W/split_gpu.json" >/dev/null 2>>"$W/split.log"; then
            v=$(python3 -c 'import json, sys
a, b = (json.load(open(f))["models"][0] for f in sys.argv[1:3])
w = abs(a["nats_per_token"] - b["nats_per_token"]) / a["nats_per_token"]
print("%s relative difference %.2g" % ("ok" if w <= 2e-4 else "FAIL", w))' "$W/split_cpu.json" "$W/split_gpu.json" 2>&1)
            case $v in ok*) pass "ppl --split-docs $SPLIT on the GPU: ${v#ok }" ;; *) fail "ppl --split-docs $SPLIT on the GPU: $v" ;; esac
        else
            keep_log "ppl --split-docs" "$W/split.log"
            fail "ppl --split-docs $SPLIT on the GPU: $(grep 'xsa-eval' "$W/split.log" | tail -1)"
        fi
    done
fi

# ---- 5d. what the CUDA backend does not run yet ----------------------------------------------
# Parameter-golf (model/pgolf.c, the NTK-scaled record, the 2026-03-31 record's two lanes and
# depth recurrence, a looped 2026-04-05 record and the non-record 2026-03-21 RecurrentGPT among them) and modded-nanogpt models (the
# 2026-05-07 record's, 07-17's MUDD, the root's MUDD gates with the DC correction, the 05-24 root's
# MUDD before the sign trick, 05-27's this_pr_v1 gates and 04-22 MuddFormer's dense connections) and
# olmo's clip_qkv (tests/fixtures/models/olmo_clip), the Gemma families (tests/fixtures/models/gemma,
# gemma2, gemma3_text), phi and opt (tests/fixtures/models/phi, phi_qk_layernorm, opt, opt_350m_layout,
# opt_plain), stablelm's qk_layernorm, smollm3's NoPE layers, granite's multipliers
# (tests/fixtures/models/stablelm_qk_parallel, smollm3, granite) and
# probe's statistics run on the CPU only: with a device present, --device cuda must refuse them
# (exit 2, naming what is missing) and --device auto must say so and score on the CPU exactly.
# The per-group (PGRP) container of 2026-04-27 9Hp is among them where the lrzip program is.
section "CPU-only models and statistics with a GPU present" 30
if gpu_ok "CPU-only models"; then
    pgrp=""
    command -v lrzip >/dev/null 2>&1 && pgrp=tests/fixtures/pgolf/pgrp_0427/final_model.int6.ptz
    for M in $pgrp tests/fixtures/pgolf/recurrent_0321/final_model.pt tests/fixtures/pgolf/xsa_record_ntk/final_model.pt tests/fixtures/pgolf/recur_0331/final_model.pt tests/fixtures/pgolf/loop_0405/final_model.pt \
             tests/fixtures/pgolf/lanes_0410/final_model.pt tests/fixtures/pgolf/gates_0427/final_model.pt \
             tests/fixtures/mnanogpt/xsa_gated/state_step000000.pt tests/fixtures/mnanogpt/mudd/state_step000000.pt \
             tests/fixtures/mnanogpt/gates/state_step000000.pt tests/fixtures/mnanogpt/mudd_0524/state_step000000.pt \
             tests/fixtures/mnanogpt/gates_v1/state_step000000.pt tests/fixtures/mnanogpt/muddformer_0422/state_step000000.pt \
             tests/fixtures/models/olmo_clip tests/fixtures/models/gemma tests/fixtures/models/gemma2 tests/fixtures/models/gemma3_text \
             tests/fixtures/models/phi tests/fixtures/models/phi_qk_layernorm tests/fixtures/models/opt \
             tests/fixtures/models/opt_350m_layout tests/fixtures/models/opt_plain \
             tests/fixtures/models/stablelm_qk_parallel tests/fixtures/models/smollm3 tests/fixtures/models/granite; do
        NAME=$(basename "$(dirname "$M")")
        [ -d "$M" ] && NAME=$(basename "$M")  # (a checkpoint folder names itself)
        tmo 10 "$XSA" logprobs --model "$M" --tokens 1,2,3,4 --device cuda >/dev/null 2>"$W/only.err"; rc=$?
        tmo 10 "$XSA" logprobs --model "$M" --tokens 1,2,3,4 --device auto >"$W/only_auto.tsv" 2>"$W/only_auto.err"; rc2=$?
        tmo 10 "$XSA" logprobs --model "$M" --tokens 1,2,3,4 --device cpu >"$W/only_cpu.tsv" 2>/dev/null
        if [ $rc = 2 ] && grep -q "does not implement" "$W/only.err" && [ $rc2 = 0 ] && grep -q "using the CPU backend" "$W/only_auto.err" &&
           cmp -s "$W/only_auto.tsv" "$W/only_cpu.tsv"; then
            pass "$NAME refused on --device cuda, scored on the CPU by --device auto"
        else
            keep_log "CPU-only $M" "$W/only.err"
            fail "$NAME: --device cuda rc $rc, --device auto rc $rc2: $(head -c 200 "$W/only.err")"
        fi
    done
    # Test-time training (ppl --ttt) trains on the CPU: refused on cuda, the same bits by auto as by cpu.
    TT="ppl --model tests/fixtures/pgolf/ttt_0323/final_model.pt --tokens-file tests/fixtures/ppl/docs_sp1024.bin --context 32 --stride 8 --ttt --ttt-set TTT_EPOCHS=1,TTT_CHUNK_TOKENS=256"
    tmo 20 "$XSA" $TT --device cuda >/dev/null 2>"$W/ttt.err"; rc=$?
    tmo 20 "$XSA" $TT --device auto --json "$W/ttt_auto.json" >/dev/null 2>&1; rc2=$?
    tmo 20 "$XSA" $TT --device cpu --json "$W/ttt_cpu.json" >/dev/null 2>&1
    if [ $rc = 2 ] && grep -q "test-time training runs on the CPU" "$W/ttt.err" && [ $rc2 = 0 ] &&
       [ "$(grep -o '"nats_per_token": [^,]*' "$W/ttt_auto.json")" = "$(grep -o '"nats_per_token": [^,]*' "$W/ttt_cpu.json")" ]; then
        pass "ppl --ttt refused on --device cuda, trained and scored on the CPU by --device auto"
    else fail "ppl --ttt: --device cuda rc $rc, --device auto rc $rc2: $(head -c 200 "$W/ttt.err")"; fi
    tmo 10 "$XSA" probe --model demo/sa --text README.md --device cuda >/dev/null 2>"$W/probe.err"; rc=$?
    if [ $rc = 2 ] && grep -q "CPU backend only" "$W/probe.err"; then pass "probe --device cuda refused: $(head -c 120 "$W/probe.err")"
    else fail "probe --device cuda: rc $rc: $(head -c 200 "$W/probe.err")"; fi
fi

# ---- 5e. the CUDA backend's attention statistics (XSA_CUDA_PROBE=1) ----------------------------
# Never run before: cos(y, v), cos(z, v) and a_ii from the attention kernel's epilogue
# (cuda_attention.cu; its serial twin is checked against the CPU in tests/test_cuda_math.c),
# gathered per layer at the scored tokens. The two demo models' per-layer means and spreads on
# the GPU (fp32) against the CPU's, also with sub-batches (XSA_CUDA_MAX_TOKENS=300). Passing this
# is what lets `probe --device cuda` run without XSA_CUDA_PROBE (cli/cmd_ppl.c).
section "probe statistics: GPU against CPU" 60
if gpu_ok "probe on the GPU"; then
    PR=(probe --model demo/sa --model demo/xsa --text README.md --context 128 --threads 2)
    tmo 30 "$XSA" "${PR[@]}" --device cpu --json "$W/probe_cpu.json" -o "$W/probe_cpu.md" >/dev/null 2>&1
    for caps in "" 300; do
        if tmo 30 env XSA_CUDA_PROBE=1 ${caps:+XSA_CUDA_MAX_TOKENS=$caps} "$XSA" "${PR[@]}" --device cuda --dtype float32 \
               --json "$W/probe_gpu.json" -o "$W/probe_gpu.md" >"$W/probe.log" 2>&1; then
            v=$(python3 - "$W/probe_cpu.json" "$W/probe_gpu.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
w = 0.0
for ma, mb in zip(a["models"], b["models"]):
    for la, lb in zip(ma["layers"], mb["layers"]):
        for k in ("cos_y", "cos_y_sd", "cos_z", "cos_z_sd", "a_ii", "a_ii_sd"):
            w = max(w, abs(la[k] - lb[k]))
z = max(abs(l["cos_z"]) for m in b["models"] for l in m["layers"] if l["xsa"])  if any(l["xsa"] for m in b["models"] for l in m["layers"]) else 0
print(("ok" if w < 1e-4 and z < 1e-4 else "bad") + f" max |gpu - cpu| {w:.2e} over the layers' means and spreads, XSA layers' |cos_z| {z:.1e}")
PY
)
            case $v in ok*) pass "probe on the GPU${caps:+ (sub-batches of $caps)}: ${v#ok }" ;; *) fail "probe on the GPU${caps:+ (sub-batches of $caps)}: $v" ;; esac
        else
            keep_log "probe on the GPU" "$W/probe.log"
            fail "probe on the GPU${caps:+ (sub-batches of $caps)}: $(grep -m1 'xsa-eval' "$W/probe.log")"
        fi
    done
fi

# ---- 6. benchmark -------------------------------------------------------------------------
section "benchmark" 120
if gpu_ok "benchmark"; then
    BARGS="--docs 4000"
    [ "$QUICK" = 1 ] && BARGS="--small --docs 1000"
    BRC=0
    tmo 120 "$BENCH" $BARGS --dump "$W/requests.jsonl" >"$W/bench.log" 2>&1 || BRC=$?
    cat "$W/bench.log"
    keep_log bench "$W/bench.log"
    if [ "$BRC" -eq 0 ]; then
        pass "benchmark ran"
        OURS=$(sed -n 's/^RESULT requests_per_s=\([0-9.]*\) .* mfu=\([0-9.]*\)$/\1 \2/p' "$W/bench.log")
        MFU=${OURS#* }
        OURS=${OURS% *}
        [ -n "$MFU" ] && awk -v m="$MFU" 'BEGIN { printf "%s end-to-end MFU %.1f%% (target >= 50%%)\n", m >= 0.5 ? "TARGET-MET" : "TARGET-MISSED", 100 * m }'
        section "Hugging Face transformers on the same requests" 80
        HFARGS="--max-seconds 30"
        [ "$QUICK" = 1 ] && HFARGS="$HFARGS --small"
        HRC=0
        PYTHONUNBUFFERED=1 tmo 80 python3 -m tools.bench.hf_gpu_bench --requests "$W/requests.jsonl" $HFARGS >"$W/hf.log" 2>&1 || HRC=$?
        grep -vE "^RESULT|[Ww]arning" "$W/hf.log" | tail -4
        keep_log hf "$W/hf.log"
        HF=$(sed -n 's/^RESULT requests_per_s=\([0-9.]*\) .*/\1/p' "$W/hf.log")
        if [ "$HRC" -eq 0 ] && [ -n "$HF" ] && [ -n "$OURS" ]; then
            awk -v a="$OURS" -v b="$HF" 'BEGIN { r = a / b;
                printf "%s speed ratio %.1fx Hugging Face transformers on the same requests (%.1f vs %.1f requests/s; target >= 10x)\n",
                r >= 10 ? "TARGET-MET" : "TARGET-MISSED", r, a, b }'
        else
            skip "hf comparison: tools/bench/hf_gpu_bench.py exit $HRC (torch + transformers with a GPU needed)"
        fi
    else
        fail "benchmark: exit $BRC$([ "$BRC" = 124 ] && echo ' (timeout)')"
        [ "$BRC" != 124 ] && explain "$BENCH" --small --docs 50
    fi
fi

# ---- 7. compute-sanitizer -----------------------------------------------------------------
section "compute-sanitizer" 75
SAN=$(command -v compute-sanitizer 2>/dev/null || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if gpu_ok "compute-sanitizer"; then
    if [ -z "$SAN" ]; then
        skip "compute-sanitizer not found"
    else
        for spec in "memcheck llama_gqa float32" "memcheck gpt2_tiny bfloat16" "racecheck llama_gqa bfloat16" \
            "memcheck probe" "racecheck probe" "synccheck probe"; do
            read -r tool what dt <<<"$spec"
            if [ "$what" = probe ]; then
                cmd=(env XSA_CUDA_LIB="$CUDA_LIB" "$BENCH" --parity-attention)
            else
                cmd=("$XSA" logprobs --model "tests/fixtures/models/$what" --tokens 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35 --xsa all --device cuda --dtype "$dt")
            fi
            rc=0
            tmo 25 "$SAN" --tool "$tool" --target-processes all --error-exitcode 9 "${cmd[@]}" >"$W/san.log" 2>&1 || rc=$?
            summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$W/san.log" | tail -1)
            if [ "$rc" = 0 ]; then pass "compute-sanitizer $tool $what ${dt:-}: ${summary:-no errors}"
            else
                fail "compute-sanitizer $tool $what ${dt:-}: exit $rc${summary:+, $summary}"
                grep -E "^=========" "$W/san.log" | grep -vE "^========= *$" | head -12 | sed 's/^/   | /'
            fi
            keep_log "sanitizer $tool $what" "$W/san.log"
        done
    fi
fi

# ---- summary ------------------------------------------------------------------------------
N_PASS=$(grep -c "^PASS" "$RES")
N_FAIL=$(grep -c "^FAIL" "$RES")
N_SKIP=$(grep -c "^SKIP" "$RES")
echo
echo "== summary after $(elapsed)"
grep -E "^(FAIL|SKIP)" "$RES" || true
if [ -n "${GPU_CHECK_LOGS:-}" ] && [ -f "$W/detail.log" ]; then
    mkdir -p "$GPU_CHECK_LOGS" && cp "$W/detail.log" "$GPU_CHECK_LOGS/gpu-check-detail.log" && echo "detailed logs: $GPU_CHECK_LOGS/gpu-check-detail.log"
fi
echo "gpu-check: $N_PASS passed, $N_FAIL failed, $N_SKIP skipped"
[ "$N_FAIL" -eq 0 ]
