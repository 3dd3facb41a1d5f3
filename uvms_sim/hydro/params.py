"""Hydrodynamic parameters of one rigid body.

Matrices are in the linear-first order ``[u v w p q r]`` about the body origin and are stored
as positive quantities: the added mass ``M_A`` (so ``I_H = I_RB + M_A``, McMillan et al. 1996 eq. 3), the
linear damping ``D_l`` and the quadratic damping diagonal ``d_q`` (so the damping force is
``-(D_l + diag(d_q |ν_r|)) ν_r``), acting at ``damping_center`` (the centre of pressure; the
body origin by default) with ``ν_r`` the velocity of that point. ``drag`` adds a per-link
strip-theory drag model (``uvms_sim.hydro.drag``) on top of (usually instead of) the lumped
damping.
``from_fossen`` accepts SNAME coefficients with Fossen's sign
convention (``X_udot = -5.5`` means 5.5 kg of added mass in surge, ``X_u = -4.03`` means
4.03 N s/m of linear damping).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..spatial import Array
from .drag import CylinderDrag
from .hull import Hull

AXES = ("u", "v", "w", "p", "q", "r")
FORCES = ("X", "Y", "Z", "K", "M", "N")
_ADDED = re.compile(r"^([XYZKMN])_([uvwpqr])dot$")
_LINEAR = re.compile(r"^([XYZKMN])_([uvwpqr])$")
_QUADRATIC = re.compile(r"^([XYZKMN])_(?:([uvwpqr])\2|([uvwpqr])\|\3\||\|([uvwpqr])\|\4)$")


def sname_term(key: str) -> tuple[str, int, int]:
    """The matrix entry an SNAME coefficient stands for (Fossen 2011 notation): ``("added_mass",
    i, j)`` for ``X_udot`` (any pair), ``("linear_damping", i, j)`` for ``X_u`` (any pair),
    ``("quadratic_damping", i, i)`` for ``X_uu``, ``X_u|u|`` or ``X_|u|u`` (diagonal only).
    KeyError saying what is accepted otherwise."""
    if m := _ADDED.match(key):
        return "added_mass", FORCES.index(m[1]), AXES.index(m[2])
    if m := _LINEAR.match(key):
        return "linear_damping", FORCES.index(m[1]), AXES.index(m[2])
    if m := _QUADRATIC.match(key):
        i = FORCES.index(m[1])
        if AXES.index(next(g for g in m.groups()[1:] if g)) != i:
            raise KeyError(
                f"{key}: not a diagonal SNAME quadratic damping coefficient such as X_uu, X_u|u| or N_rr "
                "(the quadratic damping model is diagonal)"
            )
        return "quadratic_damping", i, i
    raise KeyError(f"{key!r} is not an SNAME coefficient such as X_udot, Y_v or N_rr")


def sname_value(key: str, value: float) -> float:
    """The stored (positive-convention) value of an SNAME coefficient in Fossen's sign
    convention: its negative. ValueError for a diagonal coefficient above zero (a diagonal
    ``X_udot``, ``X_u`` or ``X_uu`` is <= 0 for a physical body)."""
    kind, i, j = sname_term(key)
    if i == j and value > 0.0:
        what = kind.replace("_", " ")
        raise ValueError(
            f"{key} = {value}: SNAME coefficients follow Fossen's sign convention, so diagonal {what} "
            f"coefficients are <= 0 ({key}: {-value} means {value} of {what}); or give a positive list"
        )
    return -float(value)


def hydro_problem(added_mass: Array, linear_damping: Array, quadratic: Array) -> tuple[str, str] | None:
    """The first of the three terms that no passive body has, and why, or None: the added mass
    must be symmetric and positive semi-definite (the water a body moves has the kinetic energy
    ½ νᵀ M_A ν >= 0), the damping must dissipate (the symmetric part of D_l and d_q >= 0).
    Tolerances are relative to the largest entry (rounding)."""
    MA, Dl = np.asarray(added_mass, dtype=float), np.asarray(linear_damping, dtype=float)
    scale = max(1.0, float(np.abs(MA).max()))
    if not np.allclose(MA, MA.T, rtol=0.0, atol=1e-12 * scale):
        return "added_mass", "the added mass matrix must be symmetric"
    ev = np.linalg.eigvalsh(MA)
    if ev.min() < -1e-12 * scale:
        return "added_mass", (
            f"the added mass must be positive (semi-)definite, its eigenvalues are {ev.round(9).tolist()} "
            "(the water moves with the kinetic energy ½ νᵀ M_A ν, which only a positive semi-definite M_A "
            "keeps >= 0)"
        )
    if np.linalg.eigvalsh(0.5 * (Dl + Dl.T)).min() < -1e-12 * max(1.0, float(np.abs(Dl).max())):
        return "linear_damping", "linear damping must be dissipative (its symmetric part must be >= 0)"
    if np.any(np.asarray(quadratic) < 0.0):
        return "quadratic_damping", "quadratic damping must be >= 0"
    return None


@dataclass(frozen=True)
class Hydrodynamics:
    """Added mass, damping and buoyancy of one body (all about the body origin)."""

    added_mass: Array = field(default_factory=lambda: np.zeros((6, 6)))
    linear_damping: Array = field(default_factory=lambda: np.zeros((6, 6)))
    quadratic_damping: Array = field(default_factory=lambda: np.zeros(6))
    volume: float = 0.0
    center_of_buoyancy: Array = field(default_factory=lambda: np.zeros(3))
    drag: CylinderDrag | None = None
    hull: Hull | None = None  # the displaced volume's shape (``hydro.hull``), for the free surface
    damping_center: Array = field(default_factory=lambda: np.zeros(3))  # where D_l and d_q act

    def __post_init__(self) -> None:
        MA = np.array(self.added_mass, dtype=float).reshape(6, 6)
        Dl = np.array(self.linear_damping, dtype=float).reshape(6, 6)
        dq = np.array(self.quadratic_damping, dtype=float).reshape(6)
        problem = hydro_problem(MA, Dl, dq)
        if problem:
            raise ValueError(problem[1])
        if self.volume < 0:
            raise ValueError("volume must be >= 0")
        for name, value in (("added_mass", MA), ("linear_damping", Dl), ("quadratic_damping", dq)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        for name in ("center_of_buoyancy", "damping_center"):
            point = np.array(getattr(self, name), dtype=float).reshape(3)
            point.setflags(write=False)
            object.__setattr__(self, name, point)

    @classmethod
    def from_fossen(
        cls,
        coefficients: dict[str, float],
        volume: float = 0.0,
        center_of_buoyancy: Array | None = None,
        drag: CylinderDrag | None = None,
    ) -> Hydrodynamics:
        """Build from SNAME coefficients in Fossen's sign convention (negative = physical), named
        as ``sname_term`` reads them: ``X_udot``.. (added mass, any pair, mirrored),
        ``X_u``.. (linear damping, any pair), ``X_uu``/``X_u|u|``.. (quadratic damping,
        diagonal)."""
        MA = np.zeros((6, 6))
        Dl = np.zeros((6, 6))
        dq = np.zeros(6)
        for key, value in coefficients.items():
            kind, i, j = sname_term(key)
            stored = sname_value(key, value)
            if kind == "added_mass":
                MA[i, j] = MA[j, i] = stored
            elif kind == "linear_damping":
                Dl[i, j] = stored
            else:
                dq[i] = stored
        cob = np.zeros(3) if center_of_buoyancy is None else center_of_buoyancy
        return cls(MA, Dl, dq, volume, cob, drag)
