"""Shapes of the scene (a box, a cylinder along z, a sphere, a triangle mesh) placed by a URDF
style ``xyz``/``rpy`` origin, and their triangles. Meshes are read by trimesh and checked: a
mesh that cannot be a solid surface of the world is refused with the reason."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

Array = np.ndarray
MAX_TRIANGLES = 500_000  # a scene mesh above this is refused (ray casting and views stay interactive)
MAX_EXTENT = 1.0e5  # m: a shape larger than 100 km is a unit slip, not an underwater scene
SIZES = {"box": 3, "cylinder": 2, "sphere": 1, "mesh": 3}
MESH_SUFFIXES = (".stl", ".obj", ".ply", ".off", ".glb", ".gltf")


class GeometryError(ValueError):
    """A shape or mesh that cannot be part of the scene (the message says why)."""


def rotation(rpy) -> Array:
    """The rotation of a URDF ``rpy`` (fixed axes x, y, z: R = Rz(y) Ry(p) Rx(r))."""
    return euler2mat(*np.asarray(rpy, dtype=float), axes="sxyz")


@dataclass(frozen=True)
class Shape:
    """``kind`` with ``size``: (x, y, z) of a box, (radius, length) of a cylinder along its z
    axis, (radius,) of a sphere, the scale (sx, sy, sz) of the mesh file ``mesh``; placed at
    ``xyz`` (m) and ``rpy`` (rad) in the frame it belongs to (NED for the scene)."""

    kind: str
    size: tuple[float, ...]
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    mesh: str = ""

    def __post_init__(self) -> None:
        if self.kind not in SIZES:
            raise GeometryError(f"shape must be one of {list(SIZES)}, got {self.kind!r}")
        size = tuple(float(x) for x in self.size)
        if len(size) != SIZES[self.kind] or not all(np.isfinite(x) and 0.0 < x <= MAX_EXTENT for x in size):
            raise GeometryError(
                f"a {self.kind} needs {SIZES[self.kind]} sizes in (0, {MAX_EXTENT:g}] m, got {list(size)}"
            )
        if self.kind == "mesh" and not self.mesh:
            raise GeometryError("a mesh shape needs a file")
        for name in ("xyz", "rpy"):
            v = np.array(getattr(self, name), dtype=float).reshape(3)
            if not np.all(np.isfinite(v)) or np.abs(v).max() > MAX_EXTENT:
                raise GeometryError(
                    f"{name} must be 3 finite numbers within {MAX_EXTENT:g}, got {v.tolist()}"
                )
            object.__setattr__(self, name, tuple(float(x) for x in v))
        object.__setattr__(self, "size", size)

    def triangles(self) -> tuple[Array, Array]:
        """Vertices (n x 3, in the frame the shape is placed in) and triangles (m x 3)."""
        import trimesh

        if self.kind == "box":
            mesh = trimesh.creation.box(extents=self.size)
        elif self.kind == "cylinder":
            mesh = trimesh.creation.cylinder(radius=self.size[0], height=self.size[1], sections=32)
        elif self.kind == "sphere":
            mesh = trimesh.creation.icosphere(subdivisions=3, radius=self.size[0])
        else:
            vertices, faces = load_mesh(self.mesh, self.size)
            return vertices @ rotation(self.rpy).T + np.asarray(self.xyz), faces
        return np.asarray(mesh.vertices) @ rotation(self.rpy).T + self.xyz, np.asarray(
            mesh.faces, dtype=np.int64
        )


def load_mesh(path: str | Path, scale: tuple[float, ...] = (1.0, 1.0, 1.0)) -> tuple[Array, Array]:
    """The vertices (scaled) and triangles of a mesh file (STL, OBJ, PLY, OFF, glTF), with its
    degenerate and duplicate triangles dropped. A ``GeometryError`` names the file and why it
    is refused: unreadable, no triangles, non-finite vertices, more than ``MAX_TRIANGLES``
    triangles, larger than ``MAX_EXTENT``. An open (non-watertight) or non-convex mesh is
    fine: the scene's surfaces are hit by rays from either side."""
    import trimesh

    path = Path(path)
    if path.suffix.lower() not in MESH_SUFFIXES:
        raise GeometryError(f"{path}: a mesh file is one of {', '.join(MESH_SUFFIXES)}")
    try:
        size = path.stat().st_size if path.is_file() else None
    except (OSError, ValueError) as exc:  # a name too long, a NUL in it
        raise GeometryError(f"{str(path)[:200]}: not a mesh file ({exc.__class__.__name__})") from None
    if size is None:
        raise GeometryError(f"{path}: no such mesh file")
    if size > 200 * 2**20:
        raise GeometryError(f"{path}: larger than 200 MiB")
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh raises many kinds on a damaged file
        raise GeometryError(f"{path}: not a readable mesh ({type(exc).__name__}: {str(exc)[:120]})") from None
    vertices = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=float)
    faces: Array = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))), dtype=np.int64)
    if faces.ndim != 2 or len(faces) == 0:
        raise GeometryError(f"{path}: the mesh has no triangles")
    if len(faces) > MAX_TRIANGLES:
        raise GeometryError(f"{path}: {len(faces)} triangles, at most {MAX_TRIANGLES} (decimate it)")
    if not np.all(np.isfinite(vertices)):
        raise GeometryError(f"{path}: the mesh has non-finite vertices")
    vertices = vertices * np.asarray(scale, dtype=float)
    if np.abs(vertices).max() > MAX_EXTENT:
        raise GeometryError(
            f"{path}: the mesh reaches {np.abs(vertices).max():.3g} m, beyond {MAX_EXTENT:g} m"
        )
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    scale_of = max(float(np.ptp(vertices, axis=0).max()), 1e-12)
    keep = area > 1e-12 * scale_of**2
    first = np.unique(np.sort(faces[keep], axis=1), axis=0, return_index=True)[1]
    faces = faces[keep][np.sort(first)]
    if len(faces) == 0:
        raise GeometryError(f"{path}: every triangle of the mesh is degenerate (zero area)")
    return vertices, faces
