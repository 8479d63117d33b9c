// token_shard.c: the token shard reader (token_shard.h). Every size comes from the file, so each is
// checked against the file's length before a token is read.
#include "eval/token_shard.h"

#include "common/fileio.h"

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int token_shard_parse(const uint8_t *data, size_t len, const char *name, int vocab, struct ivec *out, xsa_error *err) {
    const size_t hdr = TOKEN_SHARD_HEADER_INTS * 4;
    if (len < hdr)
        return xsa_fail(err, XSA_EBADINPUT, "%s: %zu bytes is shorter than a token shard's %zu-byte header", name,
                        len, hdr);
    uint32_t magic = le32(data), version = le32(data + 4), count = le32(data + 8);
    if (magic == 20240326)  // llm.c's model_*.bin header (model/llmc.h): the arguments swapped
        return xsa_fail(err, XSA_EBADINPUT, "%s: an llm.c model checkpoint (magic 20240326), not a token shard; pass it "
                        "with --model and the shard (magic %d) with --tokens-file", name, TOKEN_SHARD_MAGIC);
    if (magic != TOKEN_SHARD_MAGIC && magic != TOKEN_SHARD_MAGIC_LLAMA3)
        return xsa_fail(err, XSA_EBADINPUT, "%s: magic %u is not a token shard's %d (llm.c / parameter-golf .bin) or "
                        "%d (llm.c's Llama 3 shards)", name, magic, TOKEN_SHARD_MAGIC, TOKEN_SHARD_MAGIC_LLAMA3);
    if (magic == TOKEN_SHARD_MAGIC && version != 1 && version != 2)
        return xsa_fail(err, XSA_EBADINPUT, "%s: shard version %u; only 1 (uint16 tokens) and 2 (uint32) exist", name,
                        version);
    if (magic == TOKEN_SHARD_MAGIC_LLAMA3 && version != 7)
        return xsa_fail(err, XSA_EBADINPUT, "%s: shard version %u of llm.c's Llama 3 format; only 7 (uint32 tokens) exists",
                        name, version);
    size_t width = magic == TOKEN_SHARD_MAGIC && version == 1 ? 2 : 4;
    if (count > (uint32_t)INT32_MAX || (size_t)count > (len - hdr) / width || hdr + (size_t)count * width != len)
        return xsa_fail(err, XSA_EBADINPUT, "%s: the header says %u tokens (%zu bytes with the header) but the file "
                        "has %zu bytes; the shard is truncated or not a shard", name, count,
                        hdr + (size_t)count * width, len);
    if (out->n + count > TOKEN_SHARD_MAX_TOKENS)
        return xsa_fail(err, XSA_EBADINPUT, "%s: more than %d tokens in all; score fewer shards at once", name,
                        TOKEN_SHARD_MAX_TOKENS);
    ivec_reserve(out, out->n + count);
    const uint8_t *p = data + hdr;
    size_t n0 = out->n;
    for (uint32_t i = 0; i < count; i++, p += width) {
        uint32_t t = width == 2 ? (uint32_t)p[0] | (uint32_t)p[1] << 8 : le32(p);
        if (t > (uint32_t)INT32_MAX || (vocab > 0 && t >= (uint32_t)vocab)) {
            out->n = n0;  // a refused shard adds nothing
            return xsa_fail(err, XSA_EBADINPUT, "%s: token %u (number %u, byte offset %zu) is outside the vocabulary "
                            "[0, %d); the shard was made with another tokenizer", name, t, i, hdr + (size_t)i * width,
                            vocab);
        }
        out->v[out->n++] = (int32_t)t;
    }
    return 0;
}

int token_shard_read(const char *path, int vocab, struct ivec *out, xsa_error *err) {
    struct mapped_file mf;
    int rc = file_map(path, &mf, err);
    if (rc) return rc;
    rc = token_shard_parse(mf.data, mf.size, path, vocab, out, err);
    file_unmap(&mf);
    return rc;
}
