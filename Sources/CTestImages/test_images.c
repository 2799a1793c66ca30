#include "test_images.h"

#include <stdio.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<jpeglib.h>)
#error "jpeglib.h not found: install Debian's libjpeg-dev (apt-get install libjpeg-dev)"
#endif
#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<zlib.h>)
#error "zlib.h not found: install Debian's zlib1g-dev (apt-get install zlib1g-dev)"
#endif
#include <zlib.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} jpeg_errors;

static void jpeg_error_exit(j_common_ptr info) {
    jpeg_errors *errors = (jpeg_errors *)info->err;
    (*info->err->format_message)(info, errors->message);
    longjmp(errors->jump, 1);
}

static int write_jpeg(const char *path, const unsigned char *rgb, int width, int height, int quality,
                      const unsigned char *app1, size_t app1_length, int progressive, char *error, size_t error_size) {
    FILE *file = fopen(path, "wb");
    if (!file) { snprintf(error, error_size, "cannot create %s", path); return -1; }
    struct jpeg_compress_struct info;
    jpeg_errors errors;
    memset(&errors, 0, sizeof errors);
    info.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = jpeg_error_exit;
    jpeg_create_compress(&info);
    if (setjmp(errors.jump)) {
        snprintf(error, error_size, "%s", errors.message);
        jpeg_destroy_compress(&info);
        fclose(file);
        return -1;
    }
    jpeg_stdio_dest(&info, file);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    if (progressive) jpeg_simple_progression(&info);
    jpeg_start_compress(&info, TRUE);
    if (app1 && app1_length > 0) jpeg_write_marker(&info, JPEG_APP0 + 1, app1, (unsigned)app1_length);
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)info.next_scanline * width * 3);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    fclose(file);
    return 0;
}

int um_write_jpeg(const char *path, const unsigned char *rgb, int width, int height, int quality,
                  const unsigned char *app1, size_t app1_length, char *error, size_t error_size) {
    return write_jpeg(path, rgb, width, height, quality, app1, app1_length, 0, error, error_size);
}

int um_write_progressive_jpeg(const char *path, const unsigned char *rgb, int width, int height, int quality,
                              char *error, size_t error_size) {
    return write_jpeg(path, rgb, width, height, quality, NULL, 0, 1, error, error_size);
}

int um_zlib_inflate(const unsigned char *input, size_t input_length, unsigned char *output, size_t output_length) {
    uLongf length = (uLongf)output_length;
    if (uncompress(output, &length, input, (uLong)input_length) != Z_OK) return -1;
    return length == output_length ? 0 : -1;
}
