# -*- Python -*-
# The example plugin's lit test: %tra_opt is the installed tra-opt, %plugin
# the plugin built against it; FileCheck comes from LLVM.
import os

import lit.formats

config.name = "TRA example plugin"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.plugin_obj_root, "test")

config.substitutions.append(("%tra_opt", config.tra_opt))
config.substitutions.append(("%plugin", config.plugin))
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
