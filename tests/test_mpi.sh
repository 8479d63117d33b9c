#!/usr/bin/env bash
# Data-parallel runs (docs/distributed.md): `mpirun --oversubscribe -np 2` and `-np 3` on the
# CPU give results and --log-samples files byte-identical to one process (two models, every
# fixture task; stories260K on the real files of ../shared/benchdata when present); a rank that
# fails (XSA_TEST_FAIL_RANK) ends the whole job within seconds with its message and a non-zero
# exit, and a rerun resumes from each rank's journal; launcher environments the build cannot
# serve are refused. Skips when mpirun is absent or the binary is built without MPI.
. "$(dirname "$0")/lib.sh"
# Open MPI refuses root without these (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's runtime keeps allocations to its exit, which LeakSanitizer would report as leaks
# of xsa-eval; ranks started by mpirun check everything else (the one-process runs keep it).
MPI_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
S=${XSA_SHARED:-../shared}/benchdata

# Runs that no launcher serves are refused before any scoring, whatever the build.
expect_exit srun_without_mpi_plugin 2 "srun started 4 tasks without an MPI plugin.*--mpi=pmix" -- \
    env SLURM_PROCID=0 SLURM_NTASKS=4 "$XSA_BIN" run --model demo/sa --tasks piqa --data-dir tests/fixtures/data \
    --allow-data-change --offline --device cpu --quiet --output "$TMP/srun"
expect_exit one_rank_launcher_is_one_process 0 "" -- env OMPI_COMM_WORLD_SIZE=1 "$XSA_BIN" run --model demo/sa \
    --tasks piqa --data-dir tests/fixtures/data --allow-data-change --offline --device cpu --quiet --output "$TMP/one"
expect_exit version_says_mpi 0 "^MPI: " -- "$XSA_BIN" info --version

if ! command -v mpirun >/dev/null 2>&1; then
    skip mpi_runs "mpirun absent (apt-get install openmpi-bin libopenmpi-dev)"; finish; exit $?
fi
if "$XSA_BIN" --version | grep -q "MPI: not built in"; then
    expect_exit no_mpi_build_refuses_ranks 2 "built without MPI" -- \
        mpirun --oversubscribe -np 2 "$XSA_BIN" run --model demo/sa --tasks piqa --data-dir tests/fixtures/data \
        --allow-data-change --offline --device cpu --quiet --output "$TMP/nompi"
    skip mpi_runs "$XSA_BIN is built without MPI"; finish; exit $?
fi
mpi() { local n=$1; shift; env ASAN_OPTIONS="$MPI_ASAN" mpirun --oversubscribe -np "$n" "$XSA_BIN" "$@"; }

# Results without what differs between any two runs (times, the command's --output, throughput).
strip() {
    python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("date", "start_time", "end_time", "total_evaluation_time_seconds"): r.pop(k, None)
r["xsa_eval"].pop("timing", None)
r["xsa_eval"].pop("command", None)
print(json.dumps(r, sort_keys=True))
PY
}
# same_outputs REF DIR: every model's results (stripped) and samples files in DIR equal REF's.
same_outputs() {
    local ref=$1 dir=$2 f g n=0
    for f in "$ref"/*/results_*.json; do
        g=$(ls "$dir/$(basename "$(dirname "$f")")"/results_*.json 2>/dev/null | head -1)
        [ -n "$g" ] || { echo "no results for $(dirname "$f")"; return 1; }
        [ "$(strip "$f")" = "$(strip "$g")" ] || { echo "results differ: $g"; return 1; }
    done
    for f in "$ref"/*/samples_*.jsonl; do
        local m; m=$(basename "$(dirname "$f")")
        local stem; stem=$(basename "$f" | sed -E 's/_[0-9T:.-]+(_[0-9a-f]{6})?\.jsonl$//')
        g=$(ls "$dir/$m/$stem"_*.jsonl 2>/dev/null | head -1)
        cmp -s "$f" "$g" || { echo "samples differ: $m/$stem"; return 1; }
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || { echo "no samples files"; return 1; }
    left=$(ls "$dir"/*/ | grep -E 'journal_|\.pending\.' || true)
    [ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

# Two models (then their comparison), every fixture task; small batches so that every rank
# scores several of them.
LOUD=(run --model demo/sa --model demo/xsa --tasks all --data-dir tests/fixtures/data --allow-data-change --offline
      --device cpu --threads 1 --batch-tokens 512 --log-samples --cache-dir "$TMP/c")
FIX=("${LOUD[@]}" --quiet)
"$XSA_BIN" "${FIX[@]}" --output "$TMP/f1" >/dev/null 2>&1 || fail fixtures_one_process "exit $?"
for n in 2 3; do
    if ! out=$(mpi $n "${FIX[@]}" --output "$TMP/f$n" 2>&1); then fail "fixtures_np$n" "exit: $(echo "$out" | tail -3)"
    elif msg=$(same_outputs "$TMP/f1" "$TMP/f$n"); then pass "fixtures_np${n}_byte_identical"
    else fail "fixtures_np$n" "$msg"; fi
done
[ -f "$TMP"/f3/compare_sa_vs_xsa.md ] && pass fixtures_np3_comparison || fail fixtures_np3_comparison "no comparison report"

# stories260K on the real benchmark files.
if [ -f "$S/models/stories260K/stories260K.bin" ]; then
    REAL=(run --model "$S/models/stories260K/stories260K.bin" --tokenizer "$S/models/stories260K/tok512.bin" --tasks all
          --data-dir "$S" --limit 60 --offline --device cpu --threads 1 --batch-tokens 1024 --quiet --log-samples
          --cache-dir "$TMP/c")
    "$XSA_BIN" "${REAL[@]}" --output "$TMP/r1" >/dev/null 2>&1 || fail real_one_process "exit $?"
    for n in 2 3; do
        if ! out=$(mpi $n "${REAL[@]}" --output "$TMP/r$n" 2>&1); then fail "real_np$n" "exit: $(echo "$out" | tail -3)"
        elif msg=$(same_outputs "$TMP/r1" "$TMP/r$n"); then pass "real_stories260K_np${n}_byte_identical"
        else fail "real_np$n" "$msg"; fi
    done
else
    skip real_stories260K "../shared/benchdata absent"
fi

# Bad input only rank 0 sees (it alone reads the data): the job ends at once with its message.
t0=$(date +%s.%N)
out=$(timeout 60 env ASAN_OPTIONS="$MPI_ASAN" mpirun --oversubscribe -np 3 "$XSA_BIN" run --model demo/sa --tasks piqa \
      --data-dir "$TMP/no-such-data" --offline --device cpu --quiet --cache-dir "$TMP/empty-cache" --output "$TMP/r0" 2>&1)
rc=$?
t=$(printf "%.1f" "$(echo "$(date +%s.%N) - $t0" | bc)")
if [ $rc -ne 2 ]; then fail rank0_bad_input_ends_job "exit $rc, wanted 2: $(echo "$out" | head -3)"
elif ! echo "$out" | grep -q "rank 0 of 3: .*no-such-data"; then fail rank0_bad_input_ends_job "$(echo "$out" | head -3)"
elif [ "$(echo "$t < 20" | bc)" -ne 1 ]; then fail rank0_bad_input_ends_job "took ${t}s"
else pass "rank0_bad_input_ends_job_exit_2_in_${t}s"; fi

# A rank that loaded another model (a stale node-local copy, another command line) is refused
# before it scores: its scores would be mixed into rank 0's results and journal.
printf '#!/usr/bin/env bash\nif [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then m=demo/xsa; else m=demo/sa; fi\nexec "%s" run --model "$m" "$@"\n' "$XSA_BIN" > "$TMP/divrank.sh"
chmod +x "$TMP/divrank.sh"
out=$(timeout 60 env ASAN_OPTIONS="$MPI_ASAN" mpirun --oversubscribe -np 2 "$TMP/divrank.sh" --tasks piqa \
      --data-dir tests/fixtures/data --allow-data-change --offline --device cpu --quiet --output "$TMP/div" 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "rank 1 of 2: this rank's demo/xsa is not the model rank 0 loaded (other weights)" &&
   ! ls "$TMP"/div/*/results_*.json >/dev/null 2>&1; then pass rank_with_other_model_refused
else fail rank_with_other_model_refused "exit $rc: $(echo "$out" | grep -v '^$' | head -3)"; fi

# A rank that fails after its second batch ends the job: its message, exit 3, within seconds,
# no results file; the journals stay (rank 0's and each other rank's).
t0=$(date +%s.%N)
out=$(XSA_TEST_FAIL_RANK=1:2 timeout 60 env ASAN_OPTIONS="$MPI_ASAN" mpirun --oversubscribe -np 3 "$XSA_BIN" \
      "${FIX[@]}" --output "$TMP/fail" 2>&1); rc=$?
t=$(printf "%.1f" "$(echo "$(date +%s.%N) - $t0" | bc)")
if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then fail rank_failure_ends_job "exit $rc: $(echo "$out" | tail -3)"
elif ! echo "$out" | grep -q "rank 1 of 3: failing on purpose after 2 batches"; then
    fail rank_failure_ends_job "no rank 1 message: $(echo "$out" | head -3)"
elif ls "$TMP"/fail/*/results_*.json >/dev/null 2>&1; then fail rank_failure_ends_job "a results file was written"
elif [ "$(echo "$t < 20" | bc)" -ne 1 ]; then fail rank_failure_ends_job "took ${t}s"
else pass "rank_failure_ends_job_exit_${rc}_in_${t}s"; fi
[ "$(ls "$TMP"/fail/sa/journal_*.xsaj 2>/dev/null | wc -l)" -eq 3 ] && pass rank_failure_keeps_three_journals ||
    fail rank_failure_keeps_three_journals "$(ls "$TMP"/fail/sa/ 2>&1 | tr '\n' ' ')"
# mpirun may return before the killed ranks are reaped (here PID 1 reaps them late): a zombie
# counts as running, so the rerun would keep its pending file; wait for it to be gone.
for f in "$TMP"/fail/*/*.pending.*; do
    p=${f##*.}
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
done
# The rerun, with 2 ranks instead of 3: rank 1 resumes from its own journal (a record answers
# for its tokens wherever they are dealt); outputs as one process's; rank 2's journal is gone too.
out=$(env ASAN_OPTIONS="$MPI_ASAN" mpirun --oversubscribe -np 2 "$XSA_BIN" "${LOUD[@]}" \
      --output "$TMP/fail" 2>&1) || fail rank_resume "exit $?: $(echo "$out" | tail -3)"
echo "$out" | grep -q "rank 1: resuming from .*: [1-9][0-9]* distinct requests already scored" && pass rank_resume_from_own_journal ||
    fail rank_resume_from_own_journal "no resume message from rank 1: $(echo "$out" | grep -i resum | head -3)"
msg=$(same_outputs "$TMP/f1" "$TMP/fail") && pass rank_resume_byte_identical || fail rank_resume_byte_identical "$msg"

# Ranks whose kernels differ (here rank 1 forced to the scalar ones) could score other last
# bits: refused, exit 2, naming both kernels.
out=$(timeout 60 env ASAN_OPTIONS="$MPI_ASAN" mpirun --oversubscribe -np 1 "$XSA_BIN" "${FIX[@]}" --output "$TMP/mix" : \
      -np 1 -x XSA_CPU_GEMM=scalar -x XSA_CPU_ATTN=scalar "$XSA_BIN" "${FIX[@]}" --output "$TMP/mix" 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "rank 1 of 2: this rank's backend computes as .* but rank 0's as"; then
    pass mixed_kernels_refused
else fail mixed_kernels_refused "exit $rc: $(echo "$out" | grep -m2 xsa-eval)"; fi

# The rerun of a failed 2-rank job as one process (no mpirun) resumes from rank 0's journal and,
# once the results are written, leaves no rank journal behind for a later launch to resume from.
XSA_TEST_FAIL_RANK=1:2 timeout 60 env ASAN_OPTIONS="$MPI_ASAN" mpirun --oversubscribe -np 2 "$XSA_BIN" \
    "${FIX[@]}" --output "$TMP/one" >/dev/null 2>&1
for f in "$TMP"/one/*/*.pending.*; do
    p=${f##*.}
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
done
had=$(ls "$TMP"/one/sa/journal_*.rank1.xsaj 2>/dev/null | wc -l)
env ASAN_OPTIONS="$MPI_ASAN" "$XSA_BIN" "${FIX[@]}" --output "$TMP/one" >/dev/null 2>&1
if [ "$had" -eq 1 ] && ls "$TMP"/one/sa/results_*.json >/dev/null 2>&1 && [ -z "$(ls "$TMP"/one/sa/journal_* 2>/dev/null)" ]; then
    pass one_process_rerun_drops_rank_journals
else fail one_process_rerun_drops_rank_journals "before: $had rank-1 journal(s); after: $(ls "$TMP"/one/sa/ | tr '\n' ' ')"; fi

finish
