// AVIF through libavif (with dav1d), loaded on first use; libheif where libavif is missing.
//
// libheif 1.15 decodes AVIF too, but hands dav1d its defaults (a thread per core, frames in
// flight) and copies the picture twice: a 12-megapixel AVIF peaked at 180 MiB and took 414 ms.
// libavif runs dav1d with the threads it is given and converts YUV to RGB with libyuv.
// Like libheif it is opened with dlopen, so a start of the program does not load its codecs.

#include "image_decode.h"
#include "image_decode_internal.h"

// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<avif/avif.h>)
#error "avif/avif.h not found: install Debian's libavif-dev (apt-get install libavif-dev)"
#endif
#include <avif/avif.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int loaded;
    avifDecoder *(*decoder_create)(void);
    void (*decoder_destroy)(avifDecoder *);
    avifResult (*decoder_set_io_file)(avifDecoder *, const char *);
    avifResult (*decoder_parse)(avifDecoder *);
    avifResult (*decoder_next_image)(avifDecoder *);
    const char *(*result_to_string)(avifResult);
    void (*rgb_set_defaults)(avifRGBImage *, const avifImage *);
    avifResult (*yuv_to_rgb)(const avifImage *, avifRGBImage *);
    avifBool (*crop_from_clap)(avifCropRect *, const avifCleanApertureBox *, uint32_t, uint32_t, avifPixelFormat, avifDiagnostics *);
    void (*pixel_format_info)(avifPixelFormat, avifPixelFormatInfo *);
} avif;

/// Rows of RGB converted at a time (even: 4:2:0 chroma rows serve two).
#define UM_AVIF_BAND 32

/// The library the headers describe: its structures are read by their layout, so the one
/// loaded must be the one compiled against. The soname follows libavif's own numbering (its
/// CMake SOVERSION), by the headers' version; a libavif not listed stops the build here,
/// rather than loading a library of another layout at run time.
#if AVIF_VERSION_MAJOR == 1
#define UM_AVIF_SONAME "libavif.so.16"
#elif AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 11
#define UM_AVIF_SONAME "libavif.so.15"
#else
#error "this libavif's soname is not known here: add it to UM_AVIF_SONAME by its AVIF_VERSION (see libavif's CMakeLists SOVERSION)"
#endif

static pthread_once_t avif_once = PTHREAD_ONCE_INIT;

static void avif_load(void) {
    void *lib = dlopen(UM_AVIF_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
#define FIND(field, name) \
    if (!(*(void **)&avif.field = dlsym(lib, name))) return;
    FIND(decoder_create, "avifDecoderCreate")
    FIND(decoder_destroy, "avifDecoderDestroy")
    FIND(decoder_set_io_file, "avifDecoderSetIOFile")
    FIND(decoder_parse, "avifDecoderParse")
    FIND(decoder_next_image, "avifDecoderNextImage")
    FIND(result_to_string, "avifResultToString")
    FIND(rgb_set_defaults, "avifRGBImageSetDefaults")
    FIND(yuv_to_rgb, "avifImageYUVToRGB")
    FIND(crop_from_clap, "avifCropRectConvertCleanApertureBox")
    FIND(pixel_format_info, "avifGetPixelFormatInfo")
#undef FIND
    avif.loaded = 1;
}

int um_avif_available(void) {
    pthread_once(&avif_once, avif_load);
    return avif.loaded;
}

static int avif_fail(um_image *out, const char *what, avifResult result) {
    snprintf(out->error, sizeof out->error, "%s: %s", what, avif.result_to_string(result));
    free(out->rgb);
    out->rgb = NULL;
    return -1;
}

/// A copy of `data` as the Exif item stores it: a 4-byte offset to the TIFF header, then what
/// follows (libavif 0.11 hands out what follows the offset, which may start "Exif\0\0").
static void copy_exif(const avifRWData *data, um_image *out) {
    if (!data->data || data->size < 8 || data->size > (1 << 20)) return;
    size_t at = 0;
    while (at + 4 <= data->size && at <= 16) {
        const uint8_t *p = data->data + at;
        if ((p[0] == 'I' && p[1] == 'I' && p[2] == 42 && p[3] == 0) || (p[0] == 'M' && p[1] == 'M' && p[2] == 0 && p[3] == 42)) break;
        at++;
    }
    if (at + 4 > data->size || at > 16) return;
    out->exif = malloc(data->size + 4);
    if (!out->exif) return;
    out->exif[0] = 0, out->exif[1] = 0, out->exif[2] = 0, out->exif[3] = (unsigned char)at;
    memcpy(out->exif + 4, data->data, data->size);
    out->exif_size = data->size + 4;
}

static void copy_xmp(const avifRWData *data, um_image *out) {
    if (!data->data || data->size < 4 || data->size > (1 << 20)) return;
    out->xmp = malloc(data->size);
    if (!out->xmp) return;
    memcpy(out->xmp, data->data, data->size);
    out->xmp_size = data->size;
}

int um_decode_avif(const char *path, int max_width, int max_height, long long max_whole_pixels,
                   const volatile int *cancel, um_image *out) {
    if (!um_avif_available()) return um_decode_heif(path, max_width, max_height, max_whole_pixels, cancel, out);
    um_image_reset(out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    avifDecoder *decoder = avif.decoder_create();
    if (!decoder) return um_fail(out, "out of memory");
    // dav1d's threads: two, not one per core (each thread holds buffers of its own).
    decoder->maxThreads = 2;
    // libavif's own size limit stays its default: a picture beyond ours is refused below, after
    // the parse has its size and before a pixel is decoded, with words that say so.
    avifRGBImage rgb;
    memset(&rgb, 0, sizeof rgb);
    unsigned char *row = NULL;
    um_scaler s;
    memset(&s, 0, sizeof s);
    int result = 0;
    avifResult status = avif.decoder_set_io_file(decoder, path);
    if (status != AVIF_RESULT_OK) { result = avif_fail(out, "cannot open the file", status); goto done; }
    status = avif.decoder_parse(decoder);
    if (status != AVIF_RESULT_OK) { result = avif_fail(out, "not a readable AVIF file", status); goto done; }
    avifImage *image = decoder->image;
    out->images = decoder->imageCount;
    copy_exif(&image->exif, out);
    if (out->fine) {
        out->colour_primaries = (int)image->colorPrimaries;
        out->transfer_characteristics = (int)image->transferCharacteristics;
    }
    if (out->fine && image->icc.size > 0 && image->icc.size <= (4u << 20) && (out->icc = malloc(image->icc.size))) {
        memcpy(out->icc, image->icc.data, image->icc.size);
        out->icc_size = image->icc.size;
    }
    copy_xmp(&image->xmp, out);
    int fw = (int)image->width, fh = (int)image->height;
    if (fw < 1 || fh < 1) { result = um_fail(out, "the AVIF picture has no size"); goto done; }
    out->source_width = fw;
    out->source_height = fh;
    if ((long long)fw * fh > max_whole_pixels) {
        snprintf(out->error, sizeof out->error, "an AVIF picture of %d x %d is too large to preview", fw, fh);
        result = -1;
        goto done;
    }
    if (cancel && *cancel) { result = um_fail(out, "cancelled"); goto done; }
    status = avif.decoder_next_image(decoder);
    if (status != AVIF_RESULT_OK) { result = avif_fail(out, "the AVIF picture cannot be decoded", status); goto done; }
    if (cancel && *cancel) { result = um_fail(out, "cancelled"); goto done; }
    image = decoder->image;
    // The file's own crop, turn and mirror (clap, irot, imir), in that order, as libheif
    // applies them: a clean aperture libavif cannot make a crop of is left out.
    int cx = 0, cy = 0, cw = (int)image->width, ch = (int)image->height;
    if (image->transformFlags & AVIF_TRANSFORM_CLAP) {
        avifCropRect rect;
        avifDiagnostics diagnostics;
        memset(&diagnostics, 0, sizeof diagnostics);
        if (avif.crop_from_clap(&rect, &image->clap, image->width, image->height, image->yuvFormat, &diagnostics)
            && rect.width > 0 && rect.height > 0 && rect.x + rect.width <= image->width && rect.y + rect.height <= image->height) {
            cx = (int)rect.x, cy = (int)rect.y, cw = (int)rect.width, ch = (int)rect.height;
        }
    }
    int turn = (image->transformFlags & AVIF_TRANSFORM_IROT) ? image->irot.angle & 3 : 0;
    int mirror = (image->transformFlags & AVIF_TRANSFORM_IMIR) ? image->imir.mode : -1;
    int sw = turn & 1 ? ch : cw, sh = turn & 1 ? cw : ch;
    out->source_width = sw;
    out->source_height = sh;
    int alpha = image->alphaPlane != NULL;
    size_t pixel = alpha ? 4 : 3;
    // Unturned (most pictures), YUV goes to RGB a band of rows at a time, and only the bands
    // holding rows the scaler reads: not 36 MB of RGB for a 12-megapixel photo. Turned, the
    // shown rows are the picture's columns: all of it at once.
    int banded = turn == 0;
    uint32_t band_rows = banded ? UM_AVIF_BAND : image->height;
    avif.rgb_set_defaults(&rgb, image);
    rgb.depth = 8;
    rgb.format = alpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    // Nearest chroma: a band's edge needs no row of its neighbour, and a preview is scaled down.
    rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_FASTEST;
    rgb.rowBytes = (uint32_t)(rgb.width * pixel);
    rgb.pixels = malloc((size_t)rgb.rowBytes * band_rows);
    row = malloc((size_t)sw * 3);
    if (!rgb.pixels || !row || um_output(out, &s, sw, sh, max_width, max_height) != 0) {
        result = um_fail(out, "out of memory");
        goto done;
    }
    avifPixelFormatInfo format;
    avif.pixel_format_info(image->yuvFormat, &format);
    long long band = -1; // the first row of the band in `rgb`
    for (int y = 0; y < sh; y++) {
        if (!um_scaler_wants(&s, y)) continue;
        if (cancel && *cancel) { result = um_fail(out, "cancelled"); goto done; }
        // Shown pixel (x, y) → the cropped picture's (u, v) → the decoded picture's.
        int my = mirror == 0 ? sh - 1 - y : y;
        if (banded) {
            uint32_t wanted = (uint32_t)(my + cy);
            if (band < 0 || wanted < band || wanted >= band + band_rows) {
                // A view of the decoded planes from an even row (4:2:0's chroma rows are shared by two).
                band = wanted / band_rows * band_rows;
                avifImage view = *image;
                view.height = band + band_rows <= image->height ? band_rows : image->height - (uint32_t)band;
                view.imageOwnsYUVPlanes = AVIF_FALSE;
                view.imageOwnsAlphaPlane = AVIF_FALSE;
                for (int plane = 0; plane < AVIF_PLANE_COUNT_YUV; plane++) {
                    int shift = plane == 0 ? 0 : format.chromaShiftY;
                    if (view.yuvPlanes[plane]) view.yuvPlanes[plane] += (size_t)(band >> shift) * view.yuvRowBytes[plane];
                }
                if (view.alphaPlane) view.alphaPlane += (size_t)band * view.alphaRowBytes;
                rgb.height = view.height;
                status = avif.yuv_to_rgb(&view, &rgb);
                if (status != AVIF_RESULT_OK) { result = avif_fail(out, "the AVIF picture cannot be converted to RGB", status); goto done; }
            }
            if (mirror != 1 && !alpha) {
                um_scaler_add(&s, y, rgb.pixels + (size_t)(wanted - band) * rgb.rowBytes + (size_t)cx * pixel);
                continue;
            }
        } else if (band < 0) {
            band = 0;
            status = avif.yuv_to_rgb(image, &rgb);
            if (status != AVIF_RESULT_OK) { result = avif_fail(out, "the AVIF picture cannot be converted to RGB", status); goto done; }
        }
        for (int x = 0; x < sw; x++) {
            int mx = mirror == 1 ? sw - 1 - x : x;
            int u, v;
            switch (turn) {
            case 1: u = cw - 1 - my, v = mx; break;         // a quarter turn anticlockwise
            case 2: u = cw - 1 - mx, v = ch - 1 - my; break;
            case 3: u = my, v = ch - 1 - mx; break;         // three quarters anticlockwise
            default: u = mx, v = my; break;
            }
            const unsigned char *p = rgb.pixels + (size_t)(v + cy - band) * rgb.rowBytes + (size_t)(u + cx) * pixel;
            if (alpha) {
                um_over(row + (size_t)x * 3, p, um_background(out));
            } else {
                row[x * 3] = p[0], row[x * 3 + 1] = p[1], row[x * 3 + 2] = p[2];
            }
        }
        um_scaler_add(&s, y, row);
    }
    um_scaler_finish(&s);
done:
    um_scaler_free(&s);
    free(row);
    free(rgb.pixels);
    avif.decoder_destroy(decoder);
    return result;
}
