// cmd_tokenize.c: `xsa-eval tokenize --tokenizer FILE [--jsonl] [--add-special]`.
// Reads stdin line by line and writes the token ids of each line. Plain mode: the text is the
// line without its trailing "\n" (a "\r" before it is kept: it is part of the text); the output
// line is the ids separated by spaces (empty for an empty text). --jsonl: each input line is a
// JSON string (escapes decoded; a lone surrogate becomes U+FFFD) and each output line a JSON
// array of ids. --add-special encodes as add_special_tokens=True (e.g. a BOS from the
// tokenizer's post-processor). Bytes that are not UTF-8 are handled as tokenizer.h says.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "model/tokenizer.h"

enum { F_TOKENIZER = 256, F_JSONL, F_ADD_SPECIAL };

static const struct cli_flag flags[] = {
    {"tokenizer", F_TOKENIZER, "FILE", "tokenizer.json, vocab.json (merges.txt beside it), SentencePiece .model or llama2.c tokenizer.bin (required)"},
    {"jsonl", F_JSONL, NULL, "each input line is a JSON string; each output line a JSON array"},
    {"add-special", F_ADD_SPECIAL, NULL, "add the tokenizer's special tokens (e.g. BOS), as add_special_tokens=True"},
};

static const struct cli_command cmd = {
    "tokenize", "--tokenizer FILE [--jsonl] [--add-special]", "stdin lines -> token ids, one output line per input line.\n",
    flags, 3, 0, 0};

struct tokenize_args {
    const char *path;
    int jsonl, add_special;
};

static int on_flag(void *ctx, int key, const char *v) {
    struct tokenize_args *a = ctx;
    if (key == F_TOKENIZER) a->path = v;
    else if (key == F_JSONL) a->jsonl = 1;
    else a->add_special = 1;
    return 0;
}

static int hex4(const char *s, uint32_t *v) {
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        int x = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (x < 0) return -1;
        *v = *v * 16 + (uint32_t)x;
    }
    return 0;
}

static void put_utf8(struct sbuf *b, uint32_t cp) {
    char t[4];
    size_t n;
    if (cp < 0x80) t[0] = (char)cp, n = 1;
    else if (cp < 0x800) t[0] = (char)(0xC0 | (cp >> 6)), t[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        t[0] = (char)(0xE0 | (cp >> 12)), t[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), t[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        t[0] = (char)(0xF0 | (cp >> 18)), t[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), t[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    sbuf_append(b, t, n);
}

// Decodes one JSON string literal (surrounded by optional whitespace) into *out. 0 or -1.
static int json_string(const char *s, size_t len, struct sbuf *out) {
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
    if (i >= len || s[i++] != '"') return -1;
    sbuf_append(out, "", 0);
    for (;;) {
        if (i >= len) return -1;
        unsigned char c = (unsigned char)s[i++];
        if (c == '"') break;
        if (c < 0x20) return -1;
        if (c != '\\') {
            sbuf_append(out, (const char *)&c, 1);
            continue;
        }
        if (i >= len) return -1;
        char e = s[i++];
        static const char esc[] = "\"\\/bfnrt", map[] = "\"\\/\b\f\n\r\t";
        const char *hit = e ? strchr(esc, e) : NULL;
        if (hit) {
            sbuf_append(out, &map[hit - esc], 1);
            continue;
        }
        uint32_t cp, lo;
        if (e != 'u' || i + 4 > len || hex4(s + i, &cp)) return -1;
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= len && s[i] == '\\' && s[i + 1] == 'u' && !hex4(s + i + 2, &lo) &&
            lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        } else if (cp >= 0xD800 && cp < 0xE000) {
            cp = 0xFFFD;  // a lone surrogate has no UTF-8 form
        }
        put_utf8(out, cp);
    }
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
    return i == len ? 0 : -1;
}

int cmd_tokenize(int argc, char **argv) {
    struct tokenize_args a = {0};
    int n_pos, rc = cli_parse(&cmd, argc, argv, on_flag, &a, NULL, 0, &n_pos);
    if (rc) return rc < 0 ? 0 : rc;
    const char *path = a.path;
    int jsonl = a.jsonl, add_special = a.add_special;
    if (!path) return cli_fail(&cmd, "--tokenizer FILE is required");
    struct tokenizer *t = NULL;
    xsa_error err = {0};
    rc = tokenizer_load(&t, path, &err);
    if (rc) {
        fprintf(stderr, "xsa-eval tokenize: %s\n", err.msg);
        return rc;
    }
    if (tokenizer_class_note(t)) fprintf(stderr, "xsa-eval tokenize: note: %s: %s\n", path, tokenizer_class_note(t));
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    struct ivec ids = {0};
    struct sbuf text = {0}, outl = {0};
    while (!rc && (n = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        size_t len = (size_t)n;
        if (len && line[len - 1] == '\n') len--;
        const char *s = line;
        if (jsonl) {
            text.n = 0;
            if (json_string(line, len, &text)) {
                fprintf(stderr, "xsa-eval tokenize: stdin line %zu: not a JSON string\n", lineno);
                rc = 2;
                break;
            }
            s = text.s;
            len = text.n;
        }
        ids.n = 0;
        rc = tokenizer_encode(t, s, len, add_special, &ids, &err);
        if (rc) {
            fprintf(stderr, "xsa-eval tokenize: stdin line %zu: %s\n", lineno, err.msg);
            break;
        }
        outl.n = 0;
        sbuf_append(&outl, jsonl ? "[" : "", jsonl ? 1 : 0);
        for (size_t k = 0; k < ids.n; k++) sbuf_printf(&outl, k ? (jsonl ? ",%d" : " %d") : "%d", (int)ids.v[k]);
        sbuf_append(&outl, jsonl ? "]\n" : "\n", jsonl ? 2 : 1);
        if (fwrite(outl.s, 1, outl.n, stdout) != outl.n) {
            fprintf(stderr, "xsa-eval tokenize: cannot write the output\n");
            rc = 3;
        }
    }
    if (!rc && fflush(stdout)) {
        fprintf(stderr, "xsa-eval tokenize: cannot write the output\n");
        rc = 3;
    }
    free(line);
    ivec_free(&ids);
    sbuf_free(&text);
    sbuf_free(&outl);
    tokenizer_free(t);
    return rc;
}
