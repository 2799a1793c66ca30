#include "crc32c.h"

#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static int table_ready;

static void make_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int k = 1; k < 8; k++) {
            c = table[0][c & 0xFF] ^ (c >> 8);
            table[k][n] = c;
        }
    }
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

/// Eight bytes a step through eight tables (slicing-by-8); `c` is the register, not inverted.
static uint32_t software(uint32_t c, const unsigned char *p, size_t n) {
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) make_table();
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        word ^= c;
        c = table[7][word & 0xFF] ^ table[6][(word >> 8) & 0xFF] ^ table[5][(word >> 16) & 0xFF] ^ table[4][(word >> 24) & 0xFF]
            ^ table[3][(word >> 32) & 0xFF] ^ table[2][(word >> 40) & 0xFF] ^ table[1][(word >> 48) & 0xFF] ^ table[0][word >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) c = table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

uint32_t um_crc32c_update_portable(uint32_t crc, const void *data, size_t length) {
    return ~software(~crc, data, length);
}

#if defined(__x86_64__)
#include <cpuid.h>

__attribute__((target("sse4.2")))
static uint32_t hardware(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = crc;
    while (n >= 32) {
        uint64_t w[4];
        memcpy(w, p, 32);
        c = __builtin_ia32_crc32di(c, w[0]);
        c = __builtin_ia32_crc32di(c, w[1]);
        c = __builtin_ia32_crc32di(c, w[2]);
        c = __builtin_ia32_crc32di(c, w[3]);
        p += 32;
        n -= 32;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

static int has_sse42 = -1;

int um_crc32c_hardware(void) {
    int known = __atomic_load_n(&has_sse42, __ATOMIC_RELAXED);
    if (known < 0) {
        unsigned a, b, c, d;
        known = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 1 : 0;
        __atomic_store_n(&has_sse42, known, __ATOMIC_RELAXED);
    }
    return known;
}

uint32_t um_crc32c_update(uint32_t crc, const void *data, size_t length) {
    uint32_t c = ~crc;
    c = um_crc32c_hardware() ? hardware(c, data, length) : software(c, data, length);
    return ~c;
}
#else
int um_crc32c_hardware(void) { return 0; }

uint32_t um_crc32c_update(uint32_t crc, const void *data, size_t length) {
    return ~software(~crc, data, length);
}
#endif

// zlib's crc32_combine: the operator that appends `length_b` zero bits to A's register, built
// by squaring a one-bit shift matrix over GF(2).
static uint32_t gf2_times(const uint32_t *matrix, uint32_t vector) {
    uint32_t sum = 0;
    while (vector) {
        if (vector & 1) sum ^= *matrix;
        vector >>= 1;
        matrix++;
    }
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *matrix) {
    for (int n = 0; n < 32; n++) square[n] = gf2_times(matrix, matrix[n]);
}

uint32_t um_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
    if (length_b == 0) return crc_a;
    uint32_t even[32], odd[32];
    odd[0] = POLY;
    uint32_t row = 1;
    for (int n = 1; n < 32; n++) {
        odd[n] = row;
        row <<= 1;
    }
    gf2_square(even, odd); // two zero bits
    gf2_square(odd, even); // four zero bits
    do {
        gf2_square(even, odd);
        if (length_b & 1) crc_a = gf2_times(even, crc_a);
        length_b >>= 1;
        if (length_b == 0) break;
        gf2_square(odd, even);
        if (length_b & 1) crc_a = gf2_times(odd, crc_a);
        length_b >>= 1;
    } while (length_b != 0);
    return crc_a ^ crc_b;
}
