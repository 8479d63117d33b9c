// torch_zip.h: the zip container of torch.save, read from a file mapping. The central
// directory is parsed here (bounded: every offset and size checked against the mapping), so
// stored members, which is how torch.save writes them, are used in place; deflated members are
// inflated by libzip once and cached. Encrypted members and multi-disk archives are refused.
#ifndef XSA_MODEL_TORCH_ZIP_H
#define XSA_MODEL_TORCH_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define TZ_MAX_MEMBERS (1 << 20)

struct tz_member {
    char *name;                 // NUL-terminated copy of the member's name
    int method;                 // 0 stored, 8 deflated
    uint64_t size;              // uncompressed bytes
    uint64_t comp_size;
    const unsigned char *raw;   // (comp_size) the member's bytes inside the mapping
    unsigned char *inflated;    // (size) a deflated member once read; NULL until then
};

struct torch_zip {
    const char *path;           // for messages
    const unsigned char *data;  // (size) the whole file
    size_t size;
    struct tz_member *members;  // (n) in central-directory order
    struct tz_member **by_name; // (n) sorted by name, for lookups; names are unique
    int n;
    void *za;                   // libzip handle over `data`, opened on the first deflated read
};

// 1 when the bytes start like a zip archive (a local file header).
int torch_zip_magic(const unsigned char *data, size_t size);

int torch_zip_open(struct torch_zip *z, const char *path, const unsigned char *data, size_t size, xsa_error *err);

// The member called `name`, or NULL.
struct tz_member *torch_zip_find(const struct torch_zip *z, const char *name);

// The member's uncompressed bytes: in place for a stored member, inflated (once) otherwise.
int torch_zip_read(struct torch_zip *z, struct tz_member *m, const unsigned char **out, xsa_error *err);

void torch_zip_close(struct torch_zip *z);

#endif
