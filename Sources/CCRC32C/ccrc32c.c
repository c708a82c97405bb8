// CRC-32C with the CPU's own instruction, 8 bytes per step. The portable table-driven version
// is in Swift (Coding/BlobFormat.swift); both compute the same function and are tested against
// each other.
#include "ccrc32c.h"
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

int restoration_crc32c_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t restoration_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = bytes;
    uint64_t state = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        state = __builtin_ia32_crc32di(state, word);
        p += 8;
        length -= 8;
    }
    uint32_t state32 = (uint32_t)state;
    while (length > 0) {
        state32 = __builtin_ia32_crc32qi(state32, *p);
        p++;
        length--;
    }
    return ~state32;
}

#elif defined(__aarch64__) && (defined(__linux__) || defined(__APPLE__))
#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

int restoration_crc32c_hardware_available(void) {
#if defined(__APPLE__)
    return 1;  // Every Apple arm64 CPU has the CRC extension.
#else
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

__attribute__((target("crc")))
uint32_t restoration_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = bytes;
    uint32_t state = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        state = __crc32cd(state, word);
        p += 8;
        length -= 8;
    }
    while (length > 0) {
        state = __crc32cb(state, *p);
        p++;
        length--;
    }
    return ~state;
}

#else

int restoration_crc32c_hardware_available(void) { return 0; }

uint32_t restoration_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    (void)bytes;
    (void)length;
    return crc;
}

#endif
