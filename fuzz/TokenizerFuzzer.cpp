//===- TokenizerFuzzer.cpp - Fuzzes the tokenizer file reader -------------===//
//
// Tokenizer::open on the input as a file: llama2.c's tokenizer.bin, or the
// vocabulary of a GGUF file when the input starts with the GGUF magic. A
// vocabulary it accepts encodes a fixed text (ASCII, multi-byte and invalid
// UTF-8) and decodes every id it produced.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"

#include "tra/Runtime/Tokenizer.h"

#include <cstdio>
#include <cstdlib>

using namespace tra::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tra::fuzz::TempInput input(data, size, ".bin");
  Result<Tokenizer> tokenizer = Tokenizer::open(input.path());
  if (!tokenizer)
    return 0;
  static const char kText[] = "Hello world, \xc3\xa9t\xc3\xa9 \xe2\x96\x81 "
                              "\xf0\x9f\x99\x82 \xff\xc3 end";
  std::vector<int64_t> ids = tokenizer->encode(kText);
  int64_t previous = 1;
  std::string text;
  for (int64_t id : ids) {
    if (id < 0 || id >= tokenizer->size()) {
      std::fprintf(stderr, "TokenizerFuzzer: encode produced id %lld of %lld\n",
                   (long long)id, (long long)tokenizer->size());
      std::abort();
    }
    text += tokenizer->decode(previous, id);
    previous = id;
  }
  tra::fuzz::keep(text.size());
  return 0;
}
