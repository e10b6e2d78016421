# -*- Python -*-
#
# lit configuration of the attn regression tests (modelled on
# llvm-project/mlir/examples/standalone/test/lit.cfg.py).
#
# Normally loaded from the lit.site.cfg.py that CMake generates in the build
# tree (`ninja check-attn`). It also works when lit is pointed straight at the
# source tree (`lit test/`): then the LLVM tools come from
# /usr/lib/llvm-22/bin and Output/ directories go to a scratch directory.
#
# Where attn-opt is found, first match wins:
#   1. the ATTN_TOOLS_DIR environment variable,
#   2. `lit --param attn_tools_dir=DIR`,
#   3. config.attn_tools_dir from the site config (${CMAKE_BINARY_DIR}/bin),
#   4. PATH (only when lit runs on the source tree without a site config).
# e.g.  ATTN_TOOLS_DIR=$PWD/build-stable lit -v test/

import os
import tempfile

import lit.formats
import lit.util

# Without a site config (lit run on the source tree) lit.llvm is not set up.
if not hasattr(config, "llvm_tools_dir"):
    config.llvm_tools_dir = os.environ.get(
        "LLVM_TOOLS_DIR", "/usr/lib/llvm-22/bin")
    config.attn_obj_root = os.environ.get(
        "ATTN_OBJ_ROOT", os.path.join(tempfile.gettempdir(), "attn-lit"))
    config.attn_src_root = os.path.dirname(os.path.dirname(__file__))
    config.attn_tools_dir = None
    import lit.llvm

    lit.llvm.initialize(lit_config, config)

from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

# name: The name of this test suite.
config.name = "ATTN"

config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)

# suffixes: A list of file extensions to treat as test files.
config.suffixes = [".mlir"]

# test_source_root: The root path where tests are located.
config.test_source_root = os.path.dirname(__file__)

# test_exec_root: The root path where tests should be run.
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

# excludes: directories and files that are not tests. Inputs/ holds files
# that tests read; unit/ holds C++ (GoogleTest) sources.
config.excludes = [
    "Inputs",
    "CMakeLists.txt",
    "README.txt",
    "lit.cfg.py",
    "lit.site.cfg.py",
    "unit",
]

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Tools dirs: attn-opt first, then the LLVM tools (FileCheck, not, count).
attn_tools_dir = (
    os.environ.get("ATTN_TOOLS_DIR")
    or lit_config.params.get("attn_tools_dir")
    or getattr(config, "attn_tools_dir", None)
)
config.attn_tools_dir = attn_tools_dir

tool_dirs = [config.llvm_tools_dir]
if attn_tools_dir:
    tool_dirs.insert(0, attn_tools_dir)
    llvm_config.with_environment("PATH", attn_tools_dir, append_path=True)
# `not` and `count` at the start of a RUN line are found through PATH
# (use_default_substitutions only rewrites them after a pipe).
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Without an attn tools dir, attn-opt is looked up on PATH.
search_dirs = list(tool_dirs)
if not attn_tools_dir:
    search_dirs += os.environ.get("PATH", "").split(os.pathsep)
attn_opt = lit.util.which("attn-opt", os.pathsep.join(search_dirs))
if not attn_opt:
    lit_config.fatal(
        "attn-opt not found in %s; build it or set ATTN_TOOLS_DIR"
        % os.pathsep.join(search_dirs))

tools = [
    ToolSubst("attn-opt", command=attn_opt),
    ToolSubst("FileCheck", unresolved="fatal"),
    ToolSubst("not", unresolved="fatal"),
    ToolSubst("count", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# `%attn_opt` is the same tool, for tests that prefer a % substitution.
config.substitutions.append(("%attn_opt", attn_opt))

# The examples/ directory next to test/, for tests that want it by name.
config.substitutions.append(
    ("%attn_examples", os.path.join(config.attn_src_root, "examples")))

lit_config.note("using attn-opt: %s" % attn_opt)

# Built with -DATTN_SANITIZE=ON: ASan reserves terabytes of address space,
# so tests that bound it with `ulimit -v` mark themselves UNSUPPORTED: asan.
if str(getattr(config, "attn_sanitize", "OFF")).upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("asan")

# Compiling GPU kernels to cubins needs ptxas ($CUDA_HOME, /usr/local/cuda).
cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
if os.access(os.path.join(cuda_home, "bin", "ptxas"), os.X_OK):
    config.available_features.add("ptxas")
# `%ptxas`: the toolkit's ptxas, for tests that compile dumped PTX.
config.substitutions.append(("%ptxas", os.path.join(cuda_home, "bin", "ptxas")))
llvm_config.with_system_environment(["CUDA_HOME"])
