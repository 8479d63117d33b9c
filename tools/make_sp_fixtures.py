#!/usr/bin/env python3
"""Builds the SentencePiece and llama2.c tokenizer fixtures with the `sentencepiece` library
(and, for llama2.c, tools/llama2c_tokenizer_reference.py), never with the C code under test.

Inputs: the shared tokenizer corpus tests/fixtures/tokenizers/cases.hex (one text per line as
hex, may be invalid UTF-8; written by tools/make_tokenizer_fixtures.py) plus SP_EXTRA below.
Invalid UTF-8 is passed to sentencepiece as bytes, which it accepts (each malformed byte
becomes U+FFFD in its normalizer), so those expectations are the library's own.

Writes under tests/fixtures/tokenizers/:
  sp_bpe/tokenizer.model       trained BPE: nmt_nfkc, add_dummy_prefix, byte_fallback, split_digits,
                               a user-defined symbol and an extra control symbol
  sp_bpe_raw/tokenizer.model   trained BPE: identity normalization (no charsmap), no dummy
                               prefix, remove_extra_whitespaces off, no byte_fallback (<unk>)
  <name>/expected.tsv          hex \t ids \t ids with BOS \t decode(ids) as hex
  <name>/decode.tsv            ids \t decode(ids) as hex, for random id sequences
  sp_bpe_llama/tokenizer.model Llama-style: identity normalization, add_dummy_prefix, spaces kept,
                               byte_fallback, split_digits
  sp_bpe_unused/               sp_bpe_raw with every 5th multi-character piece typed UNUSED
  sp_sp1024/expected.tsv       the same for ../shared's fineweb_1024_bpe.model (when present)
  sp_sp1024/benchdata.tsv      file \t line \t field \t ids, for real benchmark text
  llama2c_synth/tokenizer.bin  a llama2.c tokenizer exported (as llama2.c's tokenizer.py does)
                               from a small BPE model trained here with byte_fallback (ids 3..258
                               are the bytes, as llama2.c assumes) + expected.tsv from
                               tools/llama2c_tokenizer_reference.py
  llama2c_tok512/expected.tsv  expected ids for ../shared's stories260K/tok512.bin (when present)

Usage: python3 tools/make_sp_fixtures.py   (from the repo root; a few seconds)
"""
import bz2
import io
import json
import os
import random
import struct
import sys

import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama2c_tokenizer_reference as l2c  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
SHARED = os.path.join(ROOT, "..", "shared", "benchdata")
SP1024 = os.path.join(SHARED, "models", "parameter_golf_sp1024", "fineweb_1024_bpe.model")
TOK512 = os.path.join(SHARED, "models", "stories260K", "tok512.bin")

# SentencePiece-specific cases beyond the shared corpus: NFKC folding, user-defined and control
# symbols in text, space handling at the edges, byte-piece look-alikes.
SP_EXTRA = [
    "ﬁne ﬂow ﬀ ﬃ ﬄ ﬅ", "Ｆｕｌｌ－ｗｉｄｔｈ　ＡＢＣ　１２３", "ｶﾀｶﾅ ﾊﾟﾋﾟ", "① ② ⑩ ㈱ ㎏ ㍻ ℡ ™ ½ ¼ x² H₂O",
    "Å Ω K ﬀ ǆ ǈ", "e\u0301 a\u0308 o\u0302 n\u0303 vs é ä ô ñ", "한국어 텍스트 ㄱㄴ",
    "<sep> between <sep><sep>x<sep>", "a<ctl>b <s> </s> <unk> <pad>", "<0x41><0xFF> literal byte names",
    "▁ already escaped ▁▁x", "  two leading", "two trailing  ", " \u3000 \u00a0 ", "\u200b\u200b",
    "x\u00ady", "tab\tinside\tand\u000bvt\u000cff", "1234567890 ٠١٢٣ ۴۵۶ १२३ 12.5%",
    "Zalgo: Z\u0351\u0308\u0346a\u0310\u0301l\u0315g\u0344o", "👍🏽 👩🏾‍💻 🏳️‍🌈 🇯🇵🇫🇷 #️⃣",
    "Ǆemal ǅ ǆ ĳ Ĳ ŉ ſt ﬆ", "ẞ ß ﬅ ﬆ ﹏ ﹍", "\u2028\u2029\u0085", "A\u0000B",
]


def read_cases():
    cases = []
    path = os.path.join(OUT, "cases.hex")
    if os.path.exists(path):
        with open(path) as f:
            cases = [bytes.fromhex(l.strip()) for l in f.read().split("\n")[:-1]]
    return cases + [s.encode("utf-8") for s in SP_EXTRA]


def training_text():
    """Authored training text: the corpus plus generated sentences (fixed seed)."""
    rng = random.Random(1234)
    words = ("the a an of to in is was for on that with as by at from it this be are have had not but "
             "water energy plant animal student teacher question answer reason because therefore "
             "sun moon earth light heat cold rock river forest city house school market number "
             "run runs running ran walk walked think thought know knew make made take took "
             "small large quick slow bright dark happy sad early late first last new old good best").split()
    lines = []
    for _ in range(3000):
        n = rng.randint(4, 14)
        s = " ".join(rng.choice(words) for _ in range(n))
        s = s[0].upper() + s[1:] + rng.choice([".", ".", "?", "!", ","])
        if rng.random() < 0.2:
            s += " " + str(rng.randint(0, 99999))
        lines.append(s)
    for b in read_cases():
        t = b.decode("utf-8", errors="replace").replace("\n", " ").replace("\r", " ").replace("\0", " ")
        if t.strip():
            lines.append(t)
    lines += [s.replace("\n", " ") for s in SP_EXTRA if "\0" not in s]
    return lines


def train_bytes(**kw):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(training_text()), model_writer=model,
                                   model_type="bpe", vocab_size=kw.pop("vocab_size", 600),
                                   character_coverage=kw.pop("character_coverage", 1.0), hard_vocab_limit=False,
                                   num_threads=1, minloglevel=2, **kw)
    return model.getvalue()


def train(name, **kw):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "tokenizer.model")
    with open(path, "wb") as f:
        f.write(train_bytes(**kw))
    return path


def _varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def _put_varint(v):
    out = b""
    while True:
        c = v & 0x7F
        v >>= 7
        out += bytes([c | (0x80 if v else 0)])
        if not v:
            return out


def mark_unused(model, every=5):
    """Rewrites a ModelProto (raw wire format) with every `every`-th multi-character NORMAL
    piece typed UNUSED (5), which bpe_model.cc still merges through, then splits back."""
    out, i, k = b"", 0, 0
    while i < len(model):
        key, j = _varint(model, i)
        field, wire = key >> 3, key & 7
        assert wire == 2, "ModelProto top-level fields are all length-delimited"
        n, j = _varint(model, j)
        body = model[j:j + n]
        if field == 1:
            # SentencePiece{1: piece, 2: score, 3: type}; rebuild with a type field when marked.
            piece, m, fields, typ = None, 0, b"", 1
            while m < len(body):
                fk, m2 = _varint(body, m)
                if fk & 7 == 2:
                    ln, m3 = _varint(body, m2)
                    if fk >> 3 == 1:
                        piece = body[m3:m3 + ln]
                    end = m3 + ln
                elif fk & 7 == 5:
                    end = m2 + 4
                else:
                    _, end = _varint(body, m2)
                if fk >> 3 != 3:
                    fields += body[m:end]
                else:
                    typ = _varint(body, m2)[0]
                m = end
            if typ == 1 and piece and len(piece.decode("utf-8")) > 1:
                k += 1
                if k % every == 0:
                    typ = 5
            body = fields + (_put_varint(3 << 3) + _put_varint(typ) if typ != 1 else b"")
        out += _put_varint(key) + _put_varint(len(body)) + body
        i = j + n
    return out


def ids_str(ids):
    return " ".join(str(i) for i in ids)


def write_expected(sp, d, cases):
    bos = sp.bos_id()
    with open(os.path.join(d, "expected.tsv"), "w", newline="\n") as f:
        for b in cases:
            ids = sp.encode(b)
            special = ([bos] if bos >= 0 else []) + ids
            f.write("%s\t%s\t%s\t%s\n" % (b.hex(), ids_str(ids), ids_str(special),
                                          sp.decode(ids).encode("utf-8").hex()))


def write_decode_cases(sp, d, n=200):
    """Random id sequences, biased to byte pieces, controls and '▁' pieces."""
    rng = random.Random(7)
    v = sp.vocab_size()
    special = [i for i in range(v) if sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i)
               or sp.id_to_piece(i).startswith("▁")]
    with open(os.path.join(d, "decode.tsv"), "w", newline="\n") as f:
        for _ in range(n):
            ids = [rng.choice(special) if rng.random() < 0.6 else rng.randrange(v)
                   for _ in range(rng.randint(0, 8))]
            f.write("%s\t%s\n" % (ids_str(ids), sp.decode(ids).encode("utf-8").hex()))


def benchdata_texts():
    """(file, line, field, text) samples of real benchmark text: a few per file."""
    picks = {"arc_easy/ARC-Easy-Test.jsonl": ["question.stem"],
             "arc_challenge/ARC-Challenge-Test.jsonl": ["question.stem"],
             "boolq/dev.jsonl": ["question", "passage"], "lambada_openai/lambada_test.jsonl": ["text"],
             "openbookqa/test.jsonl": ["question.stem"], "piqa/valid.jsonl": ["goal", "sol1", "sol2"],
             "siqa/dev.jsonl": ["context", "question", "answerA"], "winogrande/dev.jsonl": ["sentence"]}
    out = []
    for rel, fields in picks.items():
        with open(os.path.join(SHARED, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        rng = random.Random(rel)
        for ln in sorted(rng.sample(range(len(lines) - 1), 16)):
            o = json.loads(lines[ln])
            for field in fields:
                v = o
                for k in field.split("."):
                    v = v[k]
                out.append((rel, ln + 1, field, v))
    with bz2.open(os.path.join(SHARED, "hellaswag/hellaswag_val_full.txt.bz2"), "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    for ln in range(0, 120, 3):
        out.append(("hellaswag/hellaswag_val_full.txt.bz2", ln + 1, "-", lines[ln]))
    return out


def export_llama2c(sp, path):
    """A tokenizer.bin as llama2.c's tokenizer.py export() writes it."""
    tokens, scores = [], []
    for i in range(sp.vocab_size()):
        t = sp.id_to_piece(i)
        if i == sp.bos_id():
            t = "\n<s>\n"
        elif i == sp.eos_id():
            t = "\n</s>\n"
        tokens.append(t.replace("▁", " ").encode("utf-8"))
        scores.append(sp.get_score(i))
    with open(path, "wb") as f:
        f.write(struct.pack("I", max(len(t) for t in tokens)))
        for t, s in zip(tokens, scores):
            f.write(struct.pack("fI", s, len(t)))
            f.write(t)


def write_llama2c_expected(tok, d, cases):
    with open(os.path.join(d, "expected.tsv"), "w", newline="\n") as f:
        for b in cases:
            ids = l2c.encode(tok, b, bos=False)
            special = l2c.encode(tok, b, bos=True)
            f.write("%s\t%s\t%s\t%s\n" % (b.hex(), ids_str(ids), ids_str(special),
                                          l2c.decode_all(tok, special).hex()))


def main():
    cases = read_cases()
    print(len(cases), "cases")
    for name, kw in [("sp_bpe", dict(byte_fallback=True, split_digits=True, user_defined_symbols=["<sep>"],
                                     control_symbols=["<ctl>"])),
                     ("sp_bpe_raw", dict(byte_fallback=False, add_dummy_prefix=False,
                                         remove_extra_whitespaces=False, vocab_size=500,
                                         normalization_rule_name="identity")),
                     ("sp_bpe_llama", dict(byte_fallback=True, split_digits=True, remove_extra_whitespaces=False,
                                           normalization_rule_name="identity", vocab_size=700))]:
        path = train(name, **kw)
        sp = spm.SentencePieceProcessor(model_file=path)
        write_expected(sp, os.path.dirname(path), cases)
        write_decode_cases(sp, os.path.dirname(path))
        print(name, sp.vocab_size(), "pieces,", os.path.getsize(path), "bytes")
    # sp_bpe_unused: sp_bpe_raw with some pieces typed UNUSED (exercises resegmentation).
    d = os.path.join(OUT, "sp_bpe_unused")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(OUT, "sp_bpe_raw", "tokenizer.model"), "rb") as f:
        unused = mark_unused(f.read())
    with open(os.path.join(d, "tokenizer.model"), "wb") as f:
        f.write(unused)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(d, "tokenizer.model"))
    print("sp_bpe_unused", sum(sp.is_unused(i) for i in range(sp.vocab_size())), "unused pieces")
    write_expected(sp, d, cases)
    # llama2.c: a synthetic tokenizer.bin from sp_bpe, and the real tok512.bin's expectations.
    d = os.path.join(OUT, "llama2c_synth")
    os.makedirs(d, exist_ok=True)
    export_llama2c(spm.SentencePieceProcessor(model_proto=train_bytes(byte_fallback=True, vocab_size=450,
                                                                      character_coverage=0.99)),
                   os.path.join(d, "tokenizer.bin"))
    write_llama2c_expected(l2c.load(os.path.join(d, "tokenizer.bin")), d, cases)
    if os.path.exists(TOK512):
        d = os.path.join(OUT, "llama2c_tok512")
        os.makedirs(d, exist_ok=True)
        write_llama2c_expected(l2c.load(TOK512), d, cases)
    if os.path.exists(SP1024):
        d = os.path.join(OUT, "sp_sp1024")
        os.makedirs(d, exist_ok=True)
        sp = spm.SentencePieceProcessor(model_file=SP1024)
        write_expected(sp, d, cases)
        write_decode_cases(sp, d)
        with open(os.path.join(d, "benchdata.tsv"), "w", newline="\n") as f:
            for rel, ln, field, text in benchdata_texts():
                f.write("%s\t%d\t%s\t%s\n" % (rel, ln, field, ids_str(sp.encode(text))))
    else:
        print("../shared absent: sp_sp1024 and llama2c_tok512 fixtures not refreshed")


if __name__ == "__main__":
    main()
