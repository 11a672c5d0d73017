# AddTRA.cmake: helpers for projects built against an installed tra
# (installed next to TRAConfig.cmake; find_package(TRA) sets TRA_CMAKE_DIR).
#
#   find_package(TRA CONFIG REQUIRED)
#   list(APPEND CMAKE_MODULE_PATH "${TRA_CMAKE_DIR}")
#   include(AddTRA)
#   add_tra_pass_plugin(MyPlugin MyPass.cpp DEPENDS MyPassIncGen)
#
# add_tra_pass_plugin(<name> <sources>... [DEPENDS <targets>...])
#
#   Builds <name>.so, a pass plugin: a shared module that defines
#   mlirGetPassPluginInfo() and is loaded with
#   `tra-opt --load-pass-plugin=<name>.so`.
#
#   The plugin links no TRA library. The tra dialect's ops, attributes and
#   their TypeIDs are defined once, in tra-opt, which exports its symbols
#   for plugins; the plugin's references to them (EinsumOp::getSpec(),
#   TypeID::get<EinsumOp>(), inferIndexExtents, ...) bind to tra-opt's
#   definitions when the plugin is loaded. A plugin that linked its own
#   copy of TRADialect would carry a second set of the dialect's TypeIDs
#   and statics: at best dead weight (tra-opt's exported symbols interpose
#   them), at worst, in a tool that does not export them, a dialect whose
#   isa<tra::EinsumOp> matches none of the ops the tool parsed. MLIR and
#   LLVM come from their shared libraries, the ones tra-opt uses.
function(add_tra_pass_plugin name)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  add_library(${name} MODULE ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON)
  # TRA::TRAHeaders: tra's, MLIR's and LLVM's include directories.
  target_link_libraries(${name} PRIVATE TRA::TRAHeaders MLIR)

  # Compile like tra and LLVM were compiled. Inline functions of the
  # headers (EinsumOp::getInputs(), TypeID::get<EinsumOp>(), ...) stay
  # private to the plugin instead of joining the process's dynamic symbols.
  separate_arguments(llvm_definitions NATIVE_COMMAND "${LLVM_DEFINITIONS}")
  target_compile_options(${name} PRIVATE ${llvm_definitions}
    -fvisibility-inlines-hidden)
  if(NOT LLVM_ENABLE_RTTI)
    target_compile_options(${name} PRIVATE -fno-rtti)
  endif()
  if(NOT LLVM_ENABLE_EH)
    target_compile_options(${name} PRIVATE -fno-exceptions)
  endif()
  # A plugin for a sanitizer build of tra-opt is instrumented too; the
  # sanitizer runtimes are tra-opt's.
  if(TRA_ENABLE_SANITIZERS)
    target_compile_options(${name} PRIVATE
      -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${name} PRIVATE -fsanitize=address,undefined)
  endif()

  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
endfunction()
