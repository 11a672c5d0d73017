//===- LibraryCache.cpp - The on-disk cache of compiled libraries
//-----------===//

#include "tra/Target/LibraryCache.h"

#include "tra/Exec/ABI.h"
#include "tra/Target/Codegen.h"
#include "tra/Target/Distributed.h"
#include "tra/Target/Link.h"
#include "tra/Target/ProgramLoader.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>

using namespace mlir;
using namespace mlir::tra;

/// Appends "path size mtime" of `path` (or "path missing").
static void describeFile(StringRef path, llvm::raw_ostream &os) {
  llvm::sys::fs::file_status status;
  os << path;
  if (llvm::sys::fs::status(path, status))
    os << " missing\n";
  else
    os << " " << status.getSize() << " "
       << status.getLastModificationTime().time_since_epoch().count() << "\n";
}

std::string mlir::tra::getCompilerIdentity() {
  std::string identity;
  llvm::raw_string_ostream os(identity);
  os << "tra abi " << TRA_EXEC_ABI_VERSION << " llvm " << LLVM_VERSION_STRING
     << "\n";
  static int anchor;
  describeFile(llvm::sys::fs::getMainExecutable(nullptr, &anchor), os);
  // What host and GPU libraries link (a rebuilt runtime changes their code).
  for (const LinkOptions &link : {getDefaultSharedLibraryLinkOptions(),
                                  getCudaSharedLibraryLinkOptions()}) {
    os << link.linker << "\n";
    for (const std::string &library : link.runtimeLibraries)
      describeFile(library, os);
    for (const std::string &library : link.systemLibraries)
      os << library << "\n";
  }
  return identity;
}

std::string mlir::tra::getDefaultLibraryCacheDirectory() {
  SmallString<128> path;
  if (!llvm::sys::path::cache_directory(path))
    return "";
  llvm::sys::path::append(path, "tra");
  return std::string(path);
}

std::string mlir::tra::computeLibraryCacheKey(ModuleOp module,
                                              const CodegenOptions &options,
                                              StringRef extra) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tra library cache v1\n" << getCompilerIdentity() << "\n";
  std::string cpu =
      options.cpu.empty() ? llvm::sys::getHostCPUName().str() : options.cpu;
  std::string features = options.features;
  if (features.empty() && options.cpu.empty()) {
    // Sorted: a StringMap's iteration order is not specified.
    SmallVector<std::string> host;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      host.push_back((feature.second ? "+" : "-") + feature.first().str());
    llvm::sort(host);
    features = llvm::join(host, ",");
  }
  os << "entry " << options.entry << "\nO" << options.optLevel << "\ncpu "
     << cpu << "\nfeatures " << features << "\nblas " << options.blas << " "
     << options.blasMinFlops << "\nbounds " << options.boundsChecks << "\nfuse "
     << options.fuseElementwise << "\nmasked " << options.maskedBlock
     << "\nprofile " << options.profile << "\nthreads " << options.numThreads
     << " " << options.parallelMinWork.value_or(-1) << "\nparallel-costs "
     << llvm::format("%.17g %.17g %.17g", options.parallelCosts.syncSeconds,
                     options.parallelCosts.coreBytesPerSecond,
                     options.parallelCosts.coreMacsPerSecond)
     << "\ntarget " << (options.cuda ? "cuda" : "cpu");
  for (const std::string &chip : options.gpuChips)
    os << " " << chip;
  os << "\n" << extra << "\n";
  module->print(os, OpPrintingFlags().enableDebugInfo(false));
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)),
                     /*LowerCase=*/true);
}

//===----------------------------------------------------------------------===//
// The cache
//===----------------------------------------------------------------------===//

namespace {
/// How long a process waits for another that builds the same cache entry.
constexpr std::chrono::milliseconds kLockWait = std::chrono::minutes(30);

/// The SHA-256 (hex) and size of a file's bytes.
struct Checksum {
  std::string sha256;
  uint64_t size = 0;
};

llvm::Expected<Checksum> checksumFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(path + ": " + buffer.getError().message());
  Checksum sum;
  sum.size = (*buffer)->getBufferSize();
  sum.sha256 = llvm::toHex(
      llvm::SHA256::hash(llvm::arrayRefFromStringRef((*buffer)->getBuffer())),
      /*LowerCase=*/true);
  return sum;
}

/// The manifest written next to a cached library: "sha256 HEX\nsize N\n".
std::string manifestText(const Checksum &sum) {
  return "sha256 " + sum.sha256 + "\nsize " + std::to_string(sum.size) + "\n";
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Succeeds if the manifest next to `library` matches its bytes; else says
/// why not.
llvm::Error checkManifest(StringRef library, StringRef manifest) {
  auto expected = llvm::MemoryBuffer::getFile(manifest, /*IsText=*/true);
  if (!expected)
    return llvm::createStringError(
        "its manifest " + manifest +
        " cannot be read: " + expected.getError().message());
  llvm::Expected<Checksum> sum = checksumFile(library);
  if (!sum)
    return sum.takeError();
  if ((*expected)->getBuffer() != manifestText(*sum))
    return llvm::createStringError("checksum or size mismatch with " +
                                   manifest);
  return llvm::Error::success();
}

/// Writes `text` to `path` atomically (a temporary file renamed into place).
llvm::Error writeFileAtomically(StringRef path, StringRef text) {
  if (llvm::Error error = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
        os << text;
        return llvm::Error::success();
      }))
    return llvm::createStringError(path + ": " +
                                   llvm::toString(std::move(error)));
  return llvm::Error::success();
}

/// Looks up `<stem>-<key>.so` in `directory` (which exists): an entry whose
/// manifest matches its bytes and that `accept` takes (it fails saying why
/// not) is used as it is; a corrupt or stale entry is reported on `notes`
/// and removed. Otherwise `build` writes the library to a private file in
/// the directory, `adopt` is called on that file (e.g. to load it, so that
/// another process replacing the entry meanwhile cannot affect this one),
/// and it is renamed into place before its manifest is written.
llvm::Expected<CachedLibrary>
findOrBuildEntry(StringRef directory, StringRef stem, StringRef key,
                 llvm::function_ref<llvm::Error(StringRef)> accept,
                 llvm::function_ref<LogicalResult(StringRef)> build,
                 llvm::function_ref<llvm::Error(StringRef)> adopt,
                 llvm::raw_ostream &notes) {
  CachedLibrary entry;
  SmallString<128> library(directory);
  llvm::sys::path::append(library, stem + "-" + key + ".so");
  SmallString<128> manifest(library);
  manifest += ".sha256";

  // Processes that want the same entry take turns: the first builds and
  // publishes it, the others then find it and load it, instead of all
  // compiling at once and publishing over each other. The lock belongs to
  // the process, so it ends with it however it ends (a SIGKILL included);
  // one that waits longer than kLockWait builds the entry itself.
  SmallString<128> lockPath(library);
  lockPath += ".lock";
  int lockFd = -1;
  bool locked = false;
  if (!llvm::sys::fs::openFileForReadWrite(lockPath, lockFd,
                                           llvm::sys::fs::CD_OpenAlways,
                                           llvm::sys::fs::OF_None)) {
    auto waitStart = std::chrono::steady_clock::now();
    locked = !llvm::sys::fs::tryLockFile(lockFd, kLockWait);
    if (!locked)
      notes << "waited " << int(secondsSince(waitStart))
            << " s for another process building " << library
            << "; building it here too\n";
  }
  auto unlock = llvm::make_scope_exit([&] {
    if (locked)
      (void)llvm::sys::fs::unlockFile(lockFd);
    if (lockFd >= 0)
      llvm::sys::Process::SafelyCloseFileDescriptor(lockFd);
  });
  if (llvm::sys::fs::exists(library) || llvm::sys::fs::exists(manifest)) {
    llvm::Error why = checkManifest(library, manifest);
    if (!why)
      why = accept(library);
    if (!why) {
      entry.path = std::string(library);
      entry.fromCache = true;
      return entry;
    }
    notes << "cache entry " << library << " is corrupt or stale ("
          << llvm::toString(std::move(why)) << "); rebuilding it\n";
    llvm::sys::fs::remove(manifest);
    llvm::sys::fs::remove(library);
  }

  SmallString<128> built;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(library + ".tmp-%%%%%%%%", fd, built))
    return llvm::createStringError(library + ": " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover removeBuilt(built);
  auto start = std::chrono::steady_clock::now();
  if (failed(build(built)))
    return llvm::createStringError("code generation failed");
  entry.compileSeconds = secondsSince(start);
  llvm::Expected<Checksum> sum = checksumFile(built);
  if (!sum)
    return sum.takeError();
  if (llvm::Error error = adopt(built))
    return std::move(error);
  if (std::error_code ec = llvm::sys::fs::rename(built, library))
    return llvm::createStringError(library + ": " + ec.message());
  removeBuilt.releaseFile();
  if (llvm::Error error = writeFileAtomically(manifest, manifestText(*sum)))
    return std::move(error);
  entry.path = std::string(library);
  return entry;
}

/// Creates `directory` if needed; returns false (with a note) if it cannot
/// be used.
bool prepareCacheDirectory(StringRef directory, llvm::raw_ostream &notes) {
  if (directory.empty())
    return false;
  if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
    notes << "cannot create the cache directory " << directory << ": "
          << ec.message() << "; compiling without the cache\n";
    return false;
  }
  // create_directories accepts an existing file of that name.
  if (!llvm::sys::fs::is_directory(directory)) {
    notes << "the cache directory " << directory
          << " is not a directory; compiling without the cache\n";
    return false;
  }
  return true;
}
} // namespace

llvm::Expected<CompiledProgram>
mlir::tra::loadOrCompileProgram(ModuleOp module, const CodegenOptions &options,
                                StringRef cacheDirectory, StringRef keyExtra,
                                llvm::raw_ostream &notes) {
  CompiledProgram result;
  {
    FailureOr<func::FuncOp> entry = findEntryFunction(module, options.entry);
    if (failed(entry))
      return llvm::createStringError("no entry function to compile");
    FailureOr<EntrySignature> signature = getEntrySignature(*entry);
    if (failed(signature))
      return llvm::createStringError("the entry function cannot be compiled");
    result.signature = std::move(*signature);
  }
  auto build = [&](StringRef path) {
    return compileToSharedLibrary(module, path, options);
  };
  auto load = [&](StringRef path) -> llvm::Error {
    llvm::Expected<std::unique_ptr<::tra::exec::ProgramLibrary>> program =
        openProgramLibrary(path);
    if (!program)
      return program.takeError();
    if (llvm::Error error = checkProgramSignature(**program, result.signature))
      return error;
    for (auto [i, output] : llvm::enumerate(result.signature.outputs))
      output.aliasedInput = (*program)->outputAliasedInput(i);
    result.program = std::move(*program);
    return llvm::Error::success();
  };

  if (prepareCacheDirectory(cacheDirectory, notes)) {
    std::string key = computeLibraryCacheKey(module, options, keyExtra);
    llvm::Expected<CachedLibrary> entry = findOrBuildEntry(
        cacheDirectory, options.entry, key, load, build, load, notes);
    if (!entry)
      return entry.takeError();
    result.fromCache = entry->fromCache;
    result.compileSeconds = entry->compileSeconds;
    result.cachePath = entry->path;
    return result;
  }

  // No cache: compile into a temporary directory, removed once loaded.
  SmallString<128> scratchDir, built;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("tra-program", scratchDir))
    return llvm::createStringError("cannot create a temporary directory: " +
                                   ec.message());
  llvm::scope_exit cleanUp(
      [&] { llvm::sys::fs::remove_directories(scratchDir); });
  built = scratchDir;
  llvm::sys::path::append(built, options.entry + ".so");
  auto start = std::chrono::steady_clock::now();
  if (failed(build(built)))
    return llvm::createStringError("code generation failed");
  result.compileSeconds = secondsSince(start);
  if (llvm::Error error = load(built))
    return std::move(error);
  return result;
}

//===----------------------------------------------------------------------===//
// Distributed programs' libraries
//===----------------------------------------------------------------------===//

llvm::Expected<CachedLibrary> mlir::tra::findOrCompileDistributedLibrary(
    ModuleOp module, const CodegenOptions &options, StringRef cacheDirectory,
    StringRef keyExtra, StringRef scratchDirectory, llvm::raw_ostream &notes) {
  CachedLibrary result;
  auto build = [&](StringRef path) {
    return compileDistributedToSharedLibrary(module, path, options);
  };
  if (prepareCacheDirectory(cacheDirectory, notes)) {
    // The module is planned: its text, and so the key, includes the plan.
    std::string key = computeLibraryCacheKey(module, options, keyExtra);
    return findOrBuildEntry(
        cacheDirectory, options.entry + "-dist", key,
        [](StringRef) { return llvm::Error::success(); }, build,
        [](StringRef) { return llvm::Error::success(); }, notes);
  }
  SmallString<128> built;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          scratchDirectory + "/" + options.entry + "-dist-%%%%%%%%.so", fd,
          built))
    return llvm::createStringError(scratchDirectory + ": " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  auto start = std::chrono::steady_clock::now();
  if (failed(build(built)))
    return llvm::createStringError("code generation failed");
  result.compileSeconds = secondsSince(start);
  result.path = std::string(built);
  return result;
}
