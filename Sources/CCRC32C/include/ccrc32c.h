#ifndef RESTORATION_ARCHIVE_CCRC32C_H
#define RESTORATION_ARCHIVE_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU has a CRC-32C instruction (x86-64 SSE4.2, or the ARMv8 CRC extension).
int restoration_crc32c_hardware_available(void);

/// CRC-32C (Castagnoli) of `length` bytes, continuing from `crc` (pass 0 to start), using the
/// CPU's instruction. Call only when restoration_crc32c_hardware_available() returned 1.
uint32_t restoration_crc32c_hardware(uint32_t crc, const void *bytes, size_t length);

#endif
