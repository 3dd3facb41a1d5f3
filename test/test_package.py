"""The package itself: metadata agrees, files exist, the core stays free of ROS, lint is clean."""

from __future__ import annotations

import ast
import importlib
import os
import runpy
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_kwargs() -> dict:
    """The keyword arguments setup.py passes to setup(), captured by running it with setup()
    replaced (in the source tree, as pip and colcon run it)."""
    import setuptools

    captured: dict = {}
    original, cwd = setuptools.setup, os.getcwd()
    setuptools.setup = lambda **kw: captured.update(kw)
    try:
        os.chdir(ROOT)
        runpy.run_path(str(ROOT / "setup.py"))
    finally:
        setuptools.setup = original
        os.chdir(cwd)
    return captured


def test_package_xml_and_setup_py_agree() -> None:
    pkg = ET.parse(ROOT / "package.xml").getroot()
    assert pkg.get("format") == "3"
    kw = setup_kwargs()
    assert pkg.findtext("name") == kw["name"] == "uvms_sim"
    assert pkg.findtext("version") == kw["version"]
    assert pkg.findtext("license") == kw["license"]
    assert pkg.find("export/build_type").text == "ament_python"
    deps = {e.text for e in pkg.findall("exec_depend")}
    needed = {"rclpy", "std_msgs", "geometry_msgs", "nav_msgs", "sensor_msgs", "std_srvs", "rosgraph_msgs",
              "tf2_msgs", "mavros_msgs", "launch", "launch_ros", "python3-numpy", "python3-scipy",
              "python3-transforms3d"}  # fmt: skip
    assert needed <= deps, needed - deps


def test_setup_data_files_exist_and_follow_ament_python() -> None:
    kw = setup_kwargs()
    dests = dict(kw["data_files"])
    assert dests["share/ament_index/resource_index/packages"] == ["resource/uvms_sim"]
    assert (ROOT / "resource" / "uvms_sim").is_file()
    assert dests["share/uvms_sim"] == ["package.xml"]
    for files in dests.values():
        for f in files:
            assert (ROOT / f).is_file(), f
    cfg = (ROOT / "setup.cfg").read_text()
    assert "script_dir=$base/lib/uvms_sim" in cfg and "install_scripts=$base/lib/uvms_sim" in cfg
    for d in ("launch", "config", "test", "benchmarks", "uvms_sim"):
        assert (ROOT / d).is_dir(), d


def test_console_scripts_point_at_callables() -> None:
    for entry in setup_kwargs()["entry_points"]["console_scripts"]:
        name, target = (s.strip() for s in entry.split("="))
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func)), name


def test_physics_core_never_imports_rclpy() -> None:
    code = (
        "import sys, uvms_sim.spatial, uvms_sim.model, uvms_sim.dynamics, uvms_sim.hydro, "
        "uvms_sim.model.library, uvms_sim.simulator; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rosidl_runtime_py')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    core = [ROOT / "uvms_sim" / f for f in ("spatial.py", "simulator.py")]
    for sub in ("model", "dynamics", "hydro"):
        core += sorted((ROOT / "uvms_sim" / sub).rglob("*.py"))
    for path in core:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] == "rclpy" for n in names), f"{path} imports rclpy"


def test_interface_definitions_match_the_installed_types() -> None:
    """The .msg files in interfaces/ are what got built (field names and types)."""
    from mavros_msgs.msg import ManualControl, OverrideRCIn, RCIn, RCOut, State

    assert OverrideRCIn.get_fields_and_field_types() == {"channels": "uint16[18]"}
    assert RCOut.get_fields_and_field_types() == {"header": "std_msgs/Header", "channels": "sequence<uint16>"}
    assert RCIn.get_fields_and_field_types()["rssi"] == "uint8"
    assert list(State.get_fields_and_field_types()) == [
        "header", "connected", "armed", "guided", "manual_input", "mode", "system_status"]  # fmt: skip
    assert list(ManualControl.get_fields_and_field_types())[:6] == ["header", "x", "y", "z", "r", "buttons"]


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.prefix) / "bin" / "ruff")
    for args in (["check", "."], ["format", "--check", "."]):
        result = subprocess.run([ruff, *args], check=False, cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
