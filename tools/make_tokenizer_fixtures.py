#!/usr/bin/env python3
"""Builds the Hugging Face tokenizer.json fixtures and their expected ids with the
`tokenizers` library itself (never with the C code under test).

Writes under tests/fixtures/tokenizers/:
  corpus.txt            authored test corpus, one text per line (valid UTF-8, no CR)
  edge_cases.jsonl      awkward cases, {"text": ...} or {"hex": ...} (exact bytes, may be invalid UTF-8)
  cases.hex             every test text (corpus lines, then edge cases) as hex, one per line
  cases.jsonl           the valid-UTF-8 texts of cases.hex as JSON strings (for `tokenize --jsonl`)
  <name>/tokenizer.json a small trained tokenizer
  <name>/expected.jsonl {"line": i, "ids", "ids_special", "decoded_hex", "decoded_special_hex"}
  <name>/corpus.ids, corpus_special.ids   space-separated ids per corpus.txt line (CLI test)
  <name>/cases_jsonl.ids                  JSON arrays per cases.jsonl line (CLI --jsonl test)
  <name>/shared_expected.jsonl            ids for a sample of ../shared/benchdata texts (when present)

Texts that are not valid UTF-8 are decoded with errors="replace" before encoding: that is the
behaviour xsa-eval defines for such input (model/tokenizer.h).

Training is not deterministic across runs (ties between equally frequent pairs), so an existing
<name>/tokenizer.json is kept and only the expected files are rewritten; --retrain builds new ones.

Usage: python3 tools/make_tokenizer_fixtures.py [--retrain]   (from the repo root; takes ~10 s)
"""
import json
import os
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
SHARED = os.path.join(ROOT, "..", "shared", "benchdata")

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"""
                  r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

# The authored corpus: prose, code, numbers, contractions, odd spaces, scripts, emoji, specials.
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Photosynthesis is the foundation of most food webs, because sunlight is the source of energy.",
    "Which statement best explains why the Moon has phases? It orbits the Earth.",
    "She said, \"I'll be there at 5 o'clock,\" but she didn't come until half past six.",
    "It's, you're, we've, they'd, I'm, she'll, can't, won't, shouldn't've.",
    "IT'S LOUD: YOU'RE, WE'VE, THEY'D, I'M, SHE'LL, HE'S, DON'T.",
    "Mixed case: 'S 'LL 'Re 'rE 'Ve 'M 'D 'T and 'ſ (long s).",
    "The year 2024 had 366 days; 1234567890 is ten digits; 3.14159 and -42 and 1,000,000.",
    "Phone: +1 (555) 012-3456, ZIP 90210, version v1.2.3-rc4, IPv4 192.168.0.1.",
    "Long digit run: 12345678901234567890123456789012345678901234567890.",
    "def fib(n):\treturn n if n < 2 else fib(n - 1) + fib(n - 2)",
    "    for (int i = 0; i < n; i++) { sum += a[i] * b[i]; }  // dot product",
    "#include <stdio.h>\tint main(void) { printf(\"%d\\n\", 42); return 0; }",
    "x = {'key': [1, 2, 3], \"other\": None}  # a dict;   y = x['key'][-1]",
    "SELECT name, COUNT(*) FROM users WHERE age >= 18 GROUP BY name;",
    "https://example.com/path?q=hello+world&lang=en#section-2",
    "Runs   of    spaces     and\t\ttabs\t and trailing spaces   ",
    "   leading spaces then words",
    "\tleading tab",
    "non\u00a0breaking\u00a0spaces and a thin\u2009space and an em\u2003space and ideographic\u3000space",
    "zero\u200bwidth\u200bspace, word\u2060joiner, soft\u00adhyphen, and BOM \ufeff here",
    "line\u2028separator and paragraph\u2029separator and NEL\u0085here",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber se\u00f1or (composed)",
    "Cafe\u0301 nai\u0308ve re\u0301sume\u0301 u\u0308ber sen\u0303or (combining)",
    "\u212b ohm \u2126 ligature \ufb01ne \ufb02ow fullwidth \uff21\uff22\uff23\uff11\uff12\uff13 superscript x\u00b2 \u2460\u2461",
    "\u0130stanbul \u0131s\u0131k \u00df STRASSE \u03a3\u03af\u03c3\u03c5\u03c6\u03bf\u03c2 \u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3",
    "\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u6563\u6b65\u5427\u3002",
    "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3002",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4.",
    "\u0627\u0644\u0644\u063a\u0629 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u062c\u0645\u064a\u0644\u0629 \u0661\u0662\u0663",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e \u0938\u0941\u0902\u0926\u0930 \u0939\u0948\u0964 \u0967\u0968\u0969",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0423\u0447\u0438\u043c\u0441\u044f \u0442\u043e\u043a\u0435\u043d\u0438\u0437\u0430\u0446\u0438\u0438.",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd and \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35 and \u10d2\u10d0\u10db\u10d0\u10e0\u10ef\u10dd\u10d1\u10d0",
    "Emoji: \U0001f600 \U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \u2764\ufe0f \U0001f3f3\ufe0f\u200d\U0001f308",
    "Flags: \U0001f1fa\U0001f1f8 \U0001f1ef\U0001f1f5 \U0001f1e9\U0001f1ea and keycap 1\ufe0f\u20e3",
    "Math: \u2200x \u2208 \u211d, \u2203y: x\u00b2 + y\u00b2 \u2264 1 \u2192 \u221a(x\u00b2) = |x|; \u03c0 \u2248 3.14",
    "Special tokens inside text: hello<|endoftext|>world and <|begin_of_text|>start",
    "Sentence pieces: <s> begins and </s> ends, <unk> is unknown.",
    "Added tokens: <|fim|>   after spaces, xyzzy alone, xyzzyplugh glued, [MASK]  here.",
    "Repeated!!! punctuation??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ((( ))) ___ +++ ===",
    "Quotes \u201csmart\u201d and \u2018single\u2019 and \u00abguillemets\u00bb and \u300cbrackets\u300d",
    "Dashes \u2013 en \u2014 em \u2212 minus; ellipsis\u2026 bullet \u2022 dagger \u2020",
    "Currency: $5.00, \u20ac3,50, \u00a3100, \u00a51000, \u20b9200, \u20bf0.01",
    "UPPERCASE WORDS AND lowercase words And Title Case Words",
    "tokenization tokenizer tokenize tokens token untokenizable retokenization",
    "A man, a plan, a canal: Panama! Was it a car or a cat I saw?",
    "In 1969, Apollo 11 landed on the Moon; Neil Armstrong's first words were recorded.",
    "Water boils at 100\u00b0C (212\u00b0F) at sea level; ice melts at 0\u00b0C.",
    "The mitochondria is the powerhouse of the cell. DNA -> RNA -> protein.",
    "Q: What is 7 x 8? A: 56. Q: What is 12 / 4? A: 3.",
    "e.g. i.e. etc. Dr. Smith vs. Mr. Jones, U.S.A., Ph.D.",
    "snake_case camelCase PascalCase kebab-case SCREAMING_SNAKE __dunder__",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "The end.",
]

# Extra training text (not tested line by line) so the vocabularies learn real merges.
TRAIN_EXTRA = [
    "the of and to in is was that for on with as by at from his her they this which",
    "Once upon a time there was a little girl who lived in a village near the forest.",
    "Energy flows through ecosystems from producers to consumers and decomposers.",
    "Students measured the temperature of water every minute for ten minutes.",
    "The experiment showed that plants grow faster with more light and water.",
    "return value function variable class struct int char float double void",
    "I don't know what you're talking about, but it's fine; we'll see what they've done.",
]

EDGE_CASES = [
    {"text": ""},
    {"text": " "},
    {"text": "     "},
    {"text": "\t"},
    {"text": "\r\n\r\n"},
    {"text": "\n"},
    {"text": "a\r\nb\rc\nd"},
    {"text": "trailing newline\n"},
    {"text": "  \n  \n"},
    {"text": "<|endoftext|>"},
    {"text": "<|begin_of_text|>"},
    {"text": "<s>"},
    {"text": "</s>"},
    {"text": "<|endoftext|><|endoftext|>"},
    {"text": " <|endoftext|> "},
    {"text": "<|fim|>"},
    {"text": "  <|fim|>  x"},
    {"text": "[MASK]"},
    {"text": "a [MASK] b [MASK]c"},
    {"text": "xyzzy"},
    {"text": " xyzzy."},
    {"text": "<|endoftext"},
    {"text": "<0x41> <0xZZ>"},
    {"text": "0" * 300},
    {"text": "9876543210" * 30},
    {"text": "w" + "ordy" * 500},
    {"text": "supercalifragilistic" * 100},
    {"text": " " * 200},
    {"text": "\u00a0\u00a0\u00a0"},
    {"text": "\u2581\u2581 already metaspace \u2581x"},
    {"text": "\u0301 a leading combining mark"},
    {"text": "\U0001f44d\U0001f3fd" * 20},
    {"text": "\x00NUL\x00inside"},
    {"text": "\x7f\x01\x02 control \x1b[0m"},
    {"text": "!!!"},
    {"text": "'s"},
    {"text": "''''"},
    # invalid UTF-8: each becomes U+FFFD per maximal subpart (Python errors="replace")
    {"hex": "6869ff7468657265"},                  # hi\xffthere
    {"hex": "c3"},                                # truncated 2-byte
    {"hex": "e282"},                              # truncated 3-byte
    {"hex": "e28220616263"},                      # truncated 3-byte then text
    {"hex": "eda080"},                            # UTF-16 surrogate encoded
    {"hex": "c080c1bf"},                          # overlong
    {"hex": "f4908080"},                          # above U+10FFFF
    {"hex": "f09f9880f09f98"},                    # emoji then truncated emoji
    {"hex": "80808080"},                          # stray continuation bytes
    {"hex": "48656c6c6f20fe20776f726c64"},        # Hello \xfe world
]


def hx(b: bytes) -> str:
    return b.hex()


def all_cases():
    texts = [s.encode("utf-8") for s in CORPUS]
    for e in EDGE_CASES:
        texts.append(bytes.fromhex(e["hex"]) if "hex" in e else e["text"].encode("utf-8"))
    return texts


def train_text():
    return CORPUS * 3 + TRAIN_EXTRA * 5


def trained(tok, trainer):
    tok.train_from_iterator(train_text(), trainer=trainer)
    return tok


def finish(tok, edit=None):
    """Round-trips through JSON (optionally edited) so the file is what we test."""
    d = json.loads(tok.to_str())
    if edit:
        edit(d)
    return Tokenizer.from_str(json.dumps(d, ensure_ascii=False)), d


def merges_as_strings(d):
    d["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in d["model"]["merges"]]


def build_gpt2():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tr = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    trained(tok, tr)
    tok.add_special_tokens([AddedToken("<|fim|>", rstrip=True, lstrip=True, special=True, normalized=False)])
    tok.add_tokens([AddedToken("xyzzy", single_word=True, normalized=True, special=False),
                    AddedToken("[MASK]", lstrip=True, normalized=False, special=False)])
    return finish(tok, merges_as_strings)


def build_llama3():
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|reserved_special_token_0|>"]
    tr = trainers.BpeTrainer(vocab_size=900, special_tokens=specials,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    trained(tok, tr)

    def edit(d):
        d["model"]["ignore_merges"] = True
        # Whole-word vocabulary entries that the merges cannot build: ignore_merges must pick them.
        n = max(d["model"]["vocab"].values()) + 1
        for w in ["\u0120tokenization", "\u0120retokenization", "Photosynthesis", "\u0120untokenizable"]:
            if w not in d["model"]["vocab"]:
                d["model"]["vocab"][w] = n
                n += 1
        for t in d["added_tokens"]:
            t["id"] = d["model"]["vocab"][t["content"]]
        bos = d["model"]["vocab"]["<|begin_of_text|>"]
        d["post_processor"] = {
            "type": "Sequence",
            "processors": [
                {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
                {"type": "TemplateProcessing",
                 "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                            {"Sequence": {"id": "A", "type_id": 0}}],
                 "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                          {"Sequence": {"id": "A", "type_id": 0}},
                          {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}},
                          {"Sequence": {"id": "B", "type_id": 1}}],
                 "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [bos],
                                                          "tokens": ["<|begin_of_text|>"]}}},
            ],
        }
    return finish(tok, edit)


BYTE_TOKENS = ["<0x%02X>" % b for b in range(256)]


def sp_edit(d):
    """SentencePiece conversions keep <0xXX> in the model vocab only, not as added tokens."""
    d["added_tokens"] = [t for t in d["added_tokens"] if t["content"] not in BYTE_TOKENS]
    d["model"]["byte_fallback"] = True
    d["model"]["fuse_unk"] = True
    d["model"]["unk_token"] = "<unk>"
    bos = d["model"]["vocab"]["<s>"]
    d["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [bos], "tokens": ["<s>"]}},
    }


def build_sp():
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tr = trainers.BpeTrainer(vocab_size=800, special_tokens=["<unk>", "<s>", "</s>"] + BYTE_TOKENS,
                             limit_alphabet=70, show_progress=False)
    trained(tok, tr)
    return finish(tok, sp_edit)


def build_sp_meta():
    """Metaspace pre-tokenizer (prepend_scheme first, split), Metaspace decoder, NFKC."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=False))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=True)
    tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(replacement="\u2581",
                                                                                   prepend_scheme="first")])
    tr = trainers.BpeTrainer(vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"] + BYTE_TOKENS,
                             limit_alphabet=50, show_progress=False)
    trained(tok, tr)

    def edit(d):
        sp_edit(d)
        d["model"]["fuse_unk"] = False
        d["model"]["byte_fallback"] = False  # unknown characters become <unk>, one each
    return finish(tok, edit)


def build_norm_mix():
    """Normalizers NFKC+Lowercase+Replace(regex)+Strip; Digits, Split behaviours; end_of_word_suffix."""
    tok = Tokenizer(models.BPE(end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.Sequence([
        normalizers.NFKC(), normalizers.Lowercase(), normalizers.Replace(Regex(r"\s+"), " "),
        normalizers.Strip(left=True, right=True)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.Split(Regex(r"[,.!?;:]"), behavior="isolated"),
        pre_tokenizers.Split(" ", behavior="merged_with_previous"),
        pre_tokenizers.Split(Regex(r"[aeiou]+"), behavior="merged_with_next"),
        pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=500, end_of_word_suffix="</w>", special_tokens=["<pad>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    trained(tok, tr)
    return finish(tok)


def build_split_mix():
    """NFD+Replace(string)+Lowercase; Split removed/contiguous/invert, Digits contiguous;
    continuing_subword_prefix with unk fusing; Replace+Strip decoders."""
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Replace("`", "'"),
                                           normalizers.Lowercase(), normalizers.Strip(left=True, right=False)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\s+"), behavior="removed"),
        pre_tokenizers.Split(Regex(r"\p{P}"), behavior="contiguous"),
        pre_tokenizers.Split(Regex(r"[a-z]+"), behavior="isolated", invert=True),
        pre_tokenizers.Digits(individual_digits=False)])
    tok.decoder = decoders.Sequence([decoders.Replace("##", ""), decoders.Strip("x", 0, 1)])
    tr = trainers.BpeTrainer(vocab_size=400, continuing_subword_prefix="##", special_tokens=["[UNK]", "[CLS]"],
                             limit_alphabet=60, show_progress=False)
    trained(tok, tr)
    tok.add_tokens([AddedToken("[MASK]", single_word=False, lstrip=True, rstrip=True, normalized=True)])
    return finish(tok)


BUILDERS = {
    "gpt2": build_gpt2,
    "llama3": build_llama3,
    "hf_sp": build_sp,
    "hf_metaspace": build_sp_meta,
    "norm_mix": build_norm_mix,
    "split_mix": build_split_mix,
}
SHARED_TOKENIZERS = ["gpt2", "llama3", "hf_sp"]


def shared_sample():
    """(file, row, field, text) for ~100 real benchmark texts when ../shared is present."""
    out = []
    arc = os.path.join(SHARED, "arc_easy", "ARC-Easy-Test.jsonl")
    lam = os.path.join(SHARED, "lambada_openai", "lambada_test.jsonl")
    if os.path.exists(arc):
        with open(arc, encoding="utf-8") as f:
            for r, line in enumerate(f):
                if r >= 70:
                    break
                out.append(("arc_easy/ARC-Easy-Test.jsonl", r, "question.stem", json.loads(line)["question"]["stem"]))
    if os.path.exists(lam):
        with open(lam, encoding="utf-8") as f:
            for r, line in enumerate(f):
                if r >= 30:
                    break
                out.append(("lambada_openai/lambada_test.jsonl", r, "text", json.loads(line)["text"]))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "corpus.txt"), "w", encoding="utf-8", newline="\n") as f:
        for s in CORPUS:
            assert "\n" not in s and "\r" not in s, s  # one text per line
            f.write(s + "\n")
    with open(os.path.join(OUT, "edge_cases.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for e in EDGE_CASES:
            f.write(json.dumps(e, ensure_ascii=True) + "\n")
    cases = all_cases()
    with open(os.path.join(OUT, "cases.hex"), "w") as f:
        for b in cases:
            f.write(hx(b) + "\n")
    valid = []
    for b in cases:
        try:
            valid.append(b.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    with open(os.path.join(OUT, "cases.jsonl"), "w") as f:
        for s in valid:
            f.write(json.dumps(s, ensure_ascii=True) + "\n")
    shared = shared_sample()
    retrain = "--retrain" in sys.argv[1:]
    for name, build in BUILDERS.items():
        tdir = os.path.join(OUT, name)
        os.makedirs(tdir, exist_ok=True)
        if retrain or not os.path.exists(os.path.join(tdir, "tokenizer.json")):
            tok, d = build()
            text = json.dumps(d, ensure_ascii=False, indent=1)
            assert len(text.encode()) < 300_000, name
            with open(os.path.join(tdir, "tokenizer.json"), "w", encoding="utf-8") as f:
                f.write(text)
        text = open(os.path.join(tdir, "tokenizer.json"), encoding="utf-8").read()
        tok = Tokenizer.from_file(os.path.join(tdir, "tokenizer.json"))
        with open(os.path.join(tdir, "expected.jsonl"), "w") as f:
            for i, b in enumerate(cases):
                s = b.decode("utf-8", errors="replace")
                ids = tok.encode(s, add_special_tokens=False).ids
                ids_sp = tok.encode(s, add_special_tokens=True).ids
                dec = tok.decode(ids, skip_special_tokens=False).encode("utf-8")
                dec_sp = tok.decode(ids_sp, skip_special_tokens=False).encode("utf-8")
                f.write(json.dumps({"line": i, "ids": ids, "ids_special": ids_sp, "decoded_hex": hx(dec),
                                    "decoded_special_hex": hx(dec_sp)}) + "\n")
        with open(os.path.join(tdir, "corpus.ids"), "w") as f, \
             open(os.path.join(tdir, "corpus_special.ids"), "w") as g:
            for s in CORPUS:
                f.write(" ".join(map(str, tok.encode(s, add_special_tokens=False).ids)) + "\n")
                g.write(" ".join(map(str, tok.encode(s, add_special_tokens=True).ids)) + "\n")
        with open(os.path.join(tdir, "cases_jsonl.ids"), "w") as f:
            for s in valid:
                f.write("[" + ",".join(map(str, tok.encode(s, add_special_tokens=False).ids)) + "]\n")
        if name in SHARED_TOKENIZERS and shared:
            with open(os.path.join(tdir, "shared_expected.jsonl"), "w") as f:
                for path, row, field, s in shared:
                    f.write(json.dumps({"file": path, "row": row, "field": field,
                                        "ids": tok.encode(s, add_special_tokens=False).ids,
                                        "ids_special": tok.encode(s, add_special_tokens=True).ids}) + "\n")
        print(f"{name}: vocab {tok.get_vocab_size()}, {len(text) // 1024} KB", file=sys.stderr)


if __name__ == "__main__":
    main()
