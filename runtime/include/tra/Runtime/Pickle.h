//===- Pickle.h - The pickles torch.save writes -----------------*- C++ -*-===//
//
// A small, strict interpreter for Python pickles (protocols 2 to 5) that
// knows only what `torch.save` emits for a state dict: dicts and OrderedDicts
// (their `_metadata` state is ignored), tuples, lists, None, bools, ints (up
// to 64 bits), floats, strings and bytes, and tensors rebuilt by
//   torch._utils._rebuild_tensor_v2(STORAGE, storage_offset, size, stride,
//                                   requires_grad, backward_hooks[, metadata])
//   torch._utils._rebuild_tensor_v3(..., backward_hooks, dtype[, metadata])
//   torch._utils._rebuild_parameter(TENSOR, requires_grad, backward_hooks)
//   torch._utils._rebuild_parameter_with_state(..., backward_hooks, state)
// where STORAGE is the persistent id ('storage', torch.<Type>Storage, KEY,
// location, numel). The only globals allowed are those functions,
// collections.OrderedDict and names in the `torch` module (storage types and
// dtypes, only ever used as names): any other (a class of the user's, a
// TorchScript archive) is refused, so reading a pickle never runs or trusts
// foreign code. Which storage types and dtypes are supported is for the
// reader of the object tree to decide (see Pth.h).
//
//===----------------------------------------------------------------------===//

#ifndef TRA_RUNTIME_PICKLE_H
#define TRA_RUNTIME_PICKLE_H

#include "tra/Runtime/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tra::rt {

/// What a pickled value is.
enum class PyKind {
  None,
  Bool,
  Int,
  Float,
  Str,
  Bytes,
  Tuple,
  List,
  Dict,
  /// A global (module and name), e.g. torch.HalfStorage or torch.float16.
  Global,
  /// A storage named by a persistent id.
  Storage,
  /// A tensor rebuilt by one of torch._utils' functions.
  Tensor
};

/// Returns the Python name of `kind` ("None", "int", "dict", ...; "global",
/// "storage" and "tensor" for the others), as messages call it.
const char *pyKindName(PyKind kind);

/// A value built by the pickle. Only the fields of its kind are used.
/// Objects refer to each other by plain pointers into the `Unpickled` that
/// owns them all: a hostile pickle can nest containers arbitrarily deep or
/// build cycles (through the memo) without recursive destruction or leaks.
struct PyObject {
  explicit PyObject(PyKind kind) : kind(kind) {}
  PyKind kind;
  int64_t intValue = 0; // Int, Bool
  double floatValue = 0;
  std::string text;              // Str, Bytes; Global module
  std::string name;              // Global name
  std::vector<PyObject *> items; // Tuple, List
  std::vector<std::pair<PyObject *, PyObject *>> dictItems; // Dict, in order
  bool ordered = false;                              // Dict: an OrderedDict
  std::unordered_map<std::string, size_t> dictIndex; // Dict: key -> item
  // Storage: the persistent id's fields.
  std::string storageKey;
  std::string storageType; // "MODULE.NAME", e.g. "torch.HalfStorage"
  int64_t storageNumel = 0;
  // Tensor.
  PyObject *storage = nullptr; // a Storage
  std::string dtypeName;       // _rebuild_tensor_v3's dtype, else ""
  int64_t storageOffset = 0;
  std::vector<int64_t> shape, stride; // of equal rank, all >= 0
};

/// The objects one pickle built, owned together, and the one it returned.
class Unpickled {
public:
  Unpickled(std::vector<std::unique_ptr<PyObject>> objects,
            const PyObject *root);

  /// Returns the object the pickle returned (with STOP).
  const PyObject &root() const { return *top; }

private:
  std::vector<std::unique_ptr<PyObject>> objects;
  const PyObject *top;
};

/// Runs the pickle of `size` bytes at `data`. Fails with "byte N: PROBLEM",
/// N being the offset of the opcode that failed.
Result<Unpickled> unpickle(const uint8_t *data, uint64_t size);

} // namespace tra::rt

#endif // TRA_RUNTIME_PICKLE_H
