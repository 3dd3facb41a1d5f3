"""The displaced volume of a body near the free surface: its hull as columns along body z.

A hull shape (box, cylinder, ellipsoid) is written as a quadrature over its footprint in the
body's x-y plane: column k stands at ``(x_k, y_k)``, spans ``z_lo <= z <= z_hi`` in body axes
and carries the footprint weight ``w_k`` (m^2), so the full volume is ``Σ w_k (z_hi - z_lo)``.
With the water surface at world NED depth ``z_s``, the point ``(x_k, y_k, s)`` of a column is
at depth ``d(s) = a_k + R_zz s`` (``a_k = p_z - z_s + R_zx x_k + R_zy y_k``), linear along the
column, so its wet part is one interval found exactly. The submerged volume and its centroid
are sums over the columns: ``V_s = Σ w_k L_k`` and ``c = Σ w_k L_k m_k / V_s`` with ``L_k`` the
wet length and ``m_k`` the midpoint of the wet interval.

Buoyancy ``ρ g V_s`` acting upwards at ``c`` is then exactly the generalised force of the
potential ``U = ρ g Σ_k w_k ∫_wet d(s) ds`` (the integrand vanishes at the waterline, so
moving the wet interval's end adds nothing), hence conservative: a body crossing the surface
neither gains nor loses energy through it. For a box whose waterline crosses its sides the
column length is linear over the footprint, and Gauss-Legendre columns give the exact
submerged volume and centroid (so the draft, the heave stiffness ``ρ g A_wp`` and the
hydrostatic roll stiffness ``ρ g (I_wp + V z_BG)`` of the closed forms). Cylinders and
ellipsoids use a footprint quadrature in angles that is smooth up to their rims.

A hull given with a different volume than the description's is scaled isotropically to that
volume and moved so that its centroid is the description's centre of buoyancy; a body with a
volume but no hull gets a sphere of that volume there (documented in docs/config.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..spatial import Array

SHAPES = ("box", "cylinder", "ellipsoid", "sphere")
NODES = 6  # Gauss-Legendre nodes per footprint direction


@dataclass(frozen=True)
class Hull:
    """Columns ``(x, y, z_lo, z_hi, w)`` (H x 5, body axes) and a bounding sphere."""

    columns: Array
    center: Array  # centre of the bounding sphere, body axes
    radius: float  # every hull point is within this distance of ``center``
    spec: tuple = ()  # the description's ``hull`` entry it was made from ((key, value) pairs)

    @property
    def volume(self) -> float:
        c = self.columns
        return float(np.sum(c[:, 4] * (c[:, 3] - c[:, 2])))

    @property
    def centroid(self) -> Array:
        c = self.columns
        w = c[:, 4] * (c[:, 3] - c[:, 2])
        return np.array([w @ c[:, 0], w @ c[:, 1], w @ (0.5 * (c[:, 2] + c[:, 3]))]) / w.sum()


def _gauss(n: int, lo: float, hi: float) -> tuple[Array, Array]:
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * (hi - lo) * x + 0.5 * (hi + lo), 0.5 * (hi - lo) * w


def _box(size: Array, n: int) -> Array:
    lx, ly, lz = size
    x, wx = _gauss(n, -lx / 2, lx / 2)
    y, wy = _gauss(n, -ly / 2, ly / 2)
    X, Y = np.meshgrid(x, y, indexing="ij")
    W = np.outer(wx, wy)
    H = np.full(X.size, lz / 2)
    return np.column_stack((X.ravel(), Y.ravel(), -H, H, W.ravel()))


def _cylinder(radius: float, length: float, axis: int, n: int) -> Array:
    """Axis z: a disk footprint of constant height (radius ρ = r sin α, angle by the
    trapezoidal rule). Axis x or y: a rectangle footprint, across the axis y = r sin θ with
    half-height r cos θ (dy = r cos θ dθ)."""
    if axis == 2:
        a, wa = _gauss(n, 0.0, np.pi / 2)
        phi = np.arange(2 * n) * np.pi / n
        rho = radius * np.sin(a)
        w = np.outer(wa * radius**2 * np.sin(a) * np.cos(a), np.full(2 * n, np.pi / n))
        X, Y = np.outer(rho, np.cos(phi)), np.outer(rho, np.sin(phi))
        H = np.full(X.size, length / 2)
        return np.column_stack((X.ravel(), Y.ravel(), -H, H, w.ravel()))
    s, ws = _gauss(n, -length / 2, length / 2)
    th, wt = _gauss(n, -np.pi / 2, np.pi / 2)
    across, half = radius * np.sin(th), radius * np.cos(th)
    A, C = np.meshgrid(s, across, indexing="ij")
    W = np.outer(ws, wt * radius * np.cos(th))
    H = np.tile(half, n)
    X, Y = (A, C) if axis == 0 else (C, A)
    return np.column_stack((X.ravel(), Y.ravel(), -H, H, W.ravel()))


def _ellipsoid(axes: Array, n: int) -> Array:
    """Footprint x = a ρ cos φ, y = b ρ sin φ with ρ = sin α: dA = a b sin α cos α dα dφ and
    half-height c cos α."""
    ax, by, cz = axes
    a, wa = _gauss(n, 0.0, np.pi / 2)
    phi = np.arange(2 * n) * np.pi / n
    rho = np.sin(a)
    w = np.outer(wa * ax * by * np.sin(a) * np.cos(a), np.full(2 * n, np.pi / n))
    X, Y = ax * np.outer(rho, np.cos(phi)), by * np.outer(rho, np.sin(phi))
    H = np.repeat(cz * np.cos(a), 2 * n)
    return np.column_stack((X.ravel(), Y.ravel(), -H, H, w.ravel()))


def shape_columns(shape: str, size: Array, axis: int = 0, n: int = NODES) -> Array:
    """Columns of a shape centred at the origin: ``box`` size (lx, ly, lz); ``cylinder``
    (radius, length) along body axis ``axis``; ``ellipsoid`` semi-axes (a, b, c); ``sphere``
    (radius,)."""
    size = np.atleast_1d(np.asarray(size, dtype=float))
    if shape == "box":
        return _box(size.reshape(3), n)
    if shape == "cylinder":
        r, length = size.reshape(2)
        return _cylinder(r, length, axis, n)
    if shape == "ellipsoid":
        return _ellipsoid(size.reshape(3), n)
    if shape == "sphere":
        return _ellipsoid(np.full(3, size.reshape(1)[0]), n)
    raise ValueError(f"hull shape {shape!r} is not one of {SHAPES}")


def make_hull(
    columns: Array, volume: float | None = None, center: Array | None = None, spec: tuple = ()
) -> Hull:
    """A hull from columns around the origin, scaled isotropically to ``volume`` (if given)
    and moved so that its centroid is ``center`` (if given; else it stays where it is)."""
    cols = np.array(columns, dtype=float)
    h = Hull(cols, np.zeros(3), 0.0)
    if volume is not None:
        if volume <= 0:
            raise ValueError(f"hull volume must be > 0, got {volume}")
        k = (volume / h.volume) ** (1.0 / 3.0)
        cols[:, :4] *= k
        cols[:, 4] *= k * k
        h = Hull(cols, np.zeros(3), 0.0)
    if center is not None:
        shift = np.asarray(center, dtype=float) - h.centroid
        cols[:, 0] += shift[0]
        cols[:, 1] += shift[1]
        cols[:, 2:4] += shift[2]
    mid = np.array([cols[:, 0], cols[:, 1], 0.5 * (cols[:, 2] + cols[:, 3])]).T
    c = mid.mean(axis=0)
    ends = np.vstack((np.column_stack((cols[:, :2], cols[:, 2])), np.column_stack((cols[:, :2], cols[:, 3]))))
    radius = float(np.max(np.linalg.norm(ends - c, axis=1))) * (1 + 1e-12) + 1e-12
    cols.setflags(write=False)
    return Hull(cols, c, radius, spec)


def default_hull(volume: float, center: Array) -> Hull:
    """A sphere of ``volume`` centred at ``center`` (a body with a volume but no hull)."""
    c = np.asarray(center, dtype=float).reshape(3)
    return _sphere_hull(float(volume), float(c[0]), float(c[1]), float(c[2]))


@functools.lru_cache(maxsize=4096)
def _sphere_hull(volume: float, x: float, y: float, z: float) -> Hull:
    """``default_hull``, kept: a model is built again for every object added at run time, with
    a default hull for each of its bodies (a hull is never changed once made)."""
    hull = make_hull(shape_columns("sphere", np.array([1.0])), volume, np.array([x, y, z]))
    hull.center.setflags(write=False)
    return hull


def submerged(
    hull: Hull, R: Array, p: Array, surface: float, slope: tuple[float, float] = (0.0, 0.0)
) -> tuple[float, Array] | None:
    """Wet volume (m^3) and its centroid (body axes) of a hull at world pose ``(R, p)``
    (body -> world NED) with the surface at NED depth ``surface`` (see module doc); None when
    the hull is entirely under water (the caller then uses the full volume and centre of
    buoyancy as given, exactly). With ``slope`` = (s_x, s_y) the surface is the plane
    ``s_x x + s_y y + z = surface`` (a wave's tangent plane, ``hydro.waves``): a point's depth
    below it, ``s_x x + s_y y + z - surface``, is still linear along each column."""
    n = np.array([slope[0], slope[1], 1.0])
    nR = R[2] + slope[0] * R[0] + slope[1] * R[1]
    pz = slope[0] * p[0] + slope[1] * p[1] + p[2] - surface
    dc = pz + nR @ hull.center
    reach = hull.radius * float(np.sqrt(n @ n))
    if dc >= reach:
        return None
    if dc <= -reach:
        return 0.0, hull.centroid
    x, y, lo, hi, w = hull.columns.T
    a = pz + nR[0] * x + nR[1] * y
    rz = nR[2]
    if rz == 0.0:
        wet_lo, wet_hi = np.where(a > 0, lo, hi), hi
    else:
        cut = -a / rz
        wet_lo = np.maximum(lo, cut) if rz > 0 else lo
        wet_hi = hi if rz > 0 else np.minimum(hi, cut)
    L = np.maximum(wet_hi - wet_lo, 0.0)
    V = float(w @ L)
    if V <= 0.0:
        return 0.0, hull.centroid
    wl = w * L
    mid = 0.5 * (wet_lo + wet_hi)
    return V, np.array([wl @ x, wl @ y, wl @ mid]) / V


def buoyancy_potential(hull: Hull, R: Array, p: Array, surface: float, rho_g: float) -> float:
    """``U = ρ g Σ_k w_k ∫_wet d(s) ds``: the potential whose gradient is the buoyancy of
    ``submerged`` (for energy checks; fully under water it is ``ρ g V`` times the depth of the
    centroid)."""
    x, y, lo, hi, w = hull.columns.T
    a = p[2] - surface + R[2, 0] * x + R[2, 1] * y
    rz = R[2, 2]
    if rz == 0.0:
        lo = np.where(a > 0, lo, hi)
    elif rz > 0:
        lo = np.maximum(lo, -a / rz)
    else:
        hi = np.minimum(hi, -a / rz)
    L = np.maximum(hi - lo, 0.0)
    integral = a * L + rz * 0.5 * (hi * hi - lo * lo) * (L > 0)
    return float(rho_g * (w @ integral))
