// ppl_inputs.c: the documents `ppl` and `probe` score, from what the command line names
// (ppl_inputs.h).
#include "eval/ppl_inputs.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "data/data.h"
#include "eval/token_shard.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "tasks/pystr.h"
#include "tasks/rows.h"
#include "tasks/task.h"

#define PPL_MAX_TASKS 16

struct text_tok {               // how a text document becomes token ids
    const struct tokenizer *tk;
    int pre;                    // ppl_prefix_token, or -1
    int vocab;                  // the model's vocabulary: every id below it
};

// The document's tokens: the prefix token (ppl_prefix_token) then the text without specials;
// without a prefix token the first text token is not scored, and its bytes (as the tokenizer
// decodes it, where that is the text's start) are not counted for bits per byte. `where` names the document.
static int add_text_doc(struct ppl_docs *d, const struct text_tok *t, const char *where, const char *s, size_t n,
                        xsa_error *err) {
    struct ivec ids = {0};
    if (t->pre >= 0) ivec_push(&ids, t->pre);
    int rc = tokenizer_encode(t->tk, s, n, 0, &ids, err);
    for (size_t i = 0; !rc && i < ids.n; i++)
        if (ids.v[i] < 0 || ids.v[i] >= t->vocab)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: %s gives token id %d, outside the model's vocabulary [0, %d): "
                          "pass the tokenizer the model was trained with (--tokenizer)", where, tokenizer_path(t->tk),
                          (int)ids.v[i], t->vocab);
    if (!rc) rc = ppl_docs_add(d, ids.v, ids.n, err);
    double bytes = (double)n;
    if (!rc && ids.n >= 2 && t->pre < 0) {  // the first text token is only context: its bytes are not scored either
        // Its decoded text, as far as it is the document's start: a token holding part of a
        // character decodes to U+FFFD (3 bytes) whatever it covers, and then none of it is taken
        // off (the document counts at most 3 bytes of context as scored).
        struct sbuf first = {0};
        xsa_error none = {0};
        size_t k = 0;
        if (!tokenizer_decode(t->tk, ids.v, 1, &first, &none))
            while (k < first.n && k < n && first.s[k] == s[k]) k++;
        bytes -= (double)k;
        sbuf_free(&first);
    }
    if (!rc && ids.n >= 2) d->bytes += bytes;
    ivec_free(&ids);
    return rc;
}

// One document per record, each line read as a task row is (tasks/rows.h: one UTF-8 JSON object,
// nothing after it, no key twice, no NUL that would cut a text short), one at a time and of any
// length the file may have (a long-context corpus holds megabytes in one record).
static int load_jsonl(struct ppl_docs *d, const struct text_tok *tt, const char *path, const char *field,
                      const char *data, size_t len, xsa_error *err) {
    int rc = 0;
    size_t line_no = 0;
    char where[4200];
    for (size_t pos = 0; pos < len && !rc;) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        snprintf(where, sizeof where, "%s:%zu", path, ++line_no);
        cJSON *row;
        rc = task_row_parse_line(where, data + pos, end - pos, PPL_MAX_TEXT_BYTES, &row, err);
        pos = nl ? end + 1 : len;
        if (rc || !row) continue;
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(row, field);
        if (!cJSON_IsString(f))
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: no string field \"%s\" (choose one with --field)", where, field);
        else rc = add_text_doc(d, tt, where, f->valuestring, strlen(f->valuestring), err);
        cJSON_Delete(row);
    }
    return rc;
}

// --tasks: each document of each task as one text, its context followed by its gold answer (the
// first request's when the label is invalid), in the task's order, the first --limit of each.
static int load_task_docs(const struct ppl_inputs *a, struct ppl_docs *d, const struct text_tok *tt, xsa_error *err) {
    const struct task_def *list[PPL_MAX_TASKS];
    int n_tasks = 0;
    int rc = task_expand_list(a->tasks, list, PPL_MAX_TASKS, &n_tasks, err);
    for (int t = 0; !rc && t < n_tasks; t++) {
        cJSON **rows = NULL;
        int n_rows = 0, n_docs = 0;
        struct data_provenance prov;
        struct task_doc *docs = NULL;
        rc = data_load_task(list[t], a->data, &rows, &n_rows, &prov, err);
        char **names = rc ? NULL : data_row_names(prov.source, n_rows);
        if (!rc) rc = task_docs_from_rows(list[t], rows, names, n_rows, a->limit, &docs, &n_docs, err);
        if (!rc) {
            data_warn_preprocessed(list[t], &prov);
            d->data = xsa_realloc(d->data, (size_t)(d->n_data + 1) * sizeof *d->data);
            d->data[d->n_data++] = (struct ppl_data_src){list[t], prov};
        }
        data_row_names_free(names, n_rows);
        for (int i = 0; !rc && i < n_docs; i++) {
            const struct task_request *q = &docs[i].req[docs[i].gold >= 0 ? docs[i].gold : 0];
            struct sbuf text = {0};
            sbuf_puts(&text, q->context);
            sbuf_puts(&text, q->continuation);
            char where[160];
            snprintf(where, sizeof where, "%s doc %d", list[t]->name, docs[i].doc_id);
            rc = add_text_doc(d, tt, where, text.s, text.n, err);
            sbuf_free(&text);
        }
        task_docs_free(docs, n_docs);
        data_rows_free(rows, n_rows);
    }
    return rc;
}

// --bytes-file: the bytes each of the n stream tokens stands for, from shards of the token
// shards' layout (parameter-golf's load_validation_byte_sidecar: at least n entries, the first n kept).
static int load_byte_sidecar(const struct ppl_inputs *a, size_t n, struct ppl_docs *d, xsa_error *err) {
    struct ivec b = {0};
    int rc = 0;
    for (int i = 0; i < a->n_bytes_files && !rc; i++) rc = token_shard_read(a->bytes_file[i], 0, &b, err);
    if (!rc && b.n < n)
        rc = xsa_fail(err, XSA_EBADINPUT, "--bytes-file %s: %zu byte counts for %zu tokens; give the byte sidecar "
                      "shards written with the token shards, in the same order", a->bytes_file[0], b.n, n);
    // A count no text has (a token of over a MiB, a negative one), or none at all: not a byte sidecar.
    long long total = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (b.v[i] < 0 || b.v[i] > (1 << 20))
            rc = xsa_fail(err, XSA_EBADINPUT, "--bytes-file %s: token %zu stands for %d bytes; a byte sidecar counts "
                          "0 to 1048576 bytes per token: give the fineweb_val_bytes files written with the token shards",
                          a->bytes_file[0], i, (int)b.v[i]);
        total += b.v[i];
    }
    if (!rc && n && !total)
        rc = xsa_fail(err, XSA_EBADINPUT, "--bytes-file %s: every token stands for 0 bytes, so there are no bits per "
                      "byte to report; give the fineweb_val_bytes files written with the token shards", a->bytes_file[0]);
    if (!rc) {
        d->target_bytes = xsa_malloc((n ? n : 1) * sizeof *d->target_bytes);
        memcpy(d->target_bytes, b.v, n * sizeof *d->target_bytes);
    }
    ivec_free(&b);
    return rc;
}

int ppl_inputs_load(const struct ppl_inputs *a, const struct tokenizer *tk, const struct model *m, struct ppl_docs *d,
                     const char **bytes_rule, xsa_error *err) {
    int vocab = m->cfg.vocab_size, pre = ppl_prefix_token(tk, m);
    struct text_tok tt = {tk, pre, vocab};
    d->bytes = 0;
    *bytes_rule = "the UTF-8 bytes of the documents' text";
    if (a->n_shards) {
        struct ivec all = {0};
        int rc = 0;
        size_t first_n = 0;
        for (int i = 0; i < a->n_shards && !rc; i++) {
            rc = token_shard_read(a->shard[i], vocab, &all, err);
            if (!i) first_n = all.n;
        }
        d->stream = 1;
        d->bytes = NAN;
        // The BOS each document starts with, as --split-docs cuts at it: a modded-nanogpt record's
        // BOS_ID, else the tokenizer's, else the checkpoint's (ppl's interval counts documents).
        int bos = m->mng || !tk || tokenizer_bos_id(tk) < 0 ? m->cfg.bos_id : tokenizer_bos_id(tk);
        d->bos = bos >= 0 && bos < vocab ? bos : -1;
        xsa_error why = {0};
        if (!rc && tk && tokenizer_kind(tk) == TOKENIZER_SENTENCEPIECE && !tokenizer_caseops(tk)) {
            rc = ppl_docs_sp_bytes(d, tk, vocab, err);
            *bytes_rule = "each target's piece bytes, +1 for a leading U+2581 after a non-boundary token "
                          "(parameter-golf's eval_val)";
        } else if (tk && tokenizer_caseops(tk)) {  // their markers have no bytes of the text
            *bytes_rule = "unknown: a CaseOps shard's original bytes are in the record's fineweb_val_bytes files (--bytes-file)";
        } else if (!rc && tk && tokenizer_kind(tk) == TOKENIZER_HF_JSON && tokenizer_hf_decoder_byte_level(tk)) {
            rc = ppl_docs_hf_bytes(d, tk, vocab, err);
            *bytes_rule = "each target's raw bytes in the byte-level BPE alphabet, special tokens none (for valid "
                          "UTF-8, the bytes of decode(skip_special_tokens=True))";
        } else if (!rc && tk && tokenizer_kind(tk) == TOKENIZER_HF_JSON && !ppl_docs_hf_bytes(d, tk, vocab, &why)) {
            *bytes_rule = "each target's bytes in the text the tokenizer.json's decoder makes, special tokens none: a "
                          "<0xNN> byte token 1, U+2581 a space, except in a target right after a special token, where "
                          "decode starts a text (its Metaspace drops them, its Strip one leading space); each document "
                          "after a special token adds up to the bytes of decode(skip_special_tokens=True)";
        } else if (!rc && tk && tokenizer_kind(tk) == TOKENIZER_HF_JSON) {
            snprintf(d->bytes_why, sizeof d->bytes_why, "unknown: %s", why.msg);
            *bytes_rule = d->bytes_why;
        } else {
            *bytes_rule = "unknown: shards need a SentencePiece tokenizer (--tokenizer FILE.model) or a "
                          "tokenizer.json";
        }
        if (!rc && a->n_bytes_files) rc = load_byte_sidecar(a, all.n, d, err);
        if (!rc && a->n_bytes_files)
            *bytes_rule = "each target's bytes of the original text, from the byte sidecar (--bytes-file), as a CaseOps "
                          "record's eval_val reads its fineweb_val_bytes files";
        if (!rc && a->split_docs && m->mng) {  // modded-nanogpt's val loss (ppl.h PPL_SPLIT_CHUNKS)
            d->split = PPL_SPLIT_CHUNKS;
            d->doc_start = m->cfg.bos_id;
            d->rank_batch = (a->val_batch_tokens ? a->val_batch_tokens : MNG_DEFAULT_VAL_BATCH) / 8;
            d->val_tokens = a->val_tokens ? a->val_tokens : MNG_DEFAULT_VAL_TOKENS;
            if (d->doc_start < 0)
                rc = xsa_fail(err, XSA_EBADINPUT, "--split-docs: the record's BOS_ID %d (50256 unless xsa_eval.json sets "
                              "BOS_ID) is outside this model's vocabulary of %d ids", m->mng->record_bos, vocab);
            if (!rc && a->n_shards > 1 && first_n < (size_t)d->val_tokens + 2)
                rc = xsa_fail(err, XSA_EBADINPUT, "--tokens-file %s: %zu tokens, and modded-nanogpt's loader would move "
                              "to the next shard within its %ld validation tokens, where xsa-eval reads one stream; "
                              "give a first shard of at least %ld tokens", a->shard[0], first_n, d->val_tokens,
                              d->val_tokens + 2);
        } else if (!rc && a->split_docs) {
            d->split = PPL_SPLIT_EVAL_VAL;
            d->doc_start = tk && tokenizer_bos_id(tk) >= 0 ? tokenizer_bos_id(tk) : m->cfg.bos_id;
            d->ranks = a->ranks ? a->ranks : PPL_DEFAULT_RANKS;
            // eval_val's rank batch: VAL_BATCH_TOKENS // (WORLD_SIZE * GRAD_ACCUM_STEPS), 8 // WORLD_SIZE accumulation
            d->rank_batch = (a->val_batch_tokens ? a->val_batch_tokens : PPL_DEFAULT_VAL_BATCH) / 8;
            if (d->doc_start < 0)
                rc = xsa_fail(err, XSA_EBADINPUT, "--split-docs: no BOS id to split documents at; pass the "
                              "SentencePiece --tokenizer the shards were written with");
        }
        if (!rc) rc = ppl_docs_add(d, all.v, all.n, err);
        ivec_free(&all);
        return rc;
    }
    if (a->tasks) {
        if (!tk) return xsa_fail(err, XSA_EBADINPUT, "--tasks: the documents need a tokenizer; pass --tokenizer");
        *bytes_rule = "the UTF-8 bytes of each document's context and gold answer";
        return load_task_docs(a, d, &tt, err);
    }
    char *data = NULL;
    size_t len = 0;
    const char *path = a->text ? a->text : a->jsonl;
    int rc = file_read_all(path, PPL_MAX_TEXT_BYTES, &data, &len, err);
    if (!rc && !tk) rc = xsa_fail(err, XSA_EBADINPUT, "%s: text needs a tokenizer; pass --tokenizer", path);
    // Bits per byte count the file's bytes, so they must be the text the tokenizer reads (it
    // would read each ill-formed byte as U+FFFD, three bytes).
    size_t bad = !rc && a->text ? pystr_utf8_invalid_at(data, len) : len;
    if (bad < len)
        rc = xsa_fail(err, XSA_EBADINPUT, "%s: not valid UTF-8 at byte %zu (0x%02x); convert the file to UTF-8 "
                      "(e.g. iconv -f LATIN1 -t UTF-8)", path, bad, (unsigned char)data[bad]);
    if (!rc && a->text) rc = add_text_doc(d, &tt, path, data, len, err);
    if (!rc && a->jsonl) rc = load_jsonl(d, &tt, path, a->field, data, len, err);
    free(data);
    return rc;
}
