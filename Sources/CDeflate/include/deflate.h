#ifndef UPLOADMON_DEFLATE_H
#define UPLOADMON_DEFLATE_H

#include <stddef.h>

// zlib's deflate, for the kitty graphics protocol's compressed pictures (`o=z`) and for the
// PNGs tests and benchmarks write.

/// `input` as a zlib stream (RFC 1950) at `level` (0-9) in a buffer of its own (free it with
/// free()): what `*output` points at, `*output_length` bytes. Returns 0, or -1 when out of memory.
int um_zlib_compress(const unsigned char *input, size_t input_length, int level,
                     unsigned char **output, size_t *output_length);

#endif
