//===- Redistribute.h - Moving a tensor between tile layouts ----*- C++ -*-===//
//
// Collective tile moves between the ranks of an MPI job (runtime/mpi), for
// state the engine keeps across steps. Needs the MPI runtime; no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_REDISTRIBUTE_H
#define TRA_ENGINE_REDISTRIBUTE_H

#include "tra/Engine/TileLayout.h"
#include "tra/Runtime/Tensor.h"

namespace tra::engine {

/// Moves a tensor held in the output layout `from` (this rank's tile:
/// `mine`) into the layout `to` and returns this rank's tile of it (empty if
/// it holds none). Collective: every rank calls it with the same layouts.
/// Each region of a destination tile comes from the destination rank itself
/// when it holds a copy, else from the tile's owner. Adds the bytes that
/// change rank (on all ranks together) to `movedBytes`. Fails (on every
/// rank alike) if the owned tiles of `from` do not cover a tile of `to`.
rt::Result<rt::HostTensor>
redistribute(rt::DType dtype, const Layout &from, const rt::HostTensor &mine,
             const std::vector<std::optional<Box>> &to, int me,
             int64_t &movedBytes);

} // namespace tra::engine

#endif // TRA_ENGINE_REDISTRIBUTE_H
