"""Compliant contacts (McMillan et al.'s (1996) soft contact between feet and the seabed): spring-dampers
between chosen body points and a seabed plane or fixed anchors, with Coulomb friction.

- Seabed: a horizontal plane at depth ``depth`` (NED z, down positive). A point below it by
  ``d > 0`` feels the normal force ``F_n = max(0, k d + c ḋ)`` upwards (no pull: the damper
  cannot make the seabed sticky) and the friction ``F_t = -μ F_n v_t / sqrt(|v_t|² + v_s²)``
  against its horizontal slip velocity ``v_t``: Coulomb's law, regularised below the slip
  speed ``v_s`` so that it is a smooth function for the integrator.
- Anchor: a spring-damper from a body point to a fixed world point, ``F = -k (x - x_a) - c ẋ``.

Forces act at the points and enter the dynamics as body wrenches (``f_ext``), evaluated from
the forward pass at every integrator stage. The descriptions are ``uvms_sim.model.system``'s
``Seabed`` and ``Anchor``.
"""

from __future__ import annotations

import numpy as np

from ..model.model import Data, Model
from ..model.system import Anchor, Seabed
from ..spatial import Array, cross


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
    """All contact models of a system; ``wrenches(data)`` is an ``f_ext`` function and
    ``normal_forces`` holds the last normal force of every seabed contact point by name."""

    def __init__(
        self, model: Model, seabeds: list[Seabed] | None = None, anchors: list[Anchor] | None = None
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
        self.normal_forces: dict[str, float] = {}

    def wrenches(self, data: Data) -> Array:
        out = np.zeros((self.nbodies, 6))
        for sb, points in self.seabeds:
            for name, body, r in points:
                x, xd = _point_state(data, body, r)
                d = x[2] - sb.depth
                fn = max(0.0, sb.stiffness * d + sb.damping * xd[2]) if d > 0.0 else 0.0
                self.normal_forces[name] = fn
                if fn == 0.0:
                    continue
                vt = xd[:2]
                ft = -sb.friction * fn * vt / np.sqrt(vt @ vt + sb.slip_velocity**2)
                _apply(out, data, body, r, np.array([ft[0], ft[1], -fn]))
        for a, body, r in self.anchors:
            x, xd = _point_state(data, body, r)
            _apply(out, data, body, r, -a.stiffness * (x - np.asarray(a.anchor)) - a.damping * xd)
        return out
