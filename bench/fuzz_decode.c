// libFuzzer target for the preview decoders (JPEG, PNG, WebP, GIF, HEIF/AVIF): each input is written
// to an in-memory file and decoded into a small box by every decoder whose format it claims to
// be, then into a larger one. Built and run by bench/fuzz-decode under ASan and UBSan.
#define _GNU_SOURCE
#include "image_decode.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (fd < 0) {
        fd = memfd_create("fuzz-decode", 0);
        if (fd < 0) return 0;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) return 0;
    int boxes[2][2] = {{40, 30}, {300, 200}};
    for (int b = 0; b < 2; b++) {
        um_image image;
        if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8) {
            um_decode_jpeg(path, boxes[b][0], boxes[b][1], 4000000, NULL, &image);
            um_image_free(&image);
        }
        if (size >= 8 && data[0] == 0x89 && data[1] == 'P') {
            um_decode_png(path, boxes[b][0], boxes[b][1], 4000000, NULL, &image);
            um_image_free(&image);
        }
        if (size >= 12 && memcmp(data, "RIFF", 4) == 0) {
            um_decode_webp(path, boxes[b][0], boxes[b][1], 4000000, NULL, &image);
            um_image_free(&image);
        }
        if (size >= 6 && memcmp(data, "GIF8", 4) == 0) {
            um_decode_gif(path, boxes[b][0], boxes[b][1], 4000000, NULL, &image);
            um_image_free(&image);
        }
        if (size >= 12 && memcmp(data + 4, "ftyp", 4) == 0) {
            um_decode_heif(path, boxes[b][0], boxes[b][1], 4000000, NULL, &image);
            um_image_free(&image);
            // AVIF's own decoder (libavif) reads every ISO-BMFF file it is given, as the preview
            // would when the brand says AVIF.
            um_decode_avif(path, boxes[b][0], boxes[b][1], 4000000, NULL, &image);
            um_image_free(&image);
        }
    }
    return 0;
}
