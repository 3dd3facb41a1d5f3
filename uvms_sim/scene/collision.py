"""Collision geometry and queries, by coal (the collision library behind Pinocchio): the
scene's seabed and structures, and any shape, as coal objects; ``touching`` finds where two
placed objects touch or come within a margin, as pairs of witness points (one on each) with
the normal, several per pair where the contact is a face or an edge (coal's contact patches),
so that a box rests on its face and a jaw holds along its length.

Shapes: a box, a cylinder (along its z axis), a sphere, a mesh (a bounding volume hierarchy of
its triangles: open or non-convex meshes are accepted, each touching triangle counts as a
convex piece), a plane seabed (a half-space), a heightmap or mesh seabed (its triangles).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .geometry import Shape, rotation
from .scene import Scene
from .seabed import PlaneSeabed

Array = np.ndarray
SAME = 1e-3  # m: two points of one mesh pair closer than this are one (``dynamics.touch``)
MAX_CONTACTS = 16  # contacts coal reports for one pair (a mesh: one per touching triangle)


@dataclass
class Solid:
    """A coal collision object with its pose in the frame it is attached to (``R``, ``p``), its
    bounding radius about ``p`` (inf: unbounded, a half-space) and, for a mesh, its triangles
    (each touching one is a convex piece for the contact patch)."""

    geometry: object
    R: Array
    p: Array
    radius: float
    triangles: Array | None = None
    pieces: dict[int, object] = field(default_factory=dict)  # coal triangles made so far, by index

    def piece(self, index: int):
        """The mesh's triangle ``index`` as a coal triangle (made once, then kept)."""
        tri = self.pieces.get(index)
        if tri is None:
            a, b, c = self.triangles[index]  # type: ignore[index]
            tri = self.pieces[index] = _coal().TriangleP(a, b, c)
        return tri


def _coal():
    import coal

    return coal


def _mesh(vertices: Array, faces: Array):
    coal = _coal()
    bvh = coal.BVHModelOBBRSS()
    bvh.beginModel(len(faces), len(vertices))
    bvh.addVertices(np.ascontiguousarray(vertices, dtype=float))
    bvh.addTriangles(np.ascontiguousarray(faces, dtype=np.int64))
    bvh.endModel()
    return bvh


def shape_solid(kind: str, size, xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0), mesh: str = "") -> Solid:
    """A shape (``geometry.Shape``'s kinds and sizes) placed at ``xyz``, ``rpy`` in its frame."""
    coal = _coal()
    R, p = rotation(rpy), np.asarray(xyz, dtype=float)
    if kind == "box":
        return Solid(coal.Box(*size), R, p, 0.5 * float(np.linalg.norm(size)))
    if kind == "cylinder":
        radius, length = size
        return Solid(coal.Cylinder(radius, length), R, p, float(np.hypot(radius, 0.5 * length)))
    if kind == "sphere":
        return Solid(coal.Sphere(size[0]), R, p, float(size[0]))
    vertices, faces = Shape("mesh", tuple(size), mesh=mesh).triangles()
    center = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
    radius = float(np.max(np.linalg.norm(vertices - center, axis=1)))
    # the mesh about its bounding centre: the bounding sphere is then about p
    return Solid(_mesh(vertices - center, faces), R, p + R @ center, radius, vertices[faces] - center)


def scene_solids(scene: Scene) -> list[tuple[str, Solid]]:
    """The scene's seabed (a half-space if a plane, else its triangles) and structures, world
    (NED) frame, by name."""
    out = []
    seabed = scene.seabed
    if isinstance(seabed, PlaneSeabed):
        s0, s1 = seabed.slope
        normal = np.array([s0, s1, -1.0])  # solid below: z >= depth + s0 x + s1 y (NED)
        scale = float(np.linalg.norm(normal))
        half = _coal().Halfspace(normal / scale, -seabed.depth / scale)
        out.append(("seabed", Solid(half, np.eye(3), np.zeros(3), np.inf)))
    elif seabed is not None:
        vertices, faces = seabed.triangles()
        out.append(("seabed", _fixed_mesh(vertices, faces)))
    for structure in scene.structures:
        s = structure.shape
        if s.kind == "mesh":
            out.append((structure.name, _fixed_mesh(*s.triangles())))
        else:
            out.append((structure.name, shape_solid(s.kind, s.size, s.xyz, s.rpy)))
    return out


def _fixed_mesh(vertices: Array, faces: Array) -> Solid:
    center = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
    radius = float(np.max(np.linalg.norm(vertices - center, axis=1)))
    return Solid(_mesh(vertices - center, faces), np.eye(3), center, radius, vertices[faces] - center)


class Query:
    """Touch queries with reused coal requests and results (one per thread of use)."""

    def __init__(self, margin: float) -> None:
        coal = _coal()
        self.coal = coal
        self.request = coal.CollisionRequest()
        self.request.security_margin = float(margin)
        self.request.num_max_contacts = MAX_CONTACTS
        self.result = coal.CollisionResult()
        self.patch_request = coal.ContactPatchRequest()
        self.patch_request.setPatchTolerance(5e-3)
        self.patches = coal.ContactPatchResult(self.patch_request)
        self._tf = (coal.Transform3s(), coal.Transform3s())

    def placed(self, solid: Solid, R: Array, p: Array, into=None):
        """The coal transform of ``solid`` with its frame at ``R``, ``p`` in the world: set in
        ``into`` (a ``coal.Transform3s``), else in a new one."""
        tf = into if into is not None else self.coal.Transform3s()
        tf.setRotation(R @ solid.R)
        tf.setTranslation(p + R @ solid.p)
        return tf

    def touching(self, a: Solid, Ra: Array, pa: Array, b: Solid, Rb: Array, pb: Array) -> list[tuple]:
        """Where the solids ``a`` (its frame at ``Ra``, ``pa`` in the world) and ``b`` touch or
        come within the margin: (point on a, point on b, normal from b to a), world frame; the
        points of a face or an edge contact each (empty: apart). A mesh's points are its
        touching triangles' patches' as they are: a corner on a shared edge comes once per
        triangle (``dynamics.touch`` keeps one, within ``SAME``)."""
        Ta, Tb = self.placed(a, Ra, pa, self._tf[0]), self.placed(b, Rb, pb, self._tf[1])
        return self.touching_placed(a, Ta, b, Tb)

    def touching_placed(self, a: Solid, Ta, b: Solid, Tb) -> list[tuple]:
        """``touching`` with the solids placed by their coal transforms (``placed``)."""
        coal = self.coal
        res = self.result
        res.clear()
        if not coal.collide(a.geometry, Ta, b.geometry, Tb, self.request, res):
            return []
        contacts = res.getContacts()
        if a.triangles is None and b.triangles is None:
            return self._patch(a.geometry, Ta, b.geometry, Tb, res)
        out: list[tuple] = []
        for c in contacts:  # a mesh: each touching triangle as a convex piece
            ga, gb = a.geometry, b.geometry
            if a.triangles is not None:
                ga = a.piece(c.b1)
            if b.triangles is not None:
                gb = b.piece(c.b2)
            res.clear()
            if coal.collide(ga, Ta, gb, Tb, self.request, res):
                out += self._patch(ga, Ta, gb, Tb, res)
        return out

    def _patch(self, ga, Ta, gb, Tb, res) -> list[tuple]:
        patches = self.patches
        patches.clear()
        self.coal.computeContactPatch(ga, Ta, gb, Tb, res, self.patch_request, patches)
        out = []
        for i in range(patches.numContactPatches()):
            patch = patches.getContactPatch(i)
            normal = -np.asarray(patch.getNormal())  # coal's goes from a to b
            out += [(patch.getPointShape1(j), patch.getPointShape2(j), normal) for j in range(patch.size())]
        return out
