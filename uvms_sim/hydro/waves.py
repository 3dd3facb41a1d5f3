"""Linear (Airy) surface waves: regular waves and irregular seas from a spectrum (world NED).

A sea is a sum of long-crested components ``j`` of amplitude ``a_j``, angular frequency
``ω_j``, wavenumber ``k_j``, direction of travel ``β_j`` (from north towards east) and phase
``φ_j``. With the phase ``θ_j = k_j (x cos β_j + y sin β_j) - ω_j t + φ_j`` and ``ζ`` the
height above the mean surface (``ζ = z_s - z``, NED z down), linear theory (Airy 1845; the
forms of Dean & Dalrymple 1991, eqs. 4.4, 4.14-4.17, and DNV-RP-C205 2010, table 3-1) gives

    elevation       η   = Σ a cos θ
    velocity        u_h = Σ a ω C(ζ) cos θ (cos β, sin β),   w_up = Σ a ω S(ζ) sin θ
    acceleration    u̇_h = Σ a ω² C(ζ) sin θ (cos β, sin β),  ẇ_up = -Σ a ω² S(ζ) cos θ

with ``C = cosh k(ζ+h) / sinh kh`` and ``S = sinh k(ζ+h) / sinh kh`` in water of depth h,
written as ``(e^{kζ} ± e^{-k(ζ+2h)}) / (1 - e^{-2kh})`` (stable for every kh; in deep
water both are ``e^{kζ}``), and the dispersion relation ``ω² = g k tanh kh``. Above the mean
surface (a point under a crest) the kinematics are those at ζ = 0 (constant extrapolation, as
DNV-RP-C205 §3.2.3 allows for linear waves); below the seabed those at ζ = -h.

A body takes the water's velocity and acceleration of one point (the centroid of its wet part)
as its current and fluid acceleration (``hydro.forces.body_bias``), so the added-mass,
Froude-Krylov and damping forces of the waves follow; the free surface it meets is the plane
tangent to η at its hull's centre (``surface_plane``), so its buoyancy under a crest is that of
the wet part below the moving surface (``hydro.hull.submerged``). Both assume a body small
against the wavelength (long-wave approximation); the heave of a floating box follows its
boundary-element response to within the tolerances ``test_waves.py`` states.

Irregular seas: the JONSWAP spectrum (Hasselmann et al. 1973, in the form of DNV-RP-C205 2010
eq. 3.5.5) or the Pierson-Moskowitz spectrum (Pierson & Moskowitz 1964, DNV-RP-C205 eq.
3.5.3), or a tabulated one, sampled at ``components`` frequencies between ``min_frequency`` and
``max_frequency`` (rad/s), each drawn at random inside its band so that the sea does not repeat
(seeded), with ``a_j = sqrt(2 S(ω_j) Δω)`` and random phases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..spatial import Array

STEEPEST = 1.0 / 7.0  # H/λ at which a regular wave breaks (Michell 1893)
SHALLOWEST = 0.78  # H/h at which a wave breaks in water of depth h (McCowan 1894)
STEEPEST_SEA = 1.0 / 15.0  # 2π Hs / (g Tp²), the steepest sea state (DNV-RP-C205 2010 §3.5.5.4)


def wavenumber(omega, gravity: float, depth: float = math.inf) -> Array:
    """k of the dispersion relation ``ω² = g k tanh(k h)`` (deep water: ``ω²/g``), by Newton's
    method from the deep-water value (Dean & Dalrymple 1991 eq. 4.19)."""
    w = np.asarray(omega, dtype=float)
    k = w * w / gravity
    if not math.isfinite(depth):
        return k
    k = np.maximum(k, w / math.sqrt(gravity * depth))  # the larger of the deep and shallow limits
    for _ in range(50):
        th = np.tanh(k * depth)
        f = gravity * k * th - w * w
        df = gravity * (th + k * depth * (1.0 - th * th))
        step = f / df
        k = k - step
        if np.all(np.abs(step) <= 1e-14 * k):
            break
    return k


def pierson_moskowitz(omega, significant_height: float, peak_period: float) -> Array:
    """Pierson-Moskowitz spectral density (m² s/rad) at ω (rad/s): ``5/16 Hs² ωp⁴ ω⁻⁵
    exp(-5/4 (ω/ωp)⁻⁴)`` (DNV-RP-C205 2010 eq. 3.5.3)."""
    w = np.asarray(omega, dtype=float)
    wp = 2.0 * math.pi / peak_period
    with np.errstate(divide="ignore", over="ignore"):
        s = 5.0 / 16.0 * significant_height**2 * wp**4 * w**-5.0 * np.exp(-1.25 * (w / wp) ** -4.0)
    return np.where(w > 0.0, s, 0.0)


def jonswap(omega, significant_height: float, peak_period: float, gamma: float = 3.3) -> Array:
    """JONSWAP spectral density (m² s/rad): ``(1 - 0.287 ln γ) S_PM(ω) γ^exp(-½((ω-ωp)/(σωp))²)``
    with σ = 0.07 below the peak and 0.09 above (DNV-RP-C205 2010 eq. 3.5.5; Hasselmann et al.
    1973)."""
    w = np.asarray(omega, dtype=float)
    wp = 2.0 * math.pi / peak_period
    sigma = np.where(w <= wp, 0.07, 0.09)
    peak = gamma ** np.exp(-0.5 * ((w - wp) / (sigma * wp)) ** 2)
    return (1.0 - 0.287 * math.log(gamma)) * pierson_moskowitz(w, significant_height, peak_period) * peak


@dataclass(frozen=True)
class WaveField:
    """Linear wave components (see the module docstring): per component amplitude (m),
    angular frequency (rad/s), direction of travel (rad, from north towards east) and phase
    (rad); ``depth`` the water depth for the dispersion relation (inf: deep water). ``k`` and
    the table the compiled kernels read (``table``) follow."""

    amplitude: Array
    omega: Array
    direction: Array
    phase: Array
    gravity: float = 9.80665
    depth: float = math.inf
    spec: tuple = ()  # the description's ``waves`` entry it was made from ((key, value) pairs)
    k: Array = field(init=False, repr=False, compare=False)
    # for ``kinematics_at``: (k cos β, k sin β) as rows, and a ω (cos β, sin β) and a ω² (cos β, sin β)
    # as columns
    _kxy: Array = field(init=False, repr=False, compare=False)
    _uh: Array = field(init=False, repr=False, compare=False)
    _ah: Array = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        arrays = [np.atleast_1d(np.asarray(getattr(self, n), dtype=float)) for n in
                  ("amplitude", "omega", "direction", "phase")]  # fmt: skip
        n = arrays[0].size
        if any(a.shape != (n,) for a in arrays):
            raise ValueError("wave amplitude, omega, direction and phase must be vectors of one length")
        if not all(np.all(np.isfinite(a)) for a in arrays):
            raise ValueError("wave components must be finite")
        if np.any(arrays[0] < 0.0) or np.any(arrays[1] <= 0.0):
            raise ValueError("wave amplitudes must be >= 0 and frequencies > 0")
        if not (self.depth > 0.0):
            raise ValueError(f"water depth must be > 0 (inf: deep water), got {self.depth}")
        if not (math.isfinite(self.gravity) and self.gravity > 0.0):
            raise ValueError(f"gravity must be > 0 for waves, got {self.gravity}")
        for name, a in zip(("amplitude", "omega", "direction", "phase"), arrays, strict=True):
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        k = wavenumber(arrays[1], self.gravity, self.depth)
        k.setflags(write=False)
        object.__setattr__(self, "k", k)
        cb, sb = np.cos(arrays[2]), np.sin(arrays[2])
        aw = arrays[0] * arrays[1]
        aw2 = aw * arrays[1]
        kxy, uh, ah = (
            np.vstack((k * cb, k * sb)),
            np.column_stack((aw * cb, aw * sb)),
            np.column_stack((aw2 * cb, aw2 * sb)),
        )
        for name, value in (("_kxy", kxy), ("_uh", uh), ("_ah", ah)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return int(self.amplitude.size)

    @property
    def significant_height(self) -> float:
        """``4 sqrt(m0)`` of the components (``m0 = Σ a²/2``)."""
        return float(4.0 * math.sqrt(0.5 * float(self.amplitude @ self.amplitude)))

    def _phases(self, x: float, y: float, t: float) -> Array:
        return (
            self.k * (x * np.cos(self.direction) + y * np.sin(self.direction)) - self.omega * t + self.phase
        )

    def elevation(self, x: float, y: float, t: float) -> float:
        """η (m, up) at the horizontal point (x, y) (NED) and time t."""
        return float(self.amplitude @ np.cos(self._phases(x, y, t)))

    def surface_plane(self, x: float, y: float, t: float) -> tuple[float, float, float]:
        """η and its slopes ``(∂η/∂x, ∂η/∂y)`` at (x, y, t): the surface's tangent plane there."""
        th = self._phases(x, y, t)
        ak = -self.amplitude * self.k * np.sin(th)
        return (float(self.amplitude @ np.cos(th)), float(ak @ np.cos(self.direction)),
                float(ak @ np.sin(self.direction)))  # fmt: skip

    def _depth_factors(self, zeta: float) -> tuple[Array, Array]:
        """C(ζ) and S(ζ) (module docstring), ζ clamped to [-h, 0]; zero for the components
        with e^(kζ) < e^-30 (below 1e-13 of their surface values)."""
        zeta = min(max(zeta, -self.depth), 0.0)
        kz = self.k * zeta
        e = np.where(kz >= -30.0, np.exp(kz), 0.0)
        if not math.isfinite(self.depth):
            return e, e
        e2 = np.where(kz >= -30.0, np.exp(-self.k * (zeta + 2.0 * self.depth)), 0.0)
        f = 1.0 / (1.0 - np.exp(-2.0 * self.k * self.depth))
        return (e + e2) * f, (e - e2) * f

    def kinematics(self, x: float, y: float, zeta: float, t: float) -> tuple[Array, Array]:
        """Water velocity and acceleration (world NED, m/s and m/s²) at the horizontal point
        (x, y), ``zeta`` metres above the mean surface (negative below), at time t."""
        th = self._phases(x, y, t)
        c, s = np.cos(th), np.sin(th)
        C, S = self._depth_factors(zeta)
        aw = self.amplitude * self.omega
        cb, sb = np.cos(self.direction), np.sin(self.direction)
        uh = aw * C * c
        ah = aw * self.omega * C * s
        vel = np.array([uh @ cb, uh @ sb, -float(aw * S @ s)])
        acc = np.array([ah @ cb, ah @ sb, float(aw * self.omega * S @ c)])
        return vel, acc


def kinematics_at(waves: WaveField | None, points: Array, surface: float, t: float) -> tuple[Array, Array]:
    """``WaveField.kinematics`` at many points at once (rows of NED ``points``, with the mean
    surface at NED depth ``surface``): velocities and accelerations, one row per point. One
    (points x components) array per factor, the sums over the components as matrix products
    with the columns ``WaveField`` keeps (a tether's 54 nodes in 64 components: about 0.1 ms)."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    if waves is None or not len(waves):
        return np.zeros_like(points), np.zeros_like(points)
    k, w, aw = waves.k, waves.omega, waves.amplitude * waves.omega
    th = points[:, :2] @ waves._kxy
    th += waves.phase - w * t
    zeta = np.clip(surface - points[:, 2], -waves.depth, 0.0)
    kz = np.multiply.outer(zeta, k)
    deep = kz < -30.0  # decayed below e^-30 of the surface values: left out
    C = np.exp(np.maximum(kz, -30.0, out=kz), out=kz)
    C[deep] = 0.0
    if math.isfinite(waves.depth):
        e2 = np.exp(-np.multiply.outer(zeta + 2.0 * waves.depth, k))
        e2[deep] = 0.0
        f = 1.0 / (1.0 - np.exp(-2.0 * k * waves.depth))
        C, S = (C + e2) * f, (C - e2) * f
    else:
        S = C
    c, s = np.cos(th), np.sin(th)
    vel, acc = np.empty_like(points), np.empty_like(points)
    vel[:, :2] = (C * c) @ waves._uh
    acc[:, :2] = (C * s) @ waves._ah
    vel[:, 2] = -((S * s) @ aw)
    acc[:, 2] = (S * c) @ (aw * w)
    return vel, acc


def regular(
    height: float, period: float, direction: float = 0.0, phase: float = 0.0, gravity: float = 9.80665,
    depth: float = math.inf,
) -> WaveField:  # fmt: skip
    """An Airy wave of crest-to-trough ``height`` (m) and ``period`` (s); ValueError beyond
    breaking (``check_breaking``)."""
    if not (height >= 0.0 and math.isfinite(height)) or not (period > 0.0 and math.isfinite(period)):
        raise ValueError(f"a regular wave needs a height >= 0 and a period > 0, got {height}, {period}")
    w = WaveField(np.array([0.5 * height]), np.array([2.0 * math.pi / period]), np.array([float(direction)]),
                  np.array([float(phase)]), gravity, depth)  # fmt: skip
    check_breaking(height, float(w.k[0]), depth)
    return w


def check_breaking(height: float, k: float, depth: float = math.inf) -> None:
    """ValueError for a wave of this height and wavenumber that would break: steeper than
    ``H/λ = 1/7`` (Michell 1893) or higher than 0.78 h in water of depth h (McCowan 1894)."""
    steep = height * k / (2.0 * math.pi)
    if steep > STEEPEST:
        limit = STEEPEST * 2.0 * math.pi / k
        raise ValueError(f"a wave {height:g} m high and {2 * math.pi / k:.3g} m long breaks "
                         f"(H/λ = {steep:.3g} > 1/7): at most {limit:.3g} m")  # fmt: skip
    if math.isfinite(depth) and height > SHALLOWEST * depth:
        raise ValueError(f"a wave {height:g} m high breaks in {depth:g} m of water (H > 0.78 h): "
                         f"at most {SHALLOWEST * depth:.3g} m")  # fmt: skip


def sea_state(
    density: Array,
    omega: Array,
    direction: float = 0.0,
    seed: int = 0,
    gravity: float = 9.80665,
    depth: float = math.inf,
    spec: tuple = (),
) -> WaveField:
    """Components of an irregular long-crested sea: ``a_j = sqrt(2 S_j Δω_j)`` for the spectral
    densities ``density`` (m² s/rad) at the band centres ``omega``, each frequency moved at
    random inside its band (uniform, seeded) and each phase uniform in [0, 2π)."""
    omega = np.asarray(omega, dtype=float)
    density = np.asarray(density, dtype=float)
    if omega.ndim != 1 or omega.size < 1 or density.shape != omega.shape:
        raise ValueError("a spectrum needs as many densities as frequencies")
    if not (np.all(np.isfinite(omega)) and np.all(np.isfinite(density))):
        raise ValueError("a spectrum's frequencies and densities must be finite (no NaN)")
    if np.any(density < 0.0) or np.any(omega <= 0.0) or np.any(np.diff(omega) <= 0.0):
        raise ValueError("a spectrum needs increasing frequencies > 0 and densities >= 0")
    edges = np.concatenate(([omega[0] - 0.5 * (omega[1] - omega[0]) if omega.size > 1 else 0.5 * omega[0]],
                            0.5 * (omega[1:] + omega[:-1]),
                            [omega[-1] + 0.5 * (omega[-1] - omega[-2]) if omega.size > 1
                             else 1.5 * omega[0]]))  # fmt: skip
    edges[0] = max(edges[0], 1e-3 * omega[0])
    width = np.diff(edges)
    rng = np.random.default_rng(seed)
    w = edges[:-1] + rng.uniform(0.0, 1.0, omega.size) * width
    amplitude = np.sqrt(2.0 * density * width)
    phase = rng.uniform(0.0, 2.0 * math.pi, omega.size)
    return WaveField(amplitude, w, np.full(omega.size, float(direction)), phase, gravity, depth, spec)


def spectrum_sea(
    kind: str,
    significant_height: float,
    peak_period: float,
    gamma: float = 3.3,
    components: int = 64,
    band: tuple[float, float] = (0.5, 3.0),
    direction: float = 0.0,
    seed: int = 0,
    gravity: float = 9.80665,
    depth: float = math.inf,
    spec: tuple = (),
) -> WaveField:
    """A JONSWAP (``kind`` ``jonswap``) or Pierson-Moskowitz (``pierson_moskowitz``) sea of
    significant height Hs (m) and peak period Tp (s), sampled at ``components`` bands between
    ``band`` = (low, high) times the peak frequency; ValueError for a sea steeper than
    ``2π Hs/(g Tp²) = 1/15`` (DNV-RP-C205 2010 §3.5.5.4) or higher than 0.78 h."""
    if not (significant_height >= 0.0 and math.isfinite(significant_height)):
        raise ValueError(f"significant_height must be a finite number >= 0, got {significant_height}")
    if not (peak_period > 0.0 and math.isfinite(peak_period)):
        raise ValueError(f"peak_period must be a finite number > 0, got {peak_period}")
    if not (1.0 <= gamma <= 10.0):
        raise ValueError(f"gamma must be 1 to 10, got {gamma}")
    if not (1 <= components <= 1000):
        raise ValueError(f"components must be 1 to 1000, got {components}")
    lo, hi = band
    if not (0.0 < lo < 1.0 < hi and math.isfinite(hi)):
        raise ValueError(f"the band must be (low < 1 < high) times the peak frequency, got {band}")
    steep = 2.0 * math.pi * significant_height / (gravity * peak_period**2)
    if steep > STEEPEST_SEA:
        limit = STEEPEST_SEA * gravity * peak_period**2 / (2.0 * math.pi)
        raise ValueError(f"a sea of Hs {significant_height:g} m at Tp {peak_period:g} s breaks "
                         f"(2π Hs/(g Tp²) = {steep:.3g} > 1/15): at most {limit:.3g} m")  # fmt: skip
    if math.isfinite(depth) and significant_height > SHALLOWEST * depth:
        raise ValueError(f"a sea of Hs {significant_height:g} m breaks in {depth:g} m of water (Hs > 0.78 h)")
    wp = 2.0 * math.pi / peak_period
    edges = np.linspace(lo * wp, hi * wp, components + 1)
    omega = 0.5 * (edges[1:] + edges[:-1])
    if kind == "jonswap":
        density = jonswap(omega, significant_height, peak_period, gamma)
    elif kind == "pierson_moskowitz":
        density = pierson_moskowitz(omega, significant_height, peak_period)
    else:
        raise ValueError(f"spectrum {kind!r} is not jonswap or pierson_moskowitz")
    return sea_state(density, omega, direction, seed, gravity, depth, spec)
