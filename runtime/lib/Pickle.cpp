//===- Pickle.cpp - The pickles torch.save writes -------------------------===//

#include "tra/Runtime/Pickle.h"
#include "tra/Runtime/ByteOrder.h"
#include "tra/Runtime/Tensor.h"

#include <cstdio>
#include <cstring>
#include <iterator>

using namespace tra::rt;

const char *tra::rt::pyKindName(PyKind kind) {
  switch (kind) {
  case PyKind::None:
    return "None";
  case PyKind::Bool:
    return "bool";
  case PyKind::Int:
    return "int";
  case PyKind::Float:
    return "float";
  case PyKind::Str:
    return "str";
  case PyKind::Bytes:
    return "bytes";
  case PyKind::Tuple:
    return "tuple";
  case PyKind::List:
    return "list";
  case PyKind::Dict:
    return "dict";
  case PyKind::Global:
    return "global";
  case PyKind::Storage:
    return "storage";
  case PyKind::Tensor:
    return "tensor";
  }
  return "?";
}

Unpickled::Unpickled(std::vector<std::unique_ptr<PyObject>> objects,
                     const PyObject *root)
    : objects(std::move(objects)), top(root) {}

namespace {

/// Objects are owned by the unpickler's arena and referenced by plain
/// pointers: a hostile pickle can nest containers arbitrarily deep or build
/// cycles (through the memo) without recursive destruction or leaks.
using Obj = PyObject *;

/// A strict interpreter for the pickles torch.save writes. Its steps return
/// false once they have set `problem`.
class Unpickler {
public:
  Unpickler(const uint8_t *data, uint64_t size) : data(data), size(size) {}

  /// Runs the pickle; on failure returns null and sets `problem`.
  Obj run();
  std::string problem;

  /// Returns the objects built, `root` among them.
  Unpickled take(Obj root) { return Unpickled(std::move(arena), root); }

private:
  Obj make(PyKind kind) {
    arena.push_back(std::make_unique<PyObject>(kind));
    return arena.back().get();
  }
  Obj makeInt(int64_t value, PyKind kind = PyKind::Int) {
    Obj obj = make(kind);
    obj->intValue = value;
    return obj;
  }
  Obj makeText(PyKind kind, std::string text) {
    Obj obj = make(kind);
    obj->text = std::move(text);
    return obj;
  }
  bool fail(std::string message) {
    problem = "byte " + std::to_string(opStart) + ": " + message;
    return false;
  }
  bool need(uint64_t n) {
    if (size - pos < n)
      return fail("pickle ends in the middle of an opcode (truncated)");
    return true;
  }
  bool readBytes(uint64_t n, std::string &out) {
    if (!need(n))
      return false;
    out.assign(reinterpret_cast<const char *>(data + pos), n);
    pos += n;
    return true;
  }
  bool readLine(std::string &out) {
    const void *nl = std::memchr(data + pos, '\n', size - pos);
    if (!nl)
      return fail("unterminated GLOBAL argument");
    size_t n = static_cast<const uint8_t *>(nl) - (data + pos);
    out.assign(reinterpret_cast<const char *>(data + pos), n);
    pos += n + 1;
    return true;
  }
  bool pop(Obj &out) {
    if (stack.size() <= markFloor())
      return fail("stack underflow");
    out = std::move(stack.back());
    stack.pop_back();
    return true;
  }
  size_t markFloor() const { return marks.empty() ? 0 : marks.back(); }
  bool popMark(std::vector<Obj> &out) {
    if (marks.empty())
      return fail("no MARK on the stack");
    size_t at = marks.back();
    marks.pop_back();
    out.assign(std::make_move_iterator(stack.begin() + at),
               std::make_move_iterator(stack.end()));
    stack.resize(at);
    return true;
  }
  bool top(Obj &out) {
    if (stack.size() <= markFloor())
      return fail("stack underflow");
    out = stack.back();
    return true;
  }
  bool memoPut(uint64_t index) {
    if (stack.empty())
      return fail("memoizing an empty stack");
    memo[index] = stack.back();
    return true;
  }
  bool memoGet(uint64_t index) {
    auto it = memo.find(index);
    if (it == memo.end())
      return fail("memo index " + std::to_string(index) + " not set");
    stack.push_back(it->second);
    return true;
  }
  bool pushLong(uint64_t n);
  bool pushGlobal(std::string module, std::string name);
  bool setItems(const Obj &dict, std::vector<Obj> &items);
  bool appendItems(const Obj &list, std::vector<Obj> &items);
  bool reduce();
  bool build();
  bool persistentLoad();
  bool rebuildTensor(const std::string &function, std::vector<Obj> &args,
                     Obj &result);

  const uint8_t *data;
  uint64_t size;
  uint64_t pos = 0;
  uint64_t opStart = 0;
  std::vector<Obj> stack;
  std::vector<size_t> marks;
  std::unordered_map<uint64_t, Obj> memo;
  std::vector<std::unique_ptr<PyObject>> arena;
};

bool Unpickler::pushLong(uint64_t n) {
  if (!need(n))
    return false;
  if (n > 8)
    return fail("integer of " + std::to_string(n) +
                " bytes does not fit in 64 bits");
  uint64_t value = 0;
  for (uint64_t i = 0; i < n; ++i)
    value |= uint64_t(data[pos + i]) << (8 * i);
  if (n > 0 && n < 8 && (data[pos + n - 1] & 0x80))
    value |= ~uint64_t(0) << (8 * n); // Sign-extend.
  pos += n;
  stack.push_back(makeInt(static_cast<int64_t>(value)));
  return true;
}

bool Unpickler::pushGlobal(std::string module, std::string name) {
  bool allowed =
      (module == "collections" && name == "OrderedDict") ||
      (module == "torch._utils" &&
       (name == "_rebuild_tensor_v2" || name == "_rebuild_tensor_v3" ||
        name == "_rebuild_parameter" ||
        name == "_rebuild_parameter_with_state")) ||
      // Storage types and dtypes: only ever used as names.
      (module == "torch" && !name.empty() &&
       name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
           std::string::npos);
  if (!allowed)
    return fail("unsupported global " + quoteName(module + "." + name) +
                " (a torch.save file of a dict of tensors uses only "
                "torch storage types, torch._utils tensor rebuilds and "
                "collections.OrderedDict)");
  auto obj = make(PyKind::Global);
  obj->text = std::move(module);
  obj->name = std::move(name);
  stack.push_back(std::move(obj));
  return true;
}

bool Unpickler::setItems(const Obj &dict, std::vector<Obj> &items) {
  if (dict->kind != PyKind::Dict)
    return fail(std::string("SETITEM(S) on a ") + pyKindName(dict->kind));
  if (items.size() % 2)
    return fail("SETITEMS with an odd number of items");
  for (size_t i = 0; i < items.size(); i += 2) {
    const Obj &key = items[i];
    if (key->kind != PyKind::Str && key->kind != PyKind::Int)
      return fail(std::string("unsupported dict key of type ") +
                  pyKindName(key->kind));
    // Replace an existing key, as Python does.
    std::string lookup =
        (key->kind == PyKind::Str ? "s" : "i") +
        (key->kind == PyKind::Str ? key->text : std::to_string(key->intValue));
    auto [it, inserted] =
        dict->dictIndex.emplace(std::move(lookup), dict->dictItems.size());
    if (inserted)
      dict->dictItems.emplace_back(key, items[i + 1]);
    else
      dict->dictItems[it->second].second = items[i + 1];
  }
  return true;
}

bool Unpickler::appendItems(const Obj &list, std::vector<Obj> &items) {
  if (list->kind != PyKind::List)
    return fail(std::string("APPEND(S) on a ") + pyKindName(list->kind));
  for (Obj &item : items)
    list->items.push_back(std::move(item));
  return true;
}

bool Unpickler::persistentLoad() {
  Obj pid = nullptr;
  if (!pop(pid))
    return false;
  const char *shape = "persistent id is not ('storage', STORAGE_TYPE, KEY, "
                      "LOCATION, NUMEL)";
  if (pid->kind != PyKind::Tuple || pid->items.size() != 5)
    return fail(shape);
  const std::vector<Obj> &f = pid->items;
  if (f[0]->kind != PyKind::Str || f[0]->text != "storage" ||
      f[1]->kind != PyKind::Global || f[2]->kind != PyKind::Str ||
      f[3]->kind != PyKind::Str || f[4]->kind != PyKind::Int ||
      f[4]->intValue < 0)
    return fail(shape);
  auto storage = make(PyKind::Storage);
  storage->storageType = f[1]->text + "." + f[1]->name;
  storage->storageKey = f[2]->text;
  storage->storageNumel = f[4]->intValue;
  stack.push_back(std::move(storage));
  return true;
}

/// Reads a tuple of non-negative integers.
bool getDims(const Obj &obj, std::vector<int64_t> &out) {
  if (obj->kind != PyKind::Tuple && obj->kind != PyKind::List)
    return false;
  for (const Obj &item : obj->items) {
    if (item->kind != PyKind::Int || item->intValue < 0)
      return false;
    out.push_back(item->intValue);
  }
  return true;
}

bool Unpickler::rebuildTensor(const std::string &function,
                              std::vector<Obj> &args, Obj &result) {
  if (function == "_rebuild_parameter" ||
      function == "_rebuild_parameter_with_state") {
    size_t arity = function == "_rebuild_parameter" ? 3 : 4;
    if (args.size() != arity || args[0]->kind != PyKind::Tensor)
      return fail("torch._utils." + function +
                  " expects (tensor, requires_grad, backward_hooks" +
                  (arity == 4 ? ", state)" : ")"));
    result = args[0];
    return true;
  }
  bool v3 = function == "_rebuild_tensor_v3";
  size_t minArgs = v3 ? 7 : 6;
  std::string signature =
      "torch._utils." + function +
      "(storage, storage_offset, size, stride, requires_grad, "
      "backward_hooks" +
      (v3 ? ", dtype" : "") + "[, metadata])";
  if (args.size() != minArgs && args.size() != minArgs + 1)
    return fail(signature + " called with " + std::to_string(args.size()) +
                " arguments");
  auto tensor = make(PyKind::Tensor);
  if (args[0]->kind != PyKind::Storage)
    return fail(signature + ": the storage is a " + pyKindName(args[0]->kind));
  tensor->storage = args[0];
  if (args[1]->kind != PyKind::Int || args[1]->intValue < 0)
    return fail(signature + ": storage_offset is not a non-negative int");
  tensor->storageOffset = args[1]->intValue;
  if (!getDims(args[2], tensor->shape))
    return fail(signature + ": size is not a tuple of non-negative ints");
  if (!getDims(args[3], tensor->stride))
    return fail(signature + ": stride is not a tuple of non-negative ints");
  if (tensor->shape.size() != tensor->stride.size())
    return fail(signature + ": size " + formatShape(tensor->shape) +
                " and stride " + formatShape(tensor->stride) +
                " differ in rank");
  if (args[4]->kind != PyKind::Bool)
    return fail(signature + ": requires_grad is not a bool");
  if (v3) {
    if (args[6]->kind != PyKind::Global || args[6]->text != "torch")
      return fail(signature + ": dtype is not a torch dtype");
    tensor->dtypeName = args[6]->name;
  }
  result = std::move(tensor);
  return true;
}

bool Unpickler::reduce() {
  Obj args = nullptr, callable = nullptr;
  if (!pop(args) || !pop(callable))
    return false;
  if (callable->kind != PyKind::Global)
    return fail(std::string("REDUCE calls a ") + pyKindName(callable->kind));
  if (args->kind != PyKind::Tuple)
    return fail("REDUCE arguments are not a tuple");
  const std::string qualified = callable->text + "." + callable->name;
  if (qualified == "collections.OrderedDict") {
    if (!args->items.empty())
      return fail("collections.OrderedDict called with arguments");
    auto dict = make(PyKind::Dict);
    dict->ordered = true;
    stack.push_back(std::move(dict));
    return true;
  }
  if (callable->text == "torch._utils") {
    Obj result = nullptr;
    if (!rebuildTensor(callable->name, args->items, result))
      return false;
    stack.push_back(std::move(result));
    return true;
  }
  return fail("unsupported call of " + quoteName(qualified));
}

bool Unpickler::build() {
  Obj state = nullptr, target = nullptr;
  if (!pop(state) || !top(target))
    return false;
  // OrderedDict state dicts carry a `_metadata` attribute (module versions).
  if (target->kind == PyKind::Dict && target->ordered)
    return true;
  return fail(std::string("BUILD on a ") + pyKindName(target->kind));
}

Obj Unpickler::run() {
  while (true) {
    opStart = pos;
    if (pos >= size) {
      fail("pickle ends without STOP (truncated)");
      return nullptr;
    }
    uint8_t op = data[pos++];
    bool ok = true;
    std::string text;
    std::vector<Obj> items;
    Obj a = nullptr, b = nullptr;
    switch (op) {
    case 0x80: // PROTO
      ok = need(1);
      if (ok && data[pos] > 5)
        ok = fail("unsupported pickle protocol " + std::to_string(data[pos]));
      ++pos;
      break;
    case 0x95: // FRAME
      ok = need(8);
      pos += 8;
      break;
    case '.': // STOP
      if (stack.size() != 1 || !marks.empty()) {
        fail("STOP with " + std::to_string(stack.size()) +
             " values on the stack");
        return nullptr;
      }
      return stack.back();
    case '(': // MARK
      marks.push_back(stack.size());
      break;
    case '0': // POP
      ok = pop(a);
      break;
    case '1': // POP_MARK
      ok = popMark(items);
      break;
    case '2': // DUP
      ok = top(a);
      if (ok)
        stack.push_back(a);
      break;
    case 'N': // NONE
      stack.push_back(make(PyKind::None));
      break;
    case 0x88: // NEWTRUE
    case 0x89: // NEWFALSE
      stack.push_back(makeInt(op == 0x88, PyKind::Bool));
      break;
    case 'J': // BININT
      ok = need(4);
      if (ok) {
        stack.push_back(makeInt(static_cast<int32_t>(readLE32(data + pos))));
        pos += 4;
      }
      break;
    case 'K': // BININT1
      ok = need(1);
      if (ok)
        stack.push_back(makeInt(data[pos++]));
      break;
    case 'M': // BININT2
      ok = need(2);
      if (ok) {
        stack.push_back(makeInt(readLE16(data + pos)));
        pos += 2;
      }
      break;
    case 0x8a: // LONG1
      ok = need(1);
      if (ok) {
        uint64_t n = data[pos++];
        ok = pushLong(n);
      }
      break;
    case 0x8b: // LONG4
      ok = need(4);
      if (ok) {
        int32_t n = static_cast<int32_t>(readLE32(data + pos));
        pos += 4;
        ok = n >= 0 ? pushLong(uint64_t(n)) : fail("negative LONG4 length");
      }
      break;
    case 'G': { // BINFLOAT (big-endian)
      ok = need(8);
      if (ok) {
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i)
          bits = bits << 8 | data[pos + i];
        pos += 8;
        auto obj = make(PyKind::Float);
        std::memcpy(&obj->floatValue, &bits, 8);
        stack.push_back(std::move(obj));
      }
      break;
    }
    case 'X':  // BINUNICODE
    case 'B':  // BINBYTES
    case 0x8c: // SHORT_BINUNICODE
    case 'C':  // SHORT_BINBYTES
    case 0x8d: // BINUNICODE8
    case 0x8e: // BINBYTES8
    {
      uint64_t width = op == 'X' || op == 'B'    ? 4
                       : op == 0x8c || op == 'C' ? 1
                                                 : 8;
      ok = need(width);
      if (!ok)
        break;
      uint64_t n = width == 1   ? data[pos]
                   : width == 4 ? readLE32(data + pos)
                                : readLE64(data + pos);
      pos += width;
      ok = readBytes(n, text);
      if (ok)
        stack.push_back(makeText(
            op == 'X' || op == 0x8c || op == 0x8d ? PyKind::Str : PyKind::Bytes,
            std::move(text)));
      break;
    }
    case ')': // EMPTY_TUPLE
      stack.push_back(make(PyKind::Tuple));
      break;
    case 't': // TUPLE
    case 'l': // LIST
      ok = popMark(items);
      if (ok) {
        auto obj = make(op == 't' ? PyKind::Tuple : PyKind::List);
        obj->items = std::move(items);
        stack.push_back(std::move(obj));
      }
      break;
    case 0x85: // TUPLE1
    case 0x86: // TUPLE2
    case 0x87: // TUPLE3
    {
      size_t n = op - 0x84;
      if (stack.size() < markFloor() + n) {
        ok = fail("stack underflow");
        break;
      }
      auto obj = make(PyKind::Tuple);
      obj->items.assign(stack.end() - n, stack.end());
      stack.resize(stack.size() - n);
      stack.push_back(std::move(obj));
      break;
    }
    case ']': // EMPTY_LIST
      stack.push_back(make(PyKind::List));
      break;
    case 'a': // APPEND
      ok = pop(b) && top(a);
      if (ok) {
        items.push_back(std::move(b));
        ok = appendItems(a, items);
      }
      break;
    case 'e': // APPENDS
      ok = popMark(items) && top(a) && appendItems(a, items);
      break;
    case '}': // EMPTY_DICT
      stack.push_back(make(PyKind::Dict));
      break;
    case 'd': // DICT
      ok = popMark(items);
      if (ok) {
        auto dict = make(PyKind::Dict);
        stack.push_back(dict);
        ok = setItems(dict, items);
      }
      break;
    case 's': // SETITEM
      ok = pop(b) && pop(a);
      if (ok) {
        items.push_back(std::move(a));
        items.push_back(std::move(b));
        Obj dict = nullptr;
        ok = top(dict) && setItems(dict, items);
      }
      break;
    case 'u': // SETITEMS
      ok = popMark(items) && top(a) && setItems(a, items);
      break;
    case 'q': // BINPUT
      ok = need(1) && memoPut(data[pos]);
      ++pos;
      break;
    case 'r': // LONG_BINPUT
      ok = need(4) && memoPut(readLE32(data + pos));
      pos += 4;
      break;
    case 0x94: // MEMOIZE
      ok = memoPut(memo.size());
      break;
    case 'h': // BINGET
      ok = need(1) && memoGet(data[pos]);
      ++pos;
      break;
    case 'j': // LONG_BINGET
      ok = need(4) && memoGet(readLE32(data + pos));
      pos += 4;
      break;
    case 'c': { // GLOBAL
      std::string module, name;
      ok = readLine(module) && readLine(name) &&
           pushGlobal(std::move(module), std::move(name));
      break;
    }
    case 0x93: // STACK_GLOBAL
      ok = pop(b) && pop(a);
      if (ok && (a->kind != PyKind::Str || b->kind != PyKind::Str))
        ok = fail("STACK_GLOBAL of non-strings");
      if (ok)
        ok = pushGlobal(a->text, b->text);
      break;
    case 'R': // REDUCE
      ok = reduce();
      break;
    case 'b': // BUILD
      ok = build();
      break;
    case 'Q': // BINPERSID
      ok = persistentLoad();
      break;
    default: {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", op);
      ok = fail(std::string("unsupported pickle opcode ") + hex +
                (op >= 0x20 && op < 0x7f ? std::string(" '") + char(op) + "'"
                                         : std::string()));
      break;
    }
    }
    if (!ok)
      return nullptr;
  }
}

} // namespace

Result<Unpickled> tra::rt::unpickle(const uint8_t *data, uint64_t size) {
  Unpickler unpickler(data, size);
  Obj root = unpickler.run();
  if (!root)
    return Error{unpickler.problem};
  return unpickler.take(root);
}
