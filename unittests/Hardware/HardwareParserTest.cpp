//===- HardwareParserTest.cpp - Errors in hardware descriptions ----------===//
//
// One assertion on the exact message of every class of error a description
// can contain.
//
//===----------------------------------------------------------------------===//

#include "tra/Hardware/Hardware.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace tra::hw;

namespace {

/// A valid description: two node groups, a CPU+GPU node and a GPU node.
/// Tests replace one piece of it.
const char *const kValid = R"({
  "version": 1,
  "name": "test",
  "nodes": [
    {
      "name": "box",
      "devices": [
        { "kind": "cpu", "cores": 8, "memory_bytes": 1000,
          "memory_bandwidth": 1e9, "peak_flops": { "f32": 1e9 } },
        { "kind": "gpu", "count": 2, "memory_bytes": 2000,
          "memory_bandwidth": 2e9, "peak_flops": { "f32": 2e9, "f16": 4e9 } }
      ],
      "links": [
        { "kind": "nvlink", "between": ["gpu", "gpu"], "bandwidth": 5e9, "latency": 1e-6 },
        { "kind": "pcie", "bandwidth": 3e9, "latency": 2e-6 }
      ]
    },
    {
      "count": 2,
      "devices": [
        { "kind": "gpu", "memory_bytes": 2000, "memory_bandwidth": 2e9,
          "peak_flops": { "f32": 2e9 } }
      ]
    }
  ],
  "network": { "kind": "ethernet", "bandwidth": 1e9, "latency": 1e-5 }
})";

/// kValid with the first occurrence of `from` replaced by `to`.
std::string replaced(llvm::StringRef from, llvm::StringRef to) {
  std::string text = kValid;
  size_t at = text.find(from.str());
  EXPECT_NE(at, std::string::npos) << "not in the base text: " << from.str();
  if (at != std::string::npos)
    text.replace(at, from.size(), to.str());
  return text;
}

/// The message of parsing `text` as "t.json"; "" if it parses.
std::string errorOf(llvm::StringRef text) {
  llvm::Expected<HardwareDescription> hw = parseHardwareJSON(text, "t.json");
  if (hw)
    return "";
  return llvm::toString(hw.takeError());
}

std::string errorOfReplaced(llvm::StringRef from, llvm::StringRef to) {
  return errorOf(replaced(from, to));
}

TEST(HardwareParser, BaseTextIsValid) {
  llvm::Expected<HardwareDescription> hw = parseHardwareJSON(kValid, "t.json");
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->numDevices(), 5u);
  EXPECT_EQ(hw->numNodes(), 3u);
  EXPECT_EQ(hw->link(0, 1).kind, LinkKind::PCIe);
  EXPECT_EQ(hw->link(1, 2).kind, LinkKind::NVLink);
  EXPECT_EQ(hw->link(3, 4).linkClass, LinkClass::InterNode);
}

TEST(HardwareParser, ExampleFromTheDocs) {
  // The message the documentation shows.
  EXPECT_EQ(errorOfReplaced(R"("count": 2, "memory_bytes": 2000)",
                            R"("count": 2, "memory_bytes": -4)"),
            "t.json: nodes[0].devices[1].memory_bytes: expected a positive "
            "number, got -4");
}

TEST(HardwareParser, InvalidJSON) {
  EXPECT_EQ(errorOf("{\n  \"name\": \"x\",\n  \"nodes\": [ }\n"),
            "t.json:3:14: invalid JSON: Invalid JSON value");
  EXPECT_EQ(errorOf(""), "t.json:1:1: invalid JSON: Unexpected EOF");
  llvm::Expected<HardwareDescription> hw = parseHardwareJSON("[1,,]", "t.json");
  ASSERT_FALSE(bool(hw));
  llvm::handleAllErrors(hw.takeError(), [](const HardwareError &err) {
    EXPECT_EQ(err.getLine(), 1u);
    EXPECT_EQ(err.getColumn(), 4u);
    EXPECT_TRUE(err.getPath().empty());
  });
}

TEST(HardwareParser, MissingFile) {
  llvm::Expected<HardwareDescription> hw =
      parseHardwareFile("no/such/dir/hw.json");
  ASSERT_FALSE(bool(hw));
  EXPECT_EQ(llvm::toString(hw.takeError()),
            "no/such/dir/hw.json: cannot open: No such file or directory");
  hw = loadHardware("no/such/dir/hw.json");
  ASSERT_FALSE(bool(hw));
  EXPECT_EQ(llvm::toString(hw.takeError()),
            "no/such/dir/hw.json: cannot open: No such file or directory");
}

TEST(HardwareParser, UnknownKeys) {
  EXPECT_EQ(errorOfReplaced(R"("count": 2, "memory_bytes")",
                            R"("count": 2, "memroy_bytes")"),
            "t.json: nodes[0].devices[1].memroy_bytes: unknown key; did you "
            "mean \"memory_bytes\"?");
  EXPECT_EQ(
      errorOfReplaced(R"("version": 1,)", R"("version": 1, "owner": "me",)"),
      "t.json: owner: unknown key; expected \"version\", \"name\", "
      "\"description\", \"nodes\" or \"network\"");
  EXPECT_EQ(errorOfReplaced(R"("latency": 1e-5 })",
                            R"("latency": 1e-5, "mtu": 9000 })"),
            "t.json: network.mtu: unknown key; expected \"kind\", "
            "\"bandwidth\" or \"latency\"");
  EXPECT_EQ(errorOfReplaced(R"("kind": "pcie",)",
                            R"("kind": "pcie", "bandwith": 1,)"),
            "t.json: nodes[0].links[1].bandwith: unknown key; did you mean "
            "\"bandwidth\"?");
}

TEST(HardwareParser, MissingRequiredKeys) {
  EXPECT_EQ(errorOfReplaced(R"("name": "test",)", ""),
            "t.json: name: missing required key");
  EXPECT_EQ(
      errorOfReplaced(R"("count": 2, "memory_bytes": 2000,)", R"("count": 2,)"),
      "t.json: nodes[0].devices[1].memory_bytes: missing required key");
  EXPECT_EQ(errorOfReplaced(R"("memory_bandwidth": 1e9,)", ""),
            "t.json: nodes[0].devices[0].memory_bandwidth: missing required "
            "key");
  EXPECT_EQ(errorOfReplaced(R"("peak_flops": { "f32": 1e9 })",
                            R"("peak_flops": { "bf16": 1e9 })"),
            "t.json: nodes[0].devices[0].peak_flops.f32: missing required "
            "key");
  EXPECT_EQ(
      errorOfReplaced(R"("kind": "cpu", "cores": 8,)", R"("kind": "cpu",)"),
      "t.json: nodes[0].devices[0].cores: missing required key: a cpu "
      "device states the threads it may use");
  EXPECT_EQ(errorOfReplaced(R"("kind": "nvlink", )", ""),
            "t.json: nodes[0].links[0].kind: missing required key");
  EXPECT_EQ(errorOfReplaced(R"("bandwidth": 1e9, "latency": 1e-5)",
                            R"("bandwidth": 1e9)"),
            "t.json: network.latency: missing required key");
  EXPECT_EQ(errorOf(R"({"name": "x"})"), "t.json: nodes: missing required key");
}

TEST(HardwareParser, WrongTypes) {
  EXPECT_EQ(
      errorOfReplaced(
          R"("memory_bandwidth": 2e9, "peak_flops": { "f32": 2e9, )",
          R"("memory_bandwidth": "2 TB/s", "peak_flops": { "f32": 2e9, )"),
      "t.json: nodes[0].devices[1].memory_bandwidth: expected a number, "
      "got \"2 TB/s\"");
  EXPECT_EQ(errorOfReplaced(R"("count": 2,)", R"("count": "two",)"),
            "t.json: nodes[0].devices[1].count: expected a number, got "
            "\"two\"");
  EXPECT_EQ(errorOfReplaced(R"({ "f32": 1e9 })", R"({ "f32": true })"),
            "t.json: nodes[0].devices[0].peak_flops.f32: expected a number, "
            "got true");
  EXPECT_EQ(errorOfReplaced(R"("latency": 1e-5)", R"("latency": null)"),
            "t.json: network.latency: expected a number, got null");
  EXPECT_EQ(errorOfReplaced(R"("name": "test")", R"("name": 5)"),
            "t.json: name: expected a string, got 5");
  EXPECT_EQ(errorOf(R"({"name": "x", "nodes": {}})"),
            "t.json: nodes: expected an array, got an object");
  EXPECT_EQ(errorOf("[]"), "t.json: (root): expected an object, got an array");
  EXPECT_EQ(errorOf(R"({"name": "x", "nodes": [7]})"),
            "t.json: nodes[0]: expected an object, got 7");
  EXPECT_EQ(errorOfReplaced(R"({ "f32": 1e9 })", "[1e9]"),
            "t.json: nodes[0].devices[0].peak_flops: expected an object, got "
            "an array");
  EXPECT_EQ(errorOfReplaced(R"("version": 1)", R"("version": "1")"),
            "t.json: version: expected an integer, got \"1\"");
  EXPECT_EQ(errorOfReplaced(R"("count": 2,)", R"("count": 2.5,)"),
            "t.json: nodes[0].devices[1].count: expected an integer, got 2.5");
  EXPECT_EQ(
      errorOfReplaced(
          R"("memory_bytes": 1000)",
          R"("memory_bytes": "1000000000000000000000000000000000000000000")"),
      "t.json: nodes[0].devices[0].memory_bytes: expected a number, got "
      "\"1000000000000000000000000000000000000000...\"");
}

TEST(HardwareParser, NonPositiveCapacitiesAndCounts) {
  EXPECT_EQ(errorOfReplaced(R"("memory_bytes": 1000)", R"("memory_bytes": 0)"),
            "t.json: nodes[0].devices[0].memory_bytes: expected a positive "
            "number, got 0");
  EXPECT_EQ(errorOfReplaced(R"("count": 2,)", R"("count": 0,)"),
            "t.json: nodes[0].devices[1].count: expected a positive number, "
            "got 0");
  EXPECT_EQ(errorOfReplaced(R"("count": 2,
      "devices")",
                            R"("count": -6,
      "devices")"),
            "t.json: nodes[1].count: expected a positive number, got -6");
  EXPECT_EQ(errorOfReplaced(R"("cores": 8)", R"("cores": 0)"),
            "t.json: nodes[0].devices[0].cores: expected a positive number, "
            "got 0");
  EXPECT_EQ(errorOfReplaced(R"("memory_bandwidth": 1e9)",
                            R"("memory_bandwidth": -1.5e9)"),
            "t.json: nodes[0].devices[0].memory_bandwidth: expected a positive "
            "number, got -1500000000");
  EXPECT_EQ(errorOfReplaced(R"("f16": 4e9)", R"("f16": 0)"),
            "t.json: nodes[0].devices[1].peak_flops.f16: expected a positive "
            "number, got 0");
  EXPECT_EQ(errorOfReplaced(R"("bandwidth": 5e9)", R"("bandwidth": 0)"),
            "t.json: nodes[0].links[0].bandwidth: expected a positive number, "
            "got 0");
  EXPECT_EQ(errorOfReplaced(R"("bandwidth": 1e9, "latency")",
                            R"("bandwidth": -0.5, "latency")"),
            "t.json: network.bandwidth: expected a positive number, got -0.5");
  EXPECT_EQ(
      errorOfReplaced(R"("memory_bytes": 1000)", R"("memory_bytes": 1e30)"),
      "t.json: nodes[0].devices[0].memory_bytes: too large: 1e+30");
  EXPECT_EQ(
      errorOfReplaced(R"("memory_bytes": 1000)", R"("memory_bytes": 1e400)"),
      "t.json: nodes[0].devices[0].memory_bytes: too large: inf");
}

TEST(HardwareParser, NegativeLatency) {
  EXPECT_EQ(errorOfReplaced(R"("latency": 2e-6)", R"("latency": -1e-6)"),
            "t.json: nodes[0].links[1].latency: expected a non-negative "
            "number, got -1e-06");
  EXPECT_EQ(errorOfReplaced(R"("latency": 1e-5)", R"("latency": -3)"),
            "t.json: network.latency: expected a non-negative number, got -3");
  // Zero latency is allowed.
  EXPECT_EQ(errorOfReplaced(R"("latency": 1e-5)", R"("latency": 0)"), "");
}

TEST(HardwareParser, EmptyLists) {
  EXPECT_EQ(errorOf(R"({"name": "x", "nodes": []})"),
            "t.json: nodes: expected a non-empty array");
  EXPECT_EQ(errorOf(R"({"name": "x", "nodes": [{"devices": []}]})"),
            "t.json: nodes[0].devices: expected a non-empty array");
  EXPECT_EQ(errorOfReplaced(R"("name": "test")", R"("name": "")"),
            "t.json: name: expected a non-empty string");
}

TEST(HardwareParser, UnknownDeviceKind) {
  EXPECT_EQ(errorOfReplaced(R"("kind": "cpu")", R"("kind": "tpu")"),
            "t.json: nodes[0].devices[0].kind: unknown device kind \"tpu\"; "
            "expected \"cpu\" or \"gpu\"");
  EXPECT_EQ(errorOfReplaced(R"(["gpu", "gpu"])", R"(["gpu", "fpga"])"),
            "t.json: nodes[0].links[0].between[1]: unknown device kind "
            "\"fpga\"; expected \"cpu\" or \"gpu\"");
}

TEST(HardwareParser, UnknownDType) {
  EXPECT_EQ(errorOfReplaced(R"("f16": 4e9)", R"("f64": 4e9)"),
            "t.json: nodes[0].devices[1].peak_flops.f64: unknown dtype "
            "\"f64\"; expected \"f32\", \"f16\" or \"bf16\"");
}

TEST(HardwareParser, UnknownLinkKind) {
  EXPECT_EQ(
      errorOfReplaced(R"("kind": "ethernet")", R"("kind": "carrier-pigeon")"),
      "t.json: network.kind: unknown link kind \"carrier-pigeon\"; "
      "expected \"shared-memory\", \"pcie\", \"nvlink\", "
      "\"infinity-fabric\", \"ethernet\" or \"infiniband\"");
}

TEST(HardwareParser, MissingNetwork) {
  EXPECT_EQ(errorOfReplaced(R"(,
  "network": { "kind": "ethernet", "bandwidth": 1e9, "latency": 1e-5 })",
                            ""),
            "t.json: network: missing required key: the machine has 3 nodes "
            "and needs a network between them");
}

TEST(HardwareParser, MissingLinks) {
  // Without the catch-all link, cpu-gpu pairs have no link.
  EXPECT_EQ(errorOfReplaced(R"(,
        { "kind": "pcie", "bandwidth": 3e9, "latency": 2e-6 })",
                            ""),
            "t.json: nodes[0].links: no link between cpu and gpu devices; add "
            "one with \"between\": [\"cpu\", \"gpu\"] or one without "
            "\"between\"");
  EXPECT_EQ(errorOf(R"({"name": "x", "nodes": [{"devices": [
                {"kind": "gpu", "count": 2, "memory_bytes": 1,
                 "memory_bandwidth": 1, "peak_flops": {"f32": 1}}]}]})"),
            "t.json: nodes[0].links: missing required key: a node with more "
            "than one device needs links between its devices");
}

TEST(HardwareParser, BadLinks) {
  EXPECT_EQ(errorOfReplaced(R"(["gpu", "gpu"])", R"(["gpu"])"),
            "t.json: nodes[0].links[0].between: expected two device kinds, "
            "got 1");
  EXPECT_EQ(errorOfReplaced(
                R"({ "kind": "pcie", "bandwidth")",
                R"({ "kind": "pcie", "between": ["gpu", "gpu"], "bandwidth")"),
            "t.json: nodes[0].links[1]: duplicate link between gpu and gpu; "
            "nodes[0].links[0] already gives it");
  EXPECT_EQ(errorOf(R"({"name": "x", "nodes": [{"devices": [
                {"kind": "gpu", "count": 2, "memory_bytes": 1,
                 "memory_bandwidth": 1, "peak_flops": {"f32": 1}}],
                "links": [{"kind": "pcie", "between": ["cpu", "gpu"],
                           "bandwidth": 1, "latency": 0}]}]})"),
            "t.json: nodes[0].links[0].between: the node has no cpu devices");
}

TEST(HardwareParser, DuplicateKeys) {
  EXPECT_EQ(errorOfReplaced(R"("name": "test",)",
                            R"("name": "test", "name": "other",)"),
            "t.json: name: duplicate key");
  EXPECT_EQ(errorOfReplaced(R"("f16": 4e9)", R"("f16": 4e9, "f16": 5e9)"),
            "t.json: nodes[0].devices[1].peak_flops.f16: duplicate key");
  EXPECT_EQ(errorOfReplaced(R"("count": 2,
      "devices")",
                            R"("count": 2, "count": 3,
      "devices")"),
            "t.json: nodes[1].count: duplicate key");
  // Equal keys in different objects, and keys equal to string values, are
  // fine.
  EXPECT_EQ(errorOfReplaced(R"("name": "test")", R"("name": "name")"), "");
}

TEST(HardwareParser, UnsupportedVersion) {
  EXPECT_EQ(errorOfReplaced(R"("version": 1)", R"("version": 2)"),
            "t.json: version: unsupported version 2; this build reads "
            "version 1");
}

TEST(HardwareParser, TooManyDevices) {
  EXPECT_EQ(errorOfReplaced(R"("count": 2,
      "devices")",
                            R"("count": 2000000,
      "devices")"),
            "t.json: nodes[1].count: too many devices or nodes; at most "
            "1048576 are supported");
}

TEST(HardwareParser, ErrorParts) {
  llvm::Expected<HardwareDescription> hw =
      parseHardwareJSON(replaced(R"("cores": 8)", R"("cores": -2)"), "t.json");
  ASSERT_FALSE(bool(hw));
  llvm::handleAllErrors(hw.takeError(), [](const HardwareError &err) {
    EXPECT_EQ(err.getFile(), "t.json");
    EXPECT_EQ(err.getPath(), "nodes[0].devices[0].cores");
    EXPECT_EQ(err.getProblem(), "expected a positive number, got -2");
    EXPECT_EQ(err.getLine(), 0u);
  });
}

TEST(HardwareParser, DefaultsAndNormalization) {
  llvm::Expected<HardwareDescription> hw = parseHardwareJSON(
      replaced(R"(["gpu", "gpu"])", R"(["gpu", "gpu"])"), "t.json");
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  // "count" defaults to 1; integral doubles are accepted for integers.
  llvm::Expected<HardwareDescription> small = parseHardwareJSON(
      R"({"name": "x", "nodes": [{"devices": [
          {"kind": "cpu", "cores": 4.0, "memory_bytes": 8e9,
           "memory_bandwidth": 1e10, "peak_flops": {"f32": 1e11}}]}]})",
      "t.json");
  ASSERT_TRUE(bool(small)) << llvm::toString(small.takeError());
  EXPECT_EQ(small->numDevices(), 1u);
  EXPECT_EQ(small->getDevice(0).memoryBytes, 8000000000u);
  EXPECT_EQ(small->getDevice(0).cores, 4u);
  // "between" is unordered.
  llvm::Expected<HardwareDescription> swapped = parseHardwareJSON(
      replaced(R"({ "kind": "pcie", "bandwidth")",
               R"({ "kind": "pcie", "between": ["gpu", "cpu"], "bandwidth")"),
      "t.json");
  ASSERT_TRUE(bool(swapped)) << llvm::toString(swapped.takeError());
  EXPECT_EQ(swapped->link(1, 0).kind, LinkKind::PCIe);
}

// A CPU's seconds per parallel region: read, defaulted, round-tripped, and
// the parallel costs the runtime gets from it; every bad value is an error
// naming the field.
TEST(HardwareParser, ThreadSyncSeconds) {
  llvm::Expected<HardwareDescription> stated = parseHardwareJSON(
      replaced(R"("cores": 8,)", R"("cores": 8, "thread_sync_seconds": 3e-6,)"),
      "t.json");
  ASSERT_TRUE(bool(stated)) << llvm::toString(stated.takeError());
  const Device &cpu = stated->getDevice(0);
  EXPECT_DOUBLE_EQ(cpu.threadSyncSeconds, 3e-6);
  ::tra::exec::ParallelCosts costs = cpu.getParallelCosts();
  EXPECT_TRUE(costs.valid());
  EXPECT_DOUBLE_EQ(costs.syncSeconds, 3e-6);
  EXPECT_DOUBLE_EQ(costs.coreBytesPerSecond, 1e9 / 8);
  EXPECT_DOUBLE_EQ(costs.coreMacsPerSecond, 1e9 / 2 / 8);
  // GPUs have no CPU costs.
  EXPECT_FALSE(stated->getDevice(1).getParallelCosts().valid());
  EXPECT_EQ(stated->getDevice(1).threadSyncSeconds, 0.0);
  llvm::Expected<HardwareDescription> again =
      parseHardwareJSON(stated->toJSONText(), "again.json");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(*again, *stated);
  std::string summary;
  llvm::raw_string_ostream os(summary);
  stated->printSummary(os);
  EXPECT_NE(summary.find("3 us per parallel region"), std::string::npos)
      << summary;

  // Not stated: the default, and not written back.
  llvm::Expected<HardwareDescription> plain = parseHardwareJSON(kValid, "t");
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  EXPECT_DOUBLE_EQ(plain->getDevice(0).threadSyncSeconds,
                   kDefaultThreadSyncSeconds);
  EXPECT_EQ(plain->toJSONText().find("thread_sync_seconds"), std::string::npos);

  EXPECT_EQ(errorOfReplaced(R"("cores": 8,)",
                            R"("cores": 8, "thread_sync_seconds": 0,)"),
            "t.json: nodes[0].devices[0].thread_sync_seconds: expected a "
            "positive number, got 0");
  EXPECT_EQ(errorOfReplaced(R"("cores": 8,)",
                            R"("cores": 8, "thread_sync_seconds": -2e-6,)"),
            "t.json: nodes[0].devices[0].thread_sync_seconds: expected a "
            "positive number, got -2e-06");
  EXPECT_EQ(errorOfReplaced(R"("cores": 8,)",
                            R"("cores": 8, "thread_sync_seconds": 2,)"),
            "t.json: nodes[0].devices[0].thread_sync_seconds: expected "
            "seconds below 1, got 2 (a parallel region costs microseconds)");
  EXPECT_EQ(errorOfReplaced(R"("cores": 8,)",
                            R"("cores": 8, "thread_sync_seconds": "2us",)"),
            "t.json: nodes[0].devices[0].thread_sync_seconds: expected a "
            "number, got \"2us\"");
  EXPECT_EQ(errorOfReplaced(R"("kind": "gpu", "count": 2,)",
                            R"("kind": "gpu", "count": 2, )"
                            R"("thread_sync_seconds": 1e-6,)"),
            "t.json: nodes[0].devices[1].thread_sync_seconds: only a cpu "
            "device has threads to synchronise");
}

// Memory tiers of a node group: read, round-tripped, and every bad tier is
// an error naming the node group and the field.
TEST(HardwareParser, MemoryTiers) {
  const std::string tiers =
      R"("name": "box", "host_memory": { "bytes": 64000, "bandwidth": 2.5e10,
          "latency": 1e-5 }, "disk": { "bandwidth": 3e9 },)";
  llvm::Expected<HardwareDescription> hw =
      parseHardwareJSON(replaced(R"("name": "box",)", tiers), "t.json");
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  ASSERT_NE(hw->getHostMemory(0), nullptr);
  EXPECT_EQ(hw->getHostMemory(0)->bytes, 64000u);
  EXPECT_EQ(hw->getHostMemory(0)->bandwidth, 2.5e10);
  EXPECT_EQ(hw->getHostMemory(0)->latency, 1e-5);
  ASSERT_NE(hw->getDisk(0), nullptr);
  EXPECT_EQ(hw->getDisk(0)->bytes, 0u);
  // The second group (nodes 1 and 2) states none.
  EXPECT_EQ(hw->getHostMemory(1), nullptr);
  EXPECT_EQ(hw->getDisk(2), nullptr);
  EXPECT_EQ(hw->totalHostMemoryBytes(), 64000u);
  llvm::Expected<HardwareDescription> again =
      parseHardwareJSON(hw->toJSONText(), "again.json");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_TRUE(*again == *hw);
  std::string summary;
  llvm::raw_string_ostream os(summary);
  hw->printSummary(os);
  EXPECT_NE(summary.find("host memory: 62.5 KiB, 25 GB/s to each device"),
            std::string::npos)
      << summary;

  EXPECT_EQ(
      errorOfReplaced(R"("name": "box",)",
                      R"("name": "box", "host_memory": { "bytes": 64000 },)"),
      "t.json: nodes[0].host_memory.bandwidth: missing required key: "
      "the host memory of node \"box\" has no link to its devices; give "
      "the bandwidth between the tier and each device");
  EXPECT_EQ(errorOfReplaced("\"count\": 2,\n      \"devices\"",
                            "\"count\": 2, \"disk\": { \"bytes\": 5 },\n"
                            "      \"devices\""),
            "t.json: nodes[1].disk.bandwidth: missing required key: the disk "
            "of this node group has no link to its devices; give the "
            "bandwidth between the tier and each device");
  EXPECT_EQ(
      errorOfReplaced(R"("name": "box",)",
                      R"("name": "box", "host_memory": { "bandwidth": 1e9 },)"),
      "t.json: nodes[0].host_memory.bytes: missing required key");
  EXPECT_EQ(
      errorOfReplaced(
          R"("name": "box",)",
          R"("name": "box", "host_memory": { "bytes": 0, "bandwidth": 1e9 },)"),
      "t.json: nodes[0].host_memory.bytes: expected a positive number, "
      "got 0");
  EXPECT_EQ(errorOfReplaced(R"("name": "box",)",
                            R"("name": "box", "disk": { "bandwidth": -3 },)"),
            "t.json: nodes[0].disk.bandwidth: expected a positive number, got "
            "-3");
  EXPECT_EQ(errorOfReplaced(
                R"("name": "box",)",
                R"("name": "box", "disk": { "bandwidth": 3, "latency": -1 },)"),
            "t.json: nodes[0].disk.latency: expected a non-negative number, "
            "got -1");
  EXPECT_EQ(errorOfReplaced(
                R"("name": "box",)",
                R"("name": "box", "disk": { "bandwidth": 3, "size": 1 },)"),
            "t.json: nodes[0].disk.size: unknown key; expected \"bytes\", "
            "\"bandwidth\" or \"latency\"");
  EXPECT_EQ(
      errorOfReplaced(R"("name": "box",)", R"("name": "box", "disk": 3,)"),
      "t.json: nodes[0].disk: expected an object, got 3");
}

} // namespace
