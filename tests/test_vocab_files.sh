#!/usr/bin/env bash
# A checkpoint folder with vocab.json + merges.txt and no tokenizer.json (the Hub's facebook/opt-*
# and other GPT-2-family repos): `run` scores it exactly as the same folder with the tokenizer.json
# transformers saves for it (tests/fixtures/tokenizers/vocab_files/opt_tiny/saved, from
# tools/fixtures/make_vocab_files_fixtures.py; the ids themselves against AutoTokenizer are
# tests/test_tokenizer_hf.c's test_vocab_files), OPT's </s> prepended as lm-eval 0.4.13 does; a
# damaged vocab.json or merges.txt, or a missing merges.txt, is one line naming the file, exit 2.
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/models/opt
V=tests/fixtures/tokenizers/vocab_files/opt_tiny

cp -r $F "$TMP/vocab" && cp $V/vocab.json $V/merges.txt $V/tokenizer_config.json $V/special_tokens_map.json "$TMP/vocab/"
cp -r $F "$TMP/json" && cp $V/saved/tokenizer.json $V/saved/tokenizer_config.json "$TMP/json/"
# (tasks whose requests fit the fixture's 64 positions)
for m in vocab json; do
    "$XSA_BIN" run --model "$TMP/$m" --tasks lambada_openai,openbookqa,winogrande --limit 12 --data-dir tests/fixtures/data \
        --allow-data-change --offline --device cpu --log-samples --output "$TMP/out_$m" --quiet >/dev/null 2>"$TMP/$m.err"
done
# every request's context, continuation, token counts and log-likelihood, in order
reqs() { cat "$TMP/out_$1/$1"/samples_*.jsonl 2>/dev/null | grep -o '"requests":\[[^]]*\]'; }
n=$(reqs vocab | wc -l)
if [ "$n" -ge 30 ] && [ "$(reqs vocab)" = "$(reqs json)" ]; then pass run_vocab_files_as_tokenizer_json
else fail run_vocab_files_as_tokenizer_json "$n samples; they differ from tokenizer.json's, or a run failed: $(head -c 300 "$TMP/vocab.err")"; fi
# the results (and the journal a rerun resumes from) name the tokenizer by vocab.json and merges.txt together
want=$(cat "$TMP/vocab/vocab.json" "$TMP/vocab/merges.txt" | sha256sum | cut -c1-64)
grep -q "\"tokenizer_sha256\": *\"$want\"" "$TMP/out_vocab/vocab"/results_*.json && pass tokenizer_sha256_covers_merges \
    || fail tokenizer_sha256_covers_merges "$(grep -o '"tokenizer_sha256": *"[0-9a-f]*"' "$TMP/out_vocab/vocab"/results_*.json)"
# lm-eval adds OPT's </s> (add_bos_token: true): the first token of each context is id 2
printf 'the cat\n' | "$XSA_BIN" tokenize --tokenizer "$TMP/vocab/vocab.json" --add-special >"$TMP/ids"
[ "$(cut -d' ' -f1 "$TMP/ids" | tr -d '[,')" = 2 ] && pass opt_bos_prepended || fail opt_bos_prepended "$(cat "$TMP/ids")"

bad() { rm -rf "$TMP/bad"; cp -r "$TMP/vocab" "$TMP/bad"; }
run_bad() { "$XSA_BIN" logprobs --device cpu --model "$TMP/bad" --text "the cat"; }
bad; echo '["not", "an", "object"]' >"$TMP/bad/vocab.json"
expect_one_line vocab_not_object 2 "bad/vocab.json: not a JSON object" -- run_bad
bad; echo '{"a": 1,' >"$TMP/bad/vocab.json"
expect_one_line vocab_not_json 2 "bad/vocab.json: " -- run_bad
bad; python3 -c 'import json,sys; p=sys.argv[1]; v=json.load(open(p)); v["h"]=-1; json.dump(v, open(p,"w"))' "$TMP/bad/vocab.json"
expect_one_line vocab_negative_id 2 "bad/vocab.json: token 'h' has id -1, not an integer" -- run_bad
bad; { head -2 $V/merges.txt; printf 'zq\xe2\x82\xac x\n'; } >"$TMP/bad/merges.txt"
expect_one_line merge_unknown_token 2 "bad/merges.txt: merge 2 \('zq.+ x'\) names 'zq.+', which .*vocab.json has no id for" -- run_bad
bad; printf '#version: 0.2\nt h e\n' >"$TMP/bad/merges.txt"
expect_one_line merge_three_parts 2 "bad/merges.txt: line 2 't h e' is not two tokens separated by one space" -- run_bad
bad; printf 't h\n\n' >"$TMP/bad/merges.txt"
expect_one_line merge_empty_line 2 "bad/merges.txt: line 2 '' is not two tokens" -- run_bad
bad; printf 't h\n\xff\n' >"$TMP/bad/merges.txt"
expect_one_line merges_not_utf8 2 "bad/merges.txt: not valid UTF-8" -- run_bad
bad; rm "$TMP/bad/merges.txt"
expect_one_line merges_missing 2 "bad/vocab.json: no merges.txt beside vocab.json \(.*bad/merges.txt\)" -- run_bad
# a folder transformers would build as another class than GPT2Tokenizer
bad; echo '{"tokenizer_class": "BertTokenizer"}' >"$TMP/bad/tokenizer_config.json"
expect_one_line vocab_files_other_class 2 "builds this folder's tokenizer as BertTokenizer, and xsa-eval reads vocab.json \+ merges.txt for GPT2Tokenizer only" -- run_bad
bad; rm "$TMP/bad/vocab.json" "$TMP/bad/merges.txt"
expect_one_line no_tokenizer_at_all 2 "no tokenizer.json, tokenizer.model or vocab.json \+ merges.txt in the checkpoint directory" -- run_bad
finish
