"""The ``scene:`` of a description (``uvms_sim.scene``): the seabed and the fixed structures,
each value checked where it is written. ``environment.seafloor`` (the older key) is read as
a plane seabed of the scene."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..hydro.environment import Seafloor
from ..scene import (
    ContactLaw,
    GeometryError,
    HeightmapSeabed,
    MeshSeabed,
    PlaneSeabed,
    Scene,
    Shape,
    Structure,
)
from ..scene.geometry import SIZES
from .yaml_source import Cursor

SIZE_WORDS = {"box": "[x, y, z] (m)", "cylinder": "[radius, length] (m)", "sphere": "[radius] (m)"}
SEABED_KEYS = {
    "plane": (("type", "depth"), ("slope",)),
    "heightmap": (("type", "spacing"), ("depths", "file", "origin")),
    "mesh": (("type", "file"), ("scale", "xyz", "rpy")),
}


CONTACT_KEYS = ("stiffness", "restitution", "friction", "tangential_stiffness", "margin", "period")


def read_scene(cur: Cursor, base_dir: Path) -> Scene:
    """The seabed, structures and ``contact`` law (``objects`` are read as bodies:
    ``model.objects``; with objects and no ``contact``, the default law)."""
    cur.mapping(optional=("seabed", "structures", "contact", "objects"))
    seabed = (
        read_seabed(cur["seabed"], base_dir) if "seabed" in cur and cur["seabed"].value is not None else None
    )
    structures = []
    for c in cur["structures"].seq("a list of structures") if "structures" in cur else []:
        c.mapping(("name", "shape"), ("size", "file", "scale", "xyz", "rpy", "description"))
        structures.append(Structure(c["name"].text(), read_shape(c, base_dir)))
    names = [s.name for s in structures]
    for c, name in zip(cur["structures"].seq() if structures else [], names, strict=True):
        if names.count(name) > 1:
            raise c["name"].error(f"structure name {name!r} is used twice")
    contact = read_contact_law(cur["contact"]) if "contact" in cur else None
    if contact is None and "objects" in cur and cur["objects"].value:
        contact = ContactLaw()
    return Scene(seabed, tuple(structures), contact)


def read_contact_law(cur: Cursor) -> ContactLaw:
    """``scene.contact``: the ``scene.ContactLaw`` (defaults where left out; ``{}`` or ``true``:
    all defaults)."""
    if cur.value is True or cur.value is None:
        return ContactLaw()
    cur.mapping(optional=CONTACT_KEYS)
    values = {k: cur[k].number() for k in CONTACT_KEYS if k in cur}
    try:
        return ContactLaw(**values)
    except GeometryError as exc:
        key = str(exc).split()[1]
        raise (cur[key] if key in cur else cur).error(str(exc)) from None


def read_seabed(cur: Cursor, base_dir: Path) -> PlaneSeabed | HeightmapSeabed | MeshSeabed:
    kind = cur.mapping(("type",), cur.keys())["type"].choice(sorted(SEABED_KEYS))
    cur.mapping(*SEABED_KEYS[kind])
    try:
        if kind == "plane":
            slope = cur["slope"].vector(2) if "slope" in cur else np.zeros(2)
            return PlaneSeabed(cur["depth"].number(), (float(slope[0]), float(slope[1])))
        if kind == "mesh":
            return MeshSeabed(_mesh_shape(cur, base_dir))
        if ("depths" in cur) == ("file" in cur):
            raise cur.error("a heightmap takes its depths from exactly one of `depths` (a grid) or `file`")
        depths = (
            cur["depths"].matrix(*_grid_shape(cur["depths"]))
            if "depths" in cur
            else _grid_file(cur, base_dir)
        )
        origin = cur["origin"].vector(2) if "origin" in cur else np.zeros(2)
        return HeightmapSeabed(
            depths, cur["spacing"].number(positive=True), (float(origin[0]), float(origin[1]))
        )
    except GeometryError as exc:
        raise cur.error(str(exc)) from None


def read_shape(cur: Cursor, base_dir: Path) -> Shape:
    kind = cur["shape"].choice(sorted(SIZES))
    try:
        if kind == "mesh":
            return _mesh_shape(cur, base_dir)
        if "size" not in cur:
            raise cur.error(f"a {kind} needs `size`: {SIZE_WORDS[kind]}")
        if "file" in cur or "scale" in cur:
            raise cur.error(f"`file` and `scale` belong to a mesh, not a {kind}")
        return Shape(kind, tuple(cur["size"].vector(SIZES[kind])), *_placement(cur))
    except GeometryError as exc:
        raise cur.error(str(exc)) from None


def seafloor_as_seabed(cur: Cursor, floor: Seafloor) -> PlaneSeabed:
    """``environment.seafloor`` as the scene's plane seabed (the key the acoustic sensors read
    before scenes)."""
    try:
        return PlaneSeabed(float(floor.depth), floor.slope)
    except GeometryError as exc:
        raise cur.error(str(exc)) from None


def _placement(cur: Cursor) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    xyz = cur["xyz"].vector(3) if "xyz" in cur else np.zeros(3)
    rpy = cur["rpy"].vector(3) if "rpy" in cur else np.zeros(3)
    return (float(xyz[0]), float(xyz[1]), float(xyz[2])), (float(rpy[0]), float(rpy[1]), float(rpy[2]))


def _mesh_shape(cur: Cursor, base_dir: Path) -> Shape:
    if "file" not in cur:
        raise cur.error("a mesh needs `file`: the mesh file (STL, OBJ, PLY, OFF, glTF)")
    if "size" in cur:
        raise cur["size"].error("a mesh has no `size`: give `scale` (sx, sy, sz) if it needs one")
    path = Path(cur["file"].text())
    path = path if path.is_absolute() else base_dir / path
    scale = tuple(cur["scale"].vector(3)) if "scale" in cur else (1.0, 1.0, 1.0)
    shape = Shape("mesh", scale, *_placement(cur), mesh=str(path))
    try:
        shape.triangles()  # read and checked now: a bad mesh is an error of the description
    except GeometryError as exc:
        raise cur["file"].error(str(exc)) from None
    return shape


def _grid_shape(cur: Cursor) -> tuple[int, int]:
    rows = cur.seq("a grid of depths (a list of rows)")
    if not rows or not isinstance(rows[0].value, list):
        raise cur.error("expected a grid of depths (a list of rows of numbers)")
    return len(rows), len(rows[0].value)


def _grid_file(cur: Cursor, base_dir: Path) -> np.ndarray:
    path = Path(cur["file"].text())
    path = path if path.is_absolute() else base_dir / path
    if path.suffix not in (".npy", ".csv"):
        raise cur["file"].error("a heightmap file is .npy (a 2-D array) or .csv (rows of depths)")
    try:
        if path.stat().st_size > 100 * 2**20:
            raise cur["file"].error(f"{path}: larger than 100 MiB")
        grid = (
            np.load(path, allow_pickle=False)
            if path.suffix == ".npy"
            else np.loadtxt(path, delimiter=",", ndmin=2)
        )
    except (OSError, ValueError) as exc:
        raise cur["file"].error(f"{path}: not a grid of depths ({str(exc)[:120]})") from None
    if grid.dtype.kind not in "fiu":
        raise cur["file"].error(f"{path}: not a grid of numbers")
    return np.asarray(grid, dtype=float)
