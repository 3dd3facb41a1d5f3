"""Build a ``System`` from a YAML description (format in ``docs/config.md``) or a URDF.

``load(path)`` dispatches on the extension: ``.yaml``/``.yml`` are system descriptions,
``.urdf`` and ``.xacro`` are robot descriptions (one vehicle, see ``uvms_sim.model.urdf``).
Reading (every value checked where it is written, the first problem a ``ConfigError`` naming
the file, the line, the key path and what was expected) is ``uvms_sim.model.reader``'s;
putting the read parts together is ``uvms_sim.model.assembly``'s.
"""

from __future__ import annotations

from pathlib import Path

from .assembly import assemble
from .reader import URDF_SUFFIXES, YAML_SUFFIXES
from .system import System
from .yaml_source import ConfigError, Cursor, read_yaml


def load(
    path: str | Path, overlay: str | Path | None = None, xacro_args: dict[str, str] | None = None
) -> System:
    """Read a system description (YAML) or a robot description (URDF / xacro).

    ``path`` may also be a shipped config's name (``load("bluerov2")``, as the command line,
    the node and the Gymnasium environments accept). ``overlay`` (URDF only) is a YAML file
    mapping link names to ``hydrodynamics`` blocks and may add ``thrusters`` and an
    ``environment``; ``xacro_args`` are xacro's ``name:=value``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not suffix and not path.exists():
        from .configs import resolve

        path = resolve(str(path))  # a shipped name, or the error that lists them
        suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        if overlay is not None or xacro_args:
            raise ConfigError(
                path, "", "overlay and xacro_args apply to URDF files; a YAML file includes them itself"
            )
        return assemble(Cursor(read_yaml(path), path), path.parent, path)
    if suffix in URDF_SUFFIXES:
        vehicle: dict = {"name": None, "include": str(path.resolve())}
        if xacro_args:
            vehicle["xacro_args"] = dict(xacro_args)
        top: dict = {"vehicles": [vehicle]}
        if overlay is not None:
            over = Cursor(read_yaml(overlay), overlay).mapping(
                optional=("hydrodynamics", "thrusters", "environment")
            )
            for key in ("hydrodynamics", "thrusters"):
                if key in over:
                    vehicle[key] = over[key].value
            if "environment" in over:
                top["environment"] = over["environment"].value
        return assemble(Cursor(top, overlay or path), path.parent, path)
    raise ConfigError(
        path, "", f"unknown description type {suffix!r}: expected one of {YAML_SUFFIXES + URDF_SUFFIXES}"
    )
