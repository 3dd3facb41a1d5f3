"""Build the ROS 2 interface packages kept in ``uvms_sim/interfaces/`` into an environment.

tf2_msgs, mavros_msgs, control_msgs, simulation_interfaces and marine_acoustic_msgs have no PyPI
wheel. On a machine without a ROS install this builds real rosidl interface packages from the
definitions shipped in the package (``uvms_sim/interfaces/``, field for field as upstream) with
the ament_cmake / rosidl toolchain that the ``ros-*`` wheels install, and installs them into the
environment prefix so that ``from mavros_msgs.msg import OverrideRCIn`` works there. It needs
cmake and a C++ compiler.

A package that is already importable (a sourced ROS install, or a previous build) is skipped.

Usage: ``uvms-sim build-interfaces [--prefix PREFIX] [--force] [PACKAGE ...]`` (or
``python -m uvms_sim.rosidl_build``, which ``make setup`` runs from the source tree).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

INTERFACES = Path(__file__).resolve().parent / "interfaces"


def importable(package: str, python: str) -> bool:
    """True when ``package.msg`` or ``package.srv`` imports with ``python``."""
    probe = (
        "import importlib.util as u, sys; "
        f"sys.exit(not (u.find_spec('{package}.msg') or u.find_spec('{package}.srv')))"
    )
    result = subprocess.run([python, "-c", probe], check=False, capture_output=True, text=True)
    return result.returncode == 0


def fix_python_exports(prefix: Path, python: str) -> int:
    """Point the wheels' ``*_rosidl_generator_pyExport.cmake`` files at this machine's Python.

    The message wheels were built in a manylinux container; their exported CMake targets name
    that container's Python and numpy include directories, which do not exist here.
    Returns the number of files rewritten.
    """
    info = subprocess.run(
        [
            python,
            "-c",
            "import sysconfig, numpy; print(sysconfig.get_paths()['include']); print(numpy.get_include())",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    py_include, np_include = info[0], info[1]
    pattern = re.compile(r'INTERFACE_INCLUDE_DIRECTORIES "([^"]*)"')
    changed = 0
    for path in sorted(prefix.glob("share/*/cmake/export_*__rosidl_generator_pyExport.cmake")):
        text = path.read_text()

        def rewrite(match: re.Match[str]) -> str:
            dirs = []
            for entry in match.group(1).split(";"):
                if re.search(r"include/python3\.\d+$", entry):
                    entry = py_include
                elif entry.endswith("numpy/_core/include") or entry.endswith("numpy/core/include"):
                    entry = np_include
                dirs.append(entry)
            return f'INTERFACE_INCLUDE_DIRECTORIES "{";".join(dirs)}"'

        new = pattern.sub(rewrite, text)
        if new != text:
            path.write_text(new)
            changed += 1
    return changed


def build(package: str, prefix: Path, python: str, jobs: int, build_root: Path) -> None:
    """Configure, build and install one interface package into ``prefix``."""
    source = INTERFACES / package
    build_dir = build_root / package
    env = dict(os.environ)
    env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"
    env["CMAKE_PREFIX_PATH"] = str(prefix)
    env["AMENT_PREFIX_PATH"] = str(prefix)
    configure = [
        "cmake",
        "-S",
        str(source),
        "-B",
        str(build_dir),
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DPython3_EXECUTABLE={python}",
        "-DBUILD_TESTING=OFF",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    for cmd in (
        configure,
        ["cmake", "--build", str(build_dir), "-j", str(jobs)],
        ["cmake", "--install", str(build_dir)],
    ):
        result = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
            raise SystemExit(
                f"build_interfaces: '{' '.join(cmd[:3])} ...' failed for {package} (exit {result.returncode})"
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="uvms-sim build-interfaces", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--prefix", default=sys.prefix, help="install prefix (default: this Python's environment)"
    )
    parser.add_argument("--force", action="store_true", help="build even when the package is importable")
    parser.add_argument("packages", nargs="*", help="packages under uvms_sim/interfaces/ (default: all)")
    args = parser.parse_args(argv)
    prefix = Path(args.prefix).resolve()
    python = str(prefix / "bin" / "python") if (prefix / "bin" / "python").exists() else sys.executable
    shipped = sorted(p.name for p in INTERFACES.iterdir() if (p / "package.xml").exists())
    unknown = sorted(set(args.packages) - set(shipped))
    if unknown:  # checked before a name reaches a command line
        raise SystemExit(f"build_interfaces: no interface package {unknown}; shipped: {shipped}")
    packages = args.packages or shipped
    todo = [p for p in packages if args.force or not importable(p, python)]
    for p in sorted(set(packages) - set(todo)):
        print(f"build_interfaces: {p} is importable, not building it")
    if not todo:
        return
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise SystemExit(
                f"build_interfaces: '{tool}' not found; install cmake and g++ (apt-get install cmake g++)"
            )
    fixed = fix_python_exports(prefix, python)
    print(f"build_interfaces: pointed {fixed} message export file(s) at {sysconfig.get_paths()['include']}")
    jobs = os.cpu_count() or 2
    with tempfile.TemporaryDirectory(prefix="uvms_sim_interfaces_") as build_root:
        for package in todo:
            print(f"build_interfaces: building {package} into {prefix}", flush=True)
            build(package, prefix, python, jobs, Path(build_root))
            if not importable(package, python):
                raise SystemExit(f"build_interfaces: {package} was built but does not import from {python}")
    print("build_interfaces: done")


if __name__ == "__main__":
    main()
