#ifndef UPLOADMON_TEST_IMAGES_H
#define UPLOADMON_TEST_IMAGES_H

#include <stddef.h>

// Writing pictures for tests and benchmarks (the product only reads them): JPEG through
// libjpeg (PNGs are written by PNGEncoder, their zlib streams by CDeflate), and reading back
// the zlib streams the monitor sends kitty.

/// Writes `rgb` (width x height, 3 bytes per pixel) as a baseline JPEG, with `app1` (an EXIF
/// segment's payload, starting "Exif\0\0") when not NULL. Returns 0, or -1 with `error` set.
int um_write_jpeg(const char *path, const unsigned char *rgb, int width, int height, int quality,
                  const unsigned char *app1, size_t app1_length, char *error, size_t error_size);

/// The same as a progressive JPEG (libjpeg's standard scan script).
int um_write_progressive_jpeg(const char *path, const unsigned char *rgb, int width, int height, int quality,
                              char *error, size_t error_size);

/// Inflates the zlib stream `input` into `output`, which it must fill exactly (a picture's
/// size is known): 0, or -1 when the stream is broken or of another length.
int um_zlib_inflate(const unsigned char *input, size_t input_length, unsigned char *output, size_t output_length);

#endif
