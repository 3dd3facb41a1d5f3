"""Echo envelopes of a sonar beam from the scene (``scene.SceneRays``): what the Ping2
echosounder's profile and a Ping360 ping hold.

The beam is sampled by rays over its main lobe and shoulders (out to ``SPAN`` times the
half-power half angle) with the two-way beam pattern as a Gaussian weight that is one half at
the half-power angle. Each ray that meets a surface at range ``r`` returns its weight times
``|cos(incidence)|`` (Lambert's law for a rough seabed, Urick 1983, section 8.9) for the pulse's
length ``c tau / 2`` from ``r`` on; a sample holds the returns that cover its range. The
devices' time-varied gain compensates the spreading and absorption losses, so the envelope of
a surface filling the beam at normal incidence is one whatever its range. ``quantise`` scales
by the gain, adds Rayleigh speckle (the envelope of many scatterers, multiplied) and a noise
floor, and gives the 8-bit samples the devices send.
"""

from __future__ import annotations

import math

import numpy as np

from ..scene import SceneRays

Array = np.ndarray
SPAN = 1.6  # rays out to this many half-power half angles (the weight there is 2**-2.56)


def beam_rays(R: Array, half_h: float, half_v: float, n_h: int, n_v: int) -> tuple[Array, Array]:
    """Unit rays (world, rows) of a beam along the x axis of ``R`` (sensor -> world) with
    half-power half angles ``half_h`` about its z axis and ``half_v`` about its y axis, on an
    ``n_h`` by ``n_v`` grid of angles; and their weights (two-way pattern, sum one). A conical
    beam has ``half_h == half_v`` and is cut to the circle."""
    a = np.linspace(-SPAN, SPAN, n_h) if n_h > 1 else np.zeros(1)
    b = np.linspace(-SPAN, SPAN, n_v) if n_v > 1 else np.zeros(1)
    grid_a, grid_b = np.meshgrid(a, b, indexing="ij")
    A, B = grid_a.ravel(), grid_b.ravel()
    if half_h == half_v:
        keep = A * A + B * B <= SPAN * SPAN + 1e-12
        A, B = A[keep], B[keep]
    weight = 0.5 ** (A * A + B * B)
    yaw, pitch = A * half_h, B * half_v
    local = np.column_stack([np.cos(pitch) * np.cos(yaw), np.cos(pitch) * np.sin(yaw), -np.sin(pitch)])
    return local @ np.asarray(R).T, weight / weight.sum()


def envelope(
    rays: SceneRays,
    p: Array,
    directions: Array,
    weights: Array,
    sample: float,
    n: int,
    pulse: float,
    start: float = 0.0,
) -> Array:
    """Echo envelope at ``n`` samples ``sample`` m apart from range ``start`` (sample ``i``
    covers ``start + [i, i + 1) * sample``): the returns of the rays (``directions``, ``weights``) from
    ``p``, each lasting ``pulse`` m (at least one sample)."""
    distance, normal = rays.hits(p, directions)
    hit = np.isfinite(distance)
    if not hit.any():
        return np.zeros(n)
    d = distance[hit] - start
    strength = weights[hit] * np.abs(np.einsum("ij,ij->i", normal[hit], directions[hit]))
    first = np.floor(d / sample).astype(np.int64)
    last = np.floor((d + max(pulse, sample) - 1e-9) / sample).astype(np.int64)
    inside = (first < n) & (last >= 0)
    first = np.maximum(first, 0)
    diff = np.zeros(n + 1)
    np.add.at(diff, first[inside], strength[inside])
    np.add.at(diff, np.minimum(last[inside] + 1, n), -strength[inside])
    return np.cumsum(diff[:n])


def quantise(echo: Array, gain: float, noise: float, rng: np.random.Generator | None) -> Array:
    """8-bit samples: ``255 gain echo`` with Rayleigh speckle (mean one) and a noise floor of
    ``noise`` (fraction of full scale) when ``rng`` is given, clipped to 0-255."""
    value = gain * echo
    if rng is not None:
        speckle = rng.rayleigh(math.sqrt(2.0 / math.pi), len(echo))  # mean one
        value = value * speckle + noise * np.abs(rng.standard_normal(len(echo)))
    return np.clip(np.rint(255.0 * value), 0, 255).astype(np.uint8)
