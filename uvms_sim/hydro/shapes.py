"""Mass, inertia and hydrodynamics of a free object from its shape alone (``scene.objects``
in a description): what a user who knows only a shape and a mass or density gets.

- Volume, centroid and the uniform solid's inertia: exact for a box, a cylinder and a sphere;
  a closed mesh's from its triangles (trimesh's mass properties).
- Added mass: that of the ellipsoid of the same volume with the shape's proportions (a box's
  half sides, a cylinder's radius and half length, a mesh's bounding box), by Lamb's (1932,
  §§ 114-115 and 373) ellipsoid coefficients α_i = abc ∫ dλ / ((a_i² + λ) Δ), Δ =
  sqrt((a² + λ)(b² + λ)(c² + λ)): translation m_i = α_i / (2 - α_i) ρ V (a sphere: ρ V / 2,
  exact), rotation about x  ρ V (b² - c²)² (γ - β) / (5 (2 (b² - c²) + (b² + c²)(β - γ))) and
  in turn. Exact for a sphere and an ellipsoid, within about 10-20 % for a box or a cylinder of
  moderate aspect ratio (Newman 1977, table 4.2's square prism and cylinder against their
  ellipsoids).
- Quadratic drag: ½ ρ C_D A_i per axis on the area seen along it (C_D 1.0 for a box or a
  cylinder, 0.47 for a sphere: Hoerner 1965), and for rotation about an axis the same force
  at a quarter of the largest extent, cubed (an estimate that stops a spin; an object's
  rotation drag is rarely measured).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import quad

from ..spatial import Array

DRAG_COEFFICIENT = {"box": 1.0, "cylinder": 1.0, "sphere": 0.47, "mesh": 1.0}


def lamb_coefficients(semi_axes: Array) -> Array:
    """Lamb's α, β, γ of an ellipsoid with ``semi_axes`` (a, b, c) (module doc)."""
    a, b, c = (float(x) for x in semi_axes)
    out = []
    for ai in (a, b, c):

        def f(lam: float, ai: float = ai) -> float:
            return 1.0 / ((ai * ai + lam) * math.sqrt((a * a + lam) * (b * b + lam) * (c * c + lam)))

        out.append(a * b * c * quad(f, 0.0, np.inf, limit=200)[0])
    return np.array(out)


def ellipsoid_added_mass(semi_axes: Array, density: float) -> Array:
    """The 6x6 added mass (diagonal, about the centre, in the ellipsoid's axes) of an ellipsoid
    with ``semi_axes`` in a fluid of ``density`` (module doc)."""
    axes = np.asarray(semi_axes, dtype=float)
    coef = lamb_coefficients(axes)
    volume = 4.0 / 3.0 * math.pi * float(np.prod(axes))
    M = np.zeros((6, 6))
    for i in range(3):
        M[i, i] = coef[i] / (2.0 - coef[i]) * density * volume
        j, k = (i + 1) % 3, (i + 2) % 3
        bj, bk = axes[j] ** 2, axes[k] ** 2
        denominator = 2.0 * (bj - bk) + (bj + bk) * (coef[j] - coef[k])
        if abs(bj - bk) > 1e-12 * (bj + bk) and abs(denominator) > 0.0:
            M[3 + i, 3 + i] = density * volume * (bj - bk) ** 2 * (coef[k] - coef[j]) / (5.0 * denominator)
    return M


def solid_properties(kind: str, size: tuple[float, ...], mesh: tuple[Array, Array] | None = None):
    """(volume, centroid, inertia of the unit-density solid about its centroid, extents) of a
    shape (``scene.geometry.Shape``'s kinds; a mesh's vertices and triangles in ``mesh``)."""
    if kind == "box":
        x, y, z = size
        volume = x * y * z
        inertia = volume / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])
        return volume, np.zeros(3), inertia, np.array(size)
    if kind == "cylinder":
        r, length = size
        volume = math.pi * r * r * length
        side = volume * (3 * r * r + length * length) / 12.0
        return (
            volume,
            np.zeros(3),
            np.diag([side, side, volume * r * r / 2.0]),
            np.array([2 * r, 2 * r, length]),
        )
    if kind == "sphere":
        r = size[0]
        volume = 4.0 / 3.0 * math.pi * r**3
        return volume, np.zeros(3), np.eye(3) * 0.4 * volume * r * r, np.full(3, 2 * r)
    import trimesh

    assert mesh is not None
    body = trimesh.Trimesh(*mesh, process=False)
    if not body.is_watertight:
        raise ValueError("a mesh object must be closed (watertight) to have a volume, mass and buoyancy")
    body.density = 1.0
    extents = body.bounds[1] - body.bounds[0]
    return float(abs(body.volume)), np.array(body.center_mass), np.array(body.moment_inertia), extents


def shape_hydrodynamics(kind: str, volume: float, extents: Array, density: float) -> tuple[Array, Array]:
    """Added mass (6x6) and quadratic drag (6) of a shape of ``volume`` and ``extents`` (its
    axes) in a fluid of ``density`` (module doc)."""
    ext = np.asarray(extents, dtype=float)
    if kind == "sphere":
        semi = 0.5 * ext
    else:  # the ellipsoid of the same volume and proportions
        semi = 0.5 * ext * (volume / (math.pi / 6.0 * float(np.prod(ext)))) ** (1.0 / 3.0)
    MA = ellipsoid_added_mass(semi, density)
    cd = DRAG_COEFFICIENT[kind]
    if kind in ("sphere", "cylinder"):
        r = 0.5 * ext[0]
        end = math.pi * r * r
        area = np.array([ext[0] * ext[2], ext[1] * ext[2], end]) if kind == "cylinder" else np.full(3, end)
    else:
        area = np.array([ext[1] * ext[2], ext[0] * ext[2], ext[0] * ext[1]])
    drag = 0.5 * density * cd * area
    arm = 0.25 * float(ext.max())
    return MA, np.concatenate([drag, drag * arm**3])
