//===- CompileBindings.h - tra.compile: programs from Python ----*- C++ -*-===//

#ifndef TRA_PYTHON_COMPILEBINDINGS_H
#define TRA_PYTHON_COMPILEBINDINGS_H

#include <pybind11/pybind11.h>

/// Adds `_compile` and the class `CompiledProgram` to the module (wrapped
/// by tra.compile and tra.Program in tra/program.py).
void registerCompile(pybind11::module_ &m);

#endif // TRA_PYTHON_COMPILEBINDINGS_H
