"""Which bodies touch what, every ``law.period`` seconds: the rows of ``contact.Contacts`` for
the points of touching pairs, found by coal (``scene.collision``) and kept from one detection
to the next so that a sticking point keeps its friction spring.

What can touch: every body's collision shapes (``model.visual.link_collisions``: the
description's ``collision``, else its hull, drag cylinder or volume) against the scene (seabed
and structures) and against the shapes of other bodies, unless one of the two bodies is an
ancestor of the other in the tree (a link does not touch its own arm or vehicle, but the two
jaws of a gripper touch each other and the object between them, and vehicles and free objects
touch everything).

A pair within ``law.margin`` gets its points (``Query.touching_placed``; the rows are written
by ``compiled.touch_rows.pair_rows``), each as two material points and a normal
(``dynamics.contact``); the pair's stiffness, damping and tangential stiffness are shared
among its points, so that a box resting on its face sinks as far as a sphere of the same
weight. A point found again near a point of the last detection (within ``MATCH`` of it) keeps
that point's friction spring: what it holds, it holds on. Within ``KEEP`` it is the same
material point (a face at rest) and its row is kept as it was; farther (a rolling or tilting
body touches with other material points) it starts from where coal finds it now, with the
spring's tangential offset carried over. The margin is what lets a detection
every few milliseconds see contacts coming: at ``law.period`` 5 ms and the default 2 cm, a body
may approach at 4 m/s before a contact would begin between two detections.

Damping (normal, and tangential while a point sticks) from the restitution ``e`` (Hunt &
Crossley 1975; a linear spring-damper): the damping ratio ``ζ = -ln e / sqrt(π² + ln² e)``
(1 for e = 0: critically damped, no bounce; 0 for e = 1: no loss) on the pair's effective
mass (rigid and added, along the mean translational axis; a link of an arm counts with its own
mass only: the arm behind it makes its impacts somewhat more elastic than ``e`` says).
"""

from __future__ import annotations

import math

import numpy as np

from ..model.kinematics import placements
from ..model.model import Model
from ..model.visual import link_collisions
from ..scene.collision import SAME, Query, Solid, scene_solids, shape_solid
from ..scene.scene import ContactLaw, Scene
from ..spatial import Array
from . import compiled
from .contact import PAIR, UNUSED, Contacts

MATCH = 0.01  # m: a point found again within this of a last detection's point is the same point
KEEP = 1e-4  # m: ... and within this along the surface, the same material point (kept as it was)
STILL = 1e-7  # m, and rotation-matrix entries: a body that moved less has not moved
KEEP_ROWS: list = []  # (marks a pair whose bodies have not moved: its rows stay as they are)
PAIR_ROWS = 64  # pair points the table holds at first (it grows when more touch)


def damping_ratio(restitution: float) -> float:
    """ζ of a linear spring-damper whose impacts end with ``restitution`` (module doc)."""
    if restitution <= 0.0:
        return 1.0
    if restitution >= 1.0:
        return 0.0
    log = math.log(restitution)
    return -log / math.sqrt(math.pi**2 + log * log)


class Touch:
    """The detection (module doc) of a model's bodies in a scene, writing the pair rows of
    ``contacts``."""

    def __init__(self, model: Model, scene: Scene, law: ContactLaw):
        self.model, self.law = model, law
        self.query = Query(law.margin)
        self.static = scene_solids(scene)
        self.moving: list[tuple[int, Solid]] = []
        for i, body in enumerate(model.bodies):
            for v in link_collisions(body):
                self.moving.append((i, shape_solid(v.shape, v.size, v.xyz, v.rpy, v.mesh)))
        ancestors = [self._ancestors(i) for i in range(model.nbodies)]
        n = len(self.moving)
        self.between = [
            (i, j)
            for i in range(n)
            for j in range(i + 1, n)
            if (a := self.moving[i][0]) != (b := self.moving[j][0])
            and a not in ancestors[b]
            and b not in ancestors[a]
        ]
        margin = law.margin
        self.solid_body = np.array([b for b, _ in self.moving], dtype=int)
        self.solid_offset = np.array([s.p for _, s in self.moving]).reshape(-1, 3)
        # the solids' coal transforms: the scene's once, the moving ones' at each detection
        self._placed = [self.query.coal.Transform3s() for _ in self.moving]
        self._static_placed = [self.query.placed(s, np.eye(3), np.zeros(3)) for _, s in self.static]
        radius = np.array([s.radius for _, s in self.moving])
        self.static_centre = np.array([s.p for _, s in self.static]).reshape(-1, 3)
        # how near a moving solid's centre must be to a scene solid's to be asked (inf: always)
        self.static_reach = radius[:, None] + np.array([s.radius for _, s in self.static])[None] + margin
        self.between_i = np.array([i for i, _ in self.between], dtype=int)
        self.between_j = np.array([j for _, j in self.between], dtype=int)
        self.between_reach = radius[self.between_i] + radius[self.between_j] + margin
        mass = model.mass + np.trace(model.M_A[:, :3, :3], axis1=1, axis2=2) / 3.0
        self.mass = np.maximum(mass, 1e-6)
        for i in range(model.nbodies):  # a body bolted to the world (no joint on its way moves)
            if all(model.joints[k].nv == 0 for k in (i, *ancestors[i])):
                self.mass[i] = np.inf
        self.zeta = damping_ratio(law.restitution)
        # what ``compiled.touch_rows.pair_rows`` reads of the law
        self._law = np.array(
            [law.stiffness, law.tangential_stiffness, law.friction, self.zeta, MATCH, KEEP, SAME]
        )
        # each touching pair's rows (first, count after ``contacts.fixed``), pair after pair
        self._spans: dict[tuple[int, int], tuple[int, int]] = {}
        # the bodies' places when their pairs were last asked about, the pairs asked then and
        # those found touching (``_still``, ``_as_before``)
        self._ref: tuple[Array, Array] | None = None
        self._asked: set[tuple[int, int]] = set()
        self._touching: set[tuple[int, int]] = set()
        self.data = model.create_data()
        self.pairs_touching = 0

    def forget(self, contacts: Contacts) -> None:
        """No pair touches (after a reset): the pair rows unused, every pair asked again."""
        contacts.KI[contacts.fixed :, 1] = UNUSED
        self._spans = {}
        self.pairs_touching = 0
        self._ref = None
        self._asked, self._touching = set(), set()

    def _ancestors(self, i: int) -> set[int]:
        out = set()
        while (i := int(self.model.parents[i])) >= 0:
            out.add(i)
        return out

    def poses(self, q: Array) -> tuple[Array, Array]:
        """World rotations and origins of every body at ``q`` (the reference placements)."""
        placements(self.model, self.data, q)
        return self.data.R_world, self.data.p_world

    def _centres(self, R: Array, p: Array) -> Array:
        """The world centres of the moving solids' bounding spheres."""
        return p[self.solid_body] + np.einsum("kij,kj->ki", R[self.solid_body], self.solid_offset)

    def detect(self, R: Array, p: Array, contacts: Contacts) -> int:
        """Find the touching pairs with the bodies at world rotations ``R`` (nb x 3 x 3, body to
        world) and origins ``p`` (NED) and write their points into the pair rows of
        ``contacts`` (growing it if needed); the number of points."""
        centres = self._centres(R, p)
        placed: dict[int, object] = {}

        def place(k: int):  # solid k's coal transform at this detection, set once
            tf = placed.get(k)
            if tf is None:
                b, solid = self.moving[k]
                tf = placed[k] = self.query.placed(solid, R[b], p[b], self._placed[k])
            return tf

        still = self._still(R, p)
        found: dict[tuple[int, int], list[tuple]] = {}
        asked: set[tuple[int, int]] = set()
        if self.static:  # bounding spheres first (a half-space: always)
            gap = np.linalg.norm(centres[:, None, :] - self.static_centre[None], axis=2)
            near = np.argwhere(gap <= self.static_reach)
            for k, s in near:
                b, solid = self.moving[k]
                pair = (int(k), -1 - int(s))
                asked.add(pair)
                if still[b] and self._as_before(pair, found):
                    continue
                other, placed_other = self.static[s][1], self._static_placed[s]
                pts = self.query.touching_placed(solid, place(k), other, placed_other)
                if pts:
                    found[pair] = pts
        if len(self.between):
            i, j = self.between_i, self.between_j
            close = np.flatnonzero(np.linalg.norm(centres[i] - centres[j], axis=1) <= self.between_reach)
            for n in close:
                a, sa = self.moving[i[n]]
                b, sb = self.moving[j[n]]
                pair = (int(i[n]), int(j[n]))
                asked.add(pair)
                if still[a] and still[b] and self._as_before(pair, found):
                    continue
                pts = self.query.touching_placed(sa, place(i[n]), sb, place(j[n]))
                if pts:
                    found[pair] = pts
        self._asked = asked
        self.pairs_touching = len(found)
        return self._write(found, R, p, contacts)

    def _mesh_pair(self, pair: tuple[int, int]) -> bool:
        """Whether one of the pair's solids is a mesh (its points then come from several
        triangles' patches, a corner on a shared edge in each)."""
        i, j = pair
        other = self.moving[j][1] if j >= 0 else self.static[-1 - j][1]
        return self.moving[i][1].triangles is not None or other.triangles is not None

    def _still(self, R: Array, p: Array) -> Array:
        """Which bodies are where their pairs were last asked about (within ``STILL``); the
        others' places are remembered now (their pairs are asked again)."""
        if self._ref is None or len(self._ref[1]) != len(p):
            self._ref = (np.array(R, dtype=float), np.array(p, dtype=float))
            return np.zeros(len(p), dtype=bool)
        R0, p0 = self._ref
        still = (np.abs(R - R0).max(axis=(1, 2)) < STILL) & (np.abs(p - p0).max(axis=1) < STILL)
        R0[~still], p0[~still] = R[~still], p[~still]
        return still

    def _as_before(self, pair: tuple[int, int], found: dict) -> bool:
        """A pair of bodies that have not moved: apart as it was (False: ask), or touching as it
        was, its points kept as they are (``KEEP_ROWS`` in ``found``; True)."""
        if pair not in self._asked:
            return False  # not asked last time: ask now
        if pair in self._touching:
            found[pair] = KEEP_ROWS
        return True

    def overlaps(self, R: Array, p: Array, bodies: set[int]) -> tuple[str, str, float] | None:
        """The deepest overlap beyond the margin of one of ``bodies`` with another body or the
        scene, with the bodies at (R, p): (its name, the other's, depth m); None if none."""
        deepest: tuple[str, str, float] | None = None
        names = [b.name for b in self.model.bodies]
        for k, (b, solid) in enumerate(self.moving):
            if b not in bodies:
                continue
            others = [(name, s, np.eye(3), np.zeros(3)) for name, s in self.static]
            others += [
                (names[c], other, R[c], p[c])
                for i, j in self.between
                if k in (i, j)
                for c, other in [self.moving[j if i == k else i]]
            ]
            for name, other, Ro, po in others:
                for pa, pb, normal in self.query.touching(solid, R[b], p[b], other, Ro, po):
                    depth = float((pb - pa) @ normal)
                    if depth > self.law.margin and (deepest is None or depth > deepest[2]):
                        deepest = (names[b], name, depth)
        return deepest

    def _write(self, found: dict, R: Array, p: Array, contacts: Contacts) -> int:
        """The rows of the pairs found (``compiled.touch_rows.pair_rows``): a point near one of
        the last detection keeps its row's material points; the others start from the witness
        points."""
        KI, KF, fixed = contacts.KI, contacts.KF, contacts.fixed
        pairs = list(found)
        # the last detection's rows of the pairs found again (copies), pair after pair
        valid = KI[fixed:, 1] == PAIR
        ospan = np.zeros((len(pairs), 2), dtype=np.int64)
        picked: list[int] = []
        for n, pair in enumerate(pairs):
            ospan[n, 0] = len(picked)
            span = self._spans.get(pair)
            if span is not None:
                picked += [fixed + k for k in range(span[0], span[0] + span[1]) if valid[k]]
            ospan[n, 1] = len(picked) - ospan[n, 0]
        old = KF[picked] if picked else np.zeros((0, KF.shape[1]))
        keep = np.array([points is KEEP_ROWS for points in found.values()], dtype=np.int64)
        meshes = np.array([self._mesh_pair(pair) for pair in pairs], dtype=np.int64)
        seg = np.zeros(len(pairs) + 1, dtype=np.int64)
        seg[1:] = np.cumsum([0 if points is KEEP_ROWS else len(points) for points in found.values()])
        coal = [point for each in found.values() if each is not KEEP_ROWS for point in each]
        pts = np.array(coal, dtype=float).reshape(-1, 9) if coal else np.zeros((0, 9))
        bodies = np.array(
            [(self.moving[i][0], self.moving[j][0] if j >= 0 else -1) for i, j in pairs], dtype=np.int64
        ).reshape(-1, 2)
        out = np.empty((len(pts) + len(old), KF.shape[1]))
        counts = np.zeros(len(pairs), dtype=np.int64)
        R, p = np.ascontiguousarray(R, dtype=float), np.ascontiguousarray(p, dtype=float)
        known, used = np.empty((len(old), 7)), np.empty(len(old), dtype=np.int64)
        dup = np.empty(len(pts), dtype=np.int64)
        scratch = (known, used, dup, self.mass, self._law)
        total = compiled.pair_rows(R, p, bodies, keep, meshes, seg, pts, ospan, old, *scratch, out, counts)
        contacts.grow(total)
        KI, KF = contacts.KI, contacts.KF
        KI[fixed:, 1] = UNUSED
        KF[fixed:] = 0.0
        KF[fixed : fixed + total] = out[:total]
        KI[fixed : fixed + total, 0] = np.repeat(bodies[:, 0], counts)
        KI[fixed : fixed + total, 1] = PAIR
        KI[fixed : fixed + total, 2] = np.repeat(bodies[:, 1], counts)
        # each pair's rows, for the next detection's matching
        starts = np.cumsum(counts) - counts
        spans = zip(pairs, starts.tolist(), counts.tolist(), strict=True)
        self._spans = {pair: (start, count) for pair, start, count in spans if count}
        self._touching = set(self._spans)
        return int(total)
