//===- ModuleFile.cpp - Reading a model file safely -----------------------===//

#include "tra/Parse/ModuleFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

std::optional<size_t> mlir::tra::findExcessiveNesting(llvm::StringRef text,
                                                      unsigned limit) {
  unsigned depth = 0;
  size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    switch (c) {
    case '"':
      // A string literal: skip to its closing quote (escapes skip a byte).
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < n && text[i + 1] == '/')
        while (i < n && text[i] != '\n')
          ++i;
      break;
    case '<':
      if (i + 1 < n && text[i + 1] == '=')
        break;
      [[fallthrough]];
    case '[':
    case '{':
    case '(':
      if (++depth > limit)
        return i;
      break;
    case '>':
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < n && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case ']':
    case '}':
    case ')':
      // Unbalanced closers (an error the parser reports) never go below 0.
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::string mlir::tra::describeExcessiveNesting(unsigned limit) {
  return "the IR nests brackets, braces, parentheses or angle brackets more "
         "than " +
         std::to_string(limit) + " levels deep here, more than tra reads";
}

LogicalResult mlir::tra::checkNestingDepth(llvm::SourceMgr &sourceMgr,
                                           MLIRContext *context,
                                           unsigned limit) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<size_t> at = findExcessiveNesting(buffer->getBuffer(), limit);
  if (!at)
    return success();
  llvm::SMLoc loc = llvm::SMLoc::getFromPointer(buffer->getBufferStart() + *at);
  auto [line, column] = sourceMgr.getLineAndColumn(loc);
  emitError(
      FileLineColLoc::get(context, buffer->getBufferIdentifier(), line, column))
      << describeExcessiveNesting(limit);
  return failure();
}

OwningOpRef<ModuleOp> mlir::tra::parseModuleFile(llvm::SourceMgr &sourceMgr,
                                                 const ParserConfig &config) {
  if (failed(checkNestingDepth(sourceMgr, config.getContext())))
    return nullptr;
  return parseSourceFile<ModuleOp>(sourceMgr, config);
}

OwningOpRef<ModuleOp> mlir::tra::parseModuleText(llvm::StringRef text,
                                                 MLIRContext *context,
                                                 llvm::StringRef bufferName) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  return parseModuleFile(sourceMgr, ParserConfig(context));
}
