"""Which bodies touch what, every ``law.period`` seconds: the rows of ``contact.Contacts`` for
the points of touching pairs, found by coal (``scene.collision``) and kept from one detection
to the next so that a sticking point keeps its friction spring.

What can touch: every body's collision shapes (``model.visual.link_collisions``: the
description's ``collision``, else its hull, drag cylinder or volume) against the scene (seabed
and structures) and against the shapes of other bodies, unless one of the two bodies is an
ancestor of the other in the tree (a link does not touch its own arm or vehicle, but the two
jaws of a gripper touch each other and the object between them, and vehicles and free objects
touch everything).

A pair within ``law.margin`` gets its points (``Query.touching``), each as two material points
and a normal (``dynamics.contact``); the pair's stiffness, damping and tangential stiffness are
shared among its points, so that a box resting on its face sinks as far as a sphere of the same
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
from dataclasses import dataclass

import numpy as np

from ..model.kinematics import placements
from ..model.model import Model
from ..model.visual import link_collisions
from ..scene.collision import Query, Solid, scene_solids, shape_solid
from ..scene.scene import ContactLaw, Scene
from ..spatial import Array
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


@dataclass
class _Row:
    """A touching pair's point between detections: the pair (moving solid, other: a moving
    solid's index, or -1 - a scene solid's) and its row in the table."""

    pair: tuple[int, int]
    row: int


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
        self.rows: list[_Row] = []
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
        self.rows = []
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
        still = self._still(R, p)
        found: dict[tuple[int, int], list[tuple]] = {}
        asked: set[tuple[int, int]] = set()
        eye, zero = np.eye(3), np.zeros(3)
        if self.static:  # bounding spheres first (a half-space: always)
            gap = np.linalg.norm(centres[:, None, :] - self.static_centre[None], axis=2)
            near = np.argwhere(gap <= self.static_reach)
            for k, s in near:
                b, solid = self.moving[k]
                pair = (int(k), -1 - int(s))
                asked.add(pair)
                if still[b] and self._as_before(pair, found):
                    continue
                pts = self.query.touching(solid, R[b], p[b], self.static[s][1], eye, zero)
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
                pts = self.query.touching(sa, R[a], p[a], sb, R[b], p[b])
                if pts:
                    found[pair] = pts
        self._asked = asked
        self.pairs_touching = len(found)
        return self._write(found, R, p, contacts)

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
        """The rows of the pairs found: a point near one of the last detection keeps its row's
        material points; the others start from the witness points."""
        KI, KF = contacts.KI, contacts.KF
        # the last detection's points of the pairs found again: A's point and the tangential
        # offset of A's from B's (world), and the row
        old: dict[tuple[int, int], list[tuple[Array, Array, Array, float]]] = {}
        for r in self.rows:
            k = contacts.fixed + r.row
            if r.pair in found and KI[k, 1] == PAIR:
                a, b = int(KI[k, 0]), int(KI[k, 2])
                xa = p[a] + R[a] @ KF[k, :3]
                xb, n = (
                    (p[b] + R[b] @ KF[k, 3:6], R[b] @ KF[k, 10:13]) if b >= 0 else (KF[k, 3:6], KF[k, 10:13])
                )
                d = xa - xb
                gap = float(d @ n)
                old.setdefault(r.pair, []).append((xa, d - gap * n, KF[k].copy(), gap))
        for pair, points in list(found.items()):  # pairs of bodies at rest: their points as they are
            if points is KEEP_ROWS:
                found[pair] = [(xa, None, row) for xa, _, row, _ in old.get(pair, [])]
                old[pair] = []
                if not found[pair]:
                    del found[pair]
        for pair, previous in old.items():
            # a body driven deep into a thin one: coal may now see the shorter way out through
            # its far side (a normal turned round); the pair keeps its points, and so its side
            if not previous:
                continue
            j = pair[1]
            Rb = R[self.moving[j][0]] if j >= 0 else np.eye(3)
            before = Rb @ sum(row[10:13] for _, _, row, _ in previous)  # (their mean's direction)
            if any(float(normal @ before) < 0.0 for _, _, normal in found[pair]):
                found[pair] = [(xa, None, row) for xa, _, row, _ in previous]
                old[pair] = []
        rows: list[tuple[tuple[int, int], Array]] = []
        counts: list[int] = []
        law = self.law
        for pair, points in found.items():
            i, j = pair
            a = self.moving[i][0]
            b = self.moving[j][0] if j >= 0 else -1
            m = self.mass[a] if b < 0 else 1.0 / (1.0 / self.mass[a] + 1.0 / self.mass[b])
            m = m if np.isfinite(m) else 0.0  # (two bodies bolted to the world: no force moves them)
            previous = old.get(pair, [])
            pair_rows: list[Array] = []
            for pa, pb, normal in points:
                if pb is None:  # a pair keeping its points: normal is the row
                    row = normal
                else:
                    # the points where coal finds them now (a rolling or tilting body touches
                    # with other material points), and a point found again within MATCH of
                    # one of the last detection keeps its friction spring's offset
                    row = None
                    for n_old, (xa, offset, kept, _) in enumerate(previous):
                        moved = xa - pa
                        if float(moved @ moved) < MATCH * MATCH:  # (squared distances: no roots)
                            del previous[n_old]
                            slid = moved - (moved @ normal) * normal
                            if float(slid @ slid) < KEEP * KEEP:
                                row = kept  # the same material point (a face at rest): as it was
                            else:
                                pb = pb - (offset - (offset @ normal) * normal)
                            break
                    if row is None:
                        row = np.zeros(KF.shape[1])
                        row[:3] = R[a].T @ (pa - p[a])
                        if b >= 0:
                            row[3:6] = R[b].T @ (pb - p[b])
                            row[10:13] = R[b].T @ normal
                        else:
                            row[3:6] = pb
                            row[10:13] = normal
                pair_rows.append(row)
            # a point of the last detection that coal leaves out now (a face seen as its deepest
            # edge) is kept while it still presses: its friction spring holds on
            for _, _, kept, gap in previous:
                if gap < 0.0:
                    pair_rows.append(kept)
            share = 1.0 / len(pair_rows)
            c_n = 2.0 * self.zeta * math.sqrt(law.stiffness * m) * share
            c_t = 2.0 * self.zeta * math.sqrt(law.tangential_stiffness * m) * share
            for row in pair_rows:
                row[6], row[7], row[8] = law.stiffness * share, c_n, law.friction
                row[9], row[13] = law.tangential_stiffness * share, c_t
                rows.append(((a, b), row))
            counts.append(len(pair_rows))
        contacts.grow(len(rows))
        KI, KF, start = contacts.KI, contacts.KF, contacts.fixed
        KI[start:, 1] = UNUSED
        KF[start:] = 0.0
        self.rows = []
        for n, ((a, b), row) in enumerate(rows):
            KI[start + n] = (a, PAIR, b)
            KF[start + n] = row
        # the pair of each row, for the next detection's matching
        keys = [pair for pair, count in zip(found, counts, strict=True) for _ in range(count)]
        self._touching = set(found)
        self.rows = [_Row(key, n) for n, key in enumerate(keys)]
        return len(rows)
