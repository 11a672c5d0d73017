//===- ByteOrder.h - Little-endian integers in byte buffers -----*- C++ -*-===//
//
// Reads the little-endian integers of file formats (zip records, pickle
// opcodes, the safetensors header length) from bytes at any alignment.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_BYTEORDER_H
#define TRA_RUNTIME_BYTEORDER_H

#include <cstdint>

namespace tra::rt {

/// Returns the little-endian 16-bit integer at `p`.
inline uint16_t readLE16(const uint8_t *p) {
  return uint16_t(p[0] | p[1] << 8);
}

/// Returns the little-endian 32-bit integer at `p`.
inline uint32_t readLE32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

/// Returns the little-endian 64-bit integer at `p`.
inline uint64_t readLE64(const uint8_t *p) {
  return uint64_t(readLE32(p)) | uint64_t(readLE32(p + 4)) << 32;
}

} // namespace tra::rt

#endif // TRA_RUNTIME_BYTEORDER_H
