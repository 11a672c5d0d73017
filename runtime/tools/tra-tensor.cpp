//===- tra-tensor.cpp - Inspect and convert tensor files ------------------===//
//
//   tra-tensor info FILE
//       Lists the tensors of FILE (.npy, .safetensors, or a sharded
//       checkpoint's *.safetensors.index.json): name, dtype and shape.
//   tra-tensor convert IN OUT [--dtype DTYPE] [--name NAME]
//       Converts between .npy and .safetensors (by file extension; IN may
//       also be an index file). --dtype converts every tensor written.
//       .npy -> .safetensors stores the array as tensor NAME (default: the
//       input file's stem). .safetensors -> .npy writes tensor NAME, which
//       may be omitted when the input holds exactly one tensor.
//       .safetensors -> .safetensors copies all tensors (or only NAME) and
//       the metadata. BF16 written to .npy becomes f32 (NumPy has no bf16).
//
// Errors are printed as "tra-tensor: error: FILE: PROBLEM" with exit code 1;
// usage errors exit with code 2.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Npy.h"
#include "tra/Runtime/Safetensors.h"
#include "tra/Runtime/Strings.h"
#include "tra/Runtime/Tensor.h"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using namespace tra::rt;

namespace {

enum class Format { Npy, Safetensors, Index };

const char *const kUsage =
    "usage: tra-tensor info FILE\n"
    "       tra-tensor convert IN OUT [--dtype DTYPE] [--name NAME]\n"
    "\n"
    "FILE, IN: .npy, .safetensors or *.safetensors.index.json\n"
    "OUT:      .npy or .safetensors\n"
    "DTYPE:    f32 f16 bf16 f64 i64 i32 i16 i8 u8 bool\n";

int usageError(const std::string &message) {
  std::fprintf(stderr, "tra-tensor: error: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int failure(const Error &error) {
  std::fprintf(stderr, "tra-tensor: error: %s\n", error.message.c_str());
  return 1;
}

Result<Format> formatOf(const std::string &path) {
  if (endsWith(path, ".npy"))
    return Format::Npy;
  if (endsWith(path, ".safetensors"))
    return Format::Safetensors;
  if (endsWith(path, ".json"))
    return Format::Index;
  return fileError(path, "unknown file type (expected .npy, .safetensors or "
                         ".safetensors.index.json)");
}

void printTable(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> widths;
  for (const auto &row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i)
        widths.push_back(0);
      widths[i] = std::max(widths[i], row[i].size());
    }
  for (const auto &row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size())
        line.append(widths[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string stemOf(const std::string &path) {
  return std::filesystem::path(path).stem().string();
}

int info(const std::string &path) {
  Result<Format> format = formatOf(path);
  if (!format)
    return failure(format.error());
  std::vector<std::vector<std::string>> rows = {{"name", "dtype", "shape"}};
  if (*format == Format::Npy) {
    Result<NpyHeader> header = readNpyHeader(path);
    if (!header)
      return failure(header.error());
    std::printf("%s: .npy format %d.%d, descr '%s'\n", path.c_str(),
                header->majorVersion, header->minorVersion,
                header->descr.c_str());
    rows.push_back(
        {stemOf(path), dtypeName(header->dtype), formatShape(header->shape)});
    printTable(rows);
    return 0;
  }

  Result<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::open(path);
  if (!checkpoint)
    return failure(checkpoint.error());
  std::printf("%s: safetensors, %zu tensor%s in %zu file%s\n", path.c_str(),
              checkpoint->tensorNames().size(),
              checkpoint->tensorNames().size() == 1 ? "" : "s",
              checkpoint->shards().size(),
              checkpoint->shards().size() == 1 ? "" : "s");
  bool sharded = checkpoint->isSharded();
  if (sharded)
    rows.front().push_back("file");
  for (const std::string &name : checkpoint->tensorNames()) {
    const SafetensorsFile *shard = *checkpoint->shardOf(name);
    const SafetensorsEntry *entry = shard->find(name);
    std::vector<std::string> row = {name, dtypeName(entry->dtype),
                                    formatShape(entry->shape)};
    if (sharded)
      row.push_back(std::filesystem::path(shard->path()).filename().string());
    rows.push_back(std::move(row));
  }
  printTable(rows);
  for (const SafetensorsFile &shard : checkpoint->shards()) {
    if (shard.metadata().empty())
      continue;
    std::printf("metadata%s%s:\n", sharded ? " of " : "",
                sharded ? shard.path().c_str() : "");
    for (const auto &item : shard.metadata())
      std::printf("  %s = %s\n", item.first.c_str(), item.second.c_str());
  }
  return 0;
}

int convertFile(const std::string &in, const std::string &out,
                std::optional<DType> dtype,
                const std::optional<std::string> &name) {
  Result<Format> inFormat = formatOf(in);
  if (!inFormat)
    return failure(inFormat.error());
  Result<Format> outFormat = formatOf(out);
  if (!outFormat)
    return failure(outFormat.error());
  if (*outFormat == Format::Index)
    return failure(fileError(out, "cannot write an index file; write a "
                                  ".safetensors file"));

  // Gather the tensors to write.
  std::vector<NamedTensor> tensors;
  SafetensorsMetadata metadata;
  if (*inFormat == Format::Npy) {
    Result<HostTensor> tensor = readNpy(in, {/*memoryMap=*/true});
    if (!tensor)
      return failure(tensor.error());
    tensors.push_back({name.value_or(stemOf(in)), std::move(*tensor)});
  } else {
    Result<SafetensorsCheckpoint> checkpoint = SafetensorsCheckpoint::open(in);
    if (!checkpoint)
      return failure(checkpoint.error());
    if (name) {
      Result<HostTensor> tensor = checkpoint->get(*name);
      if (!tensor)
        return failure(tensor.error());
      tensors.push_back({*name, std::move(*tensor)});
    } else if (*outFormat == Format::Npy &&
               checkpoint->tensorNames().size() != 1) {
      return failure(fileError(
          in, "holds " + std::to_string(checkpoint->tensorNames().size()) +
                  " tensors; choose the one to write to .npy with --name"));
    } else {
      for (const std::string &tensorName : checkpoint->tensorNames())
        tensors.push_back({tensorName, *checkpoint->get(tensorName)});
    }
    if (!checkpoint->isSharded())
      metadata = checkpoint->shards().front().metadata();
  }

  if (dtype)
    for (NamedTensor &named : tensors)
      named.tensor = convert(named.tensor, *dtype);

  Status status = *outFormat == Format::Npy
                      ? writeNpy(out, tensors.front().tensor)
                      : writeSafetensors(out, tensors, metadata);
  if (!status)
    return failure(status.error());
  return 0;
}

} // namespace

static int run(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    return usageError("missing command");
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::printf("%s", kUsage);
    return 0;
  }

  std::vector<std::string> positional;
  std::optional<DType> dtype;
  std::optional<std::string> name;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto takeValue = [&](const std::string &option,
                         std::string &value) -> bool {
      if (arg.rfind(option + "=", 0) == 0) {
        value = arg.substr(option.size() + 1);
        return true;
      }
      if (arg == option && i + 1 < args.size()) {
        value = args[++i];
        return true;
      }
      return false;
    };
    std::string value;
    if (arg == "--dtype" || arg.rfind("--dtype=", 0) == 0) {
      if (!takeValue("--dtype", value))
        return usageError("--dtype needs a value");
      dtype = parseDType(value);
      if (!dtype)
        return usageError("unknown dtype '" + value + "'");
    } else if (arg == "--name" || arg.rfind("--name=", 0) == 0) {
      if (!takeValue("--name", value))
        return usageError("--name needs a value");
      name = value;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usageError("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }

  if (args[0] == "info") {
    if (positional.size() != 1 || dtype || name)
      return usageError("'info' takes exactly one FILE and no options");
    return info(positional[0]);
  }
  if (args[0] == "convert") {
    if (positional.size() != 2)
      return usageError("'convert' takes an input and an output file");
    return convertFile(positional[0], positional[1], dtype, name);
  }
  return usageError("unknown command '" + args[0] + "'");
}

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) { // Out of memory, in practice.
    std::fprintf(stderr, "tra-tensor: error: %s\n", e.what());
    return 1;
  }
}
