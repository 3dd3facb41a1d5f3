"""Rays that see the bodies too: the scene's fixed surfaces (``scene.raycast.SceneRays``) and the
system's bodies where they are now (vehicles, their arms, free objects), by their visual shapes
(``model.visual``: the description's ``visual``, else the hull, drag cylinder or volume).

``place(R, p)`` puts the bodies (world rotations and origins, from the dynamics); the next
``trace`` builds one Embree scene of their triangles in the world (a few thousand triangles: well
under a millisecond) and casts every ray once into it, beside the fixed scene. The body a sensor
sits in (a camera inside its vehicle's hull) is left out by the sensor: ``skip``.

The surfaces are numbered as ``surfaces()`` lists them: the scene's, then one per body seen.

A camera casts its rays in two steps (``sensors.camera``): ``boxes()`` (each body's box in the
world, where it is now) tells which rays can meet a body, ``mesh_hits`` casts only those into an
Embree scene of the bodies' triangles built about the camera (``origin``: float32 is finest
where the camera looks closest), with ``face_normals`` and ``face_surfaces`` for the triangles
it returns.
"""

from __future__ import annotations

import numpy as np

from ..model.model import Model
from ..model.urdf_writer import link_visuals
from ..scene.geometry import Shape
from ..scene.raycast import SceneRays, nearer_hits

Array = np.ndarray


def body_meshes(model: Model, skip: set[int]) -> list[tuple[int, Array, Array]]:
    """Each body's visual shapes as one mesh in its own axes: (body, vertices, triangles)."""
    out = []
    for i, body in enumerate(model.bodies):
        if i in skip:
            continue
        parts, n = [], 0
        for v in link_visuals(body):
            size = v.size
            vertices, faces = Shape(v.shape, size, tuple(v.xyz), tuple(v.rpy), v.mesh).triangles()
            parts.append((vertices, faces + n))
            n += len(vertices)
        if parts:
            out.append((i, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])))
    return out


class BodyRays:
    """The scene's rays and the bodies' (module doc); ``trace`` as ``SceneRays.trace``."""

    def __init__(self, scene_rays: SceneRays, model: Model, skip: set[int] | None = None) -> None:
        self.scene_rays = scene_rays
        self.scene = scene_rays.scene
        self.meshes = body_meshes(model, skip or set())
        self.names = [model.bodies[i].name for i, _, _ in self.meshes]
        self._poses: tuple[Array, Array] | None = None
        self._embree = None
        counts = [len(f) for _, _, f in self.meshes]
        self._body_of = np.repeat(np.arange(len(self.meshes)), counts)
        faces, n = [], 0
        for _, v, f in self.meshes:  # one mesh of every body's triangles
            faces.append(f + n)
            n += len(v)
        self._faces = np.concatenate(faces) if faces else np.zeros((0, 3), dtype=np.int64)
        self._faces32 = self._faces.astype(np.int32)
        local = [_normals(v, f) for _, v, f in self.meshes]
        self._local_normals = np.concatenate(local) if local else np.zeros((0, 3))
        # the colour a camera sees on each body: its first visual's
        self.colors = [tuple(link_visuals(model.bodies[i])[0].color[:3]) for i, _, _ in self.meshes]
        self._world: tuple[Array, Array, Array, Array] | None = None

    def surfaces(self) -> list[str]:
        """The names of what a ray can hit: the scene's surfaces, then the bodies."""
        return [name for name, _, _ in self.scene.surfaces()] + self.names

    def place(self, R: Array, p: Array) -> None:
        """The bodies at world rotations ``R`` (nb x 3 x 3, body to world) and origins ``p``."""
        self._poses = (np.array(R, dtype=float), np.array(p, dtype=float))
        self._embree = None
        self._world = None

    def _placed(self) -> tuple[Array, Array, Array, Array]:
        """The bodies' vertices and triangle normals in the world, and each body's box (lowest
        and highest corners, rows), where they were last placed (nowhere: no boxes)."""
        if self._world is None:
            if self._poses is None or not self.meshes:
                empty = np.zeros((0, 3))
                self._world = empty, empty, empty, empty
            else:
                R, p = self._poses
                parts = [v @ R[i].T + p[i] for i, v, _ in self.meshes]
                turn = np.repeat(
                    np.array([R[i] for i, _, _ in self.meshes]), [len(f) for _, _, f in self.meshes], axis=0
                )
                normals = np.einsum("kij,kj->ki", turn, self._local_normals)
                lo = np.array([w.min(axis=0) for w in parts])
                hi = np.array([w.max(axis=0) for w in parts])
                self._world = np.concatenate(parts), np.ascontiguousarray(normals), lo, hi
        return self._world

    def boxes(self) -> tuple[Array, Array]:
        """Each body's box in the world (lowest and highest NED corners, rows), padded so that
        a triangle on a face is inside it; none before ``place``."""
        _, _, lo, hi = self._placed()
        pad = 1e-6 * (1.0 + float(np.abs(np.concatenate([lo, hi])).max())) if len(lo) else 0.0
        return np.ascontiguousarray(lo - pad), np.ascontiguousarray(hi + pad)

    @property
    def face_normals(self) -> Array:
        """Unit normal of each body triangle in the world, where the bodies are now."""
        return self._placed()[1]

    @property
    def face_surfaces(self) -> Array:
        """The surface (index in ``surfaces()``) of each body triangle."""
        return len(self.scene.surfaces()) + self._body_of

    def mesh_hits(self, origin: Array, directions: Array, tfar: Array) -> tuple[Array, Array]:
        """``SceneRays.mesh_hits`` for the bodies where they are now: Embree's first body
        triangle hit by each float32 unit direction (rows) from ``origin``, no further than
        ``tfar`` (float32, overwritten): the triangle (-1: none, int32) and its distance."""
        n = len(directions)
        vertices = self._placed()[0]
        if n == 0 or not len(vertices):
            return np.full(n, -1, dtype=np.int32), np.full(n, np.inf)
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh

        scene = rtcore_scene.EmbreeScene()
        local = (vertices - np.asarray(origin, dtype=float)).astype(np.float32)
        TriangleMesh(scene=scene, vertices=local, indices=self._faces32)
        start = np.zeros(3, dtype=np.float32)  # every ray from the origin: nothing copied n times
        origins = np.lib.stride_tricks.as_strided(start, shape=(n, 3), strides=(0, 4), writeable=True)
        query = scene.run(origins, directions, dists=tfar, output=1)
        return np.asarray(query["primID"]), np.asarray(query["tfar"], dtype=float)

    def _bodies(self):
        if self._embree is None and self._poses is not None and self.meshes:
            import trimesh
            from trimesh.ray.ray_pyembree import RayMeshIntersector

            R, p = self._poses
            world = np.concatenate([v @ R[i].T + p[i] for i, v, _ in self.meshes])
            self._embree = RayMeshIntersector(trimesh.Trimesh(world, self._faces, process=False))
        return self._embree

    def trace(self, origins: Array, directions: Array) -> tuple[Array, Array, Array]:
        """Distance to the first surface or body hit (inf: none), the unit normal there facing
        the ray, and what was hit (an index of ``surfaces()``, -1: nothing)."""
        distance, normal, surface = self.scene_rays.trace(origins, directions)
        embree = self._bodies()
        if embree is None or not len(distance):
            return distance, normal, surface
        directions = np.atleast_2d(np.asarray(directions, dtype=float))
        origins = np.ascontiguousarray(np.broadcast_to(np.asarray(origins, dtype=float), directions.shape))
        hit, tri = nearer_hits(embree._scene, embree.mesh.face_normals, origins, directions, distance, normal)
        surface[hit] = len(self.scene.surfaces()) + self._body_of[tri]
        return distance, normal, surface


def _normals(vertices: Array, faces: Array) -> Array:
    """Unit normal of each triangle (right-handed in its vertices' order)."""
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    n = np.cross(b - a, c - a)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return n / np.where(length > 0.0, length, 1.0)
