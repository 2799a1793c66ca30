#ifndef UPLOADMON_CRC32C_H
#define UPLOADMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as S3's `x-amz-checksum-crc32c` and
/// iSCSI use it: `crc` is the value so far (0 to begin), the result the value after `data`.
/// The SSE4.2 instruction where the processor has it, eight table lookups a word otherwise.
uint32_t um_crc32c_update(uint32_t crc, const void *data, size_t length);

/// The CRC-32C of A followed by B, from A's and B's and B's length: how parts hashed side by
/// side make the whole object's value (zlib's crc32_combine, for this polynomial).
uint32_t um_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

/// The same value by table lookups alone, whatever the processor (tests compare the two).
uint32_t um_crc32c_update_portable(uint32_t crc, const void *data, size_t length);

/// Whether `um_crc32c_update` uses the processor's instruction (for benchmarks).
int um_crc32c_hardware(void);

#endif
