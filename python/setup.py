"""Bundles libattn.so into the attn package when one is at hand at install
time, so that an installed attn needs neither $ATTN_LIBRARY nor the build
tree: $ATTN_LIBRARY, else ../build/lib/libattn.so (the checkout's build,
scripts/build.sh). pip builds a local directory in place, so the relative
path is the checkout's. The library links against the LLVM/MLIR shared
libraries it was built with: the bundle is for this machine."""

import os
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

here = os.path.dirname(os.path.abspath(__file__))


def library():
    env = os.environ.get("ATTN_LIBRARY")
    if env:
        return env
    p = os.path.join(here, "..", "build", "lib", "libattn.so")
    return p if os.path.exists(p) else None


class BuildPy(build_py):
    def run(self):
        super().run()
        lib = library()
        if lib is None:
            print("attn: no libattn.so found (set ATTN_LIBRARY or build "
                  "with ./scripts/build.sh): installing the package "
                  "without it; it then needs ATTN_LIBRARY or the loader's "
                  "path", file=sys.stderr)
            return
        dest = os.path.join(self.build_lib, "attn", "libattn.so")
        shutil.copyfile(os.path.realpath(lib), dest)
        os.chmod(dest, 0o755)
        print(f"attn: bundling {os.path.realpath(lib)}", file=sys.stderr)


class BinaryDistribution(Distribution):
    # A wheel with a shared library in it is platform-specific.
    def has_ext_modules(self):
        return library() is not None


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
