#!/usr/bin/env bash
# The run journal: a run killed (SIGKILL at random points, 20 times over) or interrupted
# (SIGINT) and then rerun scores only what is missing, and its results and samples are
# bit-identical to an uninterrupted run's; a torn record is dropped; --no-resume starts
# over; on success the journal and every temporary file are gone. And the request cache
# (--cache-requests): a later run of the same model reuses what an earlier one scored.
. "$(dirname "$0")/lib.sh"
M=demo/sa
# 500 synthetic PIQA rows: long enough a run to be killed in the middle.
mkdir -p "$TMP/data/piqa"
python3 - > "$TMP/data/piqa/validation.jsonl" <<'EOF'
import json, random
r = random.Random(5)
words = ("the a of to and in is it that for on was with as by at from this be or an are which but not have had "
         "one all were when we there can your more if out so what up its about into than them some could time").split()
s = lambda n: " ".join(r.choice(words) for _ in range(n))
for i in range(500):
    print(json.dumps({"goal": s(r.randint(8, 30)) + "?", "sol1": s(r.randint(5, 25)) + ".",
                      "sol2": s(r.randint(5, 25)) + ".", "label": r.randint(0, 1)}))
EOF
LOUD=(run --model $M --tasks piqa --data-dir "$TMP/data" --allow-data-change --offline --device cpu --threads 1
      --batch-tokens 256 --log-samples --cache-dir "$TMP/c")
ARGS=("${LOUD[@]}" --quiet)
run() { "$XSA_BIN" "${ARGS[@]}" "$@"; }  # in the background, start "$XSA_BIN" itself, so that $! is its pid
# Results without what differs between any two runs (times, paths, throughput).
strip() {
    python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("date", "start_time", "end_time", "total_evaluation_time_seconds"): r.pop(k, None)
r["xsa_eval"].pop("timing", None)
r["xsa_eval"].pop("command", None)
print(json.dumps(r, sort_keys=True))
EOF
}
same_as_reference() {  # same_as_reference DIR: its one results file and samples equal the reference's
    local res; res=$(ls "$1"/sa/results_*.json 2>/dev/null)
    [ "$(echo "$res" | grep -c .)" -eq 1 ] || { echo "$(echo "$res" | grep -c .) results files"; return 1; }
    [ "$(strip "$res")" = "$(strip "$TMP"/ref/sa/results_*.json)" ] || { echo "results differ"; return 1; }
    cmp -s "$(ls "$1"/sa/samples_piqa_*.jsonl)" "$(ls "$TMP"/ref/sa/samples_piqa_*.jsonl)" || { echo "samples differ"; return 1; }
}

run --output "$TMP/ref" >/dev/null 2>&1 || fail reference_run "exit $?"
# Waits until the journal in DIR holds K records (a point in the run that does not depend on
# the machine's speed), or the process PID has ended (returns 1).
wait_records() {
    local pid=$1 dir=$2 want=$((80 + 32 * $3)) j
    while kill -0 "$pid" 2>/dev/null; do
        for j in "$dir"/sa/journal_*.xsaj; do
            [ -f "$j" ] && [ "$(stat -c %s "$j" 2>/dev/null || echo 0)" -ge $want ] && return 0
        done
        sleep 0.002
    done
    return 1
}

# SIGKILL at 20 random points (seeded: after 0 to 900 of the ~1000 records), each in its own
# folder, each then resumed: every resumed run's results and samples equal the uninterrupted
# run's, and it leaves no journal or temporary file.
points=$(python3 -c "import random; r = random.Random(7); print(' '.join(str(r.randint(0, 900)) for _ in range(20)))")
kills=0 bad="" i=0
for k in $points; do
    i=$((i + 1))
    "$XSA_BIN" "${ARGS[@]}" --output "$TMP/k$i" >/dev/null 2>&1 &
    pid=$!
    wait_records $pid "$TMP/k$i" "$k" && kill -KILL $pid 2>/dev/null && kills=$((kills + 1))
    wait $pid 2>/dev/null
    ls "$TMP/k$i"/sa/results_*.json >/dev/null 2>&1 || run --output "$TMP/k$i" >/dev/null 2>&1
    msg=$(same_as_reference "$TMP/k$i") || bad="$bad kill $i after $k records: $msg;"
    left=$(ls -a "$TMP/k$i"/sa | grep -vE '^(\.|\.\.|results_.*\.json|samples_piqa_.*\.jsonl)$')
    [ -z "$left" ] || bad="$bad kill $i left $left;"
    rm -rf "$TMP/k$i"
done
if [ -n "$bad" ]; then fail resume_after_kill_bit_identical "$bad"
elif [ $kills -lt 15 ]; then fail resume_after_kill_bit_identical "only $kills of 20 kills landed before the run ended"
else pass "resume_after_kill_bit_identical_${kills}_of_20"; fi

# SIGINT: exit 130 naming the journal, no results or samples file; the rerun says it resumes.
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
    "$XSA_BIN" "${LOUD[@]}" --output "$TMP/i" >/dev/null 2>"$TMP/int.log" &
pid=$!
wait_records $pid "$TMP/i" 300
kill -INT $pid
wait $pid; rc=$?
if [ $rc -eq 130 ] && grep -q "interrupted; the requests scored so far are kept in $TMP/i/sa/journal_" "$TMP/int.log" &&
    [ -z "$(ls "$TMP"/i/sa | grep -E '^(results|samples)_')" ]; then pass sigint_exit_130_keeps_journal
else fail sigint_exit_130_keeps_journal "exit $rc: $(tail -1 "$TMP/int.log")"; fi
# A torn record (a kill in the middle of a write) at the journal's end is dropped.
printf 'torn-rec' >> "$(ls "$TMP"/i/sa/journal_*.xsaj)"
"$XSA_BIN" "${LOUD[@]}" --output "$TMP/i" >/dev/null 2>"$TMP/res.log"
if grep -q "dropped 8 bytes of a record torn" "$TMP/res.log" && grep -qE "resuming from .*: [0-9]+ distinct requests already scored" "$TMP/res.log" &&
    msg=$(same_as_reference "$TMP/i"); then pass sigint_then_resume_bit_identical
else fail sigint_then_resume_bit_identical "$msg $(cat "$TMP/res.log" | head -3)"; fi

# --no-resume: a journal left by a kill is not used.
"$XSA_BIN" "${ARGS[@]}" --output "$TMP/n" >/dev/null 2>&1 & pid=$!
wait_records $pid "$TMP/n" 300; kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
"$XSA_BIN" "${LOUD[@]}" --output "$TMP/n" --no-resume >/dev/null 2>"$TMP/nr.log"; rc=$?
if [ $rc -eq 0 ] && ! grep -q "resuming" "$TMP/nr.log" && msg=$(same_as_reference "$TMP/n"); then pass no_resume_starts_over
else fail no_resume_starts_over "exit $rc $msg"; fi

# --no-resume beside a run still going: that run's journal is left to it (never emptied or
# removed under it), and the first run's results are still the reference's.
"$XSA_BIN" "${ARGS[@]}" --output "$TMP/cc" >/dev/null 2>&1 & pid=$!
if wait_records $pid "$TMP/cc" 100; then
    "$XSA_BIN" "${LOUD[@]}" --output "$TMP/cc" --no-resume >/dev/null 2>"$TMP/cc.log"; rc2=$?
    wait $pid; rc1=$?
    res=$(ls "$TMP"/cc/sa/results_*.json | head -1)
    if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q "in use by a concurrent run of the same command" "$TMP/cc.log" &&
       [ "$(strip "$res")" = "$(strip "$TMP"/ref/sa/results_*.json)" ]; then pass no_resume_leaves_live_journal
    else fail no_resume_leaves_live_journal "exit $rc1/$rc2: $(grep -v warning "$TMP/cc.log" | head -2)"; fi
else
    wait $pid; skip no_resume_leaves_live_journal "the first run ended before the second started"
fi

# A journal that is not one (or of another scope) is named, with the fix.
mkdir -p "$TMP/b/sa"
"$XSA_BIN" "${ARGS[@]}" --output "$TMP/b" >/dev/null 2>&1 & pid=$!
wait_records $pid "$TMP/b" 300; kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
j=$(ls "$TMP"/b/sa/journal_*.xsaj 2>/dev/null)
if [ -n "$j" ]; then
    printf 'NOTAJRNL' | dd of="$j" bs=1 seek=0 conv=notrunc 2>/dev/null
    expect_exit damaged_journal_named 2 "journal_.*\.xsaj: not an xsa-eval request store; remove it" -- run --output "$TMP/b"
else
    skip damaged_journal_named "the run ended before its kill"
fi

# The request cache: a run of piqa fills it; a run of piqa + arc_easy elsewhere reuses every
# piqa request, and its piqa numbers equal the reference's.
"$XSA_BIN" run --model $M --tasks piqa --data-dir "$TMP/data" --allow-data-change --offline --device cpu --quiet \
    --cache-dir "$TMP/c" --output "$TMP/q1" --cache-requests "$TMP/rc" >/dev/null 2>&1
mkdir -p "$TMP/data2" && cp -r "$TMP/data/piqa" tests/fixtures/data/arc_easy "$TMP/data2/"
"$XSA_BIN" run --model $M --tasks piqa,arc_easy --data-dir "$TMP/data2" --allow-data-change --offline --device cpu \
    --cache-dir "$TMP/c" --output "$TMP/q2" --cache-requests "$TMP/rc" >/dev/null 2>"$TMP/q2.log"
if grep -q "sa: 1000 requests (a repeated one counted each time) came from the journal or the request cache" "$TMP/q2.log" &&
    python3 - "$TMP"/ref/sa/results_*.json "$TMP"/q2/sa/results_*.json <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["results"]["piqa"] == b["results"]["piqa"], "piqa differs"
assert a["xsa_eval"]["per_doc"]["piqa"] == b["xsa_eval"]["per_doc"]["piqa"], "per-doc differs"
EOF
then pass request_cache_reused_exactly; else fail request_cache_reused_exactly "$(grep -v warning "$TMP/q2.log" | head -2)"; fi
# The throughput line and requests_per_s count only what this run scored (arc_easy), not the
# 1000 piqa requests the cache gave back.
got=$(python3 - "$TMP"/q2/sa/results_*.json <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["xsa_eval"]["timing"]
print(t["requests_reused"], t["requests"] - t["requests_reused"])
EOF
)
set -- $got
if [ "${1:-}" = 1000 ] && [ "${2:-0}" -gt 0 ] && grep -q "^xsa-eval: sa: $2 requests, " "$TMP/q2.log"; then pass throughput_counts_scored_only
else fail throughput_counts_scored_only "timing '$got': $(grep 'requests, ' "$TMP/q2.log")"; fi
# Another model does not see it (its scope differs): nothing reused.
"$XSA_BIN" run --model demo/xsa --tasks piqa --data-dir "$TMP/data" --allow-data-change --offline --device cpu \
    --cache-dir "$TMP/c" --output "$TMP/q3" --cache-requests "$TMP/rc" >/dev/null 2>"$TMP/q3.log"
grep -q "came from the journal or the request cache" "$TMP/q3.log" && fail cache_scoped_by_model "reused by another model" \
    || pass cache_scoped_by_model
# A store whose header is damaged past the part a message shows is named as damaged, not as
# another model's.
cp -r "$TMP/rc" "$TMP/rcd"
for f in "$TMP"/rcd/*.xsar; do printf 'Z' | dd of="$f" bs=1 seek=50 conv=notrunc 2>/dev/null; done
expect_exit cache_header_damaged 2 "\.xsar: its header is damaged; remove it" -- run --output "$TMP/q5" --cache-requests "$TMP/rcd"
expect_exit cache_requests_empty 2 "--cache-requests '': empty path" -- run --output "$TMP/q4" --cache-requests ''

# Two models, killed while the second scores: a rerun of the same command reads the first one's
# results back (one results file, the same one, not scored again), resumes the second, writes the
# comparison and leaves no mark or journal; another command (here --step, in a copy of the folder) scores
# the first again; a two-model run that ended is scored again by a rerun (nothing marks it).
TWO=(run --model $M --model demo/xsa --tasks piqa --data-dir "$TMP/data" --allow-data-change --offline --device cpu
     --threads 1 --batch-tokens 256 --cache-dir "$TMP/c" --output "$TMP/two")
"$XSA_BIN" "${TWO[@]}" >/dev/null 2>&1 &
pid=$!
landed=0
while kill -0 $pid 2>/dev/null; do
    for j in "$TMP"/two/xsa/journal_*.xsaj; do
        [ -f "$j" ] && [ "$(stat -c %s "$j" 2>/dev/null || echo 0)" -ge $((80 + 32 * 100)) ] && kill -KILL $pid 2>/dev/null && landed=1
    done
    sleep 0.002
done
{ wait $pid; } 2>/dev/null
if [ $landed = 1 ]; then
    cp -r "$TMP/two" "$TMP/two2"
    first=$(ls "$TMP"/two/sa/results_*.json)
    # A kill between the first model's mark and the removal of its journal leaves that journal:
    # the rerun that reads the results back removes it too (the check of no journal_* below).
    done_mark=$(ls "$TMP"/two/sa/journal_*.done 2>/dev/null | head -1)
    [ -n "$done_mark" ] && cp "$(ls "$TMP"/two/xsa/journal_*.xsaj | head -1)" "${done_mark%.done}.xsaj"
    "$XSA_BIN" "${TWO[@]}" >/dev/null 2>"$TMP/two.log"; rc=$?
    marks=$(ls "$TMP"/two/*/journal_* 2>/dev/null)
    if [ $rc = 0 ] && [ "$(ls "$TMP"/two/sa/results_*.json)" = "$first" ] && grep -q "sa: an earlier launch of this command, stopped before its end, wrote its results" "$TMP/two.log" &&
        ! grep -q "^xsa-eval: sa: .* requests, " "$TMP/two.log" && grep -q "resuming from .*/xsa/journal_" "$TMP/two.log" &&
        [ "$(ls "$TMP"/two/xsa/results_*.json | wc -l)" = 1 ] && ls "$TMP"/two/compare_*.md >/dev/null 2>&1 && [ -z "$marks" ]; then
        pass two_models_resume_reads_first_back
    else fail two_models_resume_reads_first_back "rc=$rc marks='$marks' $(grep -v warning "$TMP/two.log" | head -3)"; fi
    "$XSA_BIN" "${TWO[@]}" --quiet >/dev/null 2>&1
    [ "$(ls "$TMP"/two/sa/results_*.json | wc -l)" = 2 ] && pass two_models_ended_rerun_scores_again ||
        fail two_models_ended_rerun_scores_again "$(ls "$TMP"/two/sa)"
    "$XSA_BIN" "${TWO[@]}" --output "$TMP/two2" --step 7 >/dev/null 2>"$TMP/two2.log"
    if [ "$(ls "$TMP"/two2/sa/results_*.json | wc -l)" = 2 ] && ! grep -q "read back" "$TMP/two2.log"; then
        pass two_models_other_command_scores_again
    else fail two_models_other_command_scores_again "$(ls "$TMP"/two2/sa) $(grep 'read back' "$TMP/two2.log")"; fi
else
    skip two_models_resume_reads_first_back "the run ended before its kill"
fi
# Two models, the first killed right after its results file is committed (XSA_TEST_KILL_AT, a
# test hook: no timing): the rerun reads those results back (one results file, not scored again)
# and leaves no journal, mark or temporary file (here also a dead writer's temp of a mark).
{ XSA_TEST_KILL_AT=results-committed "$XSA_BIN" "${TWO[@]}" --output "$TMP/kc" >/dev/null 2>&1; } 2>/dev/null
first=$(ls "$TMP"/kc/sa/results_*.json 2>/dev/null)
mark=$(ls "$TMP"/kc/sa/journal_*.done 2>/dev/null)
dead=$(sh -c 'echo $$')
[ -n "$mark" ] && printf 'x' > "$mark.tmp.$dead"
"$XSA_BIN" "${TWO[@]}" --output "$TMP/kc" >/dev/null 2>"$TMP/kc.log"; rc=$?
left=$(ls -a "$TMP"/kc/sa "$TMP"/kc/xsa | grep -E '^journal_|\.tmp\.|\.pending\.')
if [ $rc = 0 ] && [ "$(echo "$first" | grep -c .)" = 1 ] && [ "$(ls "$TMP"/kc/sa/results_*.json)" = "$first" ] &&
    grep -q "sa: an earlier launch of this command, stopped before its end, wrote its results" "$TMP/kc.log" &&
    [ -z "$left" ] && ls "$TMP"/kc/compare_*.md >/dev/null 2>&1; then pass kill_after_commit_reads_back
else fail kill_after_commit_reads_back "rc=$rc results: $(ls "$TMP"/kc/sa | grep -c '^results_') left: $left"; fi
# One model, killed right after its results file is committed: the rerun reads it back (not a
# second results file), and leaves no journal or mark.
{ XSA_TEST_KILL_AT=results-committed "$XSA_BIN" "${LOUD[@]}" --output "$TMP/k1" >/dev/null 2>&1; } 2>/dev/null
first=$(ls "$TMP"/k1/sa/results_*.json 2>/dev/null)
"$XSA_BIN" "${LOUD[@]}" --output "$TMP/k1" >/dev/null 2>"$TMP/k1.log"; rc=$?
left=$(ls -a "$TMP"/k1/sa | grep -E '^journal_|\.tmp\.|\.pending\.')
if [ $rc = 0 ] && [ -n "$first" ] && [ "$(ls "$TMP"/k1/sa/results_*.json)" = "$first" ] && [ -z "$left" ] &&
    grep -q "sa: an earlier launch of this command, stopped before its end, wrote its results" "$TMP/k1.log" &&
    msg=$(same_as_reference "$TMP/k1"); then pass one_model_kill_after_commit_reads_back
else fail one_model_kill_after_commit_reads_back "rc=$rc $msg results: $(ls "$TMP"/k1/sa | grep -c '^results_') left: $left"; fi
# Killed after the done mark is written but before the results file it names is committed: the
# mark does not count (no such file), so the rerun scores the model again from its journal: one
# results file, equal to the reference, with its samples, and no journal or mark left. The killed
# launch's pending results and the samples it had committed stay until they are OUTDIR_STALE_S old
# (eval/outdir.c: a pid says nothing of a run on another host sharing the folder).
{ XSA_TEST_KILL_AT=mark-written "$XSA_BIN" "${LOUD[@]}" --output "$TMP/km" >/dev/null 2>&1; } 2>/dev/null
mark=$(ls "$TMP"/km/sa/journal_*.done 2>/dev/null)
dead=$(ls "$TMP"/km/sa | sed -n 's/^results_\(.*\)\.json\.pending\.[0-9]*$/\1/p')
"$XSA_BIN" "${LOUD[@]}" --output "$TMP/km" >/dev/null 2>"$TMP/km.log"; rc=$?
res=$(ls "$TMP"/km/sa/results_*.json 2>/dev/null)
stamp=${res##*/results_}; stamp=${stamp%.json}
left=$(ls -a "$TMP"/km/sa | grep -E '^journal_|\.tmp\.|\.pending\.' | grep -v "^results_$dead\.json\.pending\.")
if [ $rc = 0 ] && [ -n "$mark" ] && [ -n "$dead" ] && [ "$(echo "$res" | grep -c .)" = 1 ] && [ -z "$left" ] &&
    [ "$(strip "$res")" = "$(strip "$TMP"/ref/sa/results_*.json)" ] &&
    cmp -s "$TMP/km/sa/samples_piqa_$stamp.jsonl" "$(ls "$TMP"/ref/sa/samples_piqa_*.jsonl)" &&
    ! grep -q "wrote its results" "$TMP/km.log"; then pass kill_after_mark_scores_again
else fail kill_after_mark_scores_again "rc=$rc mark=$mark dead=$dead results: $res left: $left"; fi
# killed_mark_rerun DIR SED: a one-model run killed right after its results commit, its mark's
# third line (the writer's pid, start time and boot id) edited by SED, then the same command
# again: $rc, $mark and $first (the killed run's results file) for the checks.
killed_mark_rerun() {
    { XSA_TEST_KILL_AT=results-committed "$XSA_BIN" "${LOUD[@]}" --output "$TMP/$1" >/dev/null 2>&1; } 2>/dev/null
    first=$(ls "$TMP/$1"/sa/results_*.json 2>/dev/null)
    mark=$(ls "$TMP/$1"/sa/journal_*.done 2>/dev/null)
    [ -n "$mark" ] && sed -i "$2" "$mark"
    "$XSA_BIN" "${LOUD[@]}" --output "$TMP/$1" >/dev/null 2>"$TMP/$1.log"; rc=$?
}
# The mark of a launch that is still running (the same command started twice at once) is not a
# stopped launch's: a rerun scores on its own. Here a mark left by a kill after the commit is
# given a live pid (this shell's), first alone (a writer that could not read /proc), then with
# this shell's start time and boot id: two results files, nothing read back.
me="$$ $(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20) $(cat /proc/sys/kernel/random/boot_id)"
for live in "$$" "$me"; do
    name=live_launch_mark_not_read_back$([ "$live" = "$$" ] && echo _pid_only)
    killed_mark_rerun kl "3s/.*/$live/"
    if [ $rc = 0 ] && [ -n "$mark" ] && [ "$(ls "$TMP"/kl/sa/results_*.json | wc -l)" = 2 ] &&
        ! grep -q "wrote its results" "$TMP/kl.log"; then pass $name
    else fail $name "rc=$rc mark=$mark $(ls "$TMP"/kl/sa) $(grep -m1 'wrote its' "$TMP/kl.log")"; fi
    rm -rf "$TMP/kl"
done
# A killed launch's pid that an unrelated process has taken since (pids are reused: a busy host,
# a container's next run) does not make its mark a live launch's: the mark's start time is the
# killed writer's. Here the mark is given this shell's live pid and keeps the rest: the rerun
# reads the results back (one results file, not scored twice) and leaves no journal or mark.
if [ ! -r /proc/sys/kernel/random/boot_id ]; then skip reused_pid_mark_read_back "no boot id here: a mark carries its pid alone"
else
    killed_mark_rerun kr "3s/^[0-9]*/$$/"
    if [ $rc = 0 ] && [ -n "$mark" ] && [ -n "$first" ] && [ "$(ls "$TMP"/kr/sa/results_*.json)" = "$first" ] &&
        grep -q "wrote its results" "$TMP/kr.log" && [ -z "$(ls -a "$TMP"/kr/sa | grep -E '^journal_')" ]; then
        pass reused_pid_mark_read_back
    else fail reused_pid_mark_read_back "rc=$rc mark=$mark $(ls "$TMP"/kr/sa)"; fi
fi
# A launch killed after its commit whose parent has not reaped it yet (a zombie: a script that
# kills and reruns without waiting) has ended: the rerun, started while it is a zombie, reads its
# results back (one results file).
res=$(XSA_BIN="$XSA_BIN" python3 - "$TMP/kz" "${LOUD[@]}" <<'PY'
import os, subprocess, sys, time
out, args = sys.argv[1], sys.argv[2:] + ["--output", sys.argv[1]]
quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
p = subprocess.Popen([os.environ["XSA_BIN"]] + args, env=dict(os.environ, XSA_TEST_KILL_AT="results-committed"), **quiet)
state = lambda: open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[0]
while state() != "Z":
    time.sleep(0.01)
rc = subprocess.run([os.environ["XSA_BIN"]] + args, **quiet).returncode
print(rc, state(), len([f for f in os.listdir(out + "/sa") if f.startswith("results_")]))
PY
)
[ "$res" = "0 Z 1" ] && pass zombie_writer_mark_read_back || fail zombie_writer_mark_read_back "rc, writer state, results files: $res"
finish
