#!/usr/bin/env bash
# What `xsa-eval run` writes: results names no two runs share (concurrent runs, runs in the
# same second), model folders that never escape --output, empty paths refused, the threads
# that ran recorded, a non-finite log-likelihood refused with exit 3 and nothing written, and
# only the leftovers of killed runs of this program swept.
. "$(dirname "$0")/lib.sh"
D=tests/fixtures/data
M=demo/sa
run() { "$XSA_BIN" run --quiet --tasks piqa --data-dir $D --allow-data-change --offline --device cpu --cache-dir "$TMP/c" "$@"; }

# Five concurrent runs into one --output, then two back to back: seven results files.
for i in 1 2 3 4 5; do run --model $M --output "$TMP/o" >"$TMP/c$i.log" 2>&1 & done
fails=0; for i in 1 2 3 4 5; do wait -n || fails=$((fails + 1)); done
run --model $M --output "$TMP/o" >/dev/null 2>&1 && run --model $M --output "$TMP/o" >/dev/null 2>&1 || fails=$((fails + 1))
n=$(ls "$TMP"/o/sa/results_*.json 2>/dev/null | wc -l)
paths=$(grep -h "^results: " "$TMP"/c*.log | sort -u | wc -l)
if [ $fails -eq 0 ] && [ "$n" -eq 7 ] && [ "$paths" -eq 5 ]; then pass results_never_collide
else fail results_never_collide "$fails failed, $n results files, $paths distinct paths printed"; fi
if ls "$TMP"/o/sa/ | grep -qvE '^results_[0-9T:.-]+_[0-9a-f]{6}\.json$'; then fail no_leftovers "$(ls "$TMP"/o/sa | head -3)"
else pass no_leftovers; fi
# Synthetic rows are not the rows the registry pins: used, and recorded so (results and report).
f=$(ls "$TMP"/o/sa/results_*.json | head -1)
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["xsa_eval"]["data"]["piqa"]; print(d.get("pinned"), "revision" in d, d["source"][:6])' "$f" 2>&1)
[ "$got" = "False False local:" ] && pass results_record_not_pinned || fail results_record_not_pinned "$got"
pin_md=$("$XSA_BIN" report "$f" 2>&1)
echo "$pin_md" | grep -q '| piqa | validation | .* \*not pinned\* |' && pass report_shows_not_pinned \
    || fail report_shows_not_pinned "$(echo "$pin_md" | grep -m1 '| piqa |')"

# A checkpoint named through "/.." or "/." gets its own folder's name, inside --output.
mkdir -p "$TMP/ck" && cp demo/sa/* "$TMP/ck/" && mkdir -p "$TMP/ck/sub"
expect_exit model_path_dotdot 0 "^results: $TMP/o2/ck/results_" -- run --model "$TMP/ck/sub/.." --output "$TMP/o2"
expect_exit model_path_dot 0 "^results: $TMP/o2/ck/results_" -- run --model "$TMP/ck/." --output "$TMP/o2"
[ -z "$(ls "$TMP" | grep -vE '^(c|o|o2|ck|c[0-9]\.log)$')" ] && pass nothing_outside_output || fail nothing_outside_output "$(ls "$TMP")"

# Empty or unusable output paths are usage errors (exit 2), before any work.
F=tests/fixtures/results
expect_exit output_empty 2 "--output '': empty path" -- run --model $M --output ''
: > "$TMP/afile"
expect_exit output_is_file 2 "afile: not a folder; choose a writable --output folder" -- run --model $M --output "$TMP/afile"
expect_exit compare_o_empty 2 "-o '': empty path" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json -o ''
expect_exit report_o_empty 2 "-o '': empty path" -- "$XSA_BIN" report $F/sa.json -o ''
expect_exit check_verdict_empty 2 "--verdict '': empty path" -- "$XSA_BIN" check --baseline $F/sa.json --results $F/xsa.json --verdict ''
expect_exit compare_o_folder 2 "is a folder" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json -o "$TMP"
# A folder at one chart's name: exit 2 and none of the set written (not the other chart).
mkdir -p "$TMP/cy/y_acc.svg"
expect_exit compare_chart_folder 2 "y_acc.svg: is a folder; nothing was written" -- "$XSA_BIN" compare $F/sa.json $F/xsa.json -o "$TMP/cy/y.md"
left=$(ls "$TMP/cy" | grep -v '^y_acc.svg$')
[ -z "$left" ] && pass compare_chart_folder_nothing_left || fail compare_chart_folder_nothing_left "$left"
expect_exit check_verdict_no_dir 2 "no folder $TMP/nope" -- "$XSA_BIN" check --baseline $F/sa.json --results $F/xsa.json --verdict "$TMP/nope/v.json"

# The recorded command line is quoted as a shell reads it back (a folder with a space and a '|').
mkdir -p "$TMP/a b|c" && cp demo/sa/* "$TMP/a b|c/"
run --model "$TMP/a b|c" --output "$TMP/oq" >/dev/null 2>&1
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["xsa_eval"]["command"])' "$TMP"/oq/*/results_*.json 2>&1)
case $got in *"--model '$TMP/a b|c' "*) pass run_command_quoted ;; *) fail run_command_quoted "$got" ;; esac
# A command line past 4 KiB (long relative paths) is recorded whole and read back by report and compare.
dots=$(printf './%.0s' $(seq 1400))
run --model $M --data-dir "$D/$dots" --output "$TMP/ol/$dots" >/dev/null 2>&1
fl=$(ls "$TMP"/ol/sa/results_*.json 2>/dev/null | head -1)
got=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["xsa_eval"]["command"]; print(len(c) > 5600, c.rstrip("\x27").endswith("/ol/" + "./" * 1400))' "$fl" 2>&1)
[ "$got" = "True True" ] && pass run_command_long_whole || fail run_command_long_whole "$got"
expect_exit run_command_long_report 0 "$dots" -- "$XSA_BIN" report "$fl"
expect_exit run_command_long_compare 0 "wrote" -- "$XSA_BIN" compare "$fl" "$fl" -o "$TMP/ol.md"
# --threads past what the backend starts: the results record what ran.
run --model $M --output "$TMP/o3" --threads 10000 >/dev/null 2>&1
got=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["xsa_eval"]["backend"]; print(b["threads"], b["device_desc"].split(",")[1].strip())' "$TMP"/o3/sa/results_*.json 2>&1)
case $got in "256 256 threads") pass threads_recorded_as_run ;; *) fail threads_recorded_as_run "$got" ;; esac

# Finite weights whose forward pass overflows (3e38 in an MLP projection): exit 3 naming the task,
# document and request; no results or samples file.
mkdir -p "$TMP/huge" && cp demo/sa/* "$TMP/huge/"
python3 - "$TMP/huge/model.safetensors" <<'EOF'
import json, struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
lo, hi = h["model.layers.0.mlp.down_proj.weight"]["data_offsets"]
b[8 + n + lo:8 + n + hi] = struct.pack("<f", 3e38) * ((hi - lo) // 4)
open(p, "wb").write(b)
EOF
expect_exit nonfinite_loglikelihood_exit_3 3 "piqa doc [0-9]+ request [01]: the model's log-likelihood is (nan|-nan|-inf|inf)" -- \
    run --model "$TMP/huge" --output "$TMP/o4" --log-samples
[ -z "$(find "$TMP/o4" -name 'results_*' -o -name 'samples_*' 2>/dev/null)" ] && pass nonfinite_writes_nothing \
    || fail nonfinite_writes_nothing "$(find "$TMP/o4" -type f)"
expect_exit nonfinite_logprobs_exit_3 3 "log-probability of token 2 at position 1 is -?nan" -- \
    "$XSA_BIN" logprobs --model "$TMP/huge" --tokens 1,2,3 --device cpu

# A model this bad has a finite LAMBADA perplexity whose bootstrap resamples overflow: its
# stderr is N/A, said on stderr (lm-eval's math.exp would raise), and the run succeeds.
mkdir -p "$TMP/bad" && cp demo/sa/* "$TMP/bad/"
python3 - "$TMP/bad/model.safetensors" <<'EOF'
import array, json, struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
lo, hi = json.loads(b[8:8 + n])["model.norm.weight"]["data_offsets"]
a = array.array("f")
a.frombytes(bytes(b[8 + n + lo:8 + n + hi]))
b[8 + n + lo:8 + n + hi] = array.array("f", [x * 150 for x in a]).tobytes()
open(p, "wb").write(b)
EOF
expect_exit ppl_stderr_overflow_said 0 "warning: lambada_openai: perplexity [0-9.]+e\+[0-9]+ has no standard error \(N/A\)" -- \
    "$XSA_BIN" run --model "$TMP/bad" --tasks lambada_openai --data-dir $D --allow-data-change --offline --device cpu --cache-dir "$TMP/c" --output "$TMP/o6" --quiet

# The sweep: a dead run's pending and temporary files go; a live process's, a user's file
# with ".tmp." in its name, and journals stay.
dead=$(sh -c 'echo $$')
mkdir -p "$TMP/o5/sa"
touch "$TMP/o5/sa/results_x.json.pending.$dead" "$TMP/o5/sa/samples_piqa_x.jsonl.pending.$dead.tmp.$dead" \
      "$TMP/o5/sa/results_y.json.pending.$$" "$TMP/o5/sa/notes.tmp.$dead" "$TMP/o5/sa/notes.tmp.txt"
run --model $M --output "$TMP/o5" >/dev/null 2>&1
left=$(cd "$TMP/o5/sa" && ls | grep -v '^results_[0-9T]' | sort | tr '\n' ' ')
if [ "$left" = "notes.tmp.$dead notes.tmp.txt results_y.json.pending.$$ " ]; then pass sweep_only_dead_runs_files
else fail sweep_only_dead_runs_files "left: $left"; fi
# Samples committed by a run killed before its results file (samples go first; its results still
# pending under a dead pid, untouched for 10 minutes): removed with that mark. Kept: a live run's,
# those whose mark is recent (a run on another host sharing the folder has a pid this one cannot
# see), those with their results file, and those whose results file was moved away by hand.
S1=2026-01-01T00-00-00.000001_aaaaaa S2=2026-01-01T00-00-00.000002_bbbbbb S3=2026-01-01T00-00-00.000003_cccccc
S4=2026-01-01T00-00-00.000004_dddddd S5=2026-01-01T00-00-00.000005_eeeeee S6=2026-01-01T00-00-00.000006_ffffff
mkdir -p "$TMP/o7/sa"
touch "$TMP/o7/sa/samples_arc_easy_$S1.jsonl" "$TMP/o7/sa/samples_piqa_$S1.jsonl" "$TMP/o7/sa/results_$S1.json.pending.$dead" \
      "$TMP/o7/sa/samples_piqa_$S2.jsonl" "$TMP/o7/sa/results_$S2.json.pending.$$" \
      "$TMP/o7/sa/samples_piqa_$S3.jsonl" "$TMP/o7/sa/results_$S3.json" "$TMP/o7/sa/samples_notes.jsonl" \
      "$TMP/o7/sa/samples_piqa_$S4.jsonl" "$TMP/o7/sa/samples_piqa_$S5.jsonl" "$TMP/o7/sa/results_$S5.json.pending.$dead" \
      "$TMP/o7/sa/samples_piqa_$S6.jsonl" "$TMP/o7/sa/results_$S6.json" "$TMP/o7/sa/results_$S6.json.pending.$dead"
touch -d '1 hour ago' "$TMP/o7/sa/results_$S1.json.pending.$dead" "$TMP/o7/sa/results_$S6.json.pending.$dead"
run --model $M --output "$TMP/o7" >/dev/null 2>&1
left=$(cd "$TMP/o7/sa" && ls | grep -E "_(${S1}|${S2}|${S3}|${S4}|${S5}|${S6})[.]|^samples_notes" | sort | tr '\n' ' ')
want="results_$S2.json.pending.$$ results_$S3.json results_$S5.json.pending.$dead results_$S6.json samples_notes.jsonl"
want="$want samples_piqa_$S2.jsonl samples_piqa_$S3.jsonl samples_piqa_$S4.jsonl samples_piqa_$S5.jsonl samples_piqa_$S6.jsonl "
[ "$left" = "$want" ] && pass sweep_orphan_samples || fail sweep_orphan_samples "left: $left"
# A results file that cannot be committed takes its committed samples with it (strace injects the
# failure into the last rename, the results file's).
# (x86_64 and aarch64 only: elsewhere glibc's rename() is a renameat2 too, and the count shifts)
if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true 2>/dev/null && case $(uname -m) in x86_64|aarch64) true ;; *) false ;; esac; then
    # (LeakSanitizer cannot run under ptrace: off for this run of an ASan build)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -o /dev/null -e trace=renameat2 -e inject=renameat2:error=EACCES:when=2 "$XSA_BIN" run --quiet --model $M \
        --tasks piqa --data-dir $D --allow-data-change --offline --device cpu --cache-dir "$TMP/c" --output "$TMP/o8" \
        --log-samples >"$TMP/o8.log" 2>&1; rc=$?
    left=$(ls "$TMP/o8/sa" 2>/dev/null | grep -v '^journal_' | tr '\n' ' ')
    [ $rc = 3 ] && grep -q "cannot commit" "$TMP/o8.log" && [ -z "$left" ] && pass failed_commit_leaves_no_samples ||
        fail failed_commit_leaves_no_samples "exit $rc, left: $left; $(tail -1 "$TMP/o8.log")"
else
    skip failed_commit_leaves_no_samples "strace is not installed, cannot trace here, or rename() is renameat2 on $(uname -m)"
fi
# A file-size limit (ulimit -f): exit 3 naming the file as the user knows it and why, nothing but the
# journal left (SIGXFSZ no longer kills the run half way).
(ulimit -f 12; exec "$XSA_BIN" run --quiet --model $M --tasks piqa,boolq,arc_easy --data-dir $D --allow-data-change --offline \
    --device cpu --cache-dir "$TMP/c" --output "$TMP/o9" --log-samples) >/dev/null 2>"$TMP/o9.err"; rc=$?
left=$(ls "$TMP/o9/sa" | grep -v '^journal_' | tr '\n' ' ')
[ $rc = 3 ] && grep -qE "o9/sa/samples_[a-z_]+_[0-9T.-]+_[0-9a-f]{6}\.jsonl: cannot write: File too large \(past the file-size limit, ulimit -f" "$TMP/o9.err" &&
    [ -z "$left" ] && pass file_size_limit_said || fail file_size_limit_said "exit $rc, left: $left; $(grep -v warning "$TMP/o9.err" | tail -1)"
# A read-only --output (a read-only tmpfs; needs mount rights, else skipped): exit 2 before any data
# is read; so is a read-only --cache-requests folder (holding a store), named with its flag.
if mkdir -p "$TMP/ro" && mount -t tmpfs -o size=4m tmpfs "$TMP/ro" 2>/dev/null; then
    mkdir -p "$TMP/ro/out" "$TMP/ro/cache"
    run --model $M --output "$TMP/ro/w" --cache-requests "$TMP/ro/cache" >/dev/null 2>&1
    mount -o remount,ro "$TMP/ro"
    expect_exit output_read_only 2 "^xsa-eval run: --output $TMP/ro/out: cannot write in it: Read-only file system; choose a writable --output folder$" -- \
        run --model $M --output "$TMP/ro/out"
    expect_exit cache_requests_read_only 2 "^xsa-eval run: --cache-requests $TMP/ro/cache: cannot write in it: Read-only file system; choose a writable --cache-requests folder$" -- \
        run --model $M --output "$TMP/o10" --cache-requests "$TMP/ro/cache"
    umount "$TMP/ro"
else
    skip output_read_only "no rights to mount a tmpfs"
fi
# Standard output that cannot be written (a full disk): exit 3, saying the results files were written.
run --model $M --output "$TMP/o11" >/dev/full 2>"$TMP/o11.err"; rc=$?
[ $rc = 3 ] && grep -q "writing standard output failed.*(the results files were written: see the --output folder)" "$TMP/o11.err" &&
    [ -n "$(ls "$TMP"/o11/sa/results_*.json 2>/dev/null)" ] && pass stdout_full_results_said || fail stdout_full_results_said "exit $rc: $(tail -1 "$TMP/o11.err")"
finish
