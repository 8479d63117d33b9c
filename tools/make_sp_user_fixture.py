#!/usr/bin/env python3
"""tests/fixtures/tokenizers/sp_user/: a SentencePiece BPE model with 400 user-defined symbols
(nested prefixes such as <t1>, <t12>, <t123>, words, punctuation runs) and its expected.tsv
(hex \\t ids \\t ids with BOS \\t decode(ids) as hex, as tools/make_sp_fixtures.py writes it),
written by the sentencepiece library. It guards the longest-match rule of the user-defined
symbol matcher, which looks symbols up by length in a hash.

Usage: python3 tools/make_sp_user_fixture.py
"""
import io
import os
import random

import sentencepiece as spm

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizers", "sp_user")


def main():
    rng = random.Random(7)
    syms = ["<t%d>" % i for i in range(300)]          # <t1> <t12> <t123>: nested prefixes
    syms += ["<t%d" % i for i in range(1, 40)]       # unterminated forms, prefixes of the above
    syms += ["foo", "foobar", "foobarbaz", "!!", "!!!", "::", "\u00e9t\u00e9", "\u6771\u4eac", "x" * 12]
    syms += ["w%dw" % i for i in range(400 - len(syms))]
    corpus = open(os.path.join(ROOT, "tests", "fixtures", "tokenizers", "corpus.txt"), encoding="utf-8").read()
    lines = [l for l in corpus.split("\n") if l.strip()]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines * 3), model_writer=model, model_type="bpe",
                                   vocab_size=1300, user_defined_symbols=syms, character_coverage=1.0,
                                   hard_vocab_limit=False, byte_fallback=True, normalization_rule_name="identity", num_threads=1, minloglevel=2)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "tokenizer.model"), "wb") as f:
        f.write(model.getvalue())
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    pieces = syms + ["<t", "<", ">", " ", "  ", "a", "foob", "fooba", "x" * 5, "!", "t1>", "\u00e9", "\u6771"]
    cases = lines[:40]
    for _ in range(160):
        n = rng.randint(1, 30)
        cases.append("".join(rng.choice(pieces) if rng.random() < 0.6 else rng.choice(lines)[:rng.randint(0, 12)]
                             for _ in range(n)))
    bos = sp.bos_id()
    with open(os.path.join(OUT, "expected.tsv"), "w", newline="\n") as f:
        for s in cases:
            b = s.encode("utf-8")
            ids = sp.encode(b)
            special = ([bos] if bos >= 0 else []) + ids
            f.write("%s\t%s\t%s\t%s\n" % (b.hex(), " ".join(map(str, ids)), " ".join(map(str, special)),
                                          sp.decode(ids).encode("utf-8").hex()))
    print("wrote %s (%d cases)" % (OUT, len(cases)))


if __name__ == "__main__":
    main()
