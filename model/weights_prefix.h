// weights_prefix.h: the name of a wrapper module in front of every tensor name, as a training
// framework saves a model it holds as an attribute (a LightningModule's self.model: its
// checkpoint names model.model.layers.0..., model.lm_head.weight). Dropped when that is
// unambiguous; refused, naming the prefix and how to save the bare model, when it is not.
#ifndef XSA_MODEL_WEIGHTS_PREFIX_H
#define XSA_MODEL_WEIGHTS_PREFIX_H

#include <stddef.h>

#include "common/error.h"
#include "model/safetensors.h"

// anchors[0..n): names the family's loader needs (its embedding), most specific first. When
// none is in st but some tensor is named "<P>" + anchor: with P one leading component ("model.")
// that every tensor name starts with, drops it from every name and copies it to prefix; any
// other P (a deeper path, or tensors outside it, or two such P) is refused (XSA_EBADINPUT),
// naming P. Otherwise nothing changes (prefix ""): the loader names the missing tensor.
// `where` and `family` are for messages.
int weights_drop_prefix(struct safetensors *st, const char *const *anchors, int n, const char *where, const char *family,
                        char *prefix, size_t prefix_n, xsa_error *err);

#endif
