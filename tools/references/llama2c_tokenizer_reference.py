#!/usr/bin/env python3
"""An independent Python implementation of llama2.c's tokenizer (run.c: build_tokenizer,
encode, decode), used to write reference fixtures for model/tokenizer_llama2c.c.

File format: int32 max_token_length, then per token: float32 score, int32 len, len bytes.
The token count is not stored (run.c takes vocab_size from the checkpoint): read to EOF.

encode(): optional BOS (1); if the text is non-empty, the id of " " (dummy prefix); then per
UTF-8 character (a non-continuation byte plus up to 3 continuation bytes) its id, or one id per
byte (byte + 3) when the character is not in the vocabulary; then repeatedly merge the adjacent
pair whose concatenation is a token with the highest score (first pair on ties; only scores
> -1e10), until no pair merges. Strings are C strings: the text ends at its first NUL byte and
a token's string ends at its first NUL byte (run.c compares with strcmp).

decode(prev, id): the token's string; after BOS (prev == 1) a leading ' ' is dropped; a token
"<0xXX>" (sscanf "<0x%02hhX>": 1-2 hex digits after "<0x") is the raw byte XX.

Usage: python3 -m tools.references.llama2c_tokenizer_reference TOKENIZER.bin < texts  (one per line; prints ids)
"""
import struct
import sys
from tools.pylib.cli import help_flag


class Tok:
    def __init__(self, vocab, scores):
        self.vocab = vocab            # list of bytes (C strings: cut at NUL)
        self.scores = scores          # list of float32 values (as Python floats)
        # str_lookup is a bsearch over the sorted vocabulary; with unique strings it is a dict.
        self.index = {}
        for i, v in enumerate(vocab):
            self.index.setdefault(v, i)


def load(path):
    data = open(path, "rb").read()
    (_max_len,) = struct.unpack_from("<i", data, 0)
    off, vocab, scores = 4, [], []
    while off < len(data):
        score, n = struct.unpack_from("<fi", data, off)
        off += 8
        tok = data[off:off + n]
        off += n
        vocab.append(tok.split(b"\0", 1)[0])
        scores.append(score)
    return Tok(vocab, scores)


def encode(tok, text, bos=True, eos=False):
    text = text.split(b"\0", 1)[0]
    ids = []
    if bos:
        ids.append(1)
    if text:
        ids.append(tok.index[b" "])
    i = 0
    while i < len(text):
        j = i + 1  # a character: this byte plus following continuation bytes, 4 bytes at most
        while j < len(text) and (text[j] & 0xC0) == 0x80 and j - i < 4:
            j += 1
        ch = text[i:j]
        if ch in tok.index:
            ids.append(tok.index[ch])
        else:
            ids.extend(b + 3 for b in ch)
        i = j
    while True:
        best, best_id, best_i = -1e10, -1, -1
        for k in range(len(ids) - 1):
            cand = tok.index.get(tok.vocab[ids[k]] + tok.vocab[ids[k + 1]])
            if cand is not None and tok.scores[cand] > best:
                best, best_id, best_i = tok.scores[cand], cand, k
        if best_i < 0:
            break
        ids[best_i:best_i + 2] = [best_id]
    if eos:
        ids.append(2)
    return ids


def decode(tok, prev, i):
    piece = tok.vocab[i]
    if prev == 1 and piece[:1] == b" ":
        piece = piece[1:]
    if piece.startswith(b"<0x"):
        hexd = b""
        for c in piece[3:5]:
            if chr(c) in "0123456789abcdefABCDEF":
                hexd += bytes([c])
            else:
                break
        if hexd:
            return bytes([int(hexd, 16)])
    return piece


def decode_all(tok, ids):
    """The pieces of ids concatenated, each decoded with the previous id (-1 for the first)."""
    out, prev = b"", -1
    for i in ids:
        out += decode(tok, prev, i)
        prev = i
    return out


def hf_tokenizer(path):
    """This reference as a transformers tokenizer (for lm-eval's HFLM)."""
    from transformers import PreTrainedTokenizer
    ref = load(path)

    class Llama2cTokenizer(PreTrainedTokenizer):
        """llama2.c's encoder as a transformers tokenizer: tokens are id strings."""
        def __init__(self, **kw):
            self.ref = ref
            super().__init__(**kw)

        @property
        def vocab_size(self):
            return len(self.ref.vocab)

        def get_vocab(self):
            return {str(i): i for i in range(len(self.ref.vocab))}

        def _tokenize(self, text, **kw):
            return [str(i) for i in encode(self.ref, text.encode("utf-8"), bos=False)]

        def _convert_token_to_id(self, token):
            return int(token) if token.isdigit() else {"<s>": 1, "</s>": 2, "<unk>": 0}.get(token, 0)

        def _convert_id_to_token(self, i):
            return {0: "<unk>", 1: "<s>", 2: "</s>"}.get(i, str(i))

        def convert_tokens_to_string(self, tokens):
            out = b""
            for t in tokens:
                out += decode(self.ref, -1, int(t)) if t.isdigit() else t.encode()
            return out.decode("utf-8", errors="replace")

        def build_inputs_with_special_tokens(self, a, b=None):
            return [1] + a + ([] if b is None else b)

    return Llama2cTokenizer(bos_token="<s>", eos_token="</s>", unk_token="<unk>")


if __name__ == "__main__":
    help_flag(__doc__)  # before anything is written
    t = load(sys.argv[1])
    for line in sys.stdin.buffer:
        print(" ".join(str(i) for i in encode(t, line.rstrip(b"\n"), bos=False)))
