//===- Redistribute.cpp - Moving a tensor between tile layouts ------------===//

#include "tra/Engine/Redistribute.h"

#include "tra/Runtime/Mpi.h"

#include <string>

using namespace tra;
using namespace tra::engine;

rt::Result<rt::HostTensor> tra::engine::redistribute(
    rt::DType dtype, const Layout &from, const rt::HostTensor &mine,
    const std::vector<std::optional<Box>> &to, int me, int64_t &movedBytes) {
  struct Move {
    int source, dest;
    Box region;
  };
  // Every rank computes the same list of moves from the layouts alone, so
  // the sends and receives pair up without any negotiation.
  std::vector<Move> moves;
  int ranks = int(to.size());
  for (int d = 0; d < ranks; ++d) {
    if (!to[size_t(d)])
      continue;
    int64_t covered = 0;
    for (int s = 0; s < ranks; ++s) {
      if (!from.tiles[size_t(s)] || !from.owner[size_t(s)])
        continue;
      std::optional<Box> region =
          intersect(*from.tiles[size_t(s)], *to[size_t(d)]);
      if (!region)
        continue;
      int source = from.tiles[size_t(d)] &&
                           *from.tiles[size_t(d)] == *from.tiles[size_t(s)]
                       ? d
                       : s;
      covered += region->volume();
      if (source != d)
        movedBytes += region->volume() * int64_t(rt::dtypeSize(dtype));
      moves.push_back({source, d, *region});
    }
    if (covered != to[size_t(d)]->volume())
      return rt::Error{"internal error: the tiles of a tensor do not cover "
                       "rank " +
                       std::to_string(d) + "'s tile of the next step"};
  }
  rt::HostTensor result;
  const std::optional<Box> &myFrom = from.tiles[size_t(me)];
  const std::optional<Box> &myTo = to[size_t(me)];
  if (myTo)
    result = rt::HostTensor::zeros(dtype, myTo->sizes);
  std::vector<std::pair<size_t, rt::HostTensor>> received;
  // Kept alive until every send has completed.
  std::vector<rt::HostTensor> sent;
  for (size_t k = 0; k < moves.size(); ++k) {
    const Move &m = moves[k];
    int tag = 20000 + int(k % 10000);
    if (m.dest == me && m.source == me) {
      rt::HostTensor part = rt::HostTensor::zeros(dtype, m.region.sizes);
      rt::copyTile(dtype, mine.shape(), mine.data(),
                   relativeOffsets(m.region, *myFrom), m.region.sizes,
                   part.mutableData());
      rt::insertTile(dtype, result.shape(), result.mutableData(),
                     relativeOffsets(m.region, *myTo), m.region.sizes,
                     part.data());
    } else if (m.dest == me) {
      received.emplace_back(k, rt::HostTensor::zeros(dtype, m.region.sizes));
      rt::HostTensor &part = received.back().second;
      tra_mpi_irecv(part.mutableData(), int64_t(part.byteSize()), m.source,
                    tag);
    } else if (m.source == me) {
      sent.push_back(rt::HostTensor::zeros(dtype, m.region.sizes));
      rt::HostTensor &part = sent.back();
      rt::copyTile(dtype, mine.shape(), mine.data(),
                   relativeOffsets(m.region, *myFrom), m.region.sizes,
                   part.mutableData());
      tra_mpi_isend(part.data(), int64_t(part.byteSize()), m.dest, tag);
    }
  }
  tra_mpi_wait_all();
  for (auto &[k, part] : received)
    rt::insertTile(dtype, result.shape(), result.mutableData(),
                   relativeOffsets(moves[k].region, *myTo),
                   moves[k].region.sizes, part.data());
  return result;
}
