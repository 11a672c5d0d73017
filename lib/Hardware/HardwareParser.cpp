//===- HardwareParser.cpp - Reading hardware descriptions from JSON ------===//
//
// Turns a JSON document into a MachineSpec, checking keys and types with the
// JSON path of every value, then hands it to HardwareDescription::create for
// the checks on values (positive capacities, links for every device pair).
//
//===----------------------------------------------------------------------===//

#include "tra/Hardware/Hardware.h"

#include "HardwareInternal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace tra::hw;
using namespace tra::hw::detail;

namespace {

/// A JSON value as shown after "got" in messages.
std::string describeValue(const llvm::json::Value &value) {
  switch (value.kind()) {
  case llvm::json::Value::Null:
    return "null";
  case llvm::json::Value::Boolean:
    return *value.getAsBoolean() ? "true" : "false";
  case llvm::json::Value::Number:
    if (std::optional<int64_t> integer = value.getAsInteger())
      return std::to_string(*integer);
    return formatNumber(*value.getAsNumber());
  case llvm::json::Value::String: {
    llvm::StringRef text = *value.getAsString();
    constexpr size_t maxShown = 40;
    if (text.size() > maxShown)
      return ("\"" + text.take_front(maxShown) + "...\"").str();
    return ("\"" + text + "\"").str();
  }
  case llvm::json::Value::Array:
    return "an array";
  case llvm::json::Value::Object:
    return "an object";
  }
  llvm_unreachable("unknown json::Value kind");
}

/// "\"a\", \"b\" or \"c\"".
std::string quotedAlternatives(llvm::ArrayRef<llvm::StringRef> names) {
  std::string result;
  for (auto [i, name] : llvm::enumerate(names)) {
    if (i != 0)
      result += i + 1 == names.size() ? " or " : ", ";
    result += ("\"" + name + "\"").str();
  }
  return result;
}

/// Reads the JSON of one description. Every method reports the first problem
/// it finds as a HardwareError.
class Parser {
public:
  explicit Parser(llvm::StringRef file) : file(file) {}

  llvm::Expected<MachineSpec> parseMachine(const llvm::json::Value &root) {
    MachineSpec spec;
    const llvm::json::Object *object = nullptr;
    if (llvm::Error err = asObject(root, kRootPath, object))
      return std::move(err);
    if (llvm::Error err = checkKeys(*object, "",
                                    {key::version, key::name, key::description,
                                     key::nodes, key::network}))
      return std::move(err);
    if (llvm::Error err = readVersion(*object))
      return std::move(err);
    if (llvm::Error err = readString(*object, "", key::name, spec.name,
                                     /*required=*/true))
      return std::move(err);
    if (llvm::Error err = readString(*object, "", key::description,
                                     spec.description, /*required=*/false))
      return std::move(err);
    const llvm::json::Array *nodes = nullptr;
    if (llvm::Error err = getArray(*object, "", key::nodes, nodes,
                                   /*required=*/true))
      return std::move(err);
    for (auto [i, node] : llvm::enumerate(*nodes)) {
      NodeGroupSpec group;
      if (llvm::Error err =
              parseNodeGroup(node, indexPath("", key::nodes, i), group))
        return std::move(err);
      spec.nodes.push_back(std::move(group));
    }
    if (const llvm::json::Value *network = object->get(key::network)) {
      NetworkSpec networkSpec;
      if (llvm::Error err = parseNetwork(*network, networkSpec))
        return std::move(err);
      spec.network = networkSpec;
    }
    return spec;
  }

private:
  llvm::Error error(const llvm::Twine &path, const llvm::Twine &problem) {
    return makeError(file, path, problem);
  }

  llvm::Error typeError(const llvm::Twine &path, llvm::StringRef expected,
                        const llvm::json::Value &got) {
    return error(path, "expected " + expected + ", got " + describeValue(got));
  }

  llvm::Error asObject(const llvm::json::Value &value, const llvm::Twine &path,
                       const llvm::json::Object *&out) {
    out = value.getAsObject();
    if (!out)
      return typeError(path, "an object", value);
    return llvm::Error::success();
  }

  /// Rejects keys of `object` not in `allowed`, suggesting the closest
  /// allowed key when one is near.
  llvm::Error checkKeys(const llvm::json::Object &object,
                        const std::string &path,
                        llvm::ArrayRef<llvm::StringRef> allowed) {
    // Report the alphabetically first unknown key so that messages do not
    // depend on hash order.
    std::optional<std::string> first;
    for (const auto &entry : object) {
      llvm::StringRef name = entry.first;
      if (llvm::is_contained(allowed, name))
        continue;
      if (!first || name < *first)
        first = name.str();
    }
    if (!first)
      return llvm::Error::success();
    llvm::StringRef unknown = *first;
    llvm::StringRef best;
    unsigned bestDistance = 3;
    for (llvm::StringRef candidate : allowed) {
      unsigned distance = unknown.edit_distance(candidate, true, bestDistance);
      if (distance < bestDistance) {
        best = candidate;
        bestDistance = distance;
      }
    }
    std::string problem = "unknown key";
    if (!best.empty())
      problem += "; did you mean \"" + best.str() + "\"?";
    else
      problem += "; expected " + quotedAlternatives(allowed);
    return error(memberPath(path, unknown), problem);
  }

  llvm::Error missing(const std::string &path, llvm::StringRef name) {
    return error(memberPath(path, name), "missing required key");
  }

  llvm::Error readString(const llvm::json::Object &object,
                         const std::string &path, llvm::StringRef name,
                         std::string &out, bool required) {
    const llvm::json::Value *value = object.get(name);
    if (!value)
      return required ? missing(path, name) : llvm::Error::success();
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text)
      return typeError(memberPath(path, name), "a string", *value);
    out = text->str();
    return llvm::Error::success();
  }

  llvm::Error readNumber(const llvm::json::Object &object,
                         const std::string &path, llvm::StringRef name,
                         double &out) {
    const llvm::json::Value *value = object.get(name);
    if (!value)
      return missing(path, name);
    return numberValue(*value, memberPath(path, name), out);
  }

  llvm::Error numberValue(const llvm::json::Value &value,
                          const std::string &path, double &out) {
    std::optional<double> number = value.getAsNumber();
    if (!number)
      return typeError(path, "a number", value);
    out = *number;
    return llvm::Error::success();
  }

  /// Reads a positive integer (a count, a number of bytes).
  llvm::Error readPositiveInteger(const llvm::json::Object &object,
                                  const std::string &path, llvm::StringRef name,
                                  uint64_t &out, bool required) {
    const llvm::json::Value *value = object.get(name);
    if (!value)
      return required ? missing(path, name) : llvm::Error::success();
    std::string valuePath = memberPath(path, name);
    if (std::optional<uint64_t> unsignedValue = value->getAsUINT64()) {
      if (*unsignedValue == 0)
        return checkPositive(file, valuePath, 0);
      out = *unsignedValue;
      return llvm::Error::success();
    }
    double number = 0;
    if (llvm::Error err = numberValue(*value, valuePath, number))
      return err;
    if (!(number > 0))
      return checkPositive(file, valuePath, number);
    if (number != std::trunc(number))
      return typeError(valuePath, "an integer", *value);
    // An integral double, e.g. 8e10.
    if (number >= 0x1p63)
      return error(valuePath, "too large: " + describeValue(*value));
    out = static_cast<uint64_t>(number);
    return llvm::Error::success();
  }

  llvm::Error getArray(const llvm::json::Object &object,
                       const std::string &path, llvm::StringRef name,
                       const llvm::json::Array *&out, bool required) {
    out = nullptr;
    const llvm::json::Value *value = object.get(name);
    if (!value)
      return required ? missing(path, name) : llvm::Error::success();
    out = value->getAsArray();
    if (!out)
      return typeError(memberPath(path, name), "an array", *value);
    return llvm::Error::success();
  }

  llvm::Error readVersion(const llvm::json::Object &object) {
    const llvm::json::Value *value = object.get(key::version);
    if (!value)
      return llvm::Error::success();
    std::optional<int64_t> version = value->getAsInteger();
    if (!version)
      return typeError(key::version, "an integer", *value);
    if (*version != kFormatVersion)
      return error(key::version, "unsupported version " +
                                     llvm::Twine(*version) +
                                     "; this build reads version " +
                                     llvm::Twine(kFormatVersion));
    return llvm::Error::success();
  }

  llvm::Error parseNodeGroup(const llvm::json::Value &value,
                             const std::string &path, NodeGroupSpec &group) {
    const llvm::json::Object *object = nullptr;
    if (llvm::Error err = asObject(value, path, object))
      return err;
    if (llvm::Error err = checkKeys(*object, path,
                                    {key::name, key::count, key::devices,
                                     key::links, key::hostMemory, key::disk}))
      return err;
    if (llvm::Error err = readString(*object, path, key::name, group.name,
                                     /*required=*/false))
      return err;
    if (llvm::Error err =
            readPositiveInteger(*object, path, key::count, group.count,
                                /*required=*/false))
      return err;
    const llvm::json::Array *devices = nullptr;
    if (llvm::Error err = getArray(*object, path, key::devices, devices,
                                   /*required=*/true))
      return err;
    for (auto [j, device] : llvm::enumerate(*devices)) {
      DeviceGroupSpec spec;
      if (llvm::Error err =
              parseDeviceGroup(device, indexPath(path, key::devices, j), spec))
        return err;
      group.devices.push_back(std::move(spec));
    }
    for (auto [name, tier] :
         {std::make_pair(key::hostMemory, &group.hostMemory),
          std::make_pair(key::disk, &group.disk)}) {
      const llvm::json::Value *value = object->get(name);
      if (!value)
        continue;
      TierSpec spec;
      if (llvm::Error err = parseTier(*value, memberPath(path, name),
                                      name == key::hostMemory, group, spec))
        return err;
      *tier = spec;
    }
    const llvm::json::Array *links = nullptr;
    if (llvm::Error err = getArray(*object, path, key::links, links,
                                   /*required=*/false))
      return err;
    if (!links)
      return llvm::Error::success();
    for (auto [k, link] : llvm::enumerate(*links)) {
      LinkSpec spec;
      if (llvm::Error err =
              parseLink(link, indexPath(path, key::links, k), spec))
        return err;
      group.links.push_back(spec);
    }
    return llvm::Error::success();
  }

  llvm::Error parseDeviceKind(const llvm::json::Value &value,
                              const std::string &path, DeviceKind &out) {
    std::optional<llvm::StringRef> name = value.getAsString();
    if (!name)
      return typeError(path, "a string", value);
    std::optional<DeviceKind> kind = symbolizeDeviceKind(*name);
    if (!kind)
      return error(path, "unknown device kind " + describeValue(value) +
                             "; expected " +
                             quotedAlternatives({"cpu", "gpu"}));
    out = *kind;
    return llvm::Error::success();
  }

  llvm::Error parseDeviceGroup(const llvm::json::Value &value,
                               const std::string &path, DeviceGroupSpec &spec) {
    const llvm::json::Object *object = nullptr;
    if (llvm::Error err = asObject(value, path, object))
      return err;
    if (llvm::Error err =
            checkKeys(*object, path,
                      {key::kind, key::count, key::model, key::memoryBytes,
                       key::memoryBandwidth, key::peakFlops, key::cores,
                       key::threadSyncSeconds}))
      return err;
    const llvm::json::Value *kind = object->get(key::kind);
    if (!kind)
      return missing(path, key::kind);
    if (llvm::Error err =
            parseDeviceKind(*kind, memberPath(path, key::kind), spec.kind))
      return err;
    if (llvm::Error err = readPositiveInteger(*object, path, key::count,
                                              spec.count, /*required=*/false))
      return err;
    if (llvm::Error err = readString(*object, path, key::model, spec.model,
                                     /*required=*/false))
      return err;
    if (llvm::Error err =
            readPositiveInteger(*object, path, key::memoryBytes,
                                spec.memoryBytes, /*required=*/true))
      return err;
    if (llvm::Error err = readNumber(*object, path, key::memoryBandwidth,
                                     spec.memoryBandwidth))
      return err;
    if (llvm::Error err = parsePeakFlops(*object, path, spec))
      return err;
    if (const llvm::json::Value *sync = object->get(key::threadSyncSeconds)) {
      double seconds = 0;
      if (llvm::Error err = numberValue(
              *sync, memberPath(path, key::threadSyncSeconds), seconds))
        return err;
      spec.threadSyncSeconds = seconds;
    }
    return readPositiveInteger(*object, path, key::cores, spec.cores,
                               /*required=*/false);
  }

  llvm::Error parsePeakFlops(const llvm::json::Object &device,
                             const std::string &devicePath,
                             DeviceGroupSpec &spec) {
    const llvm::json::Value *value = device.get(key::peakFlops);
    if (!value)
      return missing(devicePath, key::peakFlops);
    std::string path = memberPath(devicePath, key::peakFlops);
    const llvm::json::Object *object = nullptr;
    if (llvm::Error err = asObject(*value, path, object))
      return err;
    // Unknown dtypes get their own message; sort for a stable first error.
    llvm::SmallVector<llvm::StringRef> names;
    for (const auto &entry : *object)
      names.push_back(entry.first);
    llvm::sort(names);
    for (llvm::StringRef name : names) {
      std::optional<DType> type = symbolizeDType(name);
      if (!type)
        return error(memberPath(path, name),
                     "unknown dtype \"" + name + "\"; expected " +
                         quotedAlternatives({"f32", "f16", "bf16"}));
      double flops = 0;
      if (llvm::Error err =
              numberValue(*object->get(name), memberPath(path, name), flops))
        return err;
      spec.peakFlops[static_cast<unsigned>(*type)] = flops;
    }
    return llvm::Error::success();
  }

  llvm::Error parseLinkKind(const llvm::json::Object &object,
                            const std::string &path, LinkKind &out) {
    const llvm::json::Value *value = object.get(key::kind);
    if (!value)
      return missing(path, key::kind);
    std::string kindPath = memberPath(path, key::kind);
    std::optional<llvm::StringRef> name = value->getAsString();
    if (!name)
      return typeError(kindPath, "a string", *value);
    std::optional<LinkKind> kind = symbolizeLinkKind(*name);
    if (!kind)
      return error(kindPath,
                   "unknown link kind " + describeValue(*value) +
                       "; expected " +
                       quotedAlternatives({"shared-memory", "pcie", "nvlink",
                                           "infinity-fabric", "ethernet",
                                           "infiniband"}));
    out = *kind;
    return llvm::Error::success();
  }

  llvm::Error parseLink(const llvm::json::Value &value, const std::string &path,
                        LinkSpec &spec) {
    const llvm::json::Object *object = nullptr;
    if (llvm::Error err = asObject(value, path, object))
      return err;
    if (llvm::Error err =
            checkKeys(*object, path,
                      {key::kind, key::between, key::bandwidth, key::latency}))
      return err;
    if (llvm::Error err = parseLinkKind(*object, path, spec.kind))
      return err;
    const llvm::json::Array *between = nullptr;
    if (llvm::Error err = getArray(*object, path, key::between, between,
                                   /*required=*/false))
      return err;
    if (between) {
      std::string betweenPath = memberPath(path, key::between);
      if (between->size() != 2)
        return error(betweenPath, "expected two device kinds, got " +
                                      llvm::Twine(between->size()));
      DeviceKind first, second;
      if (llvm::Error err =
              parseDeviceKind((*between)[0], betweenPath + "[0]", first))
        return err;
      if (llvm::Error err =
              parseDeviceKind((*between)[1], betweenPath + "[1]", second))
        return err;
      spec.between = first <= second ? std::make_pair(first, second)
                                     : std::make_pair(second, first);
    }
    if (llvm::Error err =
            readNumber(*object, path, key::bandwidth, spec.bandwidth))
      return err;
    return readNumber(*object, path, key::latency, spec.latency);
  }

  /// A "host_memory" (`host`: bytes required) or "disk" tier. Its bandwidth
  /// is its link to the node's devices: without it the tier is unusable.
  llvm::Error parseTier(const llvm::json::Value &value, const std::string &path,
                        bool host, const NodeGroupSpec &group, TierSpec &spec) {
    const llvm::json::Object *object = nullptr;
    if (llvm::Error err = asObject(value, path, object))
      return err;
    if (llvm::Error err = checkKeys(*object, path,
                                    {key::bytes, key::bandwidth, key::latency}))
      return err;
    if (llvm::Error err = readPositiveInteger(*object, path, key::bytes,
                                              spec.bytes, /*required=*/host))
      return err;
    if (!object->get(key::bandwidth)) {
      std::string node = group.name.empty() ? std::string("this node group")
                                            : "node \"" + group.name + "\"";
      return error(memberPath(path, key::bandwidth),
                   "missing required key: the " +
                       llvm::Twine(host ? "host memory" : "disk") + " of " +
                       node +
                       " has no link to its devices; give the bandwidth "
                       "between the tier and each device");
    }
    if (llvm::Error err =
            readNumber(*object, path, key::bandwidth, spec.bandwidth))
      return err;
    if (object->get(key::latency))
      return readNumber(*object, path, key::latency, spec.latency);
    return llvm::Error::success();
  }

  llvm::Error parseNetwork(const llvm::json::Value &value, NetworkSpec &spec) {
    std::string path = key::network.str();
    const llvm::json::Object *object = nullptr;
    if (llvm::Error err = asObject(value, path, object))
      return err;
    if (llvm::Error err =
            checkKeys(*object, path, {key::kind, key::bandwidth, key::latency}))
      return err;
    if (llvm::Error err = parseLinkKind(*object, path, spec.kind))
      return err;
    if (llvm::Error err =
            readNumber(*object, path, key::bandwidth, spec.bandwidth))
      return err;
    return readNumber(*object, path, key::latency, spec.latency);
  }

  llvm::StringRef file;
};

/// Converts llvm::json's ParseError, which prints as
/// "[LINE:COLUMN, byte=OFFSET]: MESSAGE", into a HardwareError.
llvm::Error convertSyntaxError(llvm::Error err, llvm::StringRef file) {
  std::string text = llvm::toString(std::move(err));
  llvm::StringRef rest = text;
  unsigned line = 0, column = 0;
  if (rest.consume_front("[") && !rest.consumeInteger(10, line) &&
      rest.consume_front(":") && !rest.consumeInteger(10, column)) {
    size_t end = rest.find("]: ");
    // llvm::json reports the offset just past the offending character, which
    // is that character's 1-based column; at the very start of a line
    // (nothing consumed, e.g. an empty file) it is 0.
    if (end != llvm::StringRef::npos && line != 0)
      return llvm::make_error<HardwareError>(
          file.str(), line, std::max(column, 1u),
          ("invalid JSON: " + rest.drop_front(end + 3)).str());
  }
  return llvm::make_error<HardwareError>(file.str(), "",
                                         "invalid JSON: " + text);
}

/// The JSON path of the first key that appears twice in one object of
/// `text`, which must be valid JSON. llvm::json keeps one of the two values
/// silently; a description must not.
std::optional<std::string> findDuplicateKey(llvm::StringRef text) {
  struct Frame {
    bool isObject;
    std::string path;
    llvm::StringSet<> keys;
    std::string lastKey;
    bool expectKey = true;
    size_t index = 0;
  };
  llvm::SmallVector<Frame> stack;
  auto childPath = [&]() -> std::string {
    if (stack.empty())
      return "";
    Frame &top = stack.back();
    if (top.isObject)
      return memberPath(top.path, top.lastKey);
    return indexPath("", top.path, top.index);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      std::string value;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size())
          value += text[i++];
        value += text[i];
      }
      if (stack.empty() || !stack.back().isObject || !stack.back().expectKey)
        continue;
      Frame &top = stack.back();
      top.expectKey = false;
      top.lastKey = value;
      if (!top.keys.insert(value).second)
        return memberPath(top.path, value);
    } else if (c == '{' || c == '[') {
      Frame frame{c == '{', childPath(), {}, "", true, 0};
      stack.push_back(std::move(frame));
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    } else if (c == ',' && !stack.empty()) {
      if (stack.back().isObject)
        stack.back().expectKey = true;
      else
        ++stack.back().index;
    }
  }
  return std::nullopt;
}

} // namespace

llvm::Expected<HardwareDescription>
tra::hw::parseHardwareJSON(llvm::StringRef text, llvm::StringRef fileName) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  if (!root)
    return convertSyntaxError(root.takeError(), fileName);
  if (std::optional<std::string> duplicate = findDuplicateKey(text))
    return makeError(fileName, *duplicate, "duplicate key");
  llvm::Expected<MachineSpec> spec = Parser(fileName).parseMachine(*root);
  if (!spec)
    return spec.takeError();
  return HardwareDescription::create(std::move(*spec), fileName);
}

llvm::Expected<HardwareDescription>
tra::hw::parseHardwareFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::make_error<HardwareError>(
        path.str(), "", "cannot open: " + buffer.getError().message());
  return parseHardwareJSON((*buffer)->getBuffer(), path);
}

llvm::Expected<HardwareDescription>
tra::hw::loadHardware(llvm::StringRef spec) {
  if (spec.empty())
    return llvm::createStringError(
        "no hardware description given (an empty name): expected '" +
        std::string(kLocalHardwareSpec) + "' or a hardware file (FILE.json)");
  if (spec == kLocalHardwareSpec)
    return detectLocalHardware();
  return parseHardwareFile(spec);
}
