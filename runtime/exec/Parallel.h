//===- Parallel.h - When the runtime's products use threads -*- C++ -*-===//
//
// Internal to runtime/exec: the thresholds above which the runtime's own
// products (Gemv.cpp, GemmQ8.cpp, PackedGemm.cpp, Blas.cpp) split their work
// over the thread pool, from the program's parallel costs
// (tra_exec_set_parallel_costs, tra/Exec/ParallelCosts.h) and the pool's
// thread count (tra_exec_set_num_threads). Both are kept in Blas.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_EXEC_PARALLEL_H
#define TRA_EXEC_PARALLEL_H

#include <cstdint>

namespace tra {
namespace exec {

/// Bytes a one-row product must stream for the pool's threads to pay
/// (INT64_MAX with one thread).
int64_t parallelMinBytes();

/// Multiply-adds a product must take for the pool's threads to pay.
int64_t parallelMinMacs();

} // namespace exec
} // namespace tra

#endif // TRA_EXEC_PARALLEL_H
