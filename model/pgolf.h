// pgolf.h: parameter-golf checkpoints (openai/parameter-golf and its forks): final_model.pt (a
// torch.save state dict), final_model.int8.ptz (zlib of the int8_clean_per_row_v1 dict) and
// final_model.int6.ptz (zstd, zlib, xz or brotli, the last of a "BSHF" byte-shuffled payload, of
// the int6 {w, m} dict, whose entries are int6, int5 or int8, "gptq (intN)" from 2026-04; or the
// per-group PGRP container of 2026-04-27 9Hp, lrzip streams of the same dict's values). The
// files carry no architecture: it comes from xsa_eval.json beside the file or --arch FILE.json (the family's
// hyperparameter names), checked against the tensor shapes; what the shapes determine is
// inferred. Not for use outside model/.
#ifndef XSA_MODEL_PGOLF_H
#define XSA_MODEL_PGOLF_H

#include <stddef.h>

#include "model/model.h"
#include "model/torch_checkpoint.h"
#include "model/unpickle.h"

#define PG_MAX_TENSORS 65536

enum pg_kind { PG_RAW = 0, PG_Q8 = 1, PG_Q6 = 2, PG_Q5 = 3, PG_Q7 = 4 };

struct pg_entry {
    const char *name;
    const struct pv *t;      // the tensor (RAW), or its int8 values (Q8, Q6, Q5)
    const struct pv *scale;  // per-row (ndim 1) or per-tensor (ndim 0) scales; NULL for RAW
    int kind;                // enum pg_kind
    int bf16;                // restored to bfloat16 (1) or float16 (2), rounded, as the family's code does
    const struct pv *lq[4];  // LQER's low-rank correction (2026-04-27 on): A, its scales, B, its scales; NULL: none
    int lq_asym;             // ... "+lqer_asym": one scale for A, B's per group; else per row of each
    int used;
};

struct pg_tensors {
    const char *path;
    char format[32];         // "int8_clean_per_row_v1" | "int6" | "state_dict"
    struct pg_entry e[PG_MAX_TENSORS];
    int n;
    int32_t slot[2 * PG_MAX_TENSORS];  // the names, hashed (open addressing): entry index + 1; 0 empty
};

// The most bytes an artifact of n bytes may decompress to (a bound on bombs, far above the
// real artifacts' ratio of about 1.1).
size_t pgolf_inflate_cap(size_t n);

// zstd, xz, zlib or brotli bytes -> a malloc'd buffer, a BSHF byte shuffle undone; anything
// else is refused naming the file.
int pgolf_decompress(const unsigned char *d, size_t n, unsigned char **out, size_t *out_n, const char *path, xsa_error *err);

// 1 when the bytes are the per-group container of the 2026-04-27 9Hp record (COMPRESSOR=pergroup).
int pgolf_pgrp_magic(const unsigned char *d, size_t n);

// That container -> the int6 {w, m} dict its _deserialize_pergroup rebuilds, in *root (nodes
// owned by tf->u): "PGRP", the stream count and lengths, seven lrzip streams of int8 values
// by group (_GROUP_ORDER; empty when absent), the brotli of a torch.save {r: the other entries,
// m: the meta, s: each group's shapes}, and the brotli of the uint16 row orders of the groups
// it similarity-sorts. Values are stored transposed per 2-D tensor, rows in that order; they
// come back as the tensors the record saved. Decompressed bytes are kept by file fi of st.
int pgolf_pgrp_open(struct torch_file *tf, struct safetensors *st, int fi, const char *path, const unsigned char *d, size_t n,
                    const struct pv **root, xsa_error *err);

// The unpickled object -> entries (no data copied).
int pgolf_read_root(struct pg_tensors *pt, const struct pv *root, xsa_error *err);

struct pg_entry *pgolf_find(struct pg_tensors *pt, const char *name);

// An entry's values as float32 into dst (numel floats): q * scale, then rounded to the dtype
// the family restores. Refuses int6 values outside [-32, 31], int5 values outside [-16, 15] and
// scales that are 0 or not finite.
int pgolf_dequantize(struct pg_tensors *pt, struct pg_entry *e, float *dst, xsa_error *err);

// 1 for a file this reader takes: a .ptz, or a .pt / .pth with xsa_eval.json beside it or --arch set.
int pgolf_claims(const char *path);

// Loads the artifact at `path` into m.
int pgolf_load(struct model *m, const char *path, xsa_error *err);

#endif
