"""Launch files parse and name an existing executable, config file and declared parameters.

launch/launch_ros have no wheel, so the files are checked statically here; on a ROS install
``ros2 launch`` runs them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from uvms_sim.model.configs import resolve

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


def node_parameters() -> set[str]:
    from uvms_sim.ros.parameters import PARAMETERS

    return set(PARAMETERS) | {"use_sim_time"}


def test_there_are_launch_files() -> None:
    assert LAUNCH_FILES


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_names_real_things(path: Path) -> None:
    tree = ast.parse(path.read_text())
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    setup_src = (ROOT / "setup.py").read_text()
    executables = [s for s in strings if f'"{s} = ' in setup_src]
    assert executables == ["simulator"], strings
    configs = [s for s in strings if s.endswith(".yaml")]
    assert configs
    declared = node_parameters()
    for name in configs:
        cfg = ROOT / "config" / name
        assert cfg.is_file(), name
        params = yaml.safe_load(cfg.read_text())["/**"]["ros__parameters"]
        assert set(params) <= declared, set(params) - declared
        assert resolve(params["description"]).is_file()
