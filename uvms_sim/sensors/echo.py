"""Echo envelopes of a sonar beam from the scene (``scene.SceneRays``): what the Ping2
echosounder's profile and a Ping360 ping hold.

The beam is sampled by rays over its main lobe and shoulders (out to ``SPAN`` times the
half-power half angle) with the two-way beam pattern as a Gaussian weight that is one half at
the half-power angle. Each ray that meets a surface at range ``r`` returns its weight times
``|cos(incidence)|`` (Lambert's law for a rough seabed, Urick 1983, section 8.9) for the pulse's
length ``c tau / 2`` from ``r`` on; a sample holds the returns that cover its range. The
devices' time-varied gain compensates the spreading and absorption losses, so the envelope of
a surface filling the beam at normal incidence is one whatever its range. ``quantise`` scales
by the gain, adds a noise floor, speckles both (Rayleigh: the envelope of many scatterers and
of the noise) and gives the 8-bit samples the devices send.
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


def lambert(normal: Array, directions: Array) -> Array:
    """Lambert's law for a rough surface (Urick 1983, section 8.9), per ray: the echo of a ray
    of unit weight that meets a surface of unit ``normal`` (rows) along the unit ``directions``
    is ``|cos(incidence)|`` (the backscattering strength's cos^2 times the area a ray of fixed
    solid angle covers, which grows as 1 / cos)."""
    return np.abs(np.einsum("ij,ij->i", normal, directions))


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
    strength = weights[hit] * lambert(normal[hit], directions[hit])
    first = np.floor(d / sample).astype(np.int64)
    last = np.floor((d + max(pulse, sample) - 1e-9) / sample).astype(np.int64)
    inside = (first < n) & (last >= 0)
    first = np.maximum(first, 0)
    diff = np.zeros(n + 1)
    np.add.at(diff, first[inside], strength[inside])
    np.add.at(diff, np.minimum(last[inside] + 1, n), -strength[inside])
    return np.cumsum(diff[:n])


def quantise(echo: Array, gain: float, noise: float, rng: np.random.Generator | None) -> Array:
    """8-bit samples (of ``echo``'s shape): ``255 gain echo`` clipped to 0-255; when ``rng`` is
    given, with Rayleigh speckle and a noise floor of ``noise`` (fraction of full scale). The
    echo of many scatterers and the receiver's noise are each a circular complex Gaussian, so
    their sum's envelope is Rayleigh with the mean ``sqrt(echo^2 + noise^2)``: one draw a
    sample, in single precision by inversion, ``sigma sqrt(-2 ln u)`` with u uniform on (0, 1]
    (a sonar image holds half a million samples)."""
    value = np.asarray(echo, dtype=np.float32) * np.float32(255.0 * gain)
    if rng is not None:
        np.square(value, out=value)
        value += np.float32((255.0 * noise) ** 2)
        np.sqrt(value, out=value)
        u = rng.random(value.shape, dtype=np.float32)
        np.subtract(np.float32(1.0), u, out=u)  # (0, 1]
        np.log(u, out=u)
        u *= np.float32(-4.0 / math.pi)  # sigma^2 = 2 / pi: mean one
        np.sqrt(u, out=u)
        value *= u
    np.rint(value, out=value)
    return np.clip(value, 0, 255, out=value).astype(np.uint8)
