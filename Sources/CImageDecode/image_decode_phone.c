// WebP (libwebp, linked) and HEIF/HEIC/AVIF (libheif, loaded on first use) for previews.
//
// libheif is opened with dlopen the first time a HEIF file is previewed, not linked: it brings
// libde265, dav1d, aom and x265 along, which would cost every start of the program (a `send`
// too) their loading and relocation, and a machine without libheif still runs everything else.

#include "image_decode.h"
#include "image_decode_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<libheif/heif.h>)
#error "libheif/heif.h not found: install Debian's libheif-dev (apt-get install libheif-dev)"
#endif
#include <libheif/heif.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<webp/decode.h>)
#error "webp/decode.h not found: install Debian's libwebp-dev (apt-get install libwebp-dev)"
#endif
#include <webp/decode.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<webp/demux.h>)
#error "webp/demux.h not found: install Debian's libwebp-dev (apt-get install libwebp-dev)"
#endif
#include <webp/demux.h>

/// A row of RGBA pixels over `out`'s background, as PNG's alpha.
static void composite(unsigned char *rgb, const unsigned char *rgba, size_t pixels, const um_image *out) {
    for (size_t i = 0; i < pixels; i++) um_over(rgb + i * 3, rgba + i * 4, um_background(out));
}

// MARK: WebP

/// The whole file, read (not mapped: a file truncated under a mapping kills the process).
static unsigned char *read_file(const char *path, size_t limit, size_t *size, char *error, size_t error_size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { snprintf(error, error_size, "cannot open the file: %s", strerror(errno)); return NULL; }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 0) { close(fd); snprintf(error, error_size, "cannot read the file"); return NULL; }
    if ((unsigned long long)st.st_size > limit) {
        close(fd);
        snprintf(error, error_size, "a file of %lld MB is too large to preview", (long long)st.st_size / 1000000);
        return NULL;
    }
    size_t want = (size_t)st.st_size;
    unsigned char *data = malloc(want ? want : 1);
    if (!data) { close(fd); snprintf(error, error_size, "out of memory"); return NULL; }
    size_t filled = 0;
    while (filled < want) {
        ssize_t n = read(fd, data + filled, want - filled);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        filled += (size_t)n;
    }
    close(fd);
    *size = filled;
    return data;
}

/// WebP files are read whole; beyond this a "photo" is not one.
#define UM_WEBP_MAX_FILE (256u << 20)

/// A decoded WebP picture resampled into `out` (`fine`).
static int webp_resample(const WebPDecBuffer *buffer, int alpha, int max_width, int max_height, um_image *out) {
    um_scaler s;
    memset(&s, 0, sizeof s);
    unsigned char *row = malloc((size_t)buffer->width * 3);
    if (!row || um_output(out, &s, buffer->width, buffer->height, max_width, max_height) != 0) {
        free(row);
        um_scaler_free(&s);
        return um_fail(out, "out of memory");
    }
    for (int y = 0; y < buffer->height; y++) {
        const uint8_t *source = buffer->u.RGBA.rgba + (size_t)y * buffer->u.RGBA.stride;
        if (alpha) composite(row, source, (size_t)buffer->width, out);
        um_scaler_add(&s, y, alpha ? row : source);
    }
    um_scaler_finish(&s);
    um_scaler_free(&s);
    free(row);
    return 0;
}

/// A WebP's ICCP chunk, copied into `out` (`fine`).
static void webp_copy_icc(const unsigned char *data, size_t size, um_image *out) {
    WebPData whole = {data, size};
    WebPDemuxer *demux = WebPDemux(&whole);
    if (!demux) return;
    WebPChunkIterator chunk;
    if (WebPDemuxGetChunk(demux, "ICCP", 1, &chunk)) {
        if (chunk.chunk.size > 0 && (out->icc = malloc(chunk.chunk.size))) {
            memcpy(out->icc, chunk.chunk.bytes, chunk.chunk.size);
            out->icc_size = chunk.chunk.size;
        }
        WebPDemuxReleaseChunkIterator(&chunk);
    }
    WebPDemuxDelete(demux);
}

int um_decode_webp(const char *path, int max_width, int max_height, long long max_whole_pixels,
                   const volatile int *cancel, um_image *out) {
    um_image_reset(out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    size_t size = 0;
    unsigned char *data = read_file(path, UM_WEBP_MAX_FILE, &size, out->error, sizeof out->error);
    if (!data) return -1;
    const uint8_t *bitstream = data;
    size_t bitstream_size = size;
    WebPDemuxer *demux = NULL;
    WebPIterator frame;
    memset(&frame, 0, sizeof frame);
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) { free(data); return um_fail(out, "the WebP decoder does not match its header"); }
    VP8StatusCode status = WebPGetFeatures(bitstream, bitstream_size, &config.input);
    if (status != VP8_STATUS_OK) { free(data); return um_fail(out, status == VP8_STATUS_NOT_ENOUGH_DATA ? "the WebP file is cut short" : "not a valid WebP file"); }
    int canvas_width = config.input.width, canvas_height = config.input.height;
    if (out->fine) webp_copy_icc(data, size, out);
    if (config.input.has_animation) {
        // An animation shows its first frame.
        WebPData whole = {data, size};
        demux = WebPDemux(&whole);
        if (!demux || !WebPDemuxGetFrame(demux, 1, &frame)) {
            if (demux) WebPDemuxDelete(demux);
            free(data);
            return um_fail(out, "the animated WebP has no readable first frame");
        }
        bitstream = frame.fragment.bytes;
        bitstream_size = frame.fragment.size;
        status = WebPGetFeatures(bitstream, bitstream_size, &config.input);
        if (status != VP8_STATUS_OK) {
            WebPDemuxReleaseIterator(&frame); WebPDemuxDelete(demux); free(data);
            return um_fail(out, "the animated WebP's first frame cannot be read");
        }
    }
    int sw = config.input.width, sh = config.input.height;
    out->source_width = canvas_width;
    out->source_height = canvas_height;
    // Lossy pictures are decoded row by row, scaled as they come; lossless ones and alpha planes
    // are held whole at their own size while decoding.
    if ((config.input.format == 2 || config.input.has_alpha) && (long long)sw * sh > max_whole_pixels) {
        if (demux) { WebPDemuxReleaseIterator(&frame); WebPDemuxDelete(demux); }
        free(data);
        snprintf(out->error, sizeof out->error, "a %s WebP of %d x %d is too large to preview",
                 config.input.format == 2 ? "lossless" : "transparent", sw, sh);
        return -1;
    }
    int w, h;
    um_fit(sw, sh, max_width, max_height, &w, &h);
    // A photo written again is resampled here (Lanczos) rather than by the decoder.
    config.options.use_scaling = !out->fine && (w != sw || h != sh);
    config.options.scaled_width = w;
    config.options.scaled_height = h;
    // A second thread for the loop filter: the preview worker is one thread, the machine has more.
    config.options.use_threads = 1;
    config.output.colorspace = config.input.has_alpha ? MODE_RGBA : MODE_RGB;
    WebPIDecoder *idec = WebPIDecode(NULL, 0, &config);
    int result = 0;
    if (!idec) {
        result = um_fail(out, "out of memory");
    } else {
        // Fed a slice at a time, so a cancel lands within a slice's rows.
        const size_t slice = 64 << 10;
        size_t given = 0;
        status = VP8_STATUS_SUSPENDED;
        while (status == VP8_STATUS_SUSPENDED && given < bitstream_size) {
            if (cancel && *cancel) { result = um_fail(out, "cancelled"); break; }
            size_t next = bitstream_size - given < slice ? bitstream_size : given + slice;
            status = WebPIUpdate(idec, bitstream, next);
            given = next;
        }
        if (result == 0 && status != VP8_STATUS_OK) {
            result = um_fail(out, status == VP8_STATUS_SUSPENDED || status == VP8_STATUS_NOT_ENOUGH_DATA
                                  ? "the WebP file is cut short" : "the WebP picture is damaged");
        }
        if (result == 0 && out->fine) {
            result = webp_resample(&config.output, config.input.has_alpha, max_width, max_height, out);
        } else if (result == 0) {
            WebPDecBuffer *buffer = &config.output;
            int channels = config.input.has_alpha ? 4 : 3;
            out->width = buffer->width;
            out->height = buffer->height;
            out->rgb = malloc((size_t)out->width * out->height * 3);
            if (!out->rgb) {
                result = um_fail(out, "out of memory");
            } else {
                const uint8_t *rows = buffer->u.RGBA.rgba;
                int stride = buffer->u.RGBA.stride;
                for (int y = 0; y < out->height; y++) {
                    const uint8_t *row = rows + (size_t)y * stride;
                    unsigned char *to = out->rgb + (size_t)y * out->width * 3;
                    if (channels == 4) composite(to, row, (size_t)out->width, out);
                    else memcpy(to, row, (size_t)out->width * 3);
                }
            }
        }
        WebPIDelete(idec);
    }
    WebPFreeDecBuffer(&config.output);
    if (demux) { WebPDemuxReleaseIterator(&frame); WebPDemuxDelete(demux); }
    free(data);
    return result;
}

// MARK: HEIF

/// The libheif functions used here, found once.
static struct {
    int loaded;
    char why[160];
    struct heif_context *(*context_alloc)(void);
    void (*context_free)(struct heif_context *);
    struct heif_error (*context_read_from_file)(struct heif_context *, const char *, const struct heif_reading_options *);
    struct heif_error (*context_get_primary_image_handle)(struct heif_context *, struct heif_image_handle **);
    void (*image_handle_release)(const struct heif_image_handle *);
    int (*image_handle_get_width)(const struct heif_image_handle *);
    int (*image_handle_get_height)(const struct heif_image_handle *);
    int (*image_handle_has_alpha_channel)(const struct heif_image_handle *);
    int (*image_handle_get_number_of_thumbnails)(const struct heif_image_handle *);
    int (*image_handle_get_list_of_thumbnail_IDs)(const struct heif_image_handle *, heif_item_id *, int);
    struct heif_error (*image_handle_get_thumbnail)(const struct heif_image_handle *, heif_item_id, struct heif_image_handle **);
    const char *(*image_handle_get_metadata_content_type)(const struct heif_image_handle *, heif_item_id);
    int (*image_handle_get_list_of_metadata_block_IDs)(const struct heif_image_handle *, const char *, heif_item_id *, int);
    size_t (*image_handle_get_metadata_size)(const struct heif_image_handle *, heif_item_id);
    struct heif_error (*image_handle_get_metadata)(const struct heif_image_handle *, heif_item_id, void *);
    struct heif_error (*decode_image)(const struct heif_image_handle *, struct heif_image **, enum heif_colorspace,
                                      enum heif_chroma, const struct heif_decoding_options *);
    const uint8_t *(*image_get_plane_readonly)(const struct heif_image *, enum heif_channel, int *);
    int (*image_get_width)(const struct heif_image *, enum heif_channel);
    int (*image_get_height)(const struct heif_image *, enum heif_channel);
    void (*image_release)(const struct heif_image *);
    // Optional: the colour profile (a photo written again keeps it).
    int (*context_get_number_of_top_level_images)(struct heif_context *);
    size_t (*image_handle_get_raw_color_profile_size)(const struct heif_image_handle *);
    struct heif_error (*image_handle_get_raw_color_profile)(const struct heif_image_handle *, void *);
    struct heif_error (*image_handle_get_nclx_color_profile)(const struct heif_image_handle *, struct heif_color_profile_nclx **);
    void (*nclx_color_profile_free)(struct heif_color_profile_nclx *);
} heif;

/// libheif keeps its soname at its major version (libheif.so.1 for every 1.x), taken from the
/// headers compiled against: another major stops the build rather than loading a stranger.
#if (LIBHEIF_NUMERIC_VERSION >> 24) == 1
#define UM_HEIF_SONAME "libheif.so.1"
#else
#error "a libheif other than 1.x: check its soname and the functions found below"
#endif

static pthread_once_t heif_once = PTHREAD_ONCE_INIT;

static void heif_load(void) {
    void *lib = dlopen(UM_HEIF_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(heif.why, sizeof heif.why, "HEIF and AVIF need libheif (Debian: apt-get install libheif1)");
        return;
    }
#define FIND(field, name) \
    if (!(*(void **)&heif.field = dlsym(lib, name))) { \
        snprintf(heif.why, sizeof heif.why, "this libheif lacks %s", name); \
        return; \
    }
    FIND(context_alloc, "heif_context_alloc")
    FIND(context_free, "heif_context_free")
    FIND(context_read_from_file, "heif_context_read_from_file")
    FIND(context_get_primary_image_handle, "heif_context_get_primary_image_handle")
    FIND(image_handle_release, "heif_image_handle_release")
    FIND(image_handle_get_width, "heif_image_handle_get_width")
    FIND(image_handle_get_height, "heif_image_handle_get_height")
    FIND(image_handle_has_alpha_channel, "heif_image_handle_has_alpha_channel")
    FIND(image_handle_get_number_of_thumbnails, "heif_image_handle_get_number_of_thumbnails")
    FIND(image_handle_get_list_of_thumbnail_IDs, "heif_image_handle_get_list_of_thumbnail_IDs")
    FIND(image_handle_get_thumbnail, "heif_image_handle_get_thumbnail")
    FIND(image_handle_get_metadata_content_type, "heif_image_handle_get_metadata_content_type")
    FIND(image_handle_get_list_of_metadata_block_IDs, "heif_image_handle_get_list_of_metadata_block_IDs")
    FIND(image_handle_get_metadata_size, "heif_image_handle_get_metadata_size")
    FIND(image_handle_get_metadata, "heif_image_handle_get_metadata")
    FIND(decode_image, "heif_decode_image")
    FIND(image_get_plane_readonly, "heif_image_get_plane_readonly")
    FIND(image_get_width, "heif_image_get_width")
    FIND(image_get_height, "heif_image_get_height")
    FIND(image_release, "heif_image_release")
#undef FIND
    *(void **)&heif.context_get_number_of_top_level_images = dlsym(lib, "heif_context_get_number_of_top_level_images");
    *(void **)&heif.image_handle_get_raw_color_profile_size = dlsym(lib, "heif_image_handle_get_raw_color_profile_size");
    *(void **)&heif.image_handle_get_raw_color_profile = dlsym(lib, "heif_image_handle_get_raw_color_profile");
    *(void **)&heif.image_handle_get_nclx_color_profile = dlsym(lib, "heif_image_handle_get_nclx_color_profile");
    *(void **)&heif.nclx_color_profile_free = dlsym(lib, "heif_nclx_color_profile_free");
    um_hevc_register(lib);
    heif.loaded = 1;
}

int um_heif_available(char *why, size_t why_size) {
    pthread_once(&heif_once, heif_load);
    if (!heif.loaded && why) snprintf(why, why_size, "%s", heif.why);
    return heif.loaded;
}

static int heif_fail(um_image *out, const char *what, struct heif_error error) {
    snprintf(out->error, sizeof out->error, "%s: %s", what, error.message ? error.message : "unknown error");
    free(out->rgb);
    out->rgb = NULL;
    return -1;
}

/// The first metadata block of `handle` of `type` (and, for `mime`, of content type XMP), as
/// the file stores it; blocks beyond 1 MB are not what a camera wrote.
static unsigned char *heif_copy_block(struct heif_image_handle *handle, const char *type, size_t *size) {
    heif_item_id ids[8];
    int n = heif.image_handle_get_list_of_metadata_block_IDs(handle, type, ids, 8);
    for (int i = 0; i < n; i++) {
        if (strcmp(type, "mime") == 0) {
            const char *content = heif.image_handle_get_metadata_content_type(handle, ids[i]);
            if (!content || strcmp(content, "application/rdf+xml") != 0) continue;
        }
        size_t length = heif.image_handle_get_metadata_size(handle, ids[i]);
        if (length < 4 || length > (1 << 20)) continue;
        unsigned char *bytes = malloc(length);
        if (!bytes) return NULL;
        if (heif.image_handle_get_metadata(handle, ids[i], bytes).code != heif_error_Ok) { free(bytes); continue; }
        *size = length;
        return bytes;
    }
    return NULL;
}

/// The EXIF (a 4-byte offset to the TIFF header, then the header) and XMP of `handle`.
static void heif_copy_metadata(struct heif_image_handle *handle, um_image *out) {
    out->exif = heif_copy_block(handle, "Exif", &out->exif_size);
    out->xmp = heif_copy_block(handle, "mime", &out->xmp_size);
}

/// `thumbnail_only`: the largest thumbnail of the right shape whatever its size, or a failure.
static int decode_heif(const char *path, int max_width, int max_height, long long max_whole_pixels,
                       const volatile int *cancel, int thumbnail_only, um_image *out) {
    um_image_reset(out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    char why[160];
    if (!um_heif_available(why, sizeof why)) return um_fail(out, why);
    struct heif_context *context = heif.context_alloc();
    if (!context) return um_fail(out, "out of memory");
    struct heif_image_handle *primary = NULL, *chosen = NULL;
    struct heif_image *image = NULL;
    int result = 0;
    struct heif_error error = heif.context_read_from_file(context, path, NULL);
    if (error.code != heif_error_Ok) { result = heif_fail(out, "not a readable HEIF file", error); goto done; }
    error = heif.context_get_primary_image_handle(context, &primary);
    if (error.code != heif_error_Ok) { result = heif_fail(out, "the HEIF file has no primary picture", error); goto done; }
    heif_copy_metadata(primary, out);
    if (heif.context_get_number_of_top_level_images) out->images = heif.context_get_number_of_top_level_images(context);
    if (out->fine && heif.image_handle_get_raw_color_profile_size && heif.image_handle_get_raw_color_profile) {
        size_t length = heif.image_handle_get_raw_color_profile_size(primary);
        if (length > 0 && length <= (4u << 20) && (out->icc = malloc(length))) {
            if (heif.image_handle_get_raw_color_profile(primary, out->icc).code == heif_error_Ok) {
                out->icc_size = length;
            } else {
                free(out->icc);
                out->icc = NULL;
            }
        }
    }
    if (out->fine && heif.image_handle_get_nclx_color_profile && heif.nclx_color_profile_free) {
        struct heif_color_profile_nclx *nclx = NULL;
        if (heif.image_handle_get_nclx_color_profile(primary, &nclx).code == heif_error_Ok && nclx) {
            out->colour_primaries = (int)nclx->color_primaries;
            out->transfer_characteristics = (int)nclx->transfer_characteristics;
        }
        if (nclx) heif.nclx_color_profile_free(nclx);
    }
    int pw = heif.image_handle_get_width(primary), ph = heif.image_handle_get_height(primary);
    out->source_width = pw;
    out->source_height = ph;
    if (pw < 1 || ph < 1) { result = um_fail(out, "the HEIF picture has no size"); goto done; }
    int w, h;
    um_fit(pw, ph, max_width, max_height, &w, &h);
    // A phone's HEIC carries a small picture of itself: when it has the pixels the box needs,
    // it is decoded instead of the 12 megapixels (libheif cannot stop a decode half-way).
    chosen = primary;
    // A photo written again is made from the picture itself, never from its thumbnail.
    int thumbnails = out->fine ? 0 : heif.image_handle_get_number_of_thumbnails(primary);
    if (thumbnails > 0) {
        heif_item_id ids[4];
        int n = heif.image_handle_get_list_of_thumbnail_IDs(primary, ids, thumbnails < 4 ? thumbnails : 4);
        for (int i = 0; i < n; i++) {
            struct heif_image_handle *thumbnail = NULL;
            if (heif.image_handle_get_thumbnail(primary, ids[i], &thumbnail).code != heif_error_Ok) continue;
            int tw = heif.image_handle_get_width(thumbnail), th = heif.image_handle_get_height(thumbnail);
            // Same shape (within a pixel's rounding) and at least as many pixels as drawn.
            long long cross = (long long)tw * ph - (long long)th * pw;
            if (cross < 0) cross = -cross;
            int shape = cross <= (long long)(tw > th ? tw : th) * 2;
            int better = thumbnail_only
                ? shape && (chosen == primary || tw > heif.image_handle_get_width(chosen))
                : shape && tw >= w && th >= h && chosen == primary;
            if (better) {
                if (chosen != primary) heif.image_handle_release(chosen);
                chosen = thumbnail;
            } else {
                heif.image_handle_release(thumbnail);
            }
        }
    }
    if (thumbnail_only && chosen == primary) { result = um_fail(out, "no thumbnail"); goto done; }
    int cw = heif.image_handle_get_width(chosen), ch = heif.image_handle_get_height(chosen);
    if ((long long)cw * ch > max_whole_pixels) {
        snprintf(out->error, sizeof out->error, "a HEIF picture of %d x %d is too large to preview", cw, ch);
        result = -1;
        goto done;
    }
    if (cancel && *cancel) { result = um_fail(out, "cancelled"); goto done; }
    int alpha = heif.image_handle_has_alpha_channel(chosen);
    error = heif.decode_image(chosen, &image, heif_colorspace_RGB,
                              alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, NULL);
    if (error.code != heif_error_Ok) { result = heif_fail(out, "the HEIF picture cannot be decoded", error); goto done; }
    if (cancel && *cancel) { result = um_fail(out, "cancelled"); goto done; }
    int stride = 0;
    const uint8_t *plane = heif.image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    // After libheif's own turns, mirrors and crop (irot, imir, clap): the picture as shown.
    int iw = heif.image_get_width(image, heif_channel_interleaved), ih = heif.image_get_height(image, heif_channel_interleaved);
    if (!plane || iw < 1 || ih < 1) { result = um_fail(out, "the HEIF picture decoded to nothing"); goto done; }
    if (chosen == primary) {
        out->source_width = iw;
        out->source_height = ih;
    } else if ((iw > ih) != (pw > ph) && iw != ih && pw != ph) {
        out->source_width = ph;
        out->source_height = pw;
    }
    unsigned char *row = malloc((size_t)iw * 3);
    um_scaler s;
    memset(&s, 0, sizeof s);
    if (!row || um_output(out, &s, iw, ih, max_width, max_height) != 0) {
        free(row);
        um_scaler_free(&s);
        result = um_fail(out, "out of memory");
        goto done;
    }
    for (int y = 0; y < ih; y++) {
        if (!um_scaler_wants(&s, y)) continue;
        const uint8_t *source = plane + (size_t)y * stride;
        if (alpha) composite(row, source, (size_t)iw, out);
        um_scaler_add(&s, y, alpha ? row : source);
    }
    um_scaler_finish(&s);
    um_scaler_free(&s);
    free(row);
done:
    if (image) heif.image_release(image);
    if (chosen && chosen != primary) heif.image_handle_release(chosen);
    if (primary) heif.image_handle_release(primary);
    heif.context_free(context);
    return result;
}

int um_decode_heif(const char *path, int max_width, int max_height, long long max_whole_pixels,
                   const volatile int *cancel, um_image *out) {
    return decode_heif(path, max_width, max_height, max_whole_pixels, cancel, 0, out);
}

int um_decode_heif_thumbnail(const char *path, int max_width, int max_height, um_image *out) {
    return decode_heif(path, max_width, max_height, 4000000, NULL, 1, out);
}
