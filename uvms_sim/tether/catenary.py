"""Closed forms a tether is checked against (and a planner can use): the elastic catenary, and
the neutrally buoyant cable bowed by a uniform current.

Both in a vertical plane, x horizontal and z up, the cable from end A at the origin to end B at
(span, rise), parametrised by its unstretched arc length s in [0, L].

- The elastic catenary (Irvine 1981, "Cable Structures", eqs. 2.33-2.34): a cable of weight w
  per unstretched metre (in water: weight minus buoyancy) and axial stiffness EA, with
  horizontal tension H and vertical tension V_A at A,
  ``x(s) = H s / EA + (H/w) [asinh((V_A + w s)/H) - asinh(V_A/H)]`` and
  ``z(s) = w s²/(2EA) + V_A s/EA + (H/w) [sqrt(1 + ((V_A + w s)/H)²) - sqrt(1 + (V_A/H)²)]``,
  tension ``T(s) = sqrt(H² + (V_A + w s)²)``.
- The current-loaded cable (Pode 1951, the case of normal drag alone): a neutrally buoyant
  cable in a uniform current U along +x with only the pressure drag of the normal component of
  the flow, ``R sin²φ`` per stretched metre (``R = ½ ρ C_d d U²``, φ the angle of the cable to
  the flow). The tangential force is zero, so the tension T is constant and the stretch uniform
  (σ = s (1 + T/EA)); the normal balance ``T dφ/dσ = R sin²φ`` gives ``cot φ = u_A - (R/T) σ``,
  hence ``x = (T/R)(sqrt(1 + u_A²) - sqrt(1 + u²))`` and ``z = (T/R)(asinh u_A - asinh u)`` with
  ``u = cot φ``: a catenary of parameter T/R, lying on its side.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import fsolve

from ..spatial import Array


def _solve(residual, starts, length: float, what: str) -> tuple[float, float]:
    """The root of ``residual`` (two equations) found from the best of several ``starts``,
    or ValueError naming ``what`` when none gets within 1e-9 of the length."""
    best = None
    for start in starts:
        sol, _, ok, _ = fsolve(residual, start, full_output=True)
        err = float(np.hypot(*residual(sol)))
        if ok == 1 and (best is None or err < best[1]):
            best = (sol, err)
    if best is None or best[1] > 1e-9 * max(1.0, length):
        raise ValueError(f"no {what} through these ends")
    return float(best[0][0]), float(best[0][1])


def elastic_catenary(
    span: float, rise: float, length: float, weight: float, ea: float, s: Array | None = None
):
    """``(x, z, tension, H, V_A)`` of the elastic catenary from (0, 0) to (span, rise) at the
    unstretched arc lengths ``s`` (default 101 points from 0 to ``length``); ``weight`` N/m
    (> 0 sinks), ``ea`` N. ValueError when no solution is found."""
    s = np.linspace(0.0, length, 101) if s is None else np.asarray(s, dtype=float)
    w = float(weight)

    def shape(h: float, va: float, s):
        a, b = va / h, (va + w * s) / h
        x = h * s / ea + (h / w) * (np.arcsinh(b) - math.asinh(a))
        z = w * s * s / (2.0 * ea) + va * s / ea + (h / w) * (np.sqrt(1.0 + b * b) - math.sqrt(1.0 + a * a))
        return x, z

    def residual(p):
        h, va = math.exp(p[0]), p[1]
        x, z = shape(h, va, length)
        return [x - span, z - rise]

    starts = [[math.log(h0 * abs(w) * length + 1e-9), 0.5 * w * length] for h0 in (0.1, 1.0, 10.0, 100.0)]
    log_h, va = _solve(residual, starts, length, "elastic catenary")
    h = math.exp(log_h)
    x, z = shape(h, va, s)
    return x, z, np.sqrt(h * h + (va + w * s) ** 2), h, va


def current_cable(span: float, rise: float, length: float, drag: float, ea: float, s: Array | None = None):
    """``(x, z, T)`` of the neutrally buoyant cable in a current along +x (module docstring)
    from (0, 0) to (span, rise) (rise > 0), ``drag`` = R = ½ ρ C_d d U² (N/m), at the
    unstretched arc lengths ``s``. ValueError when no solution is found."""
    s = np.linspace(0.0, length, 101) if s is None else np.asarray(s, dtype=float)

    def shape(t: float, ua: float, sigma):
        u = ua - (drag / t) * sigma
        return (t / drag) * (math.sqrt(1.0 + ua * ua) - np.sqrt(1.0 + u * u)), (t / drag) * (
            math.asinh(ua) - np.arcsinh(u)
        )

    def residual(p):
        t, ua = math.exp(p[0]), p[1]
        x, z = shape(t, ua, length * (1.0 + t / ea))
        return [x - span, z - rise]

    starts = [[math.log(t0 * drag * length), 1.0] for t0 in (0.01, 0.1, 1.0, 10.0)]
    log_t, ua = _solve(residual, starts, length, "current-loaded cable")
    t = math.exp(log_t)
    x, z = shape(t, ua, s * (1.0 + t / ea))
    return x, z, t
