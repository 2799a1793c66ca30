// Writing a photo again (`--convert`, `--max-dimension`): JPEG through libjpeg-turbo and WebP
// through libwebp, in memory, with the metadata the caller chose.

#include "image_decode.h"

// stdio first: jpeglib.h uses FILE without including it.
#include <stdio.h>
#if defined(__has_include) && !__has_include(<jpeglib.h>)
#error "jpeglib.h not found: install Debian's libjpeg-dev (apt-get install libjpeg-dev)"
#endif
#include <jpeglib.h>
#if defined(__has_include) && !__has_include(<webp/encode.h>)
#error "webp/encode.h not found: install Debian's libwebp-dev (apt-get install libwebp-dev)"
#endif
#include <webp/encode.h>
#if defined(__has_include) && !__has_include(<webp/mux.h>)
#error "webp/mux.h not found: install Debian's libwebp-dev (apt-get install libwebp-dev)"
#endif
#include <webp/mux.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

// MARK: JPEG

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
} encode_errors;

static void encode_error_exit(j_common_ptr info) {
    encode_errors *errors = (encode_errors *)info->err;
    longjmp(errors->jump, 1);
}

/// APP1 holds at most 65,533 bytes: "Exif\0\0" and the TIFF structure.
#define UM_EXIF_MAX (65533 - 6)

int um_encode_jpeg(const unsigned char *rgb, int width, int height, int quality,
                   const unsigned char *exif, size_t exif_size, const unsigned char *icc, size_t icc_size,
                   unsigned char **bytes, size_t *size, char *error, size_t error_size) {
    *bytes = NULL;
    *size = 0;
    if (width < 1 || height < 1 || !rgb) { snprintf(error, error_size, "no picture to write"); return -1; }
    if (exif && exif_size > UM_EXIF_MAX) { snprintf(error, error_size, "the EXIF is too large for a JPEG"); return -1; }
    struct jpeg_compress_struct info;
    encode_errors errors;
    info.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = encode_error_exit;
    // Written after setjmp and read after longjmp: volatile, so never kept in a register.
    unsigned char *volatile buffer = NULL;
    unsigned long buffer_size = 0;
    unsigned char *volatile app1 = NULL;
    jpeg_create_compress(&info);
    if (setjmp(errors.jump)) {
        char message[JMSG_LENGTH_MAX];
        (*errors.base.format_message)((j_common_ptr)&info, message);
        snprintf(error, error_size, "cannot write the JPEG: %s", message);
        jpeg_destroy_compress(&info);
        free(buffer);
        free(app1);
        return -1;
    }
    unsigned char *out = NULL;
    jpeg_mem_dest(&info, &out, &buffer_size);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    info.dct_method = JDCT_ISLOW;
    info.optimize_coding = TRUE;
    if (quality >= 90) {
        // As cjpeg and most exporters: no chroma subsampling at the highest qualities.
        info.comp_info[0].h_samp_factor = 1;
        info.comp_info[0].v_samp_factor = 1;
    }
    jpeg_start_compress(&info, TRUE);
    if (exif && exif_size > 0) {
        app1 = malloc(exif_size + 6);
        if (!app1) { snprintf(error, error_size, "out of memory"); jpeg_destroy_compress(&info); return -1; }
        memcpy(app1, "Exif\0\0", 6);
        memcpy(app1 + 6, exif, exif_size);
        jpeg_write_marker(&info, JPEG_APP0 + 1, app1, (unsigned)(exif_size + 6));
    }
    if (icc && icc_size > 0) jpeg_write_icc_profile(&info, icc, (unsigned)icc_size);
    size_t stride = (size_t)width * 3;
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + info.next_scanline * stride);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    buffer = out;
    jpeg_destroy_compress(&info);
    free(app1);
    *bytes = out;
    *size = buffer_size;
    return 0;
}

// MARK: WebP

int um_encode_webp(const unsigned char *rgb, int width, int height, int quality,
                   const unsigned char *exif, size_t exif_size, const unsigned char *icc, size_t icc_size,
                   unsigned char **bytes, size_t *size, char *error, size_t error_size) {
    *bytes = NULL;
    *size = 0;
    if (width < 1 || height < 1 || !rgb) { snprintf(error, error_size, "no picture to write"); return -1; }
    if (width > WEBP_MAX_DIMENSION || height > WEBP_MAX_DIMENSION) {
        snprintf(error, error_size, "WebP holds at most %d x %d pixels; this photo is %d x %d (use --max-dimension)",
                 WEBP_MAX_DIMENSION, WEBP_MAX_DIMENSION, width, height);
        return -1;
    }
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) { snprintf(error, error_size, "the WebP encoder does not match its header"); return -1; }
    config.quality = (float)(quality < 1 ? 1 : quality > 100 ? 100 : quality);
    config.method = 4;
    picture.use_argb = 0;
    picture.width = width;
    picture.height = height;
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    if (!WebPPictureImportRGB(&picture, rgb, width * 3)) {
        WebPPictureFree(&picture);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    int ok = WebPEncode(&config, &picture);
    int code = picture.error_code;
    WebPPictureFree(&picture);
    if (!ok) {
        WebPMemoryWriterClear(&writer);
        snprintf(error, error_size, "cannot write the WebP (libwebp error %d)", code);
        return -1;
    }
    if ((!exif || exif_size == 0) && (!icc || icc_size == 0)) {
        *bytes = writer.mem;
        *size = writer.size;
        return 0;
    }
    // With metadata: the extended format, assembled by libwebpmux.
    WebPMux *mux = WebPMuxNew();
    WebPData image = {writer.mem, writer.size}, assembled = {NULL, 0};
    int failed = !mux || WebPMuxSetImage(mux, &image, 0) != WEBP_MUX_OK;
    if (!failed && exif && exif_size > 0) {
        WebPData chunk = {exif, exif_size};
        failed = WebPMuxSetChunk(mux, "EXIF", &chunk, 1) != WEBP_MUX_OK;
    }
    if (!failed && icc && icc_size > 0) {
        WebPData chunk = {icc, icc_size};
        failed = WebPMuxSetChunk(mux, "ICCP", &chunk, 1) != WEBP_MUX_OK;
    }
    if (!failed) failed = WebPMuxAssemble(mux, &assembled) != WEBP_MUX_OK;
    if (mux) WebPMuxDelete(mux);
    WebPMemoryWriterClear(&writer);
    if (failed) {
        WebPDataClear(&assembled);
        snprintf(error, error_size, "cannot write the WebP's metadata");
        return -1;
    }
    *bytes = (unsigned char *)assembled.bytes;
    *size = assembled.size;
    return 0;
}
