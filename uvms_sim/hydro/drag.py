"""Per-link drag models: pressure drag of a slender cylinder by strip theory.

McMillan et al. 1996 (section 2, after eq. 6) leaves the drag force ``f^D(ω, v_r)`` of a link to a
model of the user's choice and refers to the cross-flow model for slender links: each
strip ``ds`` of a cylinder of radius ``r`` feels the pressure drag of the velocity component
normal to its axis,

    df = -½ ρ C_d (2 r) |v_n(s)| v_n(s) ds,      v_n = v_p - (v_p · e) e,
    v_p(s) = v_r + ω × p(s),                      p(s) = start + s e,  s ∈ [0, L],

and the wrench about the link origin is ``∫ [df; p × df]``. The velocity of a strip varies
along the link when the link rotates, so the drag is not a function of the velocity at one
point: it is integrated with Gauss-Legendre quadrature (``points`` nodes). The integrand is a
polynomial of degree <= 3 in ``s`` when ``v_n`` keeps its direction along the link
(translation, or rotation about a point off the segment), so two nodes are exact there; when
``v_n`` changes sign along the link the default eight nodes give the integral to about 1e-3.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..spatial import Array, cross


@dataclass(frozen=True)
class CylinderDrag:
    """A slender cylinder on a link: from ``start`` (link axes, m) along ``axis`` for ``length``."""

    length: float
    radius: float
    axis: Array = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    start: Array = field(default_factory=lambda: np.zeros(3))
    drag_coefficient: float = 1.1
    points: int = 8
    s: Array = field(init=False, repr=False, compare=False)  # quadrature abscissae along the axis, m
    nodes: Array = field(init=False, repr=False, compare=False)  # quadrature points, link axes
    weights: Array = field(init=False, repr=False, compare=False)  # quadrature weights, m

    def __post_init__(self) -> None:
        if not self.length > 0.0 or not self.radius > 0.0:
            raise ValueError(
                f"cylinder drag needs length > 0 and radius > 0, got {self.length}, {self.radius}"
            )
        if not self.drag_coefficient >= 0.0:
            raise ValueError(f"drag_coefficient must be >= 0, got {self.drag_coefficient}")
        if not 1 <= int(self.points) <= 64:
            raise ValueError(f"points must be 1..64, got {self.points}")
        axis = np.asarray(self.axis, dtype=float).reshape(3)
        norm = float(np.linalg.norm(axis))
        if not norm > 0.0:
            raise ValueError("cylinder drag axis must be non-zero")
        axis = axis / norm
        start = np.asarray(self.start, dtype=float).reshape(3)
        x, w = np.polynomial.legendre.leggauss(int(self.points))
        s = 0.5 * self.length * (x + 1.0)
        nodes = start + s[:, None] * axis  # quadrature points, link axes
        weights = 0.5 * self.length * w
        for name, value in (
            ("axis", axis),
            ("start", start),
            ("s", s),
            ("nodes", nodes),
            ("weights", weights),
        ):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def center(self) -> Array:
        return self.start + 0.5 * self.length * self.axis


def cylinder_drag_wrench(drag: CylinderDrag, v_rel: Array, rho: float) -> Array:
    """Drag wrench ``[f; n]`` on the link about its origin, link axes, for the link's spatial
    velocity relative to the fluid ``v_rel = [v_r; ω]`` (see the module docstring).

    Along the link ``v_n(s) = A + s B`` with ``A = P (v_r + ω × start)``, ``B = P (ω × e)`` and
    ``P = 1 - e eᵀ``, so with ``c_k = -½ρC_d 2r w_k |v_n(s_k)|`` at the nodes ``s_k``:
    ``f = A Σc_k + B Σc_k s_k`` and ``n = start × f + e × (A Σc_k s_k + B Σc_k s_k²)``.
    """
    e = drag.axis
    w = v_rel[3:]
    a = v_rel[:3] + cross(w, drag.start)
    b = cross(w, e)
    A = a - (a @ e) * e
    B = b - (b @ e) * e
    s = drag.s
    speed = np.sqrt(np.maximum(A @ A + s * (2.0 * (A @ B)) + s * s * (B @ B), 0.0))
    c = (-rho * drag.drag_coefficient * drag.radius) * drag.weights * speed
    c0, c1, c2 = c.sum(), c @ s, c @ (s * s)
    f = c0 * A + c1 * B
    out = np.empty(6)
    out[:3] = f
    out[3:] = cross(drag.start, f) + cross(e, c1 * A + c2 * B)
    return out
