//===- Checkpoint.cpp - Loading a whole LLaMA checkpoint ------------------===//

#include "tra/Engine/Checkpoint.h"

#include "tra/Runtime/MetaCheckpoint.h"

#include <sys/stat.h>

using namespace tra;

rt::Result<rt::LlamaCheckpoint>
tra::engine::loadCheckpoint(const std::string &path) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    rt::Result<rt::MetaCheckpoint> meta = rt::MetaCheckpoint::open(path);
    if (!meta)
      return meta.error();
    return meta->loadAll();
  }
  return rt::readLlama2c(path);
}
