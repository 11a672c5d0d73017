//===- PickleFuzzer.cpp - Fuzzes the pickle interpreter -------------------===//
//
// unpickle on the input directly (without the zip archive around it, so the
// fuzzer spends its time on the opcodes), then walks the object tree it
// returns (which may hold cycles, made through the memo).
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tra/Runtime/Pickle.h"

#include <unordered_set>

using namespace tra::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<Unpickled> unpickled = unpickle(data, size);
  if (!unpickled)
    return 0;
  // Visit every object reachable from the root once.
  std::unordered_set<const PyObject *> seen;
  std::vector<const PyObject *> stack = {&unpickled->root()};
  size_t visited = 0;
  while (!stack.empty()) {
    const PyObject *object = stack.back();
    stack.pop_back();
    if (!object || !seen.insert(object).second)
      continue;
    ++visited;
    (void)pyKindName(object->kind);
    for (const PyObject *item : object->items)
      stack.push_back(item);
    for (const auto &[key, value] : object->dictItems) {
      stack.push_back(key);
      stack.push_back(value);
    }
    stack.push_back(object->storage);
  }
  tra::fuzz::keep(visited);
  return 0;
}
