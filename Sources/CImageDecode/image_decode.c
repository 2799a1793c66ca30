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
#include <math.h>
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
    return s->fine || sampled(y, s->source_height, s->height);
}

static int um_scaler_start(um_scaler *s);

// MARK: Lanczos resampling (`fine`)

#define LANCZOS_A 3.0

static double sinc(double x) {
    if (x == 0) return 1;
    double px = M_PI * x;
    return sin(px) / px;
}

static double lanczos(double x) {
    return (x > -LANCZOS_A && x < LANCZOS_A) ? sinc(x) * sinc(x / LANCZOS_A) : 0;
}

/// The weights that take `n` source samples to `m`: the filter is widened by the reduction
/// (it stays a low-pass filter at the output's rate), each output's weights sum to one, and a
/// window that would leave the picture is moved inside it with zeros where it ends.
static int um_axis_init(um_axis *axis, int n, int m) {
    double scale = (double)n / m;
    double stretch = scale > 1 ? scale : 1;
    double radius = LANCZOS_A * stretch;
    int taps = (int)ceil(radius * 2) + 1;
    if (taps > n) taps = n;
    axis->taps = taps;
    axis->start = malloc((size_t)m * sizeof(int));
    axis->weights = calloc((size_t)m * taps, sizeof(float));
    double *raw = malloc((size_t)taps * sizeof(double));
    if (!axis->start || !axis->weights || !raw) { free(raw); return -1; }
    for (int o = 0; o < m; o++) {
        double center = (o + 0.5) * scale;
        int first = (int)floor(center - radius);
        int last = (int)ceil(center + radius);
        if (first < 0) first = 0;
        if (last > n - 1) last = n - 1;
        int start = first;
        if (start + taps > n) start = n - taps;
        double total = 0;
        for (int k = 0; k < taps; k++) {
            int i = start + k;
            double w = (i >= first && i <= last) ? lanczos((i + 0.5 - center) / stretch) : 0;
            raw[k] = w;
            total += w;
        }
        if (total == 0) { raw[0] = 1; total = 1; }
        axis->start[o] = start;
        for (int k = 0; k < taps; k++) axis->weights[(size_t)o * taps + k] = (float)(raw[k] / total);
    }
    free(raw);
    return 0;
}

static void um_axis_free(um_axis *axis) {
    free(axis->start); free(axis->weights);
    axis->start = NULL; axis->weights = NULL;
}

static unsigned char clamp_byte(float v) {
    if (v <= 0) return 0;
    if (v >= 255) return 255;
    return (unsigned char)(v + 0.5f);
}

/// Source row `y` filtered across into its place in the ring: the row made floats once, then
/// each output pixel the weighted sum of its taps, three channels at a time.
static void um_fine_across(um_scaler *s, int y, const unsigned char *row) {
    float *to = s->ring + (size_t)(y % s->ring_rows) * s->width * 3;
    float *source = s->source_row;
    size_t count = (size_t)s->source_width * 3;
    for (size_t i = 0; i < count; i++) source[i] = row[i];
    int taps = s->across.taps;
    for (int o = 0; o < s->width; o++) {
        const float *p = source + (size_t)s->across.start[o] * 3;
        const float *w = s->across.weights + (size_t)o * taps;
        float r = 0, g = 0, b = 0;
        for (int k = 0; k < taps; k++, p += 3) {
            r += w[k] * p[0];
            g += w[k] * p[1];
            b += w[k] * p[2];
        }
        to[o * 3] = r; to[o * 3 + 1] = g; to[o * 3 + 2] = b;
    }
}

/// Makes every output row whose source rows have all arrived (up to `last`): each filtered row
/// is added in whole, weighted, into one row of sums (a loop the compiler vectorises).
static void um_fine_down(um_scaler *s, int last) {
    int taps = s->down.taps;
    size_t stride = (size_t)s->width * 3;
    float *sums = s->sums_row;
    while (s->row < s->height && s->down.start[s->row] + taps - 1 <= last) {
        unsigned char *out = s->rgb + (size_t)s->row * stride;
        const float *w = s->down.weights + (size_t)s->row * taps;
        int start = s->down.start[s->row];
        memset(sums, 0, stride * sizeof(float));
        for (int k = 0; k < taps; k++) {
            float weight = w[k];
            if (weight == 0) continue;
            const float *from = s->ring + (size_t)((start + k) % s->ring_rows) * stride;
            for (size_t i = 0; i < stride; i++) sums[i] += weight * from[i];
        }
        for (size_t i = 0; i < stride; i++) out[i] = clamp_byte(sums[i]);
        s->row++;
    }
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
    return um_scaler_start(s);
}

static int um_scaler_start(um_scaler *s) {
    int sw = s->source_width, w = s->width, h = s->height, sh = s->source_height;
    if (s->fine) {
        // Every column is read; the ring holds the rows one output row needs.
        s->column = calloc((size_t)sw, sizeof(int));
        if (!s->column || um_axis_init(&s->across, sw, w) != 0 || um_axis_init(&s->down, sh, h) != 0) return -1;
        s->ring_rows = s->down.taps;
        s->ring = malloc((size_t)s->ring_rows * w * 3 * sizeof(float));
        s->sums_row = malloc((size_t)w * 3 * sizeof(float));
        s->source_row = malloc((size_t)sw * 3 * sizeof(float));
        return s->ring && s->sums_row && s->source_row ? 0 : -1;
    }
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
    memset(s, 0, sizeof *s);
    s->source_width = sw; s->source_height = sh; s->width = w; s->height = h; s->rgb = out->rgb;
    s->fine = out->fine;
    return um_scaler_start(s);
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
    if (s->fine) {
        um_fine_across(s, y, row);
        um_fine_down(s, y);
        return;
    }
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
    if (s->fine) {
        um_fine_down(s, s->source_height - 1);
        return;
    }
    while (s->row < s->height) { um_scaler_flush(s); s->row++; }
}

void um_scaler_free(um_scaler *s) {
    free(s->sums); free(s->counts); free(s->column); free(s->ring); free(s->sums_row); free(s->source_row);
    s->sums = NULL; s->counts = NULL; s->column = NULL; s->ring = NULL; s->sums_row = NULL; s->source_row = NULL;
    um_axis_free(&s->across);
    um_axis_free(&s->down);
}

void um_image_reset(um_image *out) {
    int fine = out->fine;
    memset(out, 0, sizeof *out);
    out->fine = fine;
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
    free(image->icc);
    image->icc = NULL;
    image->icc_size = 0;
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
    if (out->fine) jpeg_save_markers(&info, JPEG_APP0 + 2, 0xFFFF);
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
    // visible at that size. A photo written again gets the accurate ones.
    info.dct_method = out->fine ? JDCT_ISLOW : JDCT_IFAST;
    info.do_fancy_upsampling = out->fine ? TRUE : FALSE;
    info.do_block_smoothing = FALSE;
    if (out->fine) {
        JOCTET *icc = NULL;
        unsigned int icc_size = 0;
        if (jpeg_read_icc_profile(&info, &icc, &icc_size) && icc) {
            out->icc = icc;
            out->icc_size = icc_size;
        }
    }
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
    um_image_reset(out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    FILE *file = fopen(path, "rb");
    if (!file) return um_fail(out, "cannot open the file");
    return decode_jpeg(file, max_width, max_height, max_progressive_pixels, cancel, out);
}

int um_decode_jpeg_bytes(const unsigned char *bytes, size_t size, int max_width, int max_height,
                         const volatile int *cancel, um_image *out) {
    um_image_reset(out);
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
    um_image_reset(out);
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
    png_charp icc_name = NULL;
    png_bytep icc = NULL;
    png_uint_32 icc_size = 0;
    int compression = 0;
    if (out->fine && png_get_iCCP(png, info, &icc_name, &compression, &icc, &icc_size) && icc && icc_size > 0) {
        out->icc = malloc(icc_size);
        if (out->icc) { memcpy(out->icc, icc, icc_size); out->icc_size = icc_size; }
    }
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
                um_over(pixels + x * 3, p, um_background(out));
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
