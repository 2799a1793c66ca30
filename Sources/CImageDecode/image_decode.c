#include "image_decode.h"
#include "image_decode_internal.h"

// stdio first: jpeglib.h uses FILE without including it.
#include <stdio.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<jpeglib.h>)
#error "jpeglib.h not found: install Debian's libjpeg-dev (apt-get install libjpeg-dev)"
#endif
#include <jpeglib.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<png.h>)
#error "png.h not found: install Debian's libpng-dev (apt-get install libpng-dev)"
#endif
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// MARK: scaling

/// Box-filters rows arriving top to bottom into a smaller picture, one output row at a time.
/// Each output pixel averages at most SAMPLES x SAMPLES source pixels spread evenly over its
/// box: a 4000-pixel row shrunk to 50 costs 200 additions, not 4000, and still smooths.
#define SAMPLES 4

/// Whether source index `i` (of `n`, shrunk to `m`) is one of the samples of its box.
static int sampled(long long i, long long n, long long m) {
    long long box = i * m / n;
    long long start = (box * n + m - 1) / m, end = ((box + 1) * n + m - 1) / m;
    long long span = end - start;
    if (span <= SAMPLES) return 1;
    long long step = span / SAMPLES;
    long long k = i - start;
    return k % step == step / 2 && k / step < SAMPLES;
}

/// Whether source row `y` is read into the picture at all (others can be skipped).
int um_scaler_wants(const um_scaler *s, int y) {
    return sampled(y, s->source_height, s->height);
}

void um_fit(int sw, int sh, int max_w, int max_h, int *w, int *h) {
    double scale = 1.0;
    if (sw > max_w) scale = (double)max_w / sw;
    if (sh * scale > max_h) scale = (double)max_h / sh;
    *w = (int)(sw * scale + 0.5);
    *h = (int)(sh * scale + 0.5);
    if (*w < 1) *w = 1;
    if (*h < 1) *h = 1;
    if (*w > max_w) *w = max_w;
    if (*h > max_h) *h = max_h;
}

int um_scaler_init(um_scaler *s, int sw, int sh, int w, int h, unsigned char *rgb) {
    memset(s, 0, sizeof *s);
    s->source_width = sw; s->source_height = sh; s->width = w; s->height = h; s->rgb = rgb;
    s->sums = calloc((size_t)w * 3, sizeof(uint32_t));
    s->counts = calloc((size_t)w, sizeof(uint32_t));
    s->column = malloc((size_t)sw * sizeof(int));
    if (!s->sums || !s->counts || !s->column) return -1;
    for (int x = 0; x < sw; x++) s->column[x] = sampled(x, sw, w) ? (int)((long long)x * w / sw) : -1;
    return 0;
}

int um_output(um_image *out, um_scaler *s, int sw, int sh, int max_w, int max_h) {
    int w, h;
    um_fit(sw, sh, max_w, max_h, &w, &h);
    out->width = w;
    out->height = h;
    out->rgb = malloc((size_t)w * h * 3);
    if (!out->rgb) return -1;
    return um_scaler_init(s, sw, sh, w, h, out->rgb);
}

static void um_scaler_flush(um_scaler *s) {
    if (s->row >= s->height) return;
    unsigned char *out = s->rgb + (size_t)s->row * s->width * 3;
    for (int x = 0; x < s->width; x++) {
        uint32_t n = s->counts[x] ? s->counts[x] : 1;
        for (int c = 0; c < 3; c++) out[x * 3 + c] = (unsigned char)((s->sums[x * 3 + c] + n / 2) / n);
    }
    memset(s->sums, 0, (size_t)s->width * 3 * sizeof(uint32_t));
    memset(s->counts, 0, (size_t)s->width * sizeof(uint32_t));
}

/// Adds source row `y` (RGB).
void um_scaler_add(um_scaler *s, int y, const unsigned char *row) {
    int target = (int)((long long)y * s->height / s->source_height);
    while (s->row < target) { um_scaler_flush(s); s->row++; }
    if (!um_scaler_wants(s, y)) return;
    for (int x = 0; x < s->source_width; x++) {
        int o = s->column[x];
        if (o < 0) continue;
        s->sums[o * 3] += row[x * 3];
        s->sums[o * 3 + 1] += row[x * 3 + 1];
        s->sums[o * 3 + 2] += row[x * 3 + 2];
        s->counts[o]++;
    }
}

void um_scaler_finish(um_scaler *s) {
    while (s->row < s->height) { um_scaler_flush(s); s->row++; }
}

void um_scaler_free(um_scaler *s) {
    free(s->sums); free(s->counts); free(s->column);
    s->sums = NULL; s->counts = NULL; s->column = NULL;
}

void um_image_free(um_image *image) {
    if (!image) return;
    free(image->rgb);
    image->rgb = NULL;
    free(image->exif);
    image->exif = NULL;
    image->exif_size = 0;
    free(image->xmp);
    image->xmp = NULL;
    image->xmp_size = 0;
}

int um_fail(um_image *out, const char *message) {
    snprintf(out->error, sizeof out->error, "%s", message);
    free(out->rgb);
    out->rgb = NULL;
    return -1;
}

// MARK: JPEG

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    int warned;
} jpeg_errors;

static void jpeg_error_exit(j_common_ptr info) {
    jpeg_errors *errors = (jpeg_errors *)info->err;
    (*info->err->format_message)(info, errors->message);
    longjmp(errors->jump, 1);
}

static void jpeg_emit(j_common_ptr info, int level) {
    jpeg_errors *errors = (jpeg_errors *)info->err;
    // level -1: a warning (corrupt or truncated data). Keep the first one: a picture decoded
    // from damaged data is not shown as if it were whole.
    if (level < 0 && !errors->warned) {
        errors->warned = 1;
        (*info->err->format_message)(info, errors->message);
    }
}

/// Called by libjpeg as it works, within every scan's reading too: the one place a decode can
/// be stopped before jpeg_start_decompress has read a progressive file's every scan.
typedef struct {
    struct jpeg_progress_mgr base;
    const volatile int *cancel;
    jpeg_errors *errors;
    um_image *out;
} jpeg_watch;

static void jpeg_watch_progress(j_common_ptr common) {
    jpeg_watch *watch = (jpeg_watch *)common->progress;
    if (!common->is_decompressor) return;
    j_decompress_ptr info = (j_decompress_ptr)common;
    watch->out->scans = info->input_scan_number;
    if (watch->cancel && *watch->cancel) {
        snprintf(watch->errors->message, sizeof watch->errors->message, "cancelled");
        longjmp(watch->errors->jump, 1);
    }
    if (info->input_scan_number > UM_JPEG_MAX_SCANS) {
        snprintf(watch->errors->message, sizeof watch->errors->message,
                 "the JPEG has more than %d scans (a normal one has about ten); not previewed", UM_JPEG_MAX_SCANS);
        longjmp(watch->errors->jump, 1);
    }
}

/// Decodes the JPEG read from `file`, and closes it.
static int decode_jpeg(FILE *file, int max_width, int max_height, long long max_progressive_pixels,
                       const volatile int *cancel, um_image *out) {
    struct jpeg_decompress_struct info;
    jpeg_errors errors;
    memset(&errors, 0, sizeof errors);
    info.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = jpeg_error_exit;
    errors.base.emit_message = jpeg_emit;
    // Written after setjmp and read after longjmp: volatile, so never kept in a register.
    unsigned char *volatile line = NULL;
    unsigned char *volatile converted = NULL;
    um_scaler s;
    memset(&s, 0, sizeof s);
    jpeg_create_decompress(&info);
    jpeg_watch watch;
    memset(&watch, 0, sizeof watch);
    watch.base.progress_monitor = jpeg_watch_progress;
    watch.cancel = cancel;
    watch.errors = &errors;
    watch.out = out;
    info.progress = &watch.base;
    if (setjmp(errors.jump)) {
        char message[200];
        snprintf(message, sizeof message, "%s", errors.message);
        jpeg_destroy_decompress(&info);
        fclose(file);
        free(line);
        free(converted);
        um_scaler_free(&s);
        return um_fail(out, message);
    }
    jpeg_stdio_src(&info, file);
    jpeg_read_header(&info, TRUE);
    out->source_width = (int)info.image_width;
    out->source_height = (int)info.image_height;
    if (jpeg_has_multiple_scans(&info) && (long long)info.image_width * info.image_height > max_progressive_pixels) {
        snprintf(errors.message, sizeof errors.message, "a progressive JPEG of %u x %u is too large to preview",
                 info.image_width, info.image_height);
        longjmp(errors.jump, 1);
    }
    int w, h;
    um_fit((int)info.image_width, (int)info.image_height, max_width, max_height, &w, &h);
    // The largest reduction libjpeg does while decoding that still leaves at least the target.
    info.scale_num = 1;
    info.scale_denom = 1;
    for (unsigned denom = 8; denom > 1; denom /= 2) {
        if ((info.image_width + denom - 1) / denom >= (unsigned)w && (info.image_height + denom - 1) / denom >= (unsigned)h) {
            info.scale_denom = denom;
            break;
        }
    }
    // A preview is a few dozen cells wide: the fastest IDCT and plain upsampling lose nothing
    // visible at that size.
    info.dct_method = JDCT_IFAST;
    info.do_fancy_upsampling = FALSE;
    info.do_block_smoothing = FALSE;
    int cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
    info.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&info);
    int sw = (int)info.output_width, sh = (int)info.output_height;
    int components = info.output_components;
    line = malloc((size_t)sw * (components > 3 ? components : 3));
    if (cmyk) converted = malloc((size_t)sw * 3);
    unsigned char *rgb = cmyk ? converted : line;
    if (!line || !rgb || um_output(out, &s, sw, sh, max_width, max_height) != 0) {
        snprintf(errors.message, sizeof errors.message, "out of memory");
        longjmp(errors.jump, 1);
    }
    while (info.output_scanline < info.output_height) {
        if (cancel && *cancel) {
            snprintf(errors.message, sizeof errors.message, "cancelled");
            longjmp(errors.jump, 1);
        }
        int y = (int)info.output_scanline;
        JSAMPROW row = line;
        jpeg_read_scanlines(&info, &row, 1);
        if (!um_scaler_wants(&s, y)) {
            if (errors.warned) longjmp(errors.jump, 1);
            continue;
        }
        if (cmyk) {
            // Adobe writes CMYK JPEGs inverted; others straight.
            for (int x = 0; x < sw; x++) {
                unsigned c = line[x * 4], m = line[x * 4 + 1], yy = line[x * 4 + 2], k = line[x * 4 + 3];
                if (!info.saw_Adobe_marker) { c = 255 - c; m = 255 - m; yy = 255 - yy; k = 255 - k; }
                rgb[x * 3] = (unsigned char)(c * k / 255);
                rgb[x * 3 + 1] = (unsigned char)(m * k / 255);
                rgb[x * 3 + 2] = (unsigned char)(yy * k / 255);
            }
        } else if (components == 1) {
            for (int x = sw - 1; x >= 0; x--) line[x * 3] = line[x * 3 + 1] = line[x * 3 + 2] = line[x];
        }
        um_scaler_add(&s, y, rgb);
        if (errors.warned) longjmp(errors.jump, 1);
    }
    jpeg_finish_decompress(&info);
    if (errors.warned) longjmp(errors.jump, 1);
    out->scans = info.input_scan_number;
    um_scaler_finish(&s);
    um_scaler_free(&s);
    jpeg_destroy_decompress(&info);
    fclose(file);
    free(line);
    free(converted);
    return 0;
}

int um_decode_jpeg(const char *path, int max_width, int max_height, long long max_progressive_pixels,
                   const volatile int *cancel, um_image *out) {
    memset(out, 0, sizeof *out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    FILE *file = fopen(path, "rb");
    if (!file) return um_fail(out, "cannot open the file");
    return decode_jpeg(file, max_width, max_height, max_progressive_pixels, cancel, out);
}

int um_decode_jpeg_bytes(const unsigned char *bytes, size_t size, int max_width, int max_height,
                         const volatile int *cancel, um_image *out) {
    memset(out, 0, sizeof *out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    if (size == 0) return um_fail(out, "no picture");
    FILE *file = fmemopen((void *)bytes, size, "rb");
    if (!file) return um_fail(out, "out of memory");
    // A thumbnail: small, so never a progressive one worth refusing.
    return decode_jpeg(file, max_width, max_height, 4000000, cancel, out);
}

// MARK: PNG

typedef struct {
    jmp_buf jump;
    char message[200];
} png_errors;

static void png_error_fn(png_structp png, png_const_charp message) {
    png_errors *errors = png_get_error_ptr(png);
    snprintf(errors->message, sizeof errors->message, "%s", message);
    longjmp(errors->jump, 1);
}

static void png_warning_fn(png_structp png, png_const_charp message) {
    (void)png; (void)message;
}

int um_decode_png(const char *path, int max_width, int max_height, long long max_interlaced_pixels,
                  const volatile int *cancel, um_image *out) {
    memset(out, 0, sizeof *out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    FILE *file = fopen(path, "rb");
    if (!file) return um_fail(out, "cannot open the file");
    png_errors errors;
    memset(&errors, 0, sizeof errors);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &errors, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_read_struct(&png, NULL, NULL);
        fclose(file);
        return um_fail(out, "out of memory");
    }
    unsigned char *volatile row = NULL;
    unsigned char *volatile rgb = NULL;
    unsigned char *volatile image = NULL;
    um_scaler s;
    memset(&s, 0, sizeof s);
    if (setjmp(errors.jump)) {
        char message[200];
        snprintf(message, sizeof message, "%s", errors.message);
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        free(row); free(rgb); free(image);
        um_scaler_free(&s);
        return um_fail(out, message);
    }
    png_init_io(png, file);
#ifdef PNG_IGNORE_ADLER32
    // The chunks' CRCs already catch damaged data; the zlib checksum on top only costs time.
    png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
    // Pictures of any size are read (row by row), but not absurd ones.
    png_set_user_limits(png, 1000000, 1000000);
    png_read_info(png, info);
    int sw = (int)png_get_image_width(png, info), sh = (int)png_get_image_height(png, info);
    out->source_width = sw;
    out->source_height = sh;
    int color = png_get_color_type(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    rgb = malloc((size_t)sw * 3);
    if (!rgb || um_output(out, &s, sw, sh, max_width, max_height) != 0) {
        snprintf(errors.message, sizeof errors.message, "out of memory");
        longjmp(errors.jump, 1);
    }
    if (passes > 1) {
        if ((long long)sw * sh > max_interlaced_pixels) {
            snprintf(errors.message, sizeof errors.message, "an interlaced PNG of %d x %d is too large to preview", sw, sh);
            longjmp(errors.jump, 1);
        }
        image = malloc(rowbytes * sh);
        if (!image) {
            snprintf(errors.message, sizeof errors.message, "out of memory");
            longjmp(errors.jump, 1);
        }
        for (int pass = 0; pass < passes; pass++) {
            for (int y = 0; y < sh; y++) {
                if (cancel && *cancel) {
                    snprintf(errors.message, sizeof errors.message, "cancelled");
                    longjmp(errors.jump, 1);
                }
                png_read_row(png, image + rowbytes * y, NULL);
            }
        }
    } else {
        row = malloc(rowbytes);
        if (!row) {
            snprintf(errors.message, sizeof errors.message, "out of memory");
            longjmp(errors.jump, 1);
        }
    }
    unsigned char *pixels = rgb; // the loop's copy of the volatile pointer
    for (int y = 0; y < sh; y++) {
        unsigned char *source = image ? image + rowbytes * y : row;
        if (!image) {
            if (cancel && *cancel) {
                snprintf(errors.message, sizeof errors.message, "cancelled");
                longjmp(errors.jump, 1);
            }
            png_read_row(png, row, NULL);
        }
        if (!um_scaler_wants(&s, y)) continue;
        for (int x = 0; x < sw; x++) {
            if (s.column[x] < 0) continue; // a column no output pixel samples
            const unsigned char *p = source + (size_t)x * channels;
            if (channels == 4) {
                um_over_grey(pixels + x * 3, p);
            } else {
                pixels[x * 3] = p[0]; pixels[x * 3 + 1] = p[1]; pixels[x * 3 + 2] = p[2];
            }
        }
        um_scaler_add(&s, y, pixels);
    }
    um_scaler_finish(&s);
    um_scaler_free(&s);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(file);
    free(row); free(rgb); free(image);
    return 0;
}
