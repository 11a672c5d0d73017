//===- Diagnostics.h - MLIR diagnostics as Python exceptions ----*- C++ -*-===//
//
// The bindings turn every error into a Python ValueError whose message is
// the diagnostics MLIR emitted ("<python>:2:26: custom op ..."), collected
// while a DiagnosticCollector is alive.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_PYTHON_DIAGNOSTICS_H
#define TRA_PYTHON_DIAGNOSTICS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tra::python {

/// Collects the diagnostics of `ctx` while alive (instead of printing them)
/// and joins them into one message, one line each, prefixed by their
/// location.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *ctx)
      : handler(ctx, [this](mlir::Diagnostic &diag) {
          std::string loc;
          llvm::raw_string_ostream os(loc);
          if (auto fl =
                  llvm::dyn_cast<mlir::FileLineColLoc>(diag.getLocation()))
            os << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
               << fl.getColumn();
          else
            os << diag.getLocation();
          messages += (messages.empty() ? "" : "\n") + loc + ": " + diag.str();
          return mlir::success();
        }) {}
  const std::string &str() const { return messages; }

  /// `message`, followed by the diagnostics collected so far (if any).
  std::string withMessage(const std::string &message) const {
    if (messages.empty())
      return message;
    if (message.empty())
      return messages;
    return message + "\n" + messages;
  }

private:
  std::string messages;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace tra::python

#endif // TRA_PYTHON_DIAGNOSTICS_H
