"""The seabed of a scene, in world NED (z down): a plane with a slope, a heightmap (depths on a
regular grid) or a triangle mesh. Each gives its triangles (the views draw them, rays hit
them), ``water_depth`` (the deepest point, for what needs one number: the tether's water
depth) and, for the plane, the ``hydro.environment.Seafloor`` the acoustic sensors compute
in closed form."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..hydro.environment import Seafloor
from .geometry import MAX_EXTENT, MAX_TRIANGLES, GeometryError, Shape

Array = np.ndarray
PLANE_PATCH = 50.0  # m: half the side of the square of a plane seabed that views draw


@dataclass(frozen=True)
class PlaneSeabed:
    """NED z = ``depth`` + s0 x + s1 y with ``slope`` = (s0, s1) (positive: deeper to the
    north / east)."""

    depth: float
    slope: tuple[float, float] = (0.0, 0.0)
    kind: str = "plane"

    def __post_init__(self) -> None:
        slope = tuple(float(s) for s in self.slope)
        if not (np.isfinite(self.depth) and abs(self.depth) <= MAX_EXTENT):
            raise GeometryError(f"seabed depth must be finite and within {MAX_EXTENT:g} m, got {self.depth}")
        if len(slope) != 2 or not all(np.isfinite(s) and abs(s) <= 100.0 for s in slope):
            raise GeometryError(f"seabed slope is (dz/dx, dz/dy), each within +-100, got {list(self.slope)}")
        object.__setattr__(self, "slope", slope)

    @property
    def seafloor(self) -> Seafloor:
        return Seafloor(float(self.depth), self.slope)

    def water_depth(self) -> float:
        return float(self.depth)

    def triangles(self) -> tuple[Array, Array]:
        h = PLANE_PATCH
        xy = np.array([[-h, -h], [h, -h], [h, h], [-h, h]])
        z = self.depth + xy @ np.asarray(self.slope)
        return np.column_stack([xy, z]), np.array([[0, 1, 2], [0, 2, 3]])


@dataclass(frozen=True, eq=False)
class HeightmapSeabed:
    """Depths (NED z, m) on a grid: ``depths[i, j]`` at x = origin[0] + i spacing (north),
    y = origin[1] + j spacing (east); two triangles a cell."""

    depths: Array
    spacing: float
    origin: tuple[float, float] = (0.0, 0.0)
    kind: str = "heightmap"
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        d = np.array(self.depths, dtype=float)
        if d.ndim != 2 or min(d.shape) < 2:
            raise GeometryError(f"a heightmap is a grid of at least 2 x 2 depths, got shape {list(d.shape)}")
        if 2 * (d.shape[0] - 1) * (d.shape[1] - 1) > MAX_TRIANGLES:
            raise GeometryError(
                f"a heightmap of {d.shape[0]} x {d.shape[1]} is above {MAX_TRIANGLES} triangles"
            )
        if not (np.all(np.isfinite(d)) and np.abs(d).max() <= MAX_EXTENT):
            raise GeometryError(f"heightmap depths must be finite and within {MAX_EXTENT:g} m")
        if not (np.isfinite(self.spacing) and 0.0 < self.spacing <= 1e3):
            raise GeometryError(f"heightmap spacing must be in (0, 1000] m, got {self.spacing}")
        origin = tuple(float(o) for o in self.origin)
        if len(origin) != 2 or not all(np.isfinite(o) and abs(o) <= MAX_EXTENT for o in origin):
            raise GeometryError(
                f"heightmap origin is (x, y) within {MAX_EXTENT:g} m, got {list(self.origin)}"
            )
        d.setflags(write=False)
        object.__setattr__(self, "depths", d)
        object.__setattr__(self, "origin", origin)

    def water_depth(self) -> float:
        return float(self.depths.max())

    def triangles(self) -> tuple[Array, Array]:
        if "mesh" not in self._cache:
            n, m = self.depths.shape
            i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
            x, y = self.origin[0] + self.spacing * i.ravel(), self.origin[1] + self.spacing * j.ravel()
            vertices = np.column_stack([x, y, self.depths.ravel()])
            k = (i[:-1, :-1] * m + j[:-1, :-1]).ravel()
            faces = np.concatenate(
                [np.column_stack([k, k + m, k + m + 1]), np.column_stack([k, k + m + 1, k + 1])]
            )
            self._cache["mesh"] = (vertices, faces)
        return self._cache["mesh"]


@dataclass(frozen=True)
class MeshSeabed:
    """A seabed from a mesh file (``shape``: a mesh ``Shape`` placed in NED)."""

    shape: Shape
    kind: str = "mesh"
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def triangles(self) -> tuple[Array, Array]:
        if "mesh" not in self._cache:
            self._cache["mesh"] = self.shape.triangles()
        return self._cache["mesh"]

    def water_depth(self) -> float:
        return float(self.triangles()[0][:, 2].max())


Seabed = PlaneSeabed | HeightmapSeabed | MeshSeabed
