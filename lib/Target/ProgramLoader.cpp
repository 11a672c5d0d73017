//===- ProgramLoader.cpp - Compiled programs loaded in process
//--------------===//

#include "tra/Target/ProgramLoader.h"

#include "tra/Exec/ABI.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <tuple>

using namespace mlir;
using namespace mlir::tra;

llvm::Expected<std::unique_ptr<::tra::exec::ProgramLibrary>>
mlir::tra::openProgramLibrary(StringRef path) {
  ::tra::rt::Result<std::unique_ptr<::tra::exec::ProgramLibrary>> library =
      ::tra::exec::ProgramLibrary::open(path.str());
  if (!library)
    return llvm::createStringError(library.message());
  if ((*library)->isDistributed())
    return llvm::createStringError(
        path + ": a distributed program of " +
        Twine((*library)->program().numRanks) +
        " ranks (tra-llama-worker runs those under mpirun)");
  return std::move(*library);
}

llvm::Error
mlir::tra::checkProgramSignature(const ::tra::exec::ProgramLibrary &library,
                                 const EntrySignature &signature) {
  const TraExecProgram &p = library.program();
  const std::string &path = library.path();
  auto describe = [](StringRef name, int64_t dtype, ArrayRef<int64_t> shape) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << name << ": "
       << (dtype >= 0 && dtype <= int64_t(ExecElementType::i8)
               ? stringifyExecElementType(ExecElementType(dtype))
               : StringRef("?"))
       << "[";
    llvm::interleave(shape, os, ", ");
    os << "]";
    return s;
  };
  if (signature.function != p.entryName)
    return llvm::createStringError(path + ": entry @" + p.entryName +
                                   ", expected @" + signature.function);
  for (auto [kind, expected, count, infos] :
       {std::tuple{"input", &signature.inputs, p.numInputs, p.inputs},
        std::tuple{"output", &signature.outputs, p.numOutputs, p.outputs}}) {
    if (int64_t(expected->size()) != count)
      return llvm::createStringError(path + ": " + Twine(count) + " " + kind +
                                     "s, expected " + Twine(expected->size()));
    for (int64_t i = 0; i < count; ++i) {
      const EntryTensor &want = (*expected)[i];
      ArrayRef<int64_t> shape(infos[i].shape, infos[i].rank);
      std::string got = describe(infos[i].name, infos[i].dtype, shape);
      std::string wanted =
          describe(want.name, int64_t(want.elementType), want.shape);
      if (got != wanted)
        return llvm::createStringError(path + ": " + kind + " " + Twine(i) +
                                       " is " + got + ", expected " + wanted);
    }
  }
  return llvm::Error::success();
}
