// tokenizer_sp.c: SentencePiece .model files (a serialized sentencepiece.ModelProto), BPE
// models only, equal to the sentencepiece library (v0.2) id for id: normalizer.cc, then
// bpe_model.cc's merge loop, then sentencepiece_processor.cc's unknown/byte-fallback handling;
// decoding as SentencePieceProcessor::Decode. Unigram, WORD and CHAR models are refused.
// add_special = 1 prepends bos_id (the library adds nothing by itself; Hugging Face's
// LlamaTokenizer, which lm-eval uses, adds BOS by default), so adds_bos = 1 when there is one.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/heap.h"
#include "common/xalloc.h"
#include "model/caseops.h"
#include "model/piece_map.h"
#include "model/protobuf.h"
#include "model/sp_normalizer.h"
#include "model/tokenizer_impl.h"
#include "tasks/pystr.h"

#define SP_MAX_PIECES (1 << 22)
#define SP_SPACE "\xe2\x96\x81"

// sentencepiece_model.proto: ModelProto.SentencePiece.Type and TrainerSpec.ModelType.
enum { SP_NORMAL = 1, SP_UNKNOWN = 2, SP_CONTROL = 3, SP_USER_DEFINED = 4, SP_UNUSED = 5, SP_BYTE = 6 };
enum { SP_UNIGRAM = 1, SP_BPE = 2, SP_WORD = 3, SP_CHAR = 4 };

struct sp_model {
    int n;                   // pieces
    char **strs;             // (n,) piece strings, NUL-terminated copies
    uint32_t *lens;          // (n,)
    float *scores;           // (n,)
    uint8_t *types;          // (n,)
    struct piece_map normal;    // NORMAL, USER_DEFINED, UNUSED pieces (the library's pieces_)
    struct piece_map reserved;  // CONTROL, UNKNOWN, BYTE pieces
    int unk_id;
    int byte_fallback;
    int32_t byte_ids[256];   // id of "<0xXX>" (or unk) per byte
    char **user_syms;        // (n_user,) user-defined pieces, for the prefix matcher
    uint32_t *user_lens;
    struct sp_matcher matcher;
    struct sp_normalizer norm, denorm;
    int has_denorm;
    int add_dummy_prefix, remove_extra_whitespaces;  // decoding strips the first space by these
    char unk_surface[256];
    int bos_id;                 // -1 when none
    int caseops;                // the CaseOps markers are user-defined pieces: text is rewritten (caseops.h)
};

struct sp_spec_fields {  // the TrainerSpec / NormalizerSpec fields we read
    int model_type, byte_fallback, treat_ws_suffix;
    char bos_piece[64], eos_piece[64], unk_piece[64];
    int has_unk_surface;
    char unk_surface[256];
};

static void sp_model_free(struct sp_model *m) {
    if (!m) return;
    for (int i = 0; i < m->n; i++) free(m->strs[i]);
    free(m->strs);
    free(m->lens);
    free(m->scores);
    free(m->types);
    sp_matcher_free(&m->matcher);
    free(m->user_syms);
    free(m->user_lens);
    piece_map_free(&m->normal);
    piece_map_free(&m->reserved);
    sp_normalizer_free(&m->norm);
    sp_normalizer_free(&m->denorm);
    free(m);
}

static void sp_destroy(void *impl) { sp_model_free(impl); }

// PieceToId: reserved pieces first, then the others, else unk.
static int32_t sp_piece_to_id(const struct sp_model *m, const char *s, size_t len) {
    int32_t id = piece_map_get(&m->reserved, s, len);
    if (id >= 0) return id;
    id = piece_map_get(&m->normal, s, len);
    return id >= 0 ? id : m->unk_id;
}

static void sp_copy_str(char *dst, size_t cap, const struct pb_field *f) {
    size_t n = f->len < cap - 1 ? f->len : cap - 1;
    memcpy(dst, f->bytes, n);
    dst[n] = '\0';
}

// ---------------------------------------------------------------- loading

static int sp_bad(xsa_error *err, const char *path, const char *what, const char *why) {
    return xsa_fail(err, XSA_EBADINPUT, "%s: corrupt SentencePiece model (%s: %s); re-export the .model file", path,
                    what, why);
}

static int sp_read_piece(struct sp_model *m, const char *path, const struct pb_field *msg, xsa_error *err) {
    struct pb_reader r = pb_reader_init(msg->bytes, msg->len);
    struct pb_field f;
    const char *why = NULL;
    int rc, i = m->n;
    const uint8_t *s = NULL;
    size_t slen = 0;
    m->scores[i] = 0.0f;
    m->types[i] = SP_NORMAL;
    while ((rc = pb_next(&r, &f, &why)) == 1) {
        if (f.number == 1 && f.wire == PB_BYTES) {
            s = f.bytes;
            slen = f.len;
        } else if (f.number == 2 && f.wire == PB_FIXED32) {
            m->scores[i] = pb_float(&f);
        } else if (f.number == 3 && f.wire == PB_VARINT) {
            if (f.u < 1 || f.u > 6) return sp_bad(err, path, "piece type", "not one of NORMAL..BYTE");
            m->types[i] = (uint8_t)f.u;
        }
    }
    if (rc < 0) return sp_bad(err, path, "piece", why);
    if (!s || slen == 0) return sp_bad(err, path, "piece", "empty piece string");
    if (slen > (1u << 20)) return sp_bad(err, path, "piece", "piece longer than 1 MiB");
    m->strs[i] = xsa_malloc(slen + 1);
    memcpy(m->strs[i], s, slen);
    m->strs[i][slen] = '\0';
    m->lens[i] = (uint32_t)slen;
    m->n++;
    return 0;
}

static int sp_read_trainer(struct sp_spec_fields *t, const char *path, const struct pb_field *msg, xsa_error *err) {
    struct pb_reader r = pb_reader_init(msg->bytes, msg->len);
    struct pb_field f;
    const char *why = NULL;
    int rc;
    while ((rc = pb_next(&r, &f, &why)) == 1) {
        if (f.wire == PB_VARINT) {
            if (f.number == 3) t->model_type = (int)f.u;
            if (f.number == 35) t->byte_fallback = f.u != 0;
            if (f.number == 24) t->treat_ws_suffix = f.u != 0;
        } else if (f.wire == PB_BYTES) {
            if (f.number == 46) sp_copy_str(t->bos_piece, sizeof t->bos_piece, &f);
            if (f.number == 47) sp_copy_str(t->eos_piece, sizeof t->eos_piece, &f);
            if (f.number == 45) sp_copy_str(t->unk_piece, sizeof t->unk_piece, &f);
            if (f.number == 44) {
                sp_copy_str(t->unk_surface, sizeof t->unk_surface, &f);
                t->has_unk_surface = 1;
            }
        }
    }
    return rc < 0 ? sp_bad(err, path, "trainer_spec", why) : 0;
}

// NormalizerSpec: 2 precompiled_charsmap, 3 add_dummy_prefix, 4 remove_extra_whitespaces,
// 5 escape_whitespaces (the three flags default to true).
static int sp_read_normalizer(struct sp_normalizer *n, const char *path, const struct pb_field *msg, xsa_error *err) {
    struct pb_reader r = pb_reader_init(msg->bytes, msg->len);
    struct pb_field f;
    const char *why = NULL;
    const uint8_t *blob = NULL;
    size_t blob_len = 0;
    int rc;
    n->add_dummy_prefix = n->remove_extra_whitespaces = n->escape_whitespaces = 1;
    while ((rc = pb_next(&r, &f, &why)) == 1) {
        if (f.number == 2 && f.wire == PB_BYTES) {
            blob = f.bytes;
            blob_len = f.len;
        } else if (f.wire == PB_VARINT) {
            if (f.number == 3) n->add_dummy_prefix = f.u != 0;
            if (f.number == 4) n->remove_extra_whitespaces = f.u != 0;
            if (f.number == 5) n->escape_whitespaces = f.u != 0;
        }
    }
    if (rc < 0) return sp_bad(err, path, "normalizer_spec", why);
    if (sp_normalizer_set_charsmap(n, blob, blob_len, &why)) return sp_bad(err, path, "normalizer_spec", why);
    return 0;
}

// PieceToByte: "<0xXX>" (upper-case hex, as ByteToPiece writes it) -> XX, else -1.
static int sp_byte_of(const char *piece, size_t len) {
    static const char hex[] = "0123456789ABCDEF";
    if (len != 6 || memcmp(piece, "<0x", 3) != 0 || piece[5] != '>') return -1;
    const char *hi = memchr(hex, piece[3], 16), *lo = memchr(hex, piece[4], 16);
    if (!hi || !lo || !piece[3] || !piece[4]) return -1;
    return (int)(hi - hex) * 16 + (int)(lo - hex);
}

// Checks the pieces as ModelInterface::InitializePieces does and builds the lookups.
// A piece as a message shows it: its characters when it is UTF-8, except control characters
// (C0, DEL, C1), whose bytes show as \xNN, as every byte of a piece that is not UTF-8 does (a
// damaged file's bytes never reach the terminal raw); cut after 48 bytes, at a character's end.
static const char *shown(const char *s, size_t n, char out[256]) {
    const unsigned char *u = (const unsigned char *)s;
    int plain = pystr_utf8_valid(s, n);
    size_t k = 0, i = 0;
    while (i < n && i < 48) {
        size_t len = 1;
        uint32_t cp = u[i];
        if (plain && u[i] >= 0xC0) {
            len = u[i] >= 0xF0 ? 4 : u[i] >= 0xE0 ? 3 : 2;
            cp = u[i] & (0x3F >> (len - 1));
            for (size_t b = 1; b < len; b++) cp = cp << 6 | (u[i + b] & 0x3F);
        }
        int control = cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (!plain && cp >= 0x80);
        for (size_t b = 0; b < len; b++)
            if (control) k += (size_t)snprintf(out + k, 5, "\\x%02x", u[i + b]);
            else out[k++] = (char)u[i + b];
        i += len;
    }
    if (i < n) memcpy(out + k, "...", 3), k += 3;
    out[k] = '\0';
    return out;
}

static int sp_index_pieces(struct sp_model *m, const struct sp_spec_fields *t, const char *path, xsa_error *err) {
    char sh[256];
    piece_map_init(&m->normal, (const char *const *)m->strs, m->lens, (size_t)m->n);
    piece_map_init(&m->reserved, (const char *const *)m->strs, m->lens, (size_t)m->n);
    int n_user = 0;
    m->unk_id = -1;
    for (int i = 0; i < m->n; i++) {
        int ty = m->types[i];
        int normal = ty == SP_NORMAL || ty == SP_USER_DEFINED || ty == SP_UNUSED;
        if (!piece_map_add(normal ? &m->normal : &m->reserved, i))
            return xsa_fail(err, XSA_EBADINPUT, "%s: corrupt SentencePiece model (piece %d \"%s\" is defined twice); "
                            "re-export the .model file", path, i, shown(m->strs[i], m->lens[i], sh));
        if (ty == SP_USER_DEFINED) n_user++;
        if (ty == SP_UNKNOWN) {
            if (m->unk_id >= 0)
                return xsa_fail(err, XSA_EBADINPUT, "%s: corrupt SentencePiece model (two unknown pieces)", path);
            m->unk_id = i;
        }
        if (ty == SP_BYTE && !t->byte_fallback)
            return xsa_fail(err, XSA_EBADINPUT,
                            "%s: corrupt SentencePiece model (byte piece %d without byte_fallback)", path, i);
        if (ty == SP_BYTE && sp_byte_of(m->strs[i], m->lens[i]) < 0)
            return xsa_fail(err, XSA_EBADINPUT, "%s: corrupt SentencePiece model (byte piece %d is \"%s\", not <0xXX>); "
                            "re-export the .model file", path, i, shown(m->strs[i], m->lens[i], sh));
    }
    if (m->unk_id < 0) return xsa_fail(err, XSA_EBADINPUT, "%s: corrupt SentencePiece model (no unknown piece)", path);
    m->user_syms = xsa_malloc(((size_t)n_user + 1) * sizeof *m->user_syms);
    m->user_lens = xsa_malloc(((size_t)n_user + 1) * sizeof *m->user_lens);
    int k = 0;
    for (int i = 0; i < m->n; i++)
        if (m->types[i] == SP_USER_DEFINED) {
            m->user_syms[k] = m->strs[i];
            m->user_lens[k++] = m->lens[i];
        }
    sp_matcher_init(&m->matcher, (const char *const *)m->user_syms, m->user_lens, n_user);
    for (int b = 0; b < 256; b++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        m->byte_ids[b] = sp_piece_to_id(m, piece, 6);
    }
    return 0;
}

// A tokenizer of the records' lossless-caps transforms has their markers (U+E000 v1, U+E001..E004)
// as user-defined pieces: all four of U+E001..E004 is CaseOps (lossless_caps_caseops_v1), which
// xsa-eval applies; the other versions' sets it refuses, rather than feed the model raw capitals.
static int sp_detect_caseops(struct sp_model *m, const char *path, xsa_error *err) {
    int have = 0;
    for (int k = 0; k <= 4; k++) {
        const char piece[4] = {(char)0xee, (char)0x80, (char)(0x80 + k), 0};
        int32_t id = piece_map_get(&m->normal, piece, 3);
        if (id >= 0 && m->types[id] == SP_USER_DEFINED) have |= 1 << k;
    }
    m->caseops = have == 0x1e;
    if (have && !m->caseops)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the tokenizer of a lossless-caps text transform other than CaseOps (its user-defined markers U+E000..U+E004: 0x%x), "
                        "which xsa-eval does not implement; its model would read capitals it never saw", path, (unsigned)have);
    return 0;
}

static int sp_special_id(const struct sp_model *m, const char *piece) {
    int32_t id = sp_piece_to_id(m, piece, strlen(piece));
    return m->types[id] == SP_CONTROL ? id : -1;
}

static const struct tokenizer_ops sp_ops;

int tokenizer_sp_load(struct tokenizer *t, const char *path, const char *data, size_t len, xsa_error *err) {
    struct sp_model *m = xsa_calloc(1, sizeof *m);
    struct sp_spec_fields spec = {.model_type = SP_UNIGRAM};
    snprintf(spec.bos_piece, sizeof spec.bos_piece, "<s>");
    snprintf(spec.eos_piece, sizeof spec.eos_piece, "</s>");
    snprintf(spec.unk_piece, sizeof spec.unk_piece, "<unk>");
    int rc = 0, n_pieces = 0;
    const char *why = NULL;
    struct pb_field f;
    // Pass 1: count the pieces and check the outer message.
    struct pb_reader r = pb_reader_init(data, len);
    while ((rc = pb_next(&r, &f, &why)) == 1)
        if (f.number == 1 && f.wire == PB_BYTES) n_pieces++;
    if (rc < 0) {
        rc = sp_bad(err, path, "ModelProto", why);
        goto fail;
    }
    if (n_pieces == 0 || n_pieces > SP_MAX_PIECES) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: not a SentencePiece model (%d pieces); expected a .model file", path,
                      n_pieces);
        goto fail;
    }
    m->strs = xsa_calloc((size_t)n_pieces, sizeof *m->strs);
    m->lens = xsa_calloc((size_t)n_pieces, sizeof *m->lens);
    m->scores = xsa_calloc((size_t)n_pieces, sizeof *m->scores);
    m->types = xsa_calloc((size_t)n_pieces, sizeof *m->types);
    m->norm.add_dummy_prefix = m->norm.remove_extra_whitespaces = m->norm.escape_whitespaces = 1;
    // Pass 2: the fields.
    r = pb_reader_init(data, len);
    while ((rc = pb_next(&r, &f, &why)) == 1) {
        rc = 0;  // other fields (self_test_data, unknown ones) are skipped, as protobuf does
        if (f.wire != PB_BYTES) continue;
        if (f.number == 1) rc = sp_read_piece(m, path, &f, err);
        else if (f.number == 2) rc = sp_read_trainer(&spec, path, &f, err);
        else if (f.number == 3) {
            sp_normalizer_free(&m->norm);
            rc = sp_read_normalizer(&m->norm, path, &f, err);
        } else if (f.number == 5) {
            sp_normalizer_free(&m->denorm);
            rc = sp_read_normalizer(&m->denorm, path, &f, err);
            m->has_denorm = m->denorm.units != NULL;
        }
        if (rc) goto fail;
    }
    if (spec.model_type == SP_UNIGRAM) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: unigram SentencePiece models are not supported (BPE only)", path);
        goto fail;
    }
    if (spec.model_type != SP_BPE) {
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: SentencePiece model_type %d (%s) is not supported (BPE only)", path,
                      spec.model_type,
                      spec.model_type == SP_WORD ? "word" : spec.model_type == SP_CHAR ? "char" : "unknown");
        goto fail;
    }
    m->byte_fallback = spec.byte_fallback;
    if ((rc = sp_index_pieces(m, &spec, path, err)) || (rc = sp_detect_caseops(m, path, err))) goto fail;
    m->norm.treat_whitespace_as_suffix = spec.treat_ws_suffix;
    m->norm.matcher = &m->matcher;  // user-defined symbols are kept verbatim
    m->add_dummy_prefix = m->norm.add_dummy_prefix;
    m->remove_extra_whitespaces = m->norm.remove_extra_whitespaces;
    snprintf(m->unk_surface, sizeof m->unk_surface, "%s", spec.has_unk_surface ? spec.unk_surface : " \xE2\x81\x87 ");

    t->kind = TOKENIZER_SENTENCEPIECE;
    t->ops = &sp_ops;
    t->impl = m;
    t->vocab_size = m->n;
    t->bos_id = sp_special_id(m, spec.bos_piece);
    t->eos_id = sp_special_id(m, spec.eos_piece);
    t->adds_bos = t->bos_id >= 0;
    t->caseops = m->caseops;
    m->bos_id = t->bos_id;
    return 0;
fail:
    sp_model_free(m);
    return rc;
}

// ---------------------------------------------------------------- encoding

struct sp_symbol {
    int prev, next;  // neighbours in the live list, -1 at the ends
    uint32_t start, len;  // the piece is norm[start, start + len); len 0 once merged away
    int freeze;      // a user-defined symbol: never merged
};

struct sp_pair {  // a candidate merge of symbols left and right
    float score;
    int left, right;
    uint32_t size;
};

// Max-heap order of bpe_model.cc's agenda: higher score first, then the leftmost.
static int sp_pair_before(const void *pa, const void *pb) {
    const struct sp_pair *a = pa, *b = pb;
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

struct sp_rev {  // rev_merge of bpe_model.cc: how an unused piece was last formed
    int32_t id;
    uint32_t left_len;
};

struct sp_encoder {
    const struct sp_model *m;
    const char *norm;
    struct sp_symbol *sym;
    struct xsa_heap heap;  // of struct sp_pair
    struct sp_rev *rev;
    size_t n_rev, cap_rev;
    struct ivec *out;
    int prev_unk;
};

static void sp_maybe_add_pair(struct sp_encoder *e, int left, int right) {
    if (left < 0 || right < 0 || e->sym[left].freeze || e->sym[right].freeze) return;
    uint32_t size = e->sym[left].len + e->sym[right].len;
    int32_t id = piece_map_get(&e->m->normal, e->norm + e->sym[left].start, size);
    if (id < 0) return;
    struct sp_pair p = {e->m->scores[id], left, right, size};
    xsa_heap_push(&e->heap, &p, sizeof p, sp_pair_before);
    if (e->m->types[id] == SP_UNUSED) {
        XSA_GROW(e->rev, e->cap_rev, e->n_rev + 1);
        e->rev[e->n_rev++] = (struct sp_rev){id, e->sym[left].len};
    }
}

// Emits one final piece as PopulateSentencePieceText does: unknown pieces become byte pieces
// with byte_fallback, else consecutive unknowns fuse into one unk id.
static void sp_emit(struct sp_encoder *e, const char *w, uint32_t len, int32_t id) {
    const struct sp_model *m = e->m;
    int is_unk = m->types[id] == SP_UNKNOWN;
    if (is_unk && m->byte_fallback) {
        for (uint32_t i = 0; i < len; i++) ivec_push(e->out, m->byte_ids[(unsigned char)w[i]]);
    } else if (!(is_unk && e->prev_unk)) {
        ivec_push(e->out, id);
    }
    e->prev_unk = is_unk;
}

// resegment of bpe_model.cc: unused pieces split back into the two pieces that formed them.
static void sp_resegment(struct sp_encoder *e, const char *w, uint32_t len) {
    int32_t id = sp_piece_to_id(e->m, w, len);
    if (e->m->types[id] == SP_UNUSED) {
        for (size_t k = e->n_rev; k-- > 0;)
            if (e->rev[k].id == id) {
                uint32_t l = e->rev[k].left_len;
                sp_resegment(e, w, l);
                sp_resegment(e, w + l, len - l);
                return;
            }
    }
    sp_emit(e, w, len, id);
}

static void sp_bpe(const struct sp_model *m, const char *norm, size_t len, struct ivec *out) {
    if (len == 0) return;
    struct sp_encoder e = {.m = m, .norm = norm, .out = out};
    e.sym = xsa_malloc(len * sizeof *e.sym);  // (at most len symbols,)
    int n = 0;
    for (size_t pos = 0; pos < len; n++) {
        int frozen = 0;
        size_t mblen = sp_matcher_match(&m->matcher, norm + pos, len - pos, &frozen);
        e.sym[n] = (struct sp_symbol){n - 1, pos + mblen < len ? n + 1 : -1, (uint32_t)pos, (uint32_t)mblen, frozen};
        pos += mblen;
    }
    for (int i = 1; i < n; i++) sp_maybe_add_pair(&e, i - 1, i);
    while (e.heap.n) {
        struct sp_pair top;
        xsa_heap_pop(&e.heap, &top, sizeof top, sp_pair_before);
        struct sp_symbol *l = &e.sym[top.left], *r = &e.sym[top.right];
        if (l->len == 0 || r->len == 0 || l->len + r->len != top.size) continue;  // stale
        l->len += r->len;
        l->next = r->next;
        if (r->next >= 0) e.sym[r->next].prev = top.left;
        r->len = 0;
        sp_maybe_add_pair(&e, l->prev, top.left);
        sp_maybe_add_pair(&e, top.left, l->next);
    }
    for (int i = 0; i != -1; i = e.sym[i].next) sp_resegment(&e, norm + e.sym[i].start, e.sym[i].len);
    free(e.sym);
    xsa_heap_free(&e.heap);
    free(e.rev);
}

static int sp_encode(const void *impl, const char *text, size_t len, int add_special, struct ivec *out,
                     xsa_error *err) {
    (void)err;  // encoding a loaded model cannot fail
    const struct sp_model *m = impl;
    struct sbuf norm = {0}, cased = {0};
    if (add_special && m->bos_id >= 0) ivec_push(out, m->bos_id);
    if (m->caseops) {  // the records' text_transform, before the tokenizer (caseops.h)
        caseops_encode(text, len, &cased);
        text = cased.s, len = cased.n;
    }
    sp_normalize(&m->norm, text, len, &norm);
    sp_bpe(m, norm.s ? norm.s : "", norm.n, out);
    sbuf_free(&norm);
    sbuf_free(&cased);
    return 0;
}


// ---------------------------------------------------------------- decoding

// Appends bytes[0..n) (the values of consecutive byte pieces) as ProcessBytePieces does:
// valid UTF-8 characters as they are, each malformed byte as U+FFFD.
static void sp_flush_bytes(struct sbuf *out, const uint8_t *bytes, size_t n) {
    size_t off = 0;
    while (off < n) {
        size_t mblen;
        if (sp_utf8_valid(bytes + off, n - off, &mblen)) sbuf_append(out, (const char *)bytes + off, mblen);
        else sbuf_append(out, "\xef\xbf\xbd", 3);
        off += mblen;
    }
}

static void sp_append_unescaped(struct sbuf *out, const char *s, size_t n) {  // U+2581 -> ' '
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        if (n - i >= 3 && memcmp(s + i, SP_SPACE, 3) == 0) {
            sbuf_append(out, s + i - run, run);
            sbuf_append(out, " ", 1);
            run = 0;
            i += 3;
        } else {
            run++;
            i++;
        }
    }
    sbuf_append(out, s + n - run, run);
}

static int sp_decode(const void *impl, const int32_t *ids, size_t n, struct sbuf *out, xsa_error *err) {
    (void)err;  // decoding checked ids cannot fail
    const struct sp_model *m = impl;
    struct sbuf text = {0};
    uint8_t *bytes = xsa_malloc(n);  // (n,) pending byte-piece values
    size_t n_bytes = 0;
    int is_bos_ws = 1, bos_ws_seen = 0;
    sbuf_append(&text, "", 0);
    for (size_t i = 0; i < n; i++) {
        int32_t id = sp_piece_to_id(m, m->strs[ids[i]], m->lens[ids[i]]);
        if (m->types[id] == SP_BYTE) {
            bytes[n_bytes++] = (uint8_t)sp_byte_of(m->strs[id], m->lens[id]);  // checked at load
            continue;
        }
        sp_flush_bytes(&text, bytes, n_bytes);
        n_bytes = 0;
        if (bos_ws_seen || text.n > 0) is_bos_ws = 0;
        bos_ws_seen = 0;
        if (m->types[id] == SP_CONTROL) continue;  // <s>, </s>: invisible
        if (m->types[id] == SP_UNKNOWN) {
            sbuf_puts(&text, m->unk_surface);
            continue;
        }
        const char *p = m->strs[id];
        size_t len = m->lens[id];
        if (is_bos_ws && (m->add_dummy_prefix || m->remove_extra_whitespaces)) {
            if (len >= 3 && memcmp(p, SP_SPACE, 3) == 0) {
                p += 3;
                len -= 3;
                bos_ws_seen = !m->remove_extra_whitespaces;  // with it, every leading space goes
            }
        }
        sp_append_unescaped(&text, p, len);
    }
    sp_flush_bytes(&text, bytes, n_bytes);
    struct sbuf plain = {0};
    if (m->has_denorm) sp_normalize(&m->denorm, text.s, text.n, m->caseops ? &plain : out);
    else sbuf_append(m->caseops ? &plain : out, text.s, text.n);
    if (m->caseops) caseops_decode(plain.s ? plain.s : "", plain.n, out);  // the capitals back
    sbuf_free(&plain);
    free(bytes);
    sbuf_free(&text);
    return 0;
}

static const struct tokenizer_ops sp_ops = {sp_encode, sp_decode, sp_destroy};

// Bytes per token as parameter-golf's train_gpt.py (build_sentencepiece_luts) counts them.
int tokenizer_sp_byte_luts(const struct tokenizer *t, int n, int16_t *base_bytes, uint8_t *leading_space,
                           uint8_t *boundary, xsa_error *err) {
    if (t->kind != TOKENIZER_SENTENCEPIECE)
        return xsa_fail(err, XSA_EBADINPUT, "%s: bits per byte of a token shard needs a SentencePiece .model "
                        "tokenizer (pass one with --tokenizer)", t->path);
    const struct sp_model *m = t->impl;
    for (int i = 0; i < n; i++) {
        base_bytes[i] = 0;
        leading_space[i] = 0;
        boundary[i] = 1;  // ids past the tokenizer's pieces stay boundaries of zero bytes
        if (i >= m->n) continue;
        int ty = m->types[i];
        if (ty == SP_CONTROL || ty == SP_UNKNOWN || ty == SP_UNUSED) continue;
        boundary[i] = 0;
        if (ty == SP_BYTE) {
            base_bytes[i] = 1;
            continue;
        }
        const char *s = m->strs[i];
        size_t len = m->lens[i];
        if (len >= 3 && !memcmp(s, SP_SPACE, 3)) {
            leading_space[i] = 1;
            len -= 3;
        }
        base_bytes[i] = (int16_t)(len > INT16_MAX ? INT16_MAX : len);
    }
    return 0;
}
