//===- Strings.h - Small string helpers -------------------------*- C++ -*-===//

#ifndef TRA_RUNTIME_STRINGS_H
#define TRA_RUNTIME_STRINGS_H

#include <string_view>

namespace tra::rt {

/// Returns true if `text` ends with `suffix`.
inline bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

} // namespace tra::rt

#endif // TRA_RUNTIME_STRINGS_H
