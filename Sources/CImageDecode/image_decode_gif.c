// GIF through giflib: the first frame on its canvas, row by row.

#include "image_decode.h"
#include "image_decode_internal.h"

// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<gif_lib.h>)
#error "gif_lib.h not found: install Debian's libgif-dev (apt-get install libgif-dev)"
#endif
#include <gif_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The frames that follow in `gif` (read up to its end or the first damage), at most 65535.
static int gif_frames_after(GifFileType *gif) {
    int frames = 0;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR || type == TERMINATE_RECORD_TYPE) return frames;
        GifByteType *block = NULL;
        if (type == EXTENSION_RECORD_TYPE) {
            int code;
            if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return frames;
            while (block) {
                if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return frames;
            }
        } else if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) return frames;
            if (++frames >= 65535) return frames;
            int size;
            if (DGifGetCode(gif, &size, &block) == GIF_ERROR) return frames;
            while (block) {
                if (DGifGetCodeNext(gif, &block) == GIF_ERROR) return frames;
            }
        }
    }
}

int um_decode_gif(const char *path, int max_width, int max_height, long long max_whole_pixels,
                  const volatile int *cancel, um_image *out) {
    um_image_reset(out);
    if (max_width < 1 || max_height < 1) return um_fail(out, "no room to draw");
    int error = 0;
    GifFileType *gif = DGifOpenFileName(path, &error);
    if (!gif) {
        snprintf(out->error, sizeof out->error, "not a readable GIF: %s", GifErrorString(error) ? GifErrorString(error) : "unknown error");
        return -1;
    }
    int sw = gif->SWidth, sh = gif->SHeight;
    out->source_width = sw;
    out->source_height = sh;
    int transparent = -1, result = 0;
    unsigned char *indexes = NULL, *line = NULL, *rgb = NULL;
    um_scaler s;
    memset(&s, 0, sizeof s);
    if (sw < 1 || sh < 1) { result = um_fail(out, "the GIF has no size"); goto done; }
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) { result = um_fail(out, "the GIF is cut short or damaged"); goto done; }
        if (type == TERMINATE_RECORD_TYPE) { result = um_fail(out, "the GIF has no picture"); goto done; }
        if (type == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *extension = NULL;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) { result = um_fail(out, "the GIF is damaged"); goto done; }
            // The graphic control block before the first frame says its transparent colour.
            if (code == GRAPHICS_EXT_FUNC_CODE && extension && extension[0] >= 4 && (extension[1] & 1)) transparent = extension[4];
            while (extension) {
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) { result = um_fail(out, "the GIF is damaged"); goto done; }
            }
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) { result = um_fail(out, "the GIF's first frame is damaged"); goto done; }
        GifImageDesc *frame = &gif->Image;
        ColorMapObject *colours = frame->ColorMap ? frame->ColorMap : gif->SColorMap;
        if (!colours) { result = um_fail(out, "the GIF has no colours"); goto done; }
        int fx = frame->Left, fy = frame->Top, fw = frame->Width, fh = frame->Height;
        if (fw < 1 || fh < 1 || fx < 0 || fy < 0) { result = um_fail(out, "the GIF's first frame has no size"); goto done; }
        // An interlaced frame comes in four passes: it is held whole (one byte a pixel).
        if (frame->Interlace && (long long)fw * fh > max_whole_pixels) {
            snprintf(out->error, sizeof out->error, "an interlaced GIF of %d x %d is too large to preview", fw, fh);
            result = -1;
            goto done;
        }
        rgb = malloc((size_t)sw * 3);
        line = malloc((size_t)fw);
        if (frame->Interlace) indexes = malloc((size_t)fw * fh);
        if (!rgb || !line || (frame->Interlace && !indexes) || um_output(out, &s, sw, sh, max_width, max_height) != 0) {
            result = um_fail(out, "out of memory");
            goto done;
        }
        if (frame->Interlace) {
            static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
            for (int pass = 0; pass < 4; pass++) {
                for (int y = start[pass]; y < fh; y += step[pass]) {
                    if (cancel && *cancel) { result = um_fail(out, "cancelled"); goto done; }
                    if (DGifGetLine(gif, indexes + (size_t)y * fw, fw) == GIF_ERROR) { result = um_fail(out, "the GIF is cut short or damaged"); goto done; }
                }
            }
        }
        for (int y = 0; y < sh; y++) {
            const unsigned char *row = NULL;
            if (y >= fy && y < fy + fh) {
                if (frame->Interlace) {
                    row = indexes + (size_t)(y - fy) * fw;
                } else {
                    if (cancel && *cancel) { result = um_fail(out, "cancelled"); goto done; }
                    if (DGifGetLine(gif, line, fw) == GIF_ERROR) { result = um_fail(out, "the GIF is cut short or damaged"); goto done; }
                    row = line;
                }
            }
            if (!um_scaler_wants(&s, y)) continue;
            for (int x = 0; x < sw; x++) {
                unsigned char *p = rgb + (size_t)x * 3;
                int i = -1;
                if (row && x >= fx && x < fx + fw) i = row[x - fx];
                if (i < 0 || i == transparent || i >= colours->ColorCount) {
                    p[0] = p[1] = p[2] = (unsigned char)um_background(out);
                } else {
                    p[0] = colours->Colors[i].Red; p[1] = colours->Colors[i].Green; p[2] = colours->Colors[i].Blue;
                }
            }
            um_scaler_add(&s, y, rgb);
        }
        um_scaler_finish(&s);
        if (out->fine) {
            // A photo written again must not be an animation's first frame: the frames after
            // it are counted (their compressed data skipped, not decoded).
            if (!frame->Interlace) {
                for (int y = sh > fy ? sh : fy; y < fy + fh; y++) {
                    if (DGifGetLine(gif, line, fw) == GIF_ERROR) break;
                }
            }
            out->images = 1 + gif_frames_after(gif);
        }
        break;
    }
done:
    um_scaler_free(&s);
    free(indexes); free(line); free(rgb);
    DGifCloseFile(gif, &error);
    return result;
}
