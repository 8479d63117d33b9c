// safetensors.h: read-only access to a safetensors checkpoint, one file or sharded.
// Layout of a file: u64 LE header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the
// data region; offsets are relative to its start. Every entry is validated at open time
// (known dtype, offsets inside the data region, end - begin == numel * dtype size, and, as the
// reference library demands, the tensors tile the data region without gap or overlap), so a
// reader never touches bytes outside the mapping.
#ifndef XSA_MODEL_SAFETENSORS_H
#define XSA_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/fileio.h"

#define ST_MAX_HEADER_BYTES (100u << 20)  // the reference library's own limit
#define ST_MAX_DIMS 8
#define ST_MAX_SHARDS 1024

enum st_dtype { ST_F32 = 1, ST_F16 = 2, ST_BF16 = 3, ST_OTHER = 4 };  // OTHER: valid, not loadable

struct st_tensor {
    char *name;
    enum st_dtype dtype;
    char dtype_name[12];
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const unsigned char *data;  // inside the file's mapping
    size_t nbytes;
    int file;                   // index into safetensors.files
    int used;                   // set by callers that consume the tensor
    int linear;                 // a GPT-2 Conv1D weight stored as nn.Linear (out, in), not (in, out)
};

struct st_file {
    char *path;
    struct mapped_file mf;
    void **owned;               // (n_owned) buffers tensors of this file point into (torch files)
    size_t n_owned;
};

struct safetensors {
    struct st_file *files;      // (n_files) in sorted file-name order
    int n_files;
    struct st_tensor *tensors;  // (n_tensors)
    int n_tensors, cap_tensors;
    int32_t *index;             // (index_mask + 1) hash of tensor names -> tensor index, -1 empty
    size_t index_mask;
    char format[16];            // "safetensors" | "pytorch" | "llmc": what the files are
};

// Opens `dir`/model.safetensors, or every shard named by `dir`/model.safetensors.index.json;
// when neither is there, `dir`/pytorch_model.bin or the shards of pytorch_model.bin.index.json
// (torch.save files, read by model/torch_checkpoint.c).
int safetensors_open_dir(struct safetensors *st, const char *dir, xsa_error *err);

// Opens one file (used by the above; exposed for tests).
int safetensors_open_file(struct safetensors *st, const char *path, xsa_error *err);

// Adds an entry for `path` to st->files (not yet mapped) and sets *fi to its index.
int safetensors_add_file(struct safetensors *st, const char *path, int *fi, xsa_error *err);

// Adds a tensor of file `fi` whose bytes are `data` (nbytes, row-major, little-endian);
// `dtype_name` is a safetensors dtype ("F32", "I8", ...). A name seen before is refused.
int safetensors_add_tensor(struct safetensors *st, int fi, const char *name, const char *dtype_name, int ndim,
                           const int64_t *shape, const unsigned char *data, size_t nbytes, xsa_error *err);

// Hands `buf` (malloc'd) to file `fi`: freed by safetensors_close.
void safetensors_keep(struct safetensors *st, int fi, void *buf);

// The tensor called `name`, or NULL.
struct st_tensor *safetensors_find(const struct safetensors *st, const char *name);

// Drops the first `len` bytes of every tensor's name (a prefix they all share, checked by the
// caller, so the names stay distinct) and re-indexes them.
void safetensors_drop_prefix(struct safetensors *st, size_t len);

// Converts a F32/F16/BF16 tensor to float32 into dst (numel floats, same row-major order);
// refuses one holding NaN or Inf (safetensors_check_finite).
int safetensors_read_f32(const struct safetensors *st, const struct st_tensor *t, float *dst,
                         xsa_error *err);

// Refuses a F32/F16/BF16 tensor whose values, `vals` (numel floats: converted, or the mapping
// itself for F32), hold a NaN or an Inf, naming the file, the tensor and the element.
int safetensors_check_finite(const struct safetensors *st, const struct st_tensor *t, const float *vals,
                             xsa_error *err);

// SHA-256 identity of the weights: for one file its SHA-256; for shards, the SHA-256 of the
// concatenated 64-hex-digit digests of the shard files in sorted file-name order.
int safetensors_sha256(const struct safetensors *st, char out[65], xsa_error *err);

void safetensors_close(struct safetensors *st);

float st_f16_to_f32(uint16_t h);
float st_bf16_to_f32(uint16_t b);

#endif
