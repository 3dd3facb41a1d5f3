"""Finding description files: a path, or the name of a shipped config (``config/NAME.yaml``).

Shipped configs are looked up in ``$UVMS_SIM_CONFIG_PATH`` (':'-separated directories), the
package's installed share directory (``share/uvms_sim/config`` of a colcon install, found
through ``AMENT_PREFIX_PATH``) and the package's own data (``uvms_sim/config``, which every
install has: pip, a wheel, editable, colcon; ``config/`` in the source tree points there).
"""

from __future__ import annotations

import os
from pathlib import Path

from .reader import URDF_SUFFIXES, YAML_SUFFIXES
from .yaml_source import ConfigError


def config_dirs() -> list[Path]:
    dirs = [Path(p) for p in os.environ.get("UVMS_SIM_CONFIG_PATH", "").split(os.pathsep) if p]
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            dirs.append(Path(get_package_share_directory("uvms_sim")) / "config")
        except (PackageNotFoundError, ValueError, LookupError, OSError):
            pass
    except ImportError:
        pass
    dirs.append(Path(__file__).resolve().parents[1] / "config")
    return [d for d in dirs if d.is_dir()]


def shipped_configs() -> dict[str, Path]:
    """Name -> path of every system description found in the config directories."""
    out: dict[str, Path] = {}
    for d in reversed(config_dirs()):  # earlier directories win
        for p in sorted(d.glob("*.yaml")):
            if not p.name.endswith("_node.yaml"):
                out[p.stem] = p
    return dict(sorted(out.items()))


def resolve(name_or_path: str | Path) -> Path:
    """A description file path from a path or a shipped config's name."""
    p = Path(name_or_path).expanduser()
    if p.suffix.lower() in YAML_SUFFIXES + URDF_SUFFIXES:
        if not p.is_file():
            raise ConfigError(p, "", "no such file")
        return p
    found = shipped_configs()
    if str(name_or_path) in found:
        return found[str(name_or_path)]
    raise ConfigError(
        str(name_or_path),
        "",
        f"neither a .yaml/.urdf/.xacro file nor a shipped config; shipped: {sorted(found)}",
    )
