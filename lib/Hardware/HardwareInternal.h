//===- HardwareInternal.h - Shared helpers of lib/Hardware ------*- C++ -*-===//
//
// Key spellings of the JSON format and the error helpers shared by the parser
// and the validator, so that both report the same paths and wording.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_LIB_HARDWARE_HARDWAREINTERNAL_H
#define TRA_LIB_HARDWARE_HARDWAREINTERNAL_H

#include "tra/Hardware/Hardware.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tra {
namespace hw {
namespace detail {

/// The only format version this build reads and writes.
constexpr int64_t kFormatVersion = 1;

/// Keys of the JSON format.
namespace key {
constexpr llvm::StringLiteral version = "version";
constexpr llvm::StringLiteral name = "name";
constexpr llvm::StringLiteral description = "description";
constexpr llvm::StringLiteral nodes = "nodes";
constexpr llvm::StringLiteral network = "network";
constexpr llvm::StringLiteral count = "count";
constexpr llvm::StringLiteral devices = "devices";
constexpr llvm::StringLiteral links = "links";
constexpr llvm::StringLiteral kind = "kind";
constexpr llvm::StringLiteral model = "model";
constexpr llvm::StringLiteral memoryBytes = "memory_bytes";
constexpr llvm::StringLiteral memoryBandwidth = "memory_bandwidth";
constexpr llvm::StringLiteral peakFlops = "peak_flops";
constexpr llvm::StringLiteral cores = "cores";
constexpr llvm::StringLiteral threadSyncSeconds = "thread_sync_seconds";
constexpr llvm::StringLiteral between = "between";
constexpr llvm::StringLiteral bandwidth = "bandwidth";
constexpr llvm::StringLiteral latency = "latency";
constexpr llvm::StringLiteral hostMemory = "host_memory";
constexpr llvm::StringLiteral disk = "disk";
constexpr llvm::StringLiteral bytes = "bytes";
} // namespace key

/// The path shown for the top-level value.
constexpr llvm::StringLiteral kRootPath = "(root)";

/// Largest number of devices (and of nodes) a description may expand to.
constexpr uint64_t kMaxDevices = 1u << 20;

/// "nodes[3]", "nodes[3].devices[1]", ...
std::string indexPath(const llvm::Twine &parent, llvm::StringRef arrayKey,
                      size_t index);
/// "PARENT.KEY", or "KEY" when `parent` is empty.
std::string memberPath(const llvm::Twine &parent, llvm::StringRef key);

/// A number as shown in messages: integers without exponent, others with up
/// to 15 significant digits ("-4", "2.5", "1e-06").
std::string formatNumber(double value);

/// A HardwareError at `path` of `file`.
llvm::Error makeError(llvm::StringRef file, const llvm::Twine &path,
                      const llvm::Twine &problem);

/// Checks that `value` is finite and > 0 ("expected a positive number, got
/// -4").
llvm::Error checkPositive(llvm::StringRef file, const llvm::Twine &path,
                          double value);
/// Checks that `value` is finite and >= 0.
llvm::Error checkNonNegative(llvm::StringRef file, const llvm::Twine &path,
                             double value);

} // namespace detail
} // namespace hw
} // namespace tra

#endif // TRA_LIB_HARDWARE_HARDWAREINTERNAL_H
