// A HEVC decoder for libheif that uses every core.
//
// libheif 1.15 (Debian 12) decodes a HEIC's picture through libde265 with one worker thread,
// so a 12 MP photo takes over a second on one core while the others wait. libde265 itself
// decodes a wavefront-coded picture (what x265 and phones write) on several threads. This is
// libheif's own libde265 plugin (libheif/plugins/heif_decoder_libde265.cc, v1.15.1) again,
// with the worker threads set to the cores, registered with a higher priority than the
// built-in one. The pixels are the same: libde265 decodes the same stream either way.
//
// libde265 is found through libheif's own handle (dlsym searches a library's dependencies), so
// no second library name is written here. Where libheif does not link libde265 itself (libheif
// 1.17 and later load it as a plugin of their own), nothing is registered and libheif decodes
// as it always has.
#include "image_decode.h"
#include "image_decode_internal.h"

#include <dlfcn.h>
#include <libheif/heif.h>
#include <libheif/heif_plugin.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

// libde265's C API (de265.h, stable since 1.0), declared here: libde265-dev is not needed.
typedef struct um_de265_context um_de265_context;
typedef struct um_de265_image um_de265_image;

static struct {
    int (*init)(void);
    um_de265_context *(*new_decoder)(void);
    int (*start_worker_threads)(um_de265_context *, int);
    int (*push_nal)(um_de265_context *, const void *, int, int64_t, void *);
    int (*flush_data)(um_de265_context *);
    int (*decode)(um_de265_context *, int *);
    const um_de265_image *(*get_next_picture)(um_de265_context *);
    void (*release_next_picture)(um_de265_context *);
    int (*free_decoder)(um_de265_context *);
    int (*get_chroma_format)(const um_de265_image *);
    int (*get_image_width)(const um_de265_image *, int);
    int (*get_image_height)(const um_de265_image *, int);
    int (*get_bits_per_pixel)(const um_de265_image *, int);
    const uint8_t *(*get_image_plane)(const um_de265_image *, int, int *);
    // Optional (libde265 1.0.7): the colour description in the stream's VUI.
    int (*colour_primaries)(const um_de265_image *);
    int (*transfer_characteristics)(const um_de265_image *);
    int (*matrix_coefficients)(const um_de265_image *);
    int (*full_range_flag)(const um_de265_image *);
    // libheif's side.
    struct heif_error (*image_create)(int, int, enum heif_colorspace, enum heif_chroma, struct heif_image **);
    struct heif_error (*image_add_plane)(struct heif_image *, enum heif_channel, int, int, int);
    uint8_t *(*image_get_plane)(struct heif_image *, enum heif_channel, int *);
    void (*image_release)(const struct heif_image *);
    struct heif_color_profile_nclx *(*nclx_alloc)(void);
    void (*nclx_free)(struct heif_color_profile_nclx *);
    struct heif_error (*image_set_nclx)(struct heif_image *, const struct heif_color_profile_nclx *);
    int threads;
} de265;

static const struct heif_error hevc_ok = {heif_error_Ok, heif_suberror_Unspecified, "Success"};

static struct heif_error hevc_error(const char *message) {
    struct heif_error error = {heif_error_Decoder_plugin_error, heif_suberror_Unspecified, message};
    return error;
}

static const char *hevc_name(void) { return "libde265 HEVC decoder on every core (uploadmon)"; }
static void hevc_init(void) { de265.init(); }
static void hevc_deinit(void) {}

/// Above libheif's own libde265 plugin (100), below nothing else that decodes HEVC.
static int hevc_supports(enum heif_compression_format format) { return format == heif_compression_HEVC ? 110 : 0; }

static struct heif_error hevc_new(void **decoder) {
    um_de265_context *context = de265.new_decoder();
    if (!context) return hevc_error("libde265 could not make a decoder");
    de265.start_worker_threads(context, de265.threads);
    *decoder = context;
    return hevc_ok;
}

static void hevc_free(void *decoder) { de265.free_decoder(decoder); }

/// libheif hands over NAL units, each after its length in four bytes (big-endian).
static struct heif_error hevc_push(void *decoder, const void *data, size_t size) {
    const uint8_t *bytes = data;
    size_t at = 0;
    while (at < size) {
        if (size - at < 4) return hevc_error("a HEVC unit's length is cut short");
        uint32_t length = (uint32_t)bytes[at] << 24 | (uint32_t)bytes[at + 1] << 16 | (uint32_t)bytes[at + 2] << 8 | bytes[at + 3];
        at += 4;
        if (length > size - at || length > INT32_MAX) return hevc_error("a HEVC unit runs past the data");
        de265.push_nal(decoder, bytes + at, (int)length, 0, NULL);
        at += length;
    }
    return hevc_ok;
}

/// The decoded planes copied into a libheif image, as libheif's own plugin does.
static struct heif_error hevc_copy(const um_de265_image *picture, struct heif_image **out) {
    int chroma = de265.get_chroma_format(picture);
    if (chroma < 0 || chroma > 3) return hevc_error("the HEVC picture has an unknown chroma format");
    int mono = chroma == 0;
    int width = de265.get_image_width(picture, 0), height = de265.get_image_height(picture, 0);
    if (width < 1 || height < 1) return hevc_error("the HEVC picture has no size");
    struct heif_error error = de265.image_create(width, height, mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                                 (enum heif_chroma)chroma, out);
    if (error.code != heif_error_Ok) return error;
    static const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    int bits = de265.get_bits_per_pixel(picture, 0);
    for (int c = 0; c < (mono ? 1 : 3); c++) {
        int stride = 0;
        const uint8_t *plane = de265.get_image_plane(picture, c, &stride);
        int w = de265.get_image_width(picture, c), h = de265.get_image_height(picture, c);
        if (de265.get_bits_per_pixel(picture, c) != bits) error = hevc_error("the HEVC picture's planes differ in depth");
        else if (!plane || w < 1 || h < 1 || bits < 1 || bits > 16) error = hevc_error("the HEVC picture has an empty plane");
        else error = de265.image_add_plane(*out, channels[c], w, h, bits);
        int to_stride = 0;
        uint8_t *to = error.code == heif_error_Ok ? de265.image_get_plane(*out, channels[c], &to_stride) : NULL;
        if (error.code == heif_error_Ok && !to) error = hevc_error("out of memory");
        if (error.code != heif_error_Ok) {
            de265.image_release(*out);
            *out = NULL;
            return error;
        }
        size_t row = (size_t)w * (size_t)((bits + 7) / 8);
        for (int y = 0; y < h; y++) memcpy(to + (size_t)y * to_stride, plane + (size_t)y * stride, row);
    }
    if (de265.colour_primaries && de265.nclx_alloc && de265.image_set_nclx) {
        struct heif_color_profile_nclx *nclx = de265.nclx_alloc();
        if (nclx) {
            nclx->color_primaries = (enum heif_color_primaries)de265.colour_primaries(picture);
            nclx->transfer_characteristics = (enum heif_transfer_characteristics)de265.transfer_characteristics(picture);
            nclx->matrix_coefficients = (enum heif_matrix_coefficients)de265.matrix_coefficients(picture);
            nclx->full_range_flag = (uint8_t)(de265.full_range_flag(picture) != 0);
            de265.image_set_nclx(*out, nclx);
            de265.nclx_free(nclx);
        }
    }
    return hevc_ok;
}

static struct heif_error hevc_decode(void *decoder, struct heif_image **out) {
    *out = NULL;
    de265.flush_data(decoder);
    int more = 0;
    do {
        more = 0;
        if (de265.decode(decoder, &more) != 0) break;
        const um_de265_image *picture = de265.get_next_picture(decoder);
        if (picture) {
            if (*out) de265.image_release(*out);
            *out = NULL;
            struct heif_error error = hevc_copy(picture, out);
            de265.release_next_picture(decoder);
            if (error.code != heif_error_Ok) return error;
        }
    } while (more);
    return *out ? hevc_ok : hevc_error("the HEVC stream decoded to no picture");
}

static void hevc_strict(void *decoder, int flag) {
    (void)decoder;
    (void)flag;
}

static const struct heif_decoder_plugin hevc_plugin = {
    3, hevc_name, hevc_init, hevc_deinit, hevc_supports, hevc_new, hevc_free, hevc_push, hevc_decode, hevc_strict,
    "uploadmon-libde265",
};

static int hevc_registered = 0;

int um_heif_decode_threads(void) {
    um_heif_available(NULL, 0);
    return hevc_registered ? de265.threads : 1;
}

int um_hevc_register(void *libheif) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 2) return 0;  // one core: libheif's own plugin is the same
    de265.threads = cores > 8 ? 8 : (int)cores;
    struct heif_error (*register_plugin)(const struct heif_decoder_plugin *);
#define FIND(field, name) \
    if (!(*(void **)&de265.field = dlsym(libheif, name))) return 0;
    FIND(init, "de265_init")
    FIND(new_decoder, "de265_new_decoder")
    FIND(start_worker_threads, "de265_start_worker_threads")
    FIND(push_nal, "de265_push_NAL")
    FIND(flush_data, "de265_flush_data")
    FIND(decode, "de265_decode")
    FIND(get_next_picture, "de265_get_next_picture")
    FIND(release_next_picture, "de265_release_next_picture")
    FIND(free_decoder, "de265_free_decoder")
    FIND(get_chroma_format, "de265_get_chroma_format")
    FIND(get_image_width, "de265_get_image_width")
    FIND(get_image_height, "de265_get_image_height")
    FIND(get_bits_per_pixel, "de265_get_bits_per_pixel")
    FIND(get_image_plane, "de265_get_image_plane")
    FIND(image_create, "heif_image_create")
    FIND(image_add_plane, "heif_image_add_plane")
    FIND(image_get_plane, "heif_image_get_plane")
    FIND(image_release, "heif_image_release")
#undef FIND
    if (!(*(void **)&register_plugin = dlsym(libheif, "heif_register_decoder_plugin"))) return 0;
    *(void **)&de265.colour_primaries = dlsym(libheif, "de265_get_image_colour_primaries");
    *(void **)&de265.transfer_characteristics = dlsym(libheif, "de265_get_image_transfer_characteristics");
    *(void **)&de265.matrix_coefficients = dlsym(libheif, "de265_get_image_matrix_coefficients");
    *(void **)&de265.full_range_flag = dlsym(libheif, "de265_get_image_full_range_flag");
    if (!de265.transfer_characteristics || !de265.matrix_coefficients || !de265.full_range_flag) de265.colour_primaries = NULL;
    *(void **)&de265.nclx_alloc = dlsym(libheif, "heif_nclx_color_profile_alloc");
    *(void **)&de265.nclx_free = dlsym(libheif, "heif_nclx_color_profile_free");
    *(void **)&de265.image_set_nclx = dlsym(libheif, "heif_image_set_nclx_color_profile");
    if (!de265.nclx_free) de265.nclx_alloc = NULL;
    hevc_registered = register_plugin(&hevc_plugin).code == heif_error_Ok;
    return hevc_registered;
}
