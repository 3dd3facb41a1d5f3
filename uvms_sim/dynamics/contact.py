"""Compliant contacts: one table of contact rows, evaluated at every forward pass.

- Seabed points (McMillan et al.'s (1996) soft contact between feet and the seabed): a chosen
  body point below a horizontal plane at ``depth`` (NED z, down positive) by ``d > 0`` feels
  the normal force ``F_n = max(0, k d + c ḋ)`` upwards (no pull: the damper cannot make the
  seabed sticky) and the friction ``F_t = -μ F_n v_t / sqrt(|v_t|² + v_s²)`` against its
  horizontal slip velocity ``v_t``: Coulomb's law, regularised below the slip speed ``v_s``.
- Anchors: a spring-damper from a body point to a fixed world point, ``F = -k (x - x_a) - c ẋ``.
- Touching pairs (``dynamics.touch`` finds them in the scene): each point of a pair is two
  material points, ``r_A`` on body A and ``r_B`` on body B (or the fixed scene), and the
  normal ``n`` from B to A fixed in B, all set where the collision library found the pair.
  With the gap ``g = (x_A - x_B)·n`` (negative: penetration ``d = -g``) the normal force is
  ``F_n = max(0, k d + c ḋ)`` along ``n`` (Hunt & Crossley 1975's condition that a contact
  never pulls, with a linear spring-damper). Friction is a tangential spring ``-k_t s`` on
  the tangential offset ``s`` of the two points, bounded by Coulomb's ``μ F_n``: beyond it B's
  point is moved along the offset until the spring pulls exactly ``μ F_n`` (slip), and with no
  normal force it is moved onto A's (the points part freely). While spring and a damper
  ``c_t`` on the tangential velocity stay within the cone together, the damper acts too (a
  sticking point's ringing dies away; slipping, the spring alone pulls). A tangential load below
  ``μ F_n`` is then held with the spring's deflection ``F_t / k_t`` and no creep: static
  friction, the elasto-plastic "bristle" of Dahl (1968) in its rigid-plastic limit. The
  spring stores energy and the slip only removes some, so the tangential law never creates
  energy; ``docs/contacts.md`` states the limits.

Forces act at the points and enter the dynamics as body wrenches, evaluated from the forward
pass at every integrator stage; the compiled kernels (``compiled.contacts``) hold the same law
over the same table (KI: body, kind, other body; KF: ``flat.NKF`` columns; KN: normal forces).
A pair point's B point moves (slip) in every evaluation that finds it past the cone.
"""

from __future__ import annotations

import numpy as np

from ..model.model import Data, Model
from ..model.system import Anchor, Seabed
from ..spatial import Array, cross
from .flat import NKF, NKI

SEABED, ANCHOR, PAIR, UNUSED = 0, 1, 2, -1


def _point_state(data: Data, body: int, r: Array) -> tuple[Array, Array]:
    """World position and world velocity of a body point."""
    R = data.R_world[body]
    v = data.v[body]
    return data.p_world[body] + R @ r, R @ (v[:3] + cross(v[3:], r))


def _apply(out: Array, data: Data, body: int, r: Array, force_world: Array) -> None:
    f = data.R_world[body].T @ force_world
    out[body, :3] += f
    out[body, 3:] += cross(r, f)


class Contacts:
    """All contacts of a system as one table of rows (module doc): seabed points, anchors and
    ``pair_rows`` rows for the points of touching pairs (unused until ``dynamics.touch`` writes
    them). ``wrenches(data)`` is an ``f_ext`` function; ``normal_forces`` holds the last normal
    force of every seabed contact point by name. The compiled path evaluates the same rows
    (``bind`` makes them views of its buffer, so both read and move the same points)."""

    def __init__(
        self,
        model: Model,
        seabeds: list[Seabed] | None = None,
        anchors: list[Anchor] | None = None,
        pair_rows: int = 0,
    ):
        self.nbodies = model.nbodies
        self.seabeds = [
            (sb, [(p.name, model.body_index(p.link), np.asarray(p.position, dtype=float)) for p in sb.points])
            for sb in seabeds or []
        ]
        self.anchors = [
            (a, model.body_index(a.point.link), np.asarray(a.point.position, dtype=float))
            for a in anchors or []
        ]
        KI, KF, self.names = [], [], []
        for sb, points in self.seabeds:
            for name, body, r in points:
                KI.append((body, SEABED, -1))
                KF.append(
                    [*r, sb.depth, 0, 0, sb.stiffness, sb.damping, sb.friction, sb.slip_velocity, 0, 0, 0, 0]
                )
                self.names.append(name)
        for a, body, r in self.anchors:
            KI.append((body, ANCHOR, -1))
            KF.append([*r, *np.asarray(a.anchor, dtype=float), a.stiffness, a.damping, 0, 1, 0, 0, 0, 0])
            self.names.append("")
        self.fixed = len(KI)  # the rows before the pairs'
        KI += [(0, UNUSED, -1)] * pair_rows
        KF += [[0.0] * NKF] * pair_rows
        self.KI: np.ndarray = np.array(KI, dtype=np.int64).reshape(-1, NKI)
        self.KF = np.array(KF, dtype=float).reshape(-1, NKF)
        self.KN = np.zeros(len(KI))
        self.version = 0  # counts changes of the table's size (the compiled path packs it again)
        self.normal_forces: dict[str, float] = {}

    @property
    def pair_rows(self) -> int:
        return self.KI.shape[0] - self.fixed

    def grow(self, rows: int) -> None:
        """Room for at least ``rows`` pair points (the table doubles; rows written stay)."""
        if rows <= self.pair_rows:
            return
        extra = max(rows, 2 * self.pair_rows) - self.pair_rows
        KI = np.tile(np.array([[0, UNUSED, -1]], dtype=np.int64), (extra, 1))
        self.KI = np.vstack([self.KI, KI])
        self.KF = np.vstack([self.KF, np.zeros((extra, NKF))])
        self.KN = np.concatenate([self.KN, np.zeros(extra)])
        self.version += 1

    def bind(self, KI: np.ndarray, KF: Array, KN: Array) -> None:
        """Keep the rows in these arrays (the compiled path's buffer), which hold them already."""
        self.KI, self.KF, self.KN = KI, KF, KN

    def wrenches(self, data: Data) -> Array:
        out = np.zeros((self.nbodies, 6))
        KI, KF, KN = self.KI, self.KF, self.KN
        for k in range(KI.shape[0]):
            body, kind, other = (int(x) for x in KI[k])
            row = KF[k]
            if kind == UNUSED:
                KN[k] = 0.0
            elif kind == PAIR:
                KN[k] = _pair(out, data, body, other, row)
            elif kind == SEABED:
                x, xd = _point_state(data, body, row[:3])
                d = x[2] - row[3]
                fn = max(0.0, row[6] * d + row[7] * xd[2]) if d > 0.0 else 0.0
                KN[k] = fn
                if k < len(self.names) and self.names[k]:
                    self.normal_forces[self.names[k]] = fn
                if fn == 0.0:
                    continue
                vt = xd[:2]
                ft = -row[8] * fn * vt / np.sqrt(vt @ vt + row[9] ** 2)
                _apply(out, data, body, row[:3], np.array([ft[0], ft[1], -fn]))
            else:
                x, xd = _point_state(data, body, row[:3])
                _apply(out, data, body, row[:3], -row[6] * (x - row[3:6]) - row[7] * xd)
        return out


def _pair(out: Array, data: Data, a: int, b: int, row: Array) -> float:
    """The wrenches of a touching pair's point (module doc) into ``out``; its normal force. B's
    point in ``row`` moves when the tangential spring is past the friction cone."""
    xa, ua = _point_state(data, a, row[:3])
    if b >= 0:
        xb, ub = _point_state(data, b, row[3:6])
        n = data.R_world[b] @ row[10:13]
    else:
        xb, ub, n = row[3:6], np.zeros(3), row[10:13]
    d = xa - xb
    gap = float(d @ n)
    rate = float((ua - ub) @ n)
    fn = max(0.0, -row[6] * gap - row[7] * rate) if gap < 0.0 else 0.0
    s = d - gap * n
    kt = row[9]
    ts = kt * float(np.sqrt(s @ s))
    cap = row[8] * fn
    spring = kt * s + row[13] * ((ua - ub) - rate * n)  # with the sticking point's damper
    if ts > cap or float(spring @ spring) > cap * cap:
        spring = kt * s
    if ts > cap:
        keep = cap / ts
        move = (1.0 - keep) * s
        row[3:6] += data.R_world[b].T @ move if b >= 0 else move
        spring = keep * spring
    if fn == 0.0:
        return 0.0
    F = fn * n - spring
    _apply(out, data, a, row[:3], F)
    if b >= 0:
        _apply(out, data, b, row[3:6], -F)
    return fn
