#ifndef UPLOADMON_IMAGE_DECODE_INTERNAL_H
#define UPLOADMON_IMAGE_DECODE_INTERNAL_H

// Shared by the decoders of this module; not part of its interface.

#include "image_decode.h"
#include <stdint.h>

/// One axis of a Lanczos resampling: for each output index, the first source index it reads
/// and `taps` weights from there (the same count for all, zero where the filter ends early).
typedef struct {
    int taps;
    int *start; // output count
    float *weights; // output count * taps
} um_axis;

/// Box-filters rows arriving top to bottom into a smaller picture, one output row at a time;
/// or, `fine`, resamples every pixel with a Lanczos-3 filter: each row is filtered across as
/// it arrives into a ring of filtered rows, and an output row is made as soon as the last
/// source row it needs has arrived.
typedef struct {
    int source_width, source_height, width, height;
    int row; // the output row being gathered
    uint32_t *sums; // width * 3
    uint32_t *counts; // width
    int *column; // output column of each source column, -1 for columns not sampled
    unsigned char *rgb;
    int fine;
    um_axis across, down;
    float *ring; // ring_rows rows of width * 3, source rows filtered across
    int ring_rows;
    float *sums_row; // width * 3: an output row being summed
    float *source_row; // source_width * 3: the row being filtered across, as floats
} um_scaler;

int um_scaler_init(um_scaler *s, int sw, int sh, int w, int h, unsigned char *rgb);
/// Whether source row `y` is read into the picture at all (others can be skipped).
int um_scaler_wants(const um_scaler *s, int y);
/// Adds source row `y` (RGB).
void um_scaler_add(um_scaler *s, int y, const unsigned char *row);
void um_scaler_finish(um_scaler *s);
void um_scaler_free(um_scaler *s);
/// The size of a `sw` x `sh` picture fitted into max_w x max_h, aspect kept, never enlarged.
void um_fit(int sw, int sh, int max_w, int max_h, int *w, int *h);
/// Fits a `sw` x `sh` picture into the box, allocates `out`'s pixels at that size and readies
/// `s` to fill them; -1 when out of memory.
int um_output(um_image *out, um_scaler *s, int sw, int sh, int max_w, int max_h);
/// The dark grey transparency lies on: it reads as "transparent" on light and dark terminals.
#define UM_TRANSPARENT_GREY 48

/// What transparency lies on in `out`: grey for a preview, white for a photo written again.
static inline unsigned um_background(const um_image *out) { return out->fine ? 255 : UM_TRANSPARENT_GREY; }

/// Clears `out` for a decode, keeping what the caller asked (`fine`).
void um_image_reset(um_image *out);

/// One RGBA pixel composited over `background` into RGB.
static inline void um_over(unsigned char *rgb, const unsigned char *rgba, unsigned background) {
    unsigned a = rgba[3], back = background * (255 - a);
    rgb[0] = (unsigned char)((rgba[0] * a + back) / 255);
    rgb[1] = (unsigned char)((rgba[1] * a + back) / 255);
    rgb[2] = (unsigned char)((rgba[2] * a + back) / 255);
}

/// Records `message` as the error, frees the pixels, returns -1.
int um_fail(um_image *out, const char *message);

/// Registers with libheif (the handle of the loaded libheif) a libde265 decoder that uses every
/// core; 0 where libheif does not link libde265 itself, and decodes as it always has.
int um_hevc_register(void *libheif);

#endif
