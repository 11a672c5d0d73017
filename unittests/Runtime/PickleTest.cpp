//===- PickleTest.cpp - The pickle machine --------------------------------===//
//
// Pickles written by Python's pickle module (the bytes are pasted here, so
// the test needs no Python) and hand-made ones, run through `unpickle`
// directly; PthTest runs them inside torch.save archives.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Pickle.h"

#include "gtest/gtest.h"

#include <cstring>
#include <limits>
#include <string>

using namespace tra::rt;

namespace {

Result<Unpickled> run(const std::string &bytes) {
  return unpickle(reinterpret_cast<const uint8_t *>(bytes.data()),
                  bytes.size());
}

/// Expects running `bytes` to fail with exactly `message`.
void expectError(const std::string &bytes, const std::string &message) {
  Result<Unpickled> result = run(bytes);
  ASSERT_FALSE(result.ok()) << "expected: " << message;
  EXPECT_EQ(result.message(), message);
}

/// Returns the value of `key` in `dict`, or null.
const PyObject *lookup(const PyObject &dict, const std::string &key) {
  for (const auto &[k, v] : dict.dictItems)
    if (k->kind == PyKind::Str && k->text == key)
      return v;
  return nullptr;
}

// What torch.save pickles for a state dict (protocol 2), made with stand-ins
// for torch's classes: OrderedDict([
//   ('w', _rebuild_tensor_v2(STORAGE(HalfStorage, '0', 12), 2, (2, 3),
//                            (1, 2), False, OrderedDict())),
//   ('p', _rebuild_parameter(_rebuild_tensor_v2(STORAGE(HalfStorage, '0',
//                            12), 0, (12,), (1,), ...), True, OrderedDict())),
//   ('u', _rebuild_tensor_v3(STORAGE(UntypedStorage, '1', 8), 0, (4,),
//                            (1,), False, OrderedDict(), torch.bfloat16))])
// with its `_metadata` set by BUILD.
const std::string kStateDict = std::string(
    "\x80\x02"
    "ccollections\x0aOrderedDict\x0aq\x00)Rq\x01(X\x01\x00\x00\x00wq"
    "\x02"
    "ctorch._utils\x0a_rebuild_tensor_v2\x0aq\x03((X\x07\x00\x00\x00stor"
    "ageq\x04"
    "ctorch\x0aHalfStorage\x0aq\x05X\x01\x00\x00\x00"
    "0q\x06X\x03"
    "\x00\x00\x00"
    "cpuq\x07K\x0ctq\x08QK\x02K\x02K\x03\x86q\x09K\x01K\x02\x86q"
    "\x0a\x89h\x00)Rq\x0btq\x0cRq\x0dX\x01\x00\x00\x00pq\x0e"
    "ctorch._utils"
    "\x0a_rebuild_parameter\x0aq\x0fh\x03((h\x04h\x05h\x06h\x07K\x0ctq\x10QK"
    "\x00K\x0c\x85q\x11K\x01\x85q\x12\x89h\x00)Rq\x13tq\x14Rq\x15\x88h\x00)Rq"
    "\x16\x87q\x17Rq\x18X\x01\x00\x00\x00uq\x19"
    "ctorch._utils\x0a_rebuild_ten"
    "sor_v3\x0aq\x1a((h\x04"
    "ctorch\x0aUntypedStorage\x0aq\x1bX\x01\x00\x00"
    "\x00"
    "1q\x1ch\x07K\x08tq\x1dQK\x00K\x04\x85q\x1eh\x12\x89h\x00)Rq\x1f"
    "c"
    "torch\x0a"
    "bfloat16\x0aq tq!Rq\x22u}q#X\x09\x00\x00\x00_metadataq$h\x00)R"
    "q%X\x00\x00\x00\x00q&}q'X\x07\x00\x00\x00versionq(K\x01sssb.",
    450);

TEST(PickleTest, StateDict) {
  Result<Unpickled> result = run(kStateDict);
  ASSERT_TRUE(result.ok()) << result.message();
  const PyObject &root = result->root();
  ASSERT_EQ(root.kind, PyKind::Dict);
  EXPECT_TRUE(root.ordered);
  ASSERT_EQ(root.dictItems.size(), 3u);
  const char *names[] = {"w", "p", "u"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(root.dictItems[i].first->text, names[i]);
    ASSERT_EQ(root.dictItems[i].second->kind, PyKind::Tensor);
    ASSERT_EQ(root.dictItems[i].second->storage->kind, PyKind::Storage);
  }

  const PyObject &w = *lookup(root, "w");
  EXPECT_EQ(w.storage->storageType, "torch.HalfStorage");
  EXPECT_EQ(w.storage->storageKey, "0");
  EXPECT_EQ(w.storage->storageNumel, 12);
  EXPECT_EQ(w.storageOffset, 2);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w.stride, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(w.dtypeName, "");

  // A parameter is its tensor.
  const PyObject &p = *lookup(root, "p");
  EXPECT_EQ(p.storage->storageKey, "0");
  EXPECT_EQ(p.storageOffset, 0);
  EXPECT_EQ(p.shape, (std::vector<int64_t>{12}));
  EXPECT_EQ(p.stride, (std::vector<int64_t>{1}));

  const PyObject &u = *lookup(root, "u");
  EXPECT_EQ(u.storage->storageType, "torch.UntypedStorage");
  EXPECT_EQ(u.storage->storageKey, "1");
  EXPECT_EQ(u.storage->storageNumel, 8);
  EXPECT_EQ(u.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(u.dtypeName, "bfloat16");

  // Cut anywhere, it fails (and says where) instead of reading past the end.
  for (size_t keep = 0; keep < kStateDict.size(); ++keep) {
    Result<Unpickled> cut = run(kStateDict.substr(0, keep));
    ASSERT_FALSE(cut.ok()) << keep << " bytes";
    EXPECT_EQ(cut.message().rfind("byte ", 0), 0u) << cut.message();
  }
}

// pickle.dumps({'a': 1, 'b': [-2, 300, 70000, -(2**40), 2**63-1, 2.5, 'xé',
//               b'y', None, True, False, (), (1,), (1, 2), (1, 2, 3),
//               (1, 2, 3, 4)], 'a2': 'again'}, protocol=4)
const std::string kValues = std::string(
    "\x80\x04\x95s\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01"
    "a\x94K\x01\x8c"
    "\x01"
    "b\x94]\x94(J\xfe\xff\xff\xffM,\x01Jp\x11\x01\x00\x8a\x06\x00\x00"
    "\x00\x00\x00\xff\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7fG@\x04\x00\x00\x00"
    "\x00\x00\x00\x8c\x03x\xc3\xa9\x94"
    "C\x01y\x94N\x88\x89)K\x01\x85\x94K\x01"
    "K\x02\x86\x94K\x01K\x02K\x03\x87\x94(K\x01K\x02K\x03K\x04t\x94"
    "e\x8c\x02"
    "a2\x94\x8c\x05"
    "again\x94u.",
    126);

TEST(PickleTest, Values) {
  Result<Unpickled> result = run(kValues);
  ASSERT_TRUE(result.ok()) << result.message();
  const PyObject &root = result->root();
  ASSERT_EQ(root.kind, PyKind::Dict);
  EXPECT_FALSE(root.ordered);
  ASSERT_EQ(root.dictItems.size(), 3u);
  EXPECT_EQ(lookup(root, "a")->intValue, 1);
  EXPECT_EQ(lookup(root, "a2")->text, "again");
  const PyObject &b = *lookup(root, "b");
  ASSERT_EQ(b.kind, PyKind::List);
  ASSERT_EQ(b.items.size(), 16u);
  const int64_t ints[] = {-2, 300, 70000, -(int64_t(1) << 40),
                          std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(b.items[i]->kind, PyKind::Int);
    EXPECT_EQ(b.items[i]->intValue, ints[i]) << i;
  }
  EXPECT_EQ(b.items[5]->kind, PyKind::Float);
  EXPECT_EQ(b.items[5]->floatValue, 2.5);
  EXPECT_EQ(b.items[6]->kind, PyKind::Str);
  EXPECT_EQ(b.items[6]->text, "x\xc3\xa9");
  EXPECT_EQ(b.items[7]->kind, PyKind::Bytes);
  EXPECT_EQ(b.items[7]->text, "y");
  EXPECT_EQ(b.items[8]->kind, PyKind::None);
  EXPECT_EQ(b.items[9]->kind, PyKind::Bool);
  EXPECT_EQ(b.items[9]->intValue, 1);
  EXPECT_EQ(b.items[10]->kind, PyKind::Bool);
  EXPECT_EQ(b.items[10]->intValue, 0);
  for (size_t n = 0; n <= 4; ++n) {
    const PyObject &tuple = *b.items[11 + n];
    ASSERT_EQ(tuple.kind, PyKind::Tuple);
    ASSERT_EQ(tuple.items.size(), n);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(tuple.items[i]->intValue, int64_t(i + 1));
  }
}

TEST(PickleTest, DictKeysAreReplacedInPlace) {
  // {'a': 1, 'b': 2, 'a': 3}, as SETITEMS builds it: 'a' keeps its place.
  Result<Unpickled> result = run(std::string("\x80\x02}(X\x01\x00\x00\x00"
                                             "aK\x01"
                                             "X\x01\x00\x00\x00"
                                             "bK\x02"
                                             "X\x01\x00\x00\x00"
                                             "aK\x03u.",
                                             31));
  ASSERT_TRUE(result.ok()) << result.message();
  const PyObject &root = result->root();
  ASSERT_EQ(root.dictItems.size(), 2u);
  EXPECT_EQ(root.dictItems[0].first->text, "a");
  EXPECT_EQ(root.dictItems[0].second->intValue, 3);
  EXPECT_EQ(root.dictItems[1].first->text, "b");
  EXPECT_EQ(root.dictItems[1].second->intValue, 2);
}

TEST(PickleTest, HostileStructures) {
  // A list that contains itself (through the memo).
  Result<Unpickled> cycle = run(std::string("\x80\x02]q\x00h\x00"
                                            "a.",
                                            9));
  ASSERT_TRUE(cycle.ok()) << cycle.message();
  ASSERT_EQ(cycle->root().kind, PyKind::List);
  ASSERT_EQ(cycle->root().items.size(), 1u);
  EXPECT_EQ(cycle->root().items[0], &cycle->root());

  // 300000 nested lists: built and destroyed without recursion.
  std::string deep("\x80\x02]r\x00\x00\x00\x00", 8);
  for (uint32_t i = 0; i < 300000; ++i) {
    char get[5] = {'j'}, put[5] = {'r'};
    uint32_t next = i + 1;
    std::memcpy(get + 1, &i, 4);
    std::memcpy(put + 1, &next, 4);
    deep.append(get, 5).append("]").append(put, 5).append("a0");
  }
  deep += ".";
  Result<Unpickled> nested = run(deep);
  ASSERT_TRUE(nested.ok()) << nested.message();
  EXPECT_EQ(nested->root().kind, PyKind::List);
}

TEST(PickleTest, Errors) {
  expectError("", "byte 0: pickle ends without STOP (truncated)");
  expectError("\x80\x02}", "byte 3: pickle ends without STOP (truncated)");
  expectError(std::string("\x80\x02J\x01\x00", 5),
              "byte 2: pickle ends in the middle of an opcode (truncated)");
  expectError(std::string("\x80\x02X\xff\x00\x00\x00"
                          "abc",
                          10),
              "byte 2: pickle ends in the middle of an opcode (truncated)");
  expectError("\x80\x09}.", "byte 0: unsupported pickle protocol 9");
  expectError(std::string("\x80\x02}q\x00(X\x01\x00\x00\x00"
                          "aI1\nu.",
                          17),
              "byte 12: unsupported pickle opcode 0x49 'I'");
  expectError("\x80\x02\xff", "byte 2: unsupported pickle opcode 0xff");
  expectError("\x80\x02"
              "0.",
              "byte 2: stack underflow");
  expectError("\x80\x02(0.", "byte 3: stack underflow");
  expectError("\x80\x02t.", "byte 2: no MARK on the stack");
  expectError("\x80\x02K\x01K\x02.", "byte 6: STOP with 2 values on the stack");
  expectError("\x80\x02h\x05.", "byte 2: memo index 5 not set");
  expectError(std::string("\x80\x02q\x00.", 5),
              "byte 2: memoizing an empty stack");
  expectError(std::string("\x80\x02\x8b\xff\xff\xff\xff.", 8),
              "byte 2: negative LONG4 length");
  expectError(std::string("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00"
                          "\x00.",
                          14),
              "byte 2: integer of 9 bytes does not fit in 64 bits");
  expectError("\x80\x02"
              "ccollections\nOrderedDict",
              "byte 2: unterminated GLOBAL argument");
  expectError("\x80\x02K\x01K\x02u.", "byte 6: no MARK on the stack");
  expectError("\x80\x02](K\x01u.", "byte 6: SETITEM(S) on a list");
  expectError("\x80\x02}(K\x01u.", "byte 6: SETITEMS with an odd number of "
                                   "items");
  expectError("\x80\x02}(]K\x01u.",
              "byte 7: unsupported dict key of type list");
  expectError("\x80\x02}K\x01"
              "a.",
              "byte 5: APPEND(S) on a dict");
}

TEST(PickleTest, OnlyTorchGlobals) {
  // Nothing outside what torch.save uses, so nothing of the user's can run.
  Result<Unpickled> system = run("\x80\x02"
                                 "cos\nsystem\n.");
  ASSERT_FALSE(system.ok());
  EXPECT_EQ(system.message().rfind("byte 2: unsupported global 'os.system' "
                                   "(a torch.save file of a dict of tensors",
                                   0),
            0u)
      << system.message();
  expectError("\x80\x02"
              "ctorch\nload(1)\n.",
              "byte 2: unsupported global 'torch.load(1)' (a torch.save file "
              "of a dict of tensors uses only torch storage types, "
              "torch._utils tensor rebuilds and collections.OrderedDict)");
  // Allowed globals are names: calling one that is not a rebuild fails.
  expectError("\x80\x02"
              "ctorch\nHalfStorage\n)R.",
              "byte 22: unsupported call of 'torch.HalfStorage'");
  expectError("\x80\x02"
              "ccollections\nOrderedDict\n(K\x01tR.",
              "byte 31: collections.OrderedDict called with arguments");
  expectError("\x80\x02"
              "ctorch._utils\n_rebuild_tensor_v2\n)R.",
              "byte 36: torch._utils._rebuild_tensor_v2(storage, "
              "storage_offset, size, stride, requires_grad, backward_hooks"
              "[, metadata]) called with 0 arguments");
  expectError("\x80\x02"
              "ctorch._utils\n_rebuild_parameter\n)R.",
              "byte 36: torch._utils._rebuild_parameter expects (tensor, "
              "requires_grad, backward_hooks)");
  expectError("\x80\x02K\x01Q.",
              "byte 4: persistent id is not ('storage', STORAGE_TYPE, KEY, "
              "LOCATION, NUMEL)");
  expectError("\x80\x02]K\x01"
              "b.",
              "byte 5: BUILD on a list");
}

TEST(PickleTest, KindNames) {
  EXPECT_STREQ(pyKindName(PyKind::None), "None");
  EXPECT_STREQ(pyKindName(PyKind::Int), "int");
  EXPECT_STREQ(pyKindName(PyKind::Dict), "dict");
  EXPECT_STREQ(pyKindName(PyKind::Tensor), "tensor");
}

} // namespace
