#!/usr/bin/env bash
# `xsa-eval logprobs`: bad input exits 2 with one line, device errors exit 3, and the happy
# path reproduces PyTorch's log-probabilities of tests/fixtures/models/llama_gqa.
. "$(dirname "$0")/lib.sh"
M=tests/fixtures/models/llama_gqa  # vocab 300
LP="$XSA_BIN logprobs"

expect_exit unknown_flag 2 "unknown flag '--frob'" -- $LP --frob 1
expect_exit missing_model 2 "--model PATH is required" -- $LP --tokens 1,2
expect_exit missing_value 2 "needs a value" -- $LP --model "$M" --tokens
expect_exit no_input 2 "exactly one of --tokens" -- $LP --model "$M"
expect_exit both_inputs 2 "exactly one of --tokens" -- $LP --model "$M" --tokens 1,2 --text hi
expect_exit empty_tokens 2 "--tokens is empty" -- $LP --model "$M" --tokens ""
expect_exit non_numeric 2 "comma-separated non-negative integers" -- $LP --model "$M" --tokens 1,a,3
expect_exit empty_item 2 "comma-separated" -- $LP --model "$M" --tokens 1,,3
expect_exit trailing_comma 2 "comma-separated" -- $LP --model "$M" --tokens 1,2,
expect_exit negative_id 2 "comma-separated" -- $LP --model "$M" --tokens -1,2
expect_exit huge_id 2 "too large" -- $LP --model "$M" --tokens 1,99999999999
expect_exit one_token 2 "at least 2" -- $LP --model "$M" --tokens 5
expect_exit bad_threads 2 "--threads" -- $LP --model "$M" --tokens 1,2 --threads two
expect_exit tokenizer_without_text 2 "only applies with --text" -- $LP --model "$M" --tokens 1,2 --tokenizer x
expect_exit missing_model_dir 2 "no/such/dir" -- $LP --model "$TMP/no/such/dir" --tokens 1,2

if [ -f "$M/model.safetensors" ]; then
    expect_exit id_outside_vocab 2 "token id 300 .*outside the vocabulary \[0, 300\)" -- $LP --model "$M" --tokens 1,300
    expect_exit bad_xsa 2 "" -- $LP --model "$M" --tokens 1,2 --xsa bogus
    expect_exit bad_device 2 "unknown device" -- $LP --model "$M" --tokens 1,2 --device tpu
    expect_exit bad_device_index 2 "cuda:0" -- $LP --model "$M" --tokens 1,2 --device cuda:x
    expect_exit cuda_unavailable 3 "CUDA backend is not available" -- $LP --model "$M" --tokens 1,2 --device cuda
    expect_exit auto_falls_back 0 "using the CPU backend" -- $LP --model "$M" --tokens 1,2 --device auto

    # Reference values: tests/fixtures/models/llama_gqa/reference.json (torch, float64), the
    # cases with tokens 63,103,22,177,193 and xsa none / all.
    check_case() {  # NAME XSA EXPECTED...
        local name=$1 xsa=$2; shift 2
        local out
        if ! out=$($LP --model "$M" --tokens 63,103,22,177,193 --xsa "$xsa" --device cpu --threads 2 2>"$TMP/err"); then
            fail "$name" "exit $?: $(head -1 "$TMP/err")"; return
        fi
        if [ "$(echo "$out" | head -1)" != "$(printf 'pos\ttoken\tlogprob\tgreedy')" ] || [ "$(echo "$out" | wc -l)" -ne 5 ]; then
            fail "$name" "unexpected layout: $(echo "$out" | head -2 | tr '\n\t' '| ')"; return
        fi
        if echo "$out" | tail -n +2 | awk -v want="$*" 'BEGIN { n = split(want, e, " ") }
            { i++; d = $3 - e[i]; if (d < 0) d = -d; if (d > 1e-4 || $1 != i || $4 != 0) bad = 1 }
            END { exit (bad || i != n) }'; then pass "$name"; else fail "$name" "$(echo "$out" | tail -n +2 | tr '\n\t' '| ')"; fi
    }
    check_case happy_path_sa none -6.815803180666694 -9.003824889243699 -7.403865368254676 -7.245198215529497
    check_case happy_path_xsa_all all -7.0513461809371485 -8.107843083615634 -8.166021373594303 -7.678091746248548
else
    skip model_fixture "tests/fixtures/models/llama_gqa absent"
fi

# --text through a real tokenizer (llama2.c stories260K in ../shared).
S=${XSA_SHARED:-../shared}/benchdata/models/stories260K
if [ -f "$S/stories260K.bin" ] && [ -f "$S/tok512.bin" ]; then
    if out=$($LP --model "$S/stories260K.bin" --tokenizer "$S/tok512.bin" --text "Once upon a time" --device cpu 2>"$TMP/err") &&
        [ "$(echo "$out" | wc -l)" -ge 3 ] && echo "$out" | tail -n +2 | awk -F'\t' '$3 > 0 || NF != 4 { exit 1 }'; then
        pass text_with_tokenizer
    else
        fail text_with_tokenizer "$(head -1 "$TMP/err") $(echo "$out" | head -3 | tr '\n\t' '| ')"
    fi
else
    skip text_with_tokenizer "../shared/benchdata/models/stories260K absent"
fi
# A Hugging Face folder with tokenizer.model only: scored, with a note that lm-eval would use
# transformers' converted fast tokenizer (and how to get it); none with tokenizer.json.
mkdir "$TMP/sp_only" && cp $M/config.json $M/model.safetensors tests/fixtures/tokenizers/sp_bpe/tokenizer.model "$TMP/sp_only/"
expect_exit sp_only_folder_noted 0 "note: .*sp_only: the folder has tokenizer.model but no tokenizer.json" -- \
    "$XSA_BIN" logprobs --model "$TMP/sp_only" --text "a b" --device cpu
out=$("$XSA_BIN" logprobs --model "$TMP/sp_only" --tokenizer "$TMP/sp_only/tokenizer.model" --text "a b" --device cpu 2>&1); rc=$?
if [ $rc -eq 0 ] && ! echo "$out" | grep -q "note:"; then pass sp_given_not_noted; else fail sp_given_not_noted "rc=$rc: $out"; fi

finish
