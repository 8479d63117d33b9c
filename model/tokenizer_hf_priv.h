// tokenizer_hf_priv.h: the pieces of the Hugging Face tokenizer.json tokenizer, private to
// model/tokenizer_hf*.c. Each stage mirrors one component of the Rust
// `tokenizers` library (v0.23): normalizers, pre-tokenizers, the BPE model, decoders.
#ifndef XSA_MODEL_TOKENIZER_HF_PRIV_H
#define XSA_MODEL_TOKENIZER_HF_PRIV_H

#include <stddef.h>
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <cJSON.h>
#include <pcre2.h>

#include "common/error.h"
#include "common/heap.h"
#include "common/vec.h"

// ---- UTF-8 and Rust `char` predicates (tokenizer_hf_text.c) ----

// Decodes the code point at s[*i] of valid UTF-8 and advances *i.
uint32_t hft_utf8_next(const char *s, size_t len, size_t *i);
// Length of the UTF-8 sequence that starts with byte b (valid input assumed).
size_t hft_utf8_len(unsigned char b);
// Appends the UTF-8 encoding of cp.
void hft_utf8_put(struct sbuf *b, uint32_t cp);
// Appends `s` with every ill-formed subsequence replaced by U+FFFD, one per maximal subpart
// (WHATWG / Python errors="replace").
void hft_utf8_sanitize(const char *s, size_t len, struct sbuf *out);
int hft_utf8_valid(const char *s, size_t len);
int hft_is_whitespace(uint32_t cp);    // Rust char::is_whitespace (White_Space)
int hft_is_numeric(uint32_t cp);       // Rust char::is_numeric (Nd, Nl, No)
// Rust regex's Unicode \w: Alphabetic, M, Nd, Pc, Join_Control (Alphabetic approximated by
// L*, Nl and the circled/squared letters, as utf8proc lacks Other_Alphabetic).
int hft_is_word_char(uint32_t cp);

// ---- regular expressions (PCRE2, onig find_iter semantics; tokenizer_hf_text.c) ----

struct hft_regex {
    pcre2_code *code;  // NULL for a literal pattern
    char *lit;         // literal pattern (String patterns), NUL-terminated
    size_t lit_len;
};

// Compiles a JSON pattern object {"String": s} or {"Regex": r}.
int hft_regex_from_json(struct hft_regex *re, const cJSON *pat, const char *path, const char *what,
                       xsa_error *err);
int hft_regex_compile(struct hft_regex *re, const char *pattern, const char *path, xsa_error *err);
void hft_regex_free(struct hft_regex *re);

struct hft_span {
    size_t s, e;
};
// All non-overlapping matches of `re` in s[0..len), as onig's find_iter returns them
// (an empty match right after the previous match is skipped). Appends to *out (growable).
int hft_regex_find_all(const struct hft_regex *re, const char *s, size_t len, pcre2_match_data *md,
                      struct hft_span **out, size_t *n, size_t *cap, xsa_error *err);
// NormalizedString::replace: every match of re replaced by `with`, appended to *out.
int hft_regex_replace(const struct hft_regex *re, const char *s, size_t len, const char *with, size_t with_len,
                     pcre2_match_data *md, struct sbuf *out, xsa_error *err);

// ---- pieces: a list of strings in one buffer ----

struct hft_piece {
    size_t off, len;  // text in pieces->buf
    int32_t id;       // >= 0: an added token, final; -1: text still to tokenize
    int first;        // the piece starts at offset 0 of the original input
};

struct hft_pieces {
    struct sbuf buf;
    struct hft_piece *v;
    size_t n, cap;
};

void hft_pieces_push(struct hft_pieces *p, const char *s, size_t len, int32_t id, int first);
// Records buf[off..buf.n) (already appended by the caller) as a piece.
void hft_pieces_push_tail(struct hft_pieces *p, size_t off, int32_t id, int first);
void hft_pieces_free(struct hft_pieces *p);

// Scratch state of one encode/decode call (no state is kept between calls).
struct hft_ctx {
    pcre2_match_data *md;
    struct hft_span *spans;
    size_t nspans, capspans;
    struct sbuf tmp, tmp2;
    struct hft_pieces pa, pb;
    struct hft_sym *syms;       // BPE scratch: symbols of one word
    size_t capsyms;
    struct xsa_heap heap;       // BPE scratch: merge queue of struct hft_mrg
    const char *path;
};

// ---- normalizers (tokenizer_hf_norm.c) ----

struct hft_norm;  // opaque tree
int hft_norm_parse(struct hft_norm **out, const cJSON *j, const char *path, xsa_error *err);
// Appends the normalized form of s[0..len) to *out.
int hft_norm_apply(const struct hft_norm *n, const char *s, size_t len, struct sbuf *out, struct hft_ctx *ctx,
                  xsa_error *err);
void hft_norm_free(struct hft_norm *n);

// ---- pre-tokenizers (tokenizer_hf_pretok.c) ----

struct hft_pretok;
int hft_pretok_parse(struct hft_pretok **out, const cJSON *j, const char *path, xsa_error *err);
// Splits every text piece of *in (token pieces pass through); the result replaces *in.
int hft_pretok_apply(const struct hft_pretok *p, struct hft_pieces *in, struct hft_ctx *ctx, xsa_error *err);
void hft_pretok_free(struct hft_pretok *p);

// ---- decoders (tokenizer_hf_decode.c) ----

struct hft_dec;
int hft_dec_parse(struct hft_dec **out, const cJSON *j, const char *path, xsa_error *err);
// Turns the token strings in *toks into the decoded text, appended to *out.
int hft_dec_apply(const struct hft_dec *d, struct hft_pieces *toks, struct sbuf *out, struct hft_ctx *ctx,
                 xsa_error *err);
void hft_dec_free(struct hft_dec *d);
// The bytes the token string s[0..len) stands for when the decoder is ByteLevel (alone, or the
// one step of a Sequence): one per character of its byte alphabet (a string with another
// character: its own bytes, as the decoder passes it); -1 for any other decoder.
long hft_dec_byte_level_len(const struct hft_dec *d, const char *s, size_t len);
// 0 when the decoder's text can be counted token by token (hft_dec_token_len), else -1 and why
// (one clause) in why[why_n]: per-token steps (Replace, Metaspace, Strip, then ByteFallback, then
// Metaspace) may come before Fuse; after Fuse at most one Strip of one leading character.
int hft_dec_token_map_check(const struct hft_dec *d, char *why, size_t why_n);
// The bytes token string s[0..len) adds to the decoded text, as the first token of the text
// (`first`: the Metaspace decoder drops its replacement characters, a Strip after Fuse its
// leading character) or after another. A byte token <0xNN> under ByteFallback is its one byte
// (exact where runs of them spell UTF-8 without the replacement character). *first_empty: a
// first token that leaves nothing for a Strip after Fuse, which would then strip the next token.
int hft_dec_token_len(const struct hft_dec *d, const char *s, size_t len, int first, long *bytes, int *first_empty,
                      struct hft_ctx *ctx, xsa_error *err);

// ---- string -> id hash (tokenizer_hf_bpe.c) ----

struct hft_strmap {
    uint32_t *slots;  // (cap,) entry index + 1, 0 = empty
    size_t cap;
    size_t *offs;     // (n,) key offsets into keys
    uint32_t *lens;   // (n,)
    int32_t *vals;    // (n,)
    size_t n, ncap;
    struct sbuf keys;
};
int hft_strmap_put(struct hft_strmap *m, const char *k, size_t len, int32_t v);  // 1 if the key existed, else 0
int32_t hft_strmap_get(const struct hft_strmap *m, const char *k, size_t len);   // -1 when absent
void hft_strmap_free(struct hft_strmap *m);

// ---- the BPE model (tokenizer_hf_bpe.c) ----

struct hft_bpe {
    struct hft_strmap vocab;  // token -> id
    char **id_str;           // (n_ids,) token of each id, NULL for holes
    int32_t n_ids;           // max id + 1
    uint64_t *mkeys;         // (mcap,) merge pair (a << 32 | b) + 1, 0 = empty
    uint32_t *mrank, *mnew;  // (mcap,) rank and merged id
    size_t mcap, nmerges;
    int32_t unk_id;          // -1: no unk_token
    int fuse_unk, byte_fallback, ignore_merges;
    char *prefix, *suffix;   // continuing_subword_prefix, end_of_word_suffix (NULL when absent)
    int32_t byte_ids[256];   // id of "<0xXX>", -1 when absent
    int32_t *cp_ids;         // (HFT_CP_TABLE,) id of the one-character token, -1: absent/unknown
};
#define HFT_CP_TABLE 0x3000

int hft_bpe_parse(struct hft_bpe *b, const cJSON *model, const char *path, xsa_error *err);
// Appends the ids of one pre-tokenized word.
int hft_bpe_encode_word(const struct hft_bpe *b, const char *s, size_t len, struct ivec *out, struct hft_ctx *ctx,
                       xsa_error *err);
void hft_bpe_free(struct hft_bpe *b);

// JSON helpers (tokenizer_hf_bpe.c).
const char *hft_json_str(const cJSON *o, const char *key);  // NULL when absent or not a string
int hft_json_bool(const cJSON *o, const char *key, int dflt);

#endif
