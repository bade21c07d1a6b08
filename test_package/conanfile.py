"""Conan test_package: a C program built against the package with find_package(accel) and accel::accel,
which opens the emulator from the package's drivers, runs the shipped model and checks its output."""
import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, cmake_layout


class AccelTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain", "VirtualRunEnv"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if not can_run(self):
            return
        accel = self.dependencies[self.tested_reference_str]
        program = os.path.join(self.cpp.build.bindir, "test_package")
        if accel.options.with_emulator:
            models = os.path.join(accel.package_folder, "share", "accel", "models")
            program += f' "{models}"'
        # The drivers must come from the package (accel-drivers/ next to libaccel), not from elsewhere.
        os.environ.pop("ACCEL_DRIVER_PATH", None)
        self.run(program, env="conanrun")
