#ifndef UPLOADMON_IMAGE_DECODE_H
#define UPLOADMON_IMAGE_DECODE_H

#include <stddef.h>

/// A decoded picture, scaled down while decoding to fit a box: 8-bit RGB, rows top to bottom.
typedef struct {
    /// Input, set by the caller before decoding (every other field is cleared): decode for a
    /// photo that is written again rather than for a preview: the accurate IDCT and smooth
    /// chroma upsampling for JPEG, every source pixel resampled with a Lanczos-3 filter
    /// (rather than a box over a few samples), the file's own pixels rather than a thumbnail,
    /// the colour profile kept in `icc`, and transparency laid on white rather than grey.
    int fine;
    /// The picture's own size, as the file says.
    int source_width;
    int source_height;
    /// The size of `rgb` (3 bytes per pixel, no padding).
    int width;
    int height;
    unsigned char *rgb;
    /// Why decoding failed (empty when it did not).
    char error[200];
    /// JPEG: how many scans the decoder had begun when it stopped (a progressive file has a
    /// few; a crafted one thousands, each costing a pass over every coefficient).
    int scans;
    /// HEIF: the primary picture's Exif block as the file stores it (a 4-byte offset to the
    /// TIFF header, then the header), or NULL.
    unsigned char *exif;
    size_t exif_size;
    /// HEIF: the primary picture's XMP item (`mime`, application/rdf+xml), or NULL.
    unsigned char *xmp;
    size_t xmp_size;
    /// With `fine`: the picture's ICC colour profile (JPEG's APP2 chunks joined, PNG's iCCP
    /// inflated, WebP's ICCP, HEIF's and AVIF's colr profile), or NULL when it has none.
    unsigned char *icc;
    size_t icc_size;
    /// HEIF: how many pictures the file holds at its top level (a burst holds several); AVIF:
    /// how many frames (an animation has several). 0 where not counted.
    int images;
    /// With `fine`, HEIF and AVIF: the colour description the file gives instead of (or beside)
    /// a profile (ITU-T H.273 code points: 12 is Display P3's primaries, 13 the sRGB curve);
    /// 0 where it gives none.
    int colour_primaries;
    int transfer_characteristics;
} um_image;

/// At most this many scans of a JPEG are read (as djpeg -maxscans): a normal progressive
/// JPEG has about ten; one whose scans were repeated thousands of times is refused.
#define UM_JPEG_MAX_SCANS 100

/// Decodes the JPEG at `path` to fit within max_width x max_height (aspect kept, never
/// enlarged), using libjpeg's scaled decoding (1/2 .. 1/8) and then a box filter, one scanline
/// at a time. `cancel`, when not NULL, is polled through libjpeg's progress monitor, which it
/// calls as it reads the coefficients of every scan as well as between scanlines: non-zero stops
/// with an error. More than UM_JPEG_MAX_SCANS scans are refused.
/// A progressive JPEG needs all its coefficients in memory: it is refused above
/// `max_progressive_pixels`. Returns 0 on success; otherwise `error` says why. Free with
/// um_image_free either way.
int um_decode_jpeg(const char *path, int max_width, int max_height, long long max_progressive_pixels,
                   const volatile int *cancel, um_image *out);

/// The same for a JPEG held in memory (an embedded thumbnail), progressive ones up to 4 MP.
int um_decode_jpeg_bytes(const unsigned char *bytes, size_t size, int max_width, int max_height,
                         const volatile int *cancel, um_image *out);

/// The same for PNG through libpng (any bit depth, palette, grey, alpha composited over dark
/// grey). Non-interlaced images are read row by row, so memory stays at a few rows whatever
/// their size; interlaced ones are refused above `max_interlaced_pixels`.
int um_decode_png(const char *path, int max_width, int max_height, long long max_interlaced_pixels,
                  const volatile int *cancel, um_image *out);

/// WebP through libwebp: lossy pictures are decoded incrementally (fed 64 KiB at a time,
/// `cancel` polled in between) and scaled by the decoder, so memory stays at the output and a
/// few rows; lossless and transparent ones are held whole while decoding and refused above
/// `max_whole_pixels`. An animation shows its first frame; alpha is composited over dark grey.
int um_decode_webp(const char *path, int max_width, int max_height, long long max_whole_pixels,
                   const volatile int *cancel, um_image *out);

/// HEIF, HEIC and AVIF through libheif, loaded on first use (dlopen). libheif applies the
/// file's own turns, mirrors and crop (irot, imir, clap); the EXIF orientation must not be
/// applied on top. When the primary picture carries a thumbnail with the pixels the box needs,
/// the thumbnail is decoded instead. libheif cannot stop half-way: `cancel` is polled before
/// and after the decode. Pictures above `max_whole_pixels` are refused (libheif decodes whole).
int um_decode_heif(const char *path, int max_width, int max_height, long long max_whole_pixels,
                   const volatile int *cancel, um_image *out);

/// AVIF through libavif (dav1d, two threads), loaded on first use (dlopen); through
/// `um_decode_heif` where libavif cannot be loaded. The file's crop, turn and mirror (clap,
/// irot, imir) are applied, alpha composited over dark grey; the EXIF and XMP items are copied
/// as `um_decode_heif` copies them. `cancel` is polled before and after the decode and between
/// rows; pictures above `max_whole_pixels` are refused before decoding.
int um_decode_avif(const char *path, int max_width, int max_height, long long max_whole_pixels,
                   const volatile int *cancel, um_image *out);

/// Whether libavif could be loaded.
int um_avif_available(void);

/// GIF through giflib: the first frame on its canvas (what lies outside it, and the
/// transparent colour, on dark grey), row by row; an interlaced frame is held whole (a byte a
/// pixel) and refused above `max_whole_pixels`. `cancel` is polled between rows.
int um_decode_gif(const char *path, int max_width, int max_height, long long max_whole_pixels,
                  const volatile int *cancel, um_image *out);

/// A HEIF's largest thumbnail (of the picture's shape) fitted to the box, for a first picture;
/// fails when there is none.
int um_decode_heif_thumbnail(const char *path, int max_width, int max_height, um_image *out);

/// Whether libheif could be loaded; if not, `why` (when not NULL) says so.
int um_heif_available(char *why, size_t why_size);

/// The threads libde265 decodes a HEIC's picture on: the cores (at most 8) where libheif links
/// libde265 itself and this process's own decoder is registered with it, else 1 (libheif's).
int um_heif_decode_threads(void);

void um_image_free(um_image *image);

/// Writes `rgb` (`width` x `height`, 3 bytes a pixel) as a baseline JPEG in memory at
/// `quality` (1-100; 4:2:0 below 90, 4:4:4 from 90, as cjpeg), with optimised Huffman tables,
/// the accurate DCT, a JFIF header, `exif` (a TIFF structure, written as APP1 "Exif") and `icc`
/// (APP2 ICC_PROFILE chunks) when given. The same pixels and settings always give the same
/// bytes. Returns 0 and sets `*bytes` (free with free()) and `*size`; otherwise -1 and `error`.
int um_encode_jpeg(const unsigned char *rgb, int width, int height, int quality,
                   const unsigned char *exif, size_t exif_size, const unsigned char *icc, size_t icc_size,
                   unsigned char **bytes, size_t *size, char *error, size_t error_size);

/// The same as lossy WebP through libwebp (`quality` 1-100, method 4), with `exif` (a TIFF
/// structure) and `icc` in an extended (VP8X) file when given.
int um_encode_webp(const unsigned char *rgb, int width, int height, int quality,
                   const unsigned char *exif, size_t exif_size, const unsigned char *icc, size_t icc_size,
                   unsigned char **bytes, size_t *size, char *error, size_t error_size);

#endif
