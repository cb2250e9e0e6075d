"""`pip install ./python` (from a Seer checkout): builds the native module seer._native
with Seer's own CMake build (target seer_python) and installs the package with it.

The CMake build directory is $SEER_BUILD_DIR when set (relative to the checkout's root,
e.g. build to reuse an existing build), else python/build-pip/; CMake must find libtorch (Debian: libtorch-dev), pybind11
(pybind11-dev) and the Python headers (python3-dev), and the interpreter running pip is
the one the module is built for. $SEER_CMAKE_ARGS adds configure arguments, $SEER_JOBS
sets the build's parallelism (default 2).
"""
import os
import shlex
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        # Relative to the checkout's root (pip runs this file from python/).
        build = os.path.join(ROOT, os.environ.get("SEER_BUILD_DIR", os.path.join("python", "build-pip")))
        if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")):
            sys.exit(f"seer: {ROOT} is not a Seer checkout (pip install ./python from the checkout's root)")
        configure = ["cmake", "-S", ROOT, "-B", build, f"-DPython3_EXECUTABLE={sys.executable}",
                     "-DSEER_WITH_PYTHON=ON"]
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            configure += ["-DCMAKE_BUILD_TYPE=Release", "-DSEER_BUILD_TESTS=OFF", "-DSEER_BUILD_BENCH=OFF"]
        configure += shlex.split(os.environ.get("SEER_CMAKE_ARGS", ""))
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build, "-j", os.environ.get("SEER_JOBS", "2"),
                               "--target", "seer_python"])
        built = os.path.join(build, "python", "seer")
        target = os.path.join(self.build_lib, "seer")
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(built):
            if name.startswith("_native") and name.endswith(".so"):
                self.copy_file(os.path.join(built, name), os.path.join(target, name))


setup(packages=["seer"], cmdclass={"build_py": BuildWithCMake})
