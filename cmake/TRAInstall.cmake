# Install rules and the CMake package of tra, collected in one place.
#
#   cmake --install build --prefix P
#
# installs the tools (P/bin), the public headers with the generated .inc
# files and the .td files (P/include/tra), the static libraries (P/lib) and
# the package files (P/lib/cmake/tra: TRAConfig.cmake, its version file,
# TRATargets.cmake and AddTRA.cmake), so that an out-of-tree project writes
#
#   find_package(TRA CONFIG REQUIRED)   # -DTRA_DIR=P/lib/cmake/tra
#
# and gets the imported targets TRA::<library> and TRA::<tool>, as
# find_package(MLIR) gives MLIR's. examples/plugin is such a project;
# docs/Extending.md walks through it.
#
# Included from the top-level CMakeLists.txt after every target exists.
# The libraries keep DISABLE_INSTALL in their own add_mlir_library calls (it
# keeps them out of MLIR's export set); they are found here by walking the
# build tree, so a library added or moved under lib/ or runtime/ is
# installed without touching this file.

include(CMakePackageConfigHelpers)

# The layout of the prefix: the same as LLVM's and MLIR's.
set(TRA_INSTALL_BINDIR bin)
set(TRA_INSTALL_LIBDIR lib)
set(TRA_INSTALL_INCLUDEDIR include)
set(TRA_INSTALL_PACKAGEDIR ${TRA_INSTALL_LIBDIR}/cmake/tra)

# Sets `out` to the targets defined in `dir` and below.
function(tra_collect_targets dir out)
  get_property(found DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    tra_collect_targets(${subdir} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Whether `path` is `dir` or lies below it.
function(tra_path_is_under path dir out)
  string(FIND "${path}/" "${dir}/" pos)
  if(pos EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# The libraries: every static TRA* library of the compiler (lib/) and the
# runtime (runtime/), and the runtime's shared ones (libtra_cuda.so). Test
# helpers (test/, unittests/) and the Python module are not part of the
# install.
set(TRA_INSTALLED_LIBRARIES)
set(TRA_INSTALLED_TOOLS)
tra_collect_targets(${PROJECT_SOURCE_DIR} _tra_all_targets)
foreach(target IN LISTS _tra_all_targets)
  get_target_property(type ${target} TYPE)
  get_target_property(source_dir ${target} SOURCE_DIR)
  tra_path_is_under("${source_dir}" ${PROJECT_SOURCE_DIR}/lib in_lib)
  tra_path_is_under("${source_dir}" ${PROJECT_SOURCE_DIR}/runtime in_runtime)
  tra_path_is_under("${source_dir}" ${PROJECT_SOURCE_DIR}/tools in_tools)
  if((type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "SHARED_LIBRARY")
     AND target MATCHES "^TRA" AND (in_lib OR in_runtime))
    list(APPEND TRA_INSTALLED_LIBRARIES ${target})
  elseif(type STREQUAL "EXECUTABLE" AND target MATCHES "^tra-"
         AND (in_tools OR in_runtime))
    list(APPEND TRA_INSTALLED_TOOLS ${target})
  endif()
endforeach()

# Headers for code that takes the TRA symbols from a tool instead of
# linking a library: pass plugins use the tra dialect that tra-opt has
# linked in (see AddTRA.cmake).
add_library(TRAHeaders INTERFACE)
target_include_directories(TRAHeaders INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${TRA_INSTALL_INCLUDEDIR}>)

# Installed libraries carry the installed include directory, so that
# linking TRA::TRADialect is enough to compile against it.
foreach(library IN LISTS TRA_INSTALLED_LIBRARIES)
  target_include_directories(${library} INTERFACE
    $<INSTALL_INTERFACE:${TRA_INSTALL_INCLUDEDIR}>)
endforeach()

# Installed tools find libMLIR and Open MPI where the build found them
# (their build RPATH does; LLVM's default install RPATH is only
# $ORIGIN/../lib).
foreach(tool IN LISTS TRA_INSTALLED_TOOLS)
  set_target_properties(${tool} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endforeach()

install(TARGETS ${TRA_INSTALLED_TOOLS} ${TRA_INSTALLED_LIBRARIES} TRAHeaders
  EXPORT TRATargets
  RUNTIME DESTINATION ${TRA_INSTALL_BINDIR}
  LIBRARY DESTINATION ${TRA_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${TRA_INSTALL_LIBDIR})

# Public headers and .td files (include/tra), the headers tablegen
# generated (build/include/tra), and the runtime's headers
# (runtime/include, runtime/<part>/include), all under P/include/tra.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tra
  DESTINATION ${TRA_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td" PATTERN "*.def")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/tra
  DESTINATION ${TRA_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)
file(GLOB _tra_runtime_include_dirs LIST_DIRECTORIES true
  ${PROJECT_SOURCE_DIR}/runtime/include
  ${PROJECT_SOURCE_DIR}/runtime/*/include)
foreach(dir IN LISTS _tra_runtime_include_dirs)
  if(IS_DIRECTORY ${dir}/tra)
    install(DIRECTORY ${dir}/tra DESTINATION ${TRA_INSTALL_INCLUDEDIR}
      FILES_MATCHING PATTERN "*.h")
  endif()
endforeach()

# The package: TRAConfig.cmake, TRAConfigVersion.cmake, TRATargets.cmake
# (imported targets TRA::*), AddTRA.cmake (add_tra_pass_plugin).
install(EXPORT TRATargets
  NAMESPACE TRA::
  DESTINATION ${TRA_INSTALL_PACKAGEDIR})

if(TARGET TRARuntimeMPI)
  set(TRA_HAVE_MPI ON)
else()
  set(TRA_HAVE_MPI OFF)
endif()
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/TRAConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tra/TRAConfig.cmake
  INSTALL_DESTINATION ${TRA_INSTALL_PACKAGEDIR}
  PATH_VARS TRA_INSTALL_INCLUDEDIR TRA_INSTALL_BINDIR TRA_INSTALL_LIBDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/tra/TRAConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/tra/TRAConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/tra/TRAConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/AddTRA.cmake
  DESTINATION ${TRA_INSTALL_PACKAGEDIR})

# The Python package (python-bindings), when built: import it with
# PYTHONPATH=<prefix>/python. It runs the compiler in process; the programs
# it compiles link with the runtime archives of the build tree it was built
# in (locateRuntimeLibraries looks next to the executable, here python3).
if(TRA_PYTHON_BINDINGS)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/python/tra DESTINATION python
          USE_SOURCE_PERMISSIONS
          PATTERN "__pycache__" EXCLUDE)
endif()
