"""A multibeam forward-looking imaging sonar (Oculus M750d class): a fan of ``beams`` beams
across ``hfov``, each ``beam_width`` wide (-3 dB) and ``vfov`` high, its echoes in range bins of
``range_resolution`` out to ``max_range``, from the scene (``scene.SceneRays``) and, given
``sensors.body_rays.BodyRays``, the bodies where they are (other vehicles, arms, objects).

Rays are fanned over the azimuths (a quarter of a beam width apart at most, over the fan and
the side lobes beyond it) and, at each, over the vertical aperture. A ray that meets a surface
at range ``r`` returns (``ray_echo``):

    w_v |cos(incidence)| r^-2 10^(-alpha r / 5)

its weight ``w_v`` in the vertical pattern, Lambert's law (``echo.lambert``: the
backscattering strength's cos^2 over the area a ray covers, 1 / cos), the two-way spherical
spreading of a patch whose area grows as r^2 (r^-4 r^2) and the two-way absorption of
``alpha`` dB/m (Ainslie and McColm 1998, for the sonar's frequency in water at 10 degC, 35 PSU,
pH 8). The sonar's time-varied gain makes up the fraction ``tvg`` of those losses (1: a surface
filling a beam at normal incidence echoes one at any range). A return lasts the pulse (one
range bin) or the range its ray's footprint spans on the surface (``r dpsi tan(incidence)``),
its energy spread evenly over it (``ramps``), so a seabed at grazing incidence fills its bins
without gaps and a wall at normal incidence echoes from its range on, over the range its
vertical aperture spans.

A beam sums the azimuth rays with its two-way pattern, ``sinc^2`` of a uniform line aperture
whose half-power width is ``beam_width`` (Urick 1983, section 3.6), to the third side lobe
(``SIDE``); the vertical pattern is the same law with ``vfov``, to its first nulls. The beams
are evenly spaced in azimuth, from port to starboard. ``quantise`` (``echo.quantise``) gives the
8-bit image with Rayleigh speckle (the envelope of many scatterers, multiplied) and the noise
floor.

Axes: the sonar's own (``rpy`` on its link) are x along the middle of the fan, y to starboard,
z down; the fan spans the x-y plane. ``image`` rows are ranges, columns beams, as
marine_acoustic_msgs/SonarImageData lays them out.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from ..scene import SceneRays
from .body_rays import BodyRays
from .echo import lambert, quantise

Array = np.ndarray
SOUND_SPEED = 1500.0  # m/s
HALF_POWER = 1.3915573  # x where (sin x / x)^2 = 1/2
SIDE = 3.0  # beam widths either side of a beam's axis summed (the pattern's third side lobe)
FIRST_NULL = math.pi / HALF_POWER  # half-power half widths to the first null (2.26)
ROUNDING = 1e-9  # of the strongest return: below it a bin of the ramps is empty
MAX_RAYS = 1 << 20  # rays a ping at most
MAX_WEIGHTS = 1 << 22  # beams x azimuth rays at most
VERTICAL_STEP = 0.5 * math.pi / 180.0  # rad between the rays over the vertical aperture


def absorption(frequency: float, temperature: float = 10.0, salinity: float = 35.0,
               depth: float = 0.0, ph: float = 8.0) -> float:  # fmt: skip
    """Sound absorption in sea water (dB/m) at ``frequency`` (Hz): Ainslie and McColm (1998,
    eq. 2; boric acid, magnesium sulphate and pure water relaxations; within 10 % of
    Francois-Garrison from 100 Hz to 1 MHz), ``temperature`` degC, ``salinity`` PSU, ``depth`` m."""
    f, z = frequency / 1000.0, depth / 1000.0  # kHz, km
    f1 = 0.78 * math.sqrt(salinity / 35.0) * math.exp(temperature / 26.0)
    f2 = 42.0 * math.exp(temperature / 17.0)
    f_sq = f * f
    boric = 0.106 * f1 * f_sq / (f1 * f1 + f_sq) * math.exp((ph - 8.0) / 0.56)
    magnesium = (
        0.52
        * (1.0 + temperature / 43.0)
        * (salinity / 35.0)
        * f2
        * f_sq
        / (f2 * f2 + f_sq)
        * math.exp(-z / 6.0)
    )
    water = 0.00049 * f_sq * math.exp(-(temperature / 27.0 + z / 17.0))
    return (boric + magnesium + water) / 1000.0


def pattern(offset: Array, width: float) -> Array:
    """Two-way power pattern of a uniform line aperture at angles ``offset`` (rad) from its
    axis: ``sinc^2``, one half at ``width / 2``."""
    half = max(0.5 * width, 1e-12)  # rad: a narrower beam is a pencil all the same
    return np.sinc(HALF_POWER / math.pi * np.asarray(offset) / half) ** 2


def ramps(column: Array, start: Array, extent: Array, strength: Array, n_columns: int, n: int,
          bin_size: float) -> Array:  # fmt: skip
    """Bins (``n_columns`` x ``n``, float32, bin ``i`` covering ``[i, i + 1) * bin_size``)
    holding returns that last from ``start`` for ``extent`` (m) in their ``column``, each spread
    evenly: a bin gets ``strength`` times the part of the return it overlaps (their sum is
    ``strength``). Exact: a return is the difference of two ramps ``clip(x - a, 0, ...)`` of
    slope ``strength / extent`` starting at ``a = start`` and ``start + extent``; a ramp's bin
    integrals are zero before ``a``, ``h f`` in the bin holding it (``f`` its part of that bin
    past ``a``) and ``h`` after, the running sum of ``h f`` and ``h (1 - f)`` put in that bin and
    the next (``h`` the bin size)."""
    slope = strength / extent
    kink = np.concatenate([start, start + extent]) / bin_size
    change = np.concatenate([slope, -slope]) * bin_size
    cols = np.concatenate([column, column]) * (n + 2)
    first = np.minimum(np.floor(kink), n).astype(np.int64)
    f = np.clip(first + 1.0 - kink, 0.0, 1.0)
    size = n_columns * (n + 2)
    D = np.bincount(np.concatenate([cols + first, cols + first + 1]),
                    np.concatenate([change * f, change * (1.0 - f)]), size)  # fmt: skip
    value = np.cumsum(D.reshape(n_columns, n + 2), axis=1)[:, :n].astype(np.float32)
    value[value < ROUNDING * strength.max()] = 0.0  # what rounding leaves where none is
    return value


class ImagingSonar:
    """Pings one scene from poses: ``echo(R, p)`` -> the image (ranges x beams, float, no
    noise); ``ping(R, p)`` -> the 8-bit image. ``R`` takes the sonar's axes to world NED."""

    def __init__(
        self,
        rays: SceneRays | BodyRays,
        hfov: float = 130.0 * math.pi / 180.0,
        vfov: float = 20.0 * math.pi / 180.0,
        beams: int = 512,
        beam_width: float = math.pi / 180.0,
        max_range: float = 20.0,
        range_resolution: float = 0.02,
        frequency: float = 750e3,
        gain: float = 1.0,
        tvg: float = 1.0,
        noise: float = 0.0,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.scene_rays = rays
        self.hfov, self.vfov, self.beam_width = hfov, vfov, beam_width
        self.max_range, self.resolution, self.frequency = max_range, range_resolution, frequency
        self.gain, self.tvg, self.noise, self.rng = gain, tvg, noise, rng
        self.alpha = absorption(frequency)
        self.azimuths = np.linspace(-0.5 * hfov, 0.5 * hfov, beams) if beams > 1 else np.zeros(1)
        n = max(1, math.ceil(max_range / range_resolution - 1e-9))
        self.ranges = (np.arange(n) + 0.5) * range_resolution
        # vertical rays: the main lobe to its first nulls (up and down at most), VERTICAL_STEP apart
        edge = min(FIRST_NULL * 0.5 * vfov, 0.5 * math.pi)
        n_v = max(3, 2 * math.ceil(edge / VERTICAL_STEP) + 1)
        ray_el = np.linspace(-edge, edge, n_v)
        # azimuth rays: over the fan and SIDE beam widths beyond (half a turn at most), a quarter
        # beam width or a beam spacing apart at most; no more than MAX_RAYS rays and MAX_WEIGHTS
        # beam weights (a description at the limits gets coarser rays, never a larger ping)
        reach = min(math.pi, 0.5 * hfov + SIDE * beam_width)
        most = max(3, min(MAX_RAYS // n_v, MAX_WEIGHTS // len(self.azimuths)))
        spacing = max(min(beam_width / 4.0, hfov / max(beams - 1, 1)), 2.0 * reach / (most - 1))
        n_az = 2 * math.ceil(reach / spacing - 1e-9) + 1
        ray_az = np.linspace(-reach, reach, n_az)
        self.d_elevation = ray_el[1] - ray_el[0]
        w_v = pattern(ray_el, vfov)
        self.w_vertical = np.tile(w_v / w_v.sum(), n_az)
        self.column = np.repeat(np.arange(n_az), n_v)  # each ray's azimuth column
        az, el = np.repeat(ray_az, n_v), np.tile(ray_el, n_az)
        self.local = np.column_stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), -np.sin(el)])
        # each beam's weights over the azimuth columns (rows sum to one)
        offset = ray_az[None, :] - self.azimuths[:, None]
        near = np.abs(offset) <= SIDE * beam_width
        W = np.where(near, pattern(offset, beam_width), 0.0)
        W[np.arange(len(W)), np.argmin(np.abs(offset), axis=1)] += 1e-300  # a beam narrower than the rays
        W /= W.sum(axis=1, keepdims=True)
        self.weights = sparse.csr_matrix(W.astype(np.float32))
        self.n_az = n_az

    @property
    def beam_count(self) -> int:
        return len(self.azimuths)

    def directions(self, R: Array) -> Array:
        """The rays (world, rows) of the sonar at attitude ``R``."""
        return self.local @ np.asarray(R).T

    def ray_echo(self, distance: Array, normal: Array, directions: Array) -> Array:
        """Each ray's return (module doc): Lambert's law, spreading, absorption, the part of them
        the time-varied gain makes up, and its vertical weight; zero where no surface is within
        ``max_range``."""
        hit = np.isfinite(distance) & (distance <= self.max_range)
        r = np.maximum(np.where(hit, distance, 1.0), self.resolution)
        loss_db = 20.0 * np.log10(r) + 2.0 * self.alpha * r
        strength = lambert(normal, directions) * 10.0 ** (-(1.0 - self.tvg) * loss_db / 10.0)
        return np.where(hit, self.w_vertical * strength, 0.0)

    def echo(self, R: Array, p: Array) -> Array:
        """The image (ranges x beams) without speckle or noise. With ``tvg`` 1, a return of unit
        strength within one bin is one, and a beam's echo of a surface that fills it at normal
        incidence sums to about one over the ranges it spans."""
        d = self.directions(R)
        distance, normal, _ = self.scene_rays.trace(p, d)
        strength = self.ray_echo(distance, normal, d)
        ok = np.flatnonzero(strength > 0.0)
        n = len(self.ranges)
        columns = np.zeros((self.n_az, n), dtype=np.float32)
        if len(ok):
            r, s = distance[ok], strength[ok]
            cos = np.clip(lambert(normal[ok], d[ok]), 1e-6, 1.0)
            footprint = r * self.d_elevation * np.sqrt(1.0 - cos * cos) / cos
            extent = np.clip(footprint, self.resolution, self.max_range)
            columns = ramps(self.column[ok], r, extent, s, self.n_az, n, self.resolution)
        return np.asarray((self.weights @ columns).T)

    def ping(self, R: Array, p: Array) -> Array:
        """The 8-bit image (ranges x beams) with speckle and the noise floor when the sonar has
        an ``rng``."""
        return quantise(self.echo(R, p), self.gain, self.noise, self.rng)

    def beam_directions(self) -> Array:
        """Unit direction of each beam in marine_acoustic_msgs's sonar frame (x up, y to
        starboard, z forward): ``(0, sin(a), cos(a))`` for a beam ``a`` rad to starboard."""
        a = self.azimuths
        return np.column_stack([np.zeros(len(a)), np.sin(a), np.cos(a)])


def fan_lookup(ranges: Array, azimuths: Array, width: int) -> tuple[Array, Array]:
    """How to draw a sonar's image as its fan seen from above (``fan``): for each pixel of a
    ``width``-wide picture (the sonar at the middle of its bottom edge, forward up, starboard to
    the right, ``max(ranges)`` to the top edge) the index of the sample (range, beam) it shows,
    and whether it is inside the fan."""
    top = float(ranges[-1] + 0.5 * (ranges[1] - ranges[0])) if len(ranges) > 1 else float(2 * ranges[0])
    half = max(float(np.max(np.abs(azimuths))), 1e-9)
    across = 2.0 * top * min(1.0, math.sin(half)) if half < 0.5 * math.pi else 2.0 * top
    height = max(1, round(width * top / max(across, 1e-9)))
    scale = top / height  # m per pixel
    v, u = np.mgrid[0:height, 0:width]
    forward = (height - v - 0.5) * scale
    right = (u + 0.5 - 0.5 * width) * scale
    r, a = np.hypot(forward, right), np.arctan2(right, forward)
    bin_size = float(ranges[1] - ranges[0]) if len(ranges) > 1 else float(2 * ranges[0])
    i = np.floor(r / bin_size).astype(np.int64)
    if len(azimuths) > 1:
        step = float(azimuths[1] - azimuths[0])
        b = np.rint((a - azimuths[0]) / step).astype(np.int64)
        inside = (i < len(ranges)) & (a >= azimuths[0] - 0.5 * step) & (a <= azimuths[-1] + 0.5 * step)
    else:
        b = np.zeros_like(i)
        inside = (i < len(ranges)) & (np.abs(a) <= 1e-3)
    index = np.clip(i, 0, len(ranges) - 1) * len(azimuths) + np.clip(b, 0, len(azimuths) - 1)
    return index, inside


def fan(image: Array, lookup: tuple[Array, Array]) -> Array:
    """The image (ranges x beams) drawn as its fan (``fan_lookup``): zero outside it."""
    index, inside = lookup
    return np.where(inside, image.reshape(-1)[index], 0).astype(image.dtype)


# the sonar frame of marine_acoustic_msgs (x up, y to starboard, z forward) in the sonar's axes
MESSAGE_AXES = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])


def imaging_sonar_of(spec, rays: SceneRays | BodyRays, rng: np.random.Generator | None) -> ImagingSonar:
    """The imaging sonar a description declares (``model.sensor_specs``: type
    ``imaging_sonar``)."""
    v = spec.value
    return ImagingSonar(
        rays, hfov=v("hfov"), vfov=v("vfov"), beams=int(v("beams")), beam_width=v("beam_width"),
        max_range=v("max_range"), range_resolution=v("range_resolution"), frequency=v("frequency"),
        gain=v("gain"), tvg=v("tvg"), noise=v("noise") if spec.noise else 0.0,
        rng=rng if spec.noise else None,
    )  # fmt: skip
