//===- Options.cpp - tra-llama's command-line option category -------------===//

#include "Options.h"

#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

cl::OptionCategory &getToolCategory() {
  static cl::OptionCategory category("tra-llama options");
  return category;
}

bool rejectForeignOptions() {
  bool foreign = false;
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    if (!option->getNumOccurrences() ||
        llvm::is_contained(option->Categories, &getToolCategory()))
      continue;
    llvm::errs() << "tra-llama: error: --" << entry.first
                 << " is not a tra-llama option (see --help"
                 << (entry.first == "threads"
                         ? "; the thread count is --num-threads N"
                         : "")
                 << ")\n";
    foreign = true;
  }
  return foreign;
}
