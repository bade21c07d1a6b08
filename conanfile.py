"""Conan 2 recipe for accel's C libraries: libaccel (the C ABI), its drivers and the headers.

Builds from this source tree with no external requires: `conan create . -nr` (ci/conan.sh).

Package layout, as `cmake --install` lays it out (the loader finds drivers in accel-drivers/ next to
libaccel, so the two must stay together):
  include/accel/accel.h, driver.h
  lib/libaccel.so*
  lib/accel-drivers/libaccel_driver_emu.so   (with_emulator), _bpu.so (with_bpu), _vart.so (with_vart)
  share/accel/models/tiny_cnn.accm           a compiled model, its input and expected output (models/)

Options:
  shared        only True: libaccel finds its drivers at run time next to its own shared library
                (dladdr), which a static libaccel inside an executable cannot do.
  with_emulator the `emu` driver (software emulator). GEMM goes through a system CBLAS when CMake finds
                one (with_blas), else the emulator's portable GEMM.
  with_bpu      the Horizon BPU driver, built against the SDK named by conf `user.accel:bpu_sdk` or the
                environment's ACCEL_BPU_SDK (a prefix); its generation by `user.accel:bpu_api` or
                ACCEL_BPU_API (dnn: RDK X3/X5, the default; ucp: RDK S100).
  with_vart     the Vitis AI driver, against conf `user.accel:vart_sdk` or ACCEL_VART_SDK (a prefix).
"""
import os
import re

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir

required_conan_version = ">=2.0"


class AccelConan(ConanFile):
    name = "accel"
    description = "One C ABI over edge-AI accelerator runtimes, with a software emulator device"
    topics = ("inference", "accelerator", "npu", "emulator")
    package_type = "library"  # shared only: validate() refuses shared=False
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "shared": [True, False],
        "fPIC": [True, False],
        "with_emulator": [True, False],
        "with_blas": [True, False],
        "with_bpu": [True, False],
        "with_vart": [True, False],
    }
    default_options = {
        "shared": True,
        "fPIC": True,
        "with_emulator": True,
        "with_blas": True,
        "with_bpu": False,
        "with_vart": False,
    }
    exports_sources = (
        "CMakeLists.txt",
        "libaccel/*",
        "emulator/CMakeLists.txt",
        "emulator/blas.cmake",
        "emulator/exact_rounding.cmake",
        "emulator/src/*",
        "models/*.accm",
        "models/*.bin",
        "models/README.md",
    )

    def set_version(self):
        cmake = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        self.version = re.search(r"project\(accel VERSION ([0-9.]+)", cmake).group(1)

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")
        if not self.options.with_emulator:
            self.options.rm_safe("with_blas")

    def layout(self):
        cmake_layout(self)

    def _sdk(self, conf_name, env_name):
        return self.conf.get(f"user.accel:{conf_name}", default=None) or os.environ.get(env_name) or None

    def validate(self):
        if self.settings.os in ("Windows", "Macos", "iOS"):
            raise ConanInvalidConfiguration(
                f"accel: os={self.settings.os} is not supported: the driver loader is for Linux "
                "(dlopen of drivers in accel-drivers/ next to libaccel.so)")
        if not self.options.shared:
            raise ConanInvalidConfiguration(
                "accel: shared=False is not supported. libaccel loads its drivers at run time from "
                "accel-drivers/ next to its own shared library; a static libaccel linked into a program "
                "has no such folder. Use -o accel/*:shared=True (the default).")
        if self.options.with_bpu and not self._sdk("bpu_sdk", "ACCEL_BPU_SDK"):
            raise ConanInvalidConfiguration(
                "accel: with_bpu=True needs the Horizon SDK prefix: -c user.accel:bpu_sdk=<prefix> "
                "(or ACCEL_BPU_SDK=<prefix> in the environment); -c user.accel:bpu_api=dnn|ucp picks "
                "the generation (dnn: RDK X3/X5, the default; ucp: RDK S100)")
        if self.options.with_vart and not self._sdk("vart_sdk", "ACCEL_VART_SDK"):
            raise ConanInvalidConfiguration(
                "accel: with_vart=True needs the Vitis AI VART/XIR SDK prefix: -c user.accel:vart_sdk=<prefix> "
                "(or ACCEL_VART_SDK=<prefix> in the environment)")

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["ACCEL_BUILD_TESTS"] = False
        tc.cache_variables["ACCEL_BUILD_EXAMPLES"] = False
        tc.cache_variables["ACCEL_BUILD_BENCHMARKS"] = False
        tc.cache_variables["ACCEL_WITH_EMULATOR"] = bool(self.options.with_emulator)
        tc.cache_variables["ACCEL_USE_BLAS"] = bool(self.options.get_safe("with_blas", False))
        # A system CBLAS only: the scipy-openblas32 of some Python would tie the package to that Python.
        tc.cache_variables["ACCEL_BLAS_FROM_PYTHON"] = False
        tc.cache_variables["ACCEL_BPU_SDK"] = self._sdk("bpu_sdk", "ACCEL_BPU_SDK") if self.options.with_bpu else ""
        if self.options.with_bpu:
            tc.cache_variables["ACCEL_BPU_API"] = self._sdk("bpu_api", "ACCEL_BPU_API") or "dnn"
        tc.cache_variables["ACCEL_VART_SDK"] = self._sdk("vart_sdk", "ACCEL_VART_SDK") if self.options.with_vart else ""
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        cmake = CMake(self)
        cmake.install()
        # Consumers get CMakeDeps' config files (find_package(accel), accel::accel); the project's own
        # accelConfig.cmake serves plain CMake installs.
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))
        models = os.path.join(self.source_folder, "models")
        copy(self, "*", src=models, dst=os.path.join(self.package_folder, "share", "accel", "models"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "accel")
        self.cpp_info.set_property("cmake_target_name", "accel::accel")
        self.cpp_info.libs = ["accel"]
        self.cpp_info.resdirs = ["share/accel"]
        if self.settings.os in ("Linux", "FreeBSD"):
            self.cpp_info.system_libs = ["dl", "pthread"]
