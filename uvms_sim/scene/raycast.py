"""Rays cast into a ``Scene``: a plane seabed in closed form, every other surface (heightmap
and mesh seabeds, structures) by Embree's ray tracing through trimesh (``embreex``). What the
altimeter and the DVL measure, and what a camera or a sonar will."""

from __future__ import annotations

import math

import numpy as np

from .scene import Scene

Array = np.ndarray
# a cone is sampled by its axis and rings of rays (fractions of the half angle x azimuths)
_RINGS, _AZIMUTHS = (1.0 / 3.0, 2.0 / 3.0, 1.0), 12


def plane_cone_range(scene: Scene, p: Array, axis: Array, half_angle: float) -> float:
    """Nearest point of a plane seabed inside a cone of ``half_angle`` about the unit
    ``axis``: the perpendicular distance if the perpendicular is in the cone, else along the
    cone's edge nearest to it."""
    plane = scene.plane
    if plane is None:
        return math.inf
    floor = plane.seafloor
    h = floor.distance(p)
    if h <= 0.0:
        return math.inf
    theta = math.acos(max(-1.0, min(1.0, -float(floor.normal @ axis))))
    off = max(0.0, theta - half_angle)
    return h / math.cos(off) if off < math.pi / 2 - 1e-12 else math.inf


def nearer_hits(wrap, face_normals: Array, origins: Array, directions: Array, distance: Array, normal: Array):
    """Cast the rays (rows) into Embree's scene ``wrap`` (trimesh's, scaled to a box) and, where
    a triangle is nearer than ``distance``, write its distance and its normal facing the ray
    into ``distance`` and ``normal``; (the rays so hit, their triangles)."""
    query = wrap.run(origins, directions, output=1)
    tri = np.asarray(query["primID"])
    hit = np.flatnonzero(tri >= 0)
    d = np.asarray(query["tfar"], dtype=float)[hit] / wrap.scale
    closer = d < distance[hit]
    hit, d, tri = hit[closer], d[closer], tri[hit][closer]
    distance[hit] = d
    face = face_normals[tri]
    facing = np.einsum("ij,ij->i", face, directions[hit])
    normal[hit] = np.where(facing[:, None] > 0.0, -face, face)
    return hit, tri


class SceneRays:
    """Ray casting into one scene (built once: Embree's acceleration structure of its
    triangles)."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        vertices, faces = scene.triangles()
        self._embree = None
        if len(faces):
            import trimesh
            from trimesh.ray.ray_pyembree import RayMeshIntersector

            self._embree = RayMeshIntersector(trimesh.Trimesh(vertices, faces, process=False))
            # Embree's scene (built once; trimesh scales it to a box) and the normals, held here:
            # trimesh's cached properties hash the whole mesh at every access
            self._wrap = self._embree._scene
            self._normals = np.array(self._embree.mesh.face_normals, dtype=float)
            parts = [v for name, v, _ in scene.surfaces() if not (name == "seabed" and scene.plane)]
            self._bounds = np.array([v.min(axis=0) for v in parts]), np.array([v.max(axis=0) for v in parts])
            # the surface (index in scene.surfaces()) of each triangle of the mesh
            counts = [(k, len(f)) for k, (name, _, f) in enumerate(scene.surfaces())
                      if not (name == "seabed" and scene.plane)]  # fmt: skip
            self._surface_of = np.repeat([k for k, _ in counts], [c for _, c in counts])

    def cast(self, origins: Array, directions: Array) -> Array:
        """Distance along each unit direction (rows) from each origin to the first surface
        hit; inf where none is (``trace``'s distances)."""
        return self.trace(origins, directions)[0]

    def hits(self, origins: Array, directions: Array) -> tuple[Array, Array]:
        """Distance along each unit direction (rows) to the first surface hit (inf where none
        is) and the unit normal of the surface there (zeros where none is), oriented against
        the ray. Vectorised: what a camera or a sonar beam casts by the thousand."""
        distance, normal, _ = self.trace(origins, directions)
        return distance, normal

    def trace(self, origins: Array, directions: Array) -> tuple[Array, Array, Array]:
        """``hits`` and which surface each ray hit: its index in ``scene.surfaces()`` (the
        seabed first when there is one), -1 where none."""
        directions = np.atleast_2d(np.asarray(directions, dtype=float))
        origins = np.ascontiguousarray(np.broadcast_to(np.asarray(origins, dtype=float), directions.shape))
        n = len(directions)
        distance, normal, surface = np.full(n, np.inf), np.zeros((n, 3)), np.full(n, -1, dtype=np.int64)
        plane = self.scene.plane
        if plane is not None:
            s0, s1 = plane.slope
            up = np.array([s0, s1, -1.0]) / math.sqrt(1.0 + s0 * s0 + s1 * s1)
            height = origins @ up + plane.depth * -up[2]  # Seafloor.distance, for every origin
            down = -(directions @ up)
            ok = (height > 0.0) & (down > 1e-12)
            distance[ok] = height[ok] / down[ok]
            normal[ok] = up
            surface[ok] = 0
        if self._embree is not None and n:
            hit, tri = nearer_hits(self._wrap, self._normals, origins, directions, distance, normal)
            surface[hit] = self._surface_of[tri]
        return distance, normal, surface

    def mesh_bounds(self, most: int = 32) -> tuple[Array, Array] | None:
        """Corners (lowest, highest NED; rows) of the box around each surface rays are cast on
        (a plane seabed left out), or of one box around them all when there are more than
        ``most``; None without triangles."""
        if self._embree is None:
            return None
        lo, hi = self._bounds
        return (lo, hi) if len(lo) <= most else (lo.min(axis=0, keepdims=True), hi.max(axis=0, keepdims=True))

    def mesh_hits(self, origin: Array, directions: Array, tfar: Array) -> tuple[Array, Array]:
        """Embree's first hit of each float32 unit direction (rows, C order) from one origin,
        no further than ``tfar`` (metres, float32; overwritten): the triangle hit (index into
        ``face_normals``, -1 where none, int32) and its distance (float64: ``trace``'s, to
        Embree's single precision). What a camera casts once it has left out the rays that
        cannot meet a triangle (``trace`` casts every ray)."""
        n = len(directions)
        if self._embree is None or n == 0:
            return np.full(n, -1, dtype=np.int32), np.full(n, np.inf)
        wrap = self._wrap
        start = ((np.asarray(origin, dtype=float) - wrap.origin) * wrap.scale).astype(np.float32)
        # every ray's origin is the one point: a row stride of zero, nothing copied n times
        origins = np.lib.stride_tricks.as_strided(start, shape=(n, 3), strides=(0, 4), writeable=True)
        tfar *= np.float32(wrap.scale)
        query = wrap.scene.run(origins, directions, dists=tfar, output=1)
        return np.asarray(query["primID"]), np.divide(query["tfar"], wrap.scale, dtype=float)

    @property
    def face_normals(self) -> Array:
        """Unit normal of each triangle rays are cast on (``mesh_hits``'s indices)."""
        return self._normals if self._embree is not None else np.zeros((0, 3))

    @property
    def face_surfaces(self) -> Array:
        """The surface (index in ``scene.surfaces()``) of each triangle rays are cast on."""
        return self._surface_of if self._embree is not None else np.zeros(0, dtype=np.int64)

    def beam_range(self, p: Array, direction: Array) -> float:
        return float(self.cast(p, direction)[0])

    def cone_range(self, p: Array, axis: Array, half_angle: float) -> float:
        """Nearest surface inside a cone of ``half_angle`` about the unit ``axis``: exact for a
        plane seabed; other surfaces by the axis and three rings of twelve rays."""
        best = plane_cone_range(self.scene, p, axis, half_angle)
        if self._embree is None:
            return best
        return min(best, float(self.cast(p, cone_rays(axis, half_angle)).min()))


def cone_rays(axis: Array, half_angle: float) -> Array:
    """Unit rays of a cone about the unit ``axis``: the axis and rings at 1/3, 2/3 and all of
    ``half_angle``, twelve azimuths each."""
    axis = np.asarray(axis, dtype=float)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    w = np.cross(axis, u)
    rays = [axis]
    phi = np.linspace(0.0, 2.0 * np.pi, _AZIMUTHS, endpoint=False)
    for f in _RINGS:
        a = f * half_angle
        rays.append(math.cos(a) * axis + math.sin(a) * (np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * w))
    return np.vstack(rays)
