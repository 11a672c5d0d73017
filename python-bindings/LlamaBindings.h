//===- LlamaBindings.h - tra.Llama: generation from Python ------*- C++ -*-===//

#ifndef TRA_PYTHON_LLAMABINDINGS_H
#define TRA_PYTHON_LLAMABINDINGS_H

#include <pybind11/pybind11.h>

/// Adds the class `Llama` to the module.
void registerLlama(pybind11::module_ &m);

#endif // TRA_PYTHON_LLAMABINDINGS_H
