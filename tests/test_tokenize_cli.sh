#!/usr/bin/env bash
# `xsa-eval tokenize`: ids equal to the Python tokenizers library (fixtures from
# tools/fixtures/make_tokenizer_fixtures.py), plain and --jsonl modes, --add-special, and errors.
. "$(dirname "$0")/lib.sh"
FIX=tests/fixtures/tokenizers

for name in gpt2 llama3 hf_sp hf_metaspace norm_mix split_mix; do
    tok=$FIX/$name/tokenizer.json
    if "$XSA_BIN" tokenize --tokenizer "$tok" < $FIX/corpus.txt > "$TMP/out" 2> "$TMP/err" &&
        cmp -s "$TMP/out" $FIX/$name/corpus.ids; then pass "plain_$name"
    else fail "plain_$name" "$(head -c 300 "$TMP/err"; diff "$TMP/out" $FIX/$name/corpus.ids | head -4)"; fi
    if "$XSA_BIN" tokenize --add-special --tokenizer "$tok" < $FIX/corpus.txt > "$TMP/out" 2> "$TMP/err" &&
        cmp -s "$TMP/out" $FIX/$name/corpus_special.ids; then pass "special_$name"
    else fail "special_$name" "$(head -c 300 "$TMP/err"; diff "$TMP/out" $FIX/$name/corpus_special.ids | head -4)"; fi
    if "$XSA_BIN" tokenize --jsonl --tokenizer "$tok" < $FIX/cases.jsonl > "$TMP/out" 2> "$TMP/err" &&
        cmp -s "$TMP/out" $FIX/$name/cases_jsonl.ids; then pass "jsonl_$name"
    else fail "jsonl_$name" "$(head -c 300 "$TMP/err"; diff "$TMP/out" $FIX/$name/cases_jsonl.ids | head -4)"; fi
done

# A "\r" before the newline is part of the text (plain mode keeps it).
printf 'a\r\nb\n' | "$XSA_BIN" tokenize --jsonl --tokenizer $FIX/gpt2/tokenizer.json > /dev/null 2>&1 &&
    fail crlf_jsonl "a raw CR line is not a JSON string" || pass crlf_jsonl
out=$(printf 'hi\r\n' | "$XSA_BIN" tokenize --tokenizer $FIX/gpt2/tokenizer.json)
want=$(printf '"hi\\r"\n' | "$XSA_BIN" tokenize --jsonl --tokenizer $FIX/gpt2/tokenizer.json | tr -d '[]' | tr ',' ' ')
[ -n "$out" ] && [ "$out" = "$want" ] && pass crlf_kept || fail crlf_kept "'$out' vs '$want'"
# Empty stdin: no output, success.
out=$("$XSA_BIN" tokenize --tokenizer $FIX/hf_sp/tokenizer.json < /dev/null) && [ -z "$out" ] && pass empty_stdin ||
    fail empty_stdin "output '$out'"

expect_exit no_tokenizer 2 "--tokenizer FILE is required" -- "$XSA_BIN" tokenize
expect_exit bad_flag 2 "unknown flag '--frob'" -- "$XSA_BIN" tokenize --frob
expect_exit flag_without_value 2 "--tokenizer needs a value" -- "$XSA_BIN" tokenize --tokenizer
expect_exit missing_file 2 "$TMP/nope.json" -- "$XSA_BIN" tokenize --tokenizer "$TMP/nope.json"
printf '{"model": {"type": "WordPiece", "vocab": {}}}' > "$TMP/wp.json"
expect_exit unsupported_model 2 "wp.json: unsupported model type 'WordPiece'" -- "$XSA_BIN" tokenize --tokenizer "$TMP/wp.json"
printf '{"model": ' > "$TMP/bad.json"
expect_exit malformed_json 2 "bad.json: not valid JSON \\(near byte" -- "$XSA_BIN" tokenize --tokenizer "$TMP/bad.json"
printf '"ok"\nnot json\n' > "$TMP/in.jsonl"
expect_exit jsonl_not_string 2 "stdin line 2: not a JSON string" -- \
    bash -c "\"$XSA_BIN\" tokenize --jsonl --tokenizer $FIX/gpt2/tokenizer.json < \"$TMP/in.jsonl\""
printf '["a"]\n' > "$TMP/in2.jsonl"
expect_exit jsonl_array 2 "stdin line 1: not a JSON string" -- \
    bash -c "\"$XSA_BIN\" tokenize --jsonl --tokenizer $FIX/gpt2/tokenizer.json < \"$TMP/in2.jsonl\""
# A SentencePiece model is known by its bytes under any name (Mistral's tokenizer.model.v3): the
# same ids as under its own name; a file of neither kind is refused by name.
cp $FIX/sp_bpe/tokenizer.model "$TMP/tokenizer.model.v3"
"$XSA_BIN" tokenize --tokenizer $FIX/sp_bpe/tokenizer.model < $FIX/corpus.txt > "$TMP/want" 2> "$TMP/err" &&
    "$XSA_BIN" tokenize --tokenizer "$TMP/tokenizer.model.v3" < $FIX/corpus.txt > "$TMP/out" 2>> "$TMP/err" &&
    [ -s "$TMP/want" ] && cmp -s "$TMP/out" "$TMP/want" && pass sp_model_other_name ||
    fail sp_model_other_name "$(head -c 300 "$TMP/err")"
printf 'not a tokenizer\n' > "$TMP/tok.v2"
expect_exit unknown_format 2 "tok.v2: unknown tokenizer format" -- "$XSA_BIN" tokenize --tokenizer "$TMP/tok.v2"
# A full stdout: exit 3 and one error line, not two.
echo hi | "$XSA_BIN" tokenize --tokenizer $FIX/gpt2/tokenizer.json >/dev/full 2>"$TMP/full.err"; rc=$?
[ $rc = 3 ] && [ "$(wc -l < "$TMP/full.err")" = 1 ] && pass stdout_full_one_line || fail stdout_full_one_line "rc=$rc $(cat "$TMP/full.err")"
expect_exit help 0 "usage: xsa-eval tokenize" -- "$XSA_BIN" tokenize --help
# A qwen2 model's folder: transformers 5 tokenizes with Qwen2Tokenizer's own pre-tokenizer (digits
# one by one), and so does xsa-eval, saying so.
out=$(echo "x 12345 y" | "$XSA_BIN" tokenize --tokenizer $FIX/class/qwen2_llama3/tokenizer.json 2>"$TMP/cls.err")
grep -q "as Qwen2Tokenizer (for config.json's model_type)" "$TMP/cls.err" && [ "$(echo $out | wc -w)" -gt \
    "$(echo "x 12345 y" | "$XSA_BIN" tokenize --tokenizer $FIX/llama3/tokenizer.json | wc -w)" ] \
    && pass transformers_class_note || fail transformers_class_note "$out / $(cat "$TMP/cls.err")"
finish
