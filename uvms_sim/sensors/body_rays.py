"""Rays that see the bodies too: the scene's fixed surfaces (``scene.raycast.SceneRays``) and the
system's bodies where they are now (vehicles, their arms, free objects), by their visual shapes
(``model.visual``: the description's ``visual``, else the hull, drag cylinder or volume).

``place(R, p)`` puts the bodies (world rotations and origins, from the dynamics); the next
``trace`` builds one Embree scene of their triangles in the world (a few thousand triangles: well
under a millisecond) and casts every ray once into it, beside the fixed scene. The body a sensor
sits in (a camera inside its vehicle's hull) is left out by the sensor: ``skip``.

The surfaces are numbered as ``surfaces()`` lists them: the scene's, then one per body seen.
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

    def surfaces(self) -> list[str]:
        """The names of what a ray can hit: the scene's surfaces, then the bodies."""
        return [name for name, _, _ in self.scene.surfaces()] + self.names

    def place(self, R: Array, p: Array) -> None:
        """The bodies at world rotations ``R`` (nb x 3 x 3, body to world) and origins ``p``."""
        self._poses = (np.array(R, dtype=float), np.array(p, dtype=float))
        self._embree = None

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
