#include "deflate.h"

#include <stdlib.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<zlib.h>)
#error "zlib.h not found: install Debian's zlib1g-dev (apt-get install zlib1g-dev)"
#endif
#include <zlib.h>

int um_zlib_compress(const unsigned char *input, size_t input_length, int level,
                     unsigned char **output, size_t *output_length) {
    uLong bound = compressBound((uLong)input_length);
    unsigned char *buffer = malloc(bound ? bound : 1);
    if (!buffer) return -1;
    uLongf length = bound;
    if (compress2(buffer, &length, input, (uLong)input_length, level) != Z_OK) {
        free(buffer);
        return -1;
    }
    *output = buffer;
    *output_length = length;
    return 0;
}
