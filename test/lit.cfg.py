# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TRA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "bindings_check.py", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tra_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%tra_src", config.tra_src_root))
config.substitutions.append(("%tra_bin", config.tra_tools_dir))
config.substitutions.append(("%tra_obj", config.tra_obj_root))
config.substitutions.append(
    ("%models", os.path.join(os.path.dirname(config.tra_src_root), "shared", "models")))
# Building out-of-tree projects against an installed tra (install-plugin.test)
# with this build's CMake, generator, compiler and build type. The longer
# name first: %cmake is a prefix of it.
config.substitutions.append(
    ("%cmake_configure_flags",
     "-G '%s' -DCMAKE_MAKE_PROGRAM=%s -DCMAKE_CXX_COMPILER=%s -DCMAKE_BUILD_TYPE=%s"
     % (config.cmake_generator, config.make_program, config.cxx_compiler,
        config.build_type)))
config.substitutions.append(("%cmake", config.cmake_command))

# Locals resolve first, then the LLVM tools (FileCheck, not, count).
llvm_config.with_environment(
    "PATH", [config.tra_tools_dir, config.llvm_tools_dir], append_path=True)
llvm_config.use_default_substitutions()

# Strict FileCheck: variables do not leak across CHECK-LABELs.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
# Sanitizer builds: fail on any report, and let ASan's leak checker run.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons memory from inline
# header code in our instrumented objects while the uninstrumented libMLIR
# allocates from the same arenas; without it ASan reports those as
# use-after-poison although nothing is wrong.
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:allow_user_poisoning=0"
# tra-llama caches compiled models under $XDG_CACHE_HOME/tra: keep the
# suite's cache in the build tree, not in the user's home.
config.environment["XDG_CACHE_HOME"] = os.path.join(config.tra_obj_root, "test", "cache")
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"

# Sanitizer builds run the suite again; model-sized end-to-end runs (minutes
# under ASan, and the same code paths as the small tests) are marked
# `UNSUPPORTED: asan` and run in the release suite only.
if config.sanitizers in ("ON", "1", "TRUE", "True"):
    config.available_features.add("asan")

if config.python_bindings == "ON":
    config.available_features.add("python-bindings")

# Open MPI: allow running as root (CI runs as root) and more ranks than
# cores.
import shutil
if shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # Open MPI's dynamically loaded components keep allocations until exit
    # and are unloaded before LeakSanitizer runs, so their "leaks" cannot
    # be suppressed by library; ranks run with leak detection off (ASan's
    # memory-error checks stay on).
    config.substitutions.append(
        ("%mpirun", "mpirun --allow-run-as-root --oversubscribe "
                    "-x ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0"))

# GPU code generation. cuda-toolkit: kernels compile (ptxas and fatbinary of
# the toolkit the build found) and programs link with runtime/cuda; every
# GPU compile test runs ptxas for sm_80 and sm_90. cuda-device: a GPU and its
# driver are present (tests that run kernels compare them with the CPU).
# %fake_cuda runs a GPU program against the fake driver, cuBLAS and NCCL of
# unittests/Cuda (host memory; cuBLAS calls are computed, kernels are not;
# NCCL moves go through files in the directory FAKE_NCCL_DIR names).
if (config.cuda_runtime == "ON" and config.cuda_toolkit and
        os.access(os.path.join(config.cuda_toolkit, "bin", "ptxas"), os.X_OK) and
        os.access(os.path.join(config.cuda_toolkit, "bin", "fatbinary"), os.X_OK)):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%cuda_toolkit", config.cuda_toolkit))
    if config.fake_cuda_driver:
        config.available_features.add("fake-cuda")
        config.substitutions.append(
            ("%fake_cuda", "env TRA_CUDA_DRIVER=%s TRA_CUBLAS=%s TRA_NCCL=%s"
             % (config.fake_cuda_driver, config.fake_cublas,
                config.fake_nccl)))
        # DRIVER:CUBLAS, for tests that start processes of their own.
        config.substitutions.append(
            ("%cuda_fake_libs", "%s:%s" % (config.fake_cuda_driver,
                                           config.fake_cublas)))
# Without the fake driver the tests that use it skip (an empty value).
if "fake-cuda" not in config.available_features:
    config.substitutions.append(("%cuda_fake_libs", ""))


def _has_cuda_device():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return (cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0
            and count.value > 0)


if "cuda-toolkit" in config.available_features and _has_cuda_device():
    config.available_features.add("cuda-device")

tools = ["tra-opt", "tra-interpret", "tra-tensor", "tra-compile", "tra-llama", "tra-mpi-check"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], [config.tra_tools_dir])
