//===- JsonFuzzer.cpp - Fuzzes the runtime's JSON parser ------------------===//
//
// parseJson on the input; a value it accepts must serialize to JSON that
// parses again and serializes to the same text (compact and indented). The
// same text is read as a Meta params.json (parseMetaParams), the main JSON
// file users hand the runtime besides safetensors headers.
//
//===----------------------------------------------------------------------===//

#include "tra/Runtime/Json.h"
#include "tra/Runtime/MetaCheckpoint.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace tra::rt;

static void expect(bool condition, const char *what) {
  if (!condition) {
    std::fprintf(stderr, "JsonFuzzer: %s\n", what);
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Result<JsonValue> value = parseJson(text, "fuzz.json");
  if (value) {
    for (int indent : {0, 2}) {
      std::string once = value->serialize(indent);
      Result<JsonValue> again = parseJson(once, "serialized");
      expect(again.ok(), "serialized JSON does not parse again");
      expect(again->serialize(indent) == once,
             "serializing is not a fixed point");
    }
  }
  Result<MetaModelArgs> args = parseMetaParams(text, "params.json");
  if (args) {
    (void)args->hiddenDim();
    (void)args
        ->toLlamaParams(args->vocabSize > 0 ? args->vocabSize : 32000, false)
        .validate();
  }
  return 0;
}
