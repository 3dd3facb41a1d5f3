"""Acoustic sensors that see the scene (``scene.SceneRays``: the seabed and the structures).

Altimeter (Ping2 class): the range along the sensor's x axis (the ROS Range convention) to the
nearest seabed point inside its beam, a cone of full angle ``beam_width``: the distance ``h``
to the plane if the perpendicular to the seabed lies inside the cone, else ``h / cos(theta -
half width)`` for an axis ``theta`` away from the perpendicular, the cone's nearest edge.
Beyond ``max_range`` (or no seabed, or a cone that never meets it) there is no return (+inf);
closer than ``min_range``, -inf (REP 117). Noise: ``noise`` times the range.

DVL (Water Linked A50 class): four beams at ``beam_angle`` from the DVL's z axis (its
boresight, down when mounted level in an FRD link), at azimuths 45, 135, 225 and 315 degrees.
Each beam measures its range to the first surface it meets and the velocity of the DVL over the seabed along
itself, with white noise ``velocity_noise``. A beam whose range is outside
``[min_altitude, max_altitude]`` (or that never meets the seabed) drops; with three or four
beams the velocity (DVL axes) is their least-squares solution with covariance
``sigma^2 (B^T B)^-1``; with fewer it is invalid. The altitude is the mean of the valid beams'
ranges times ``cos(beam_angle)``; the figure of merit the largest standard deviation of the
velocity's covariance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.sensor_specs import SensorSpec
from ..scene import SceneRays
from .mount import Mount

Array = np.ndarray
AZIMUTHS = np.radians([45.0, 135.0, 225.0, 315.0])


class Altimeter:
    def __init__(self, spec: SensorSpec, mount: Mount, rng: np.random.Generator) -> None:
        self.spec, self.mount, self.rng = spec, mount, rng
        self.half = 0.5 * spec.value("beam_width")
        self.lo, self.hi = spec.value("min_range"), spec.value("max_range")

    def read(self, data, rays: SceneRays) -> float:
        R, p = self.mount.world(data)
        r = rays.cone_range(p, R[:, 0], self.half)
        if r > self.hi:
            return math.inf
        if self.spec.noise:
            r += self.spec.value("noise") * r * float(self.rng.standard_normal())
        return -math.inf if r < self.lo else r


@dataclass
class DvlReading:
    velocity: Array  # DVL axes, m/s (NaN when invalid)
    covariance: Array  # 3 x 3
    valid: bool
    altitude: float  # m (NaN when no beam is valid)
    ranges: Array  # per beam, m (NaN for a beam that dropped)


class Dvl:
    def __init__(self, spec: SensorSpec, mount: Mount, rng: np.random.Generator) -> None:
        self.spec, self.mount, self.rng = spec, mount, rng
        b = spec.value("beam_angle")
        self.cos_beam = math.cos(b)
        self.beams = np.column_stack(
            [math.sin(b) * np.cos(AZIMUTHS), math.sin(b) * np.sin(AZIMUTHS), np.full(4, math.cos(b))]
        )  # rows: unit beam directions, DVL axes
        self.lo, self.hi = spec.value("min_altitude"), spec.value("max_altitude")
        self.sigma = spec.value("velocity_noise")
        self.inverses: dict[tuple, tuple] = {}  # per set of valid beams

    def read(self, data, rays: SceneRays) -> DvlReading:
        R, p = self.mount.world(data)
        ranges = rays.cast(p, self.beams @ R.T)
        ok = (ranges >= self.lo) & (ranges <= self.hi)
        ranges = np.where(ok, ranges, np.nan)
        v = self.mount.point_velocity(data)
        if ok.sum() < 3:
            altitude = float(np.nanmean(ranges) * self.cos_beam) if ok.any() else math.nan
            return DvlReading(np.full(3, np.nan), np.full((3, 3), np.nan), False, altitude, ranges)
        B = self.beams[ok]
        measured = B @ v
        if self.spec.noise:
            measured = measured + self.sigma * self.rng.standard_normal(len(measured))
        key = tuple(ok)
        if key not in self.inverses:  # (B^T B)^-1 B^T and (B^T B)^-1 of this beam set, once
            gram = np.linalg.inv(B.T @ B)
            self.inverses[key] = (gram @ B.T, gram)
        pinv, gram = self.inverses[key]
        sigma = self.sigma if self.spec.noise else 0.0
        altitude = float(np.nanmean(ranges) * self.cos_beam)
        return DvlReading(pinv @ measured, sigma**2 * gram, True, altitude, ranges)
