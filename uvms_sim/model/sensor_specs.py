"""The sensors a vehicle carries, as a description declares them (``vehicles[].sensors``;
``docs/config.md``), with defaults from the data sheets of the parts a BlueROV2 carries
(``docs/references.md``). The models that read them are in ``uvms_sim.sensors``.

Each sensor: ``type``, ``name`` (default: the type), ``link`` (default: the vehicle's root),
``position`` and ``rpy`` (its frame in the link's axes; default the link origin and axes),
``rate`` (Hz of simulated time) and its noise parameters; ``noise: false`` turns the noise off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..hydro.environment import STANDARD_GRAVITY as G0
from ..spatial import Array

DEG = math.pi / 180.0

# type -> {parameter: default}, SI units. Sources (docs/references.md):
# imu: TDK InvenSense ICM-20602 data sheet (gyro rate noise 0.004 deg/s/sqrt(Hz), accelerometer
#   100 ug/sqrt(Hz)); bias instability of consumer MEMS of that class (gyro about 5 deg/h,
#   accelerometer about 40 ug; Woodman 2007, section 4) as a Gauss-Markov bias; no rate random
#   walk by default.
# pressure: TE MS5837-30BA data sheet (Blue Robotics Bar30): resolution 0.2 mbar RMS at the
#   highest oversampling, output in 0.1 mbar steps.
# magnetometer: ST LIS3MDL data sheet (RMS noise 3.2 mgauss = 0.32 uT at +-4 gauss); field
#   50 uT at 60 degrees inclination, no declination unless given.
# altimeter: Blue Robotics Ping2 (beam width 25 degrees, range 0.5-100 m, resolution 0.5 % of
#   the range).
# dvl: Water Linked DVL A50 (four beams at 22.5 degrees from its axis, altitude 0.05-50 m, long
#   term accuracy 1.01 %; the per-beam velocity noise of 2 mm/s is this project's choice).
# camera: Blue Robotics Low-Light HD USB camera (80 degrees across under water) at 640 x 480,
#   15 frames/s; its tilt (rad, about its y axis, + up) is the BlueROV2's camera mount's.
DEFAULTS: dict[str, dict[str, float]] = {
    "imu": {
        "rate": 100.0,
        "gyro_noise_density": 0.004 * DEG,  # rad/s/sqrt(Hz)
        "gyro_bias_instability": 5.0 * DEG / 3600.0,  # rad/s
        "gyro_random_walk": 0.0,  # rad/s^2/sqrt(Hz)
        "accel_noise_density": 100e-6 * G0,  # m/s^2/sqrt(Hz)
        "accel_bias_instability": 40e-6 * G0,  # m/s^2
        "accel_random_walk": 0.0,  # m/s^3/sqrt(Hz)
        "bias_correlation_time": 300.0,  # s, of the Gauss-Markov bias that gives the instability
    },
    "pressure": {"rate": 20.0, "noise": 20.0, "resolution": 10.0},  # Pa, Pa
    "magnetometer": {
        "rate": 50.0,
        "noise": 0.32e-6,  # T
        "field_strength": 50e-6,  # T
        "inclination": 60.0 * DEG,  # rad, down from horizontal
        "declination": 0.0,  # rad, east of true north
    },
    "altimeter": {
        "rate": 10.0,
        "beam_width": 25.0 * DEG,  # rad, full cone angle
        "min_range": 0.5,  # m
        "max_range": 100.0,  # m
        "noise": 0.005,  # of the range (1 sigma)
    },
    "camera": {
        "rate": 15.0,
        "width": 640.0,  # pixels
        "height": 480.0,
        "hfov": 80.0 * DEG,  # rad, across the image
        "max_range": 30.0,  # m: farther is water (veiling light)
        "pixel_noise": 0.01,  # of full scale (1 sigma)
        "tilt": 0.0,  # rad, at start
        "max_tilt": 45.0 * DEG,  # rad, either way
    },
    "dvl": {
        "rate": 10.0,
        "beam_angle": 22.5 * DEG,  # rad, of each beam from the DVL's axis
        "min_altitude": 0.05,  # m, along a beam
        "max_altitude": 50.0,  # m, along a beam
        "velocity_noise": 0.002,  # m/s per beam (1 sigma)
    },
}


@dataclass(frozen=True)
class SensorSpec:
    """A declared sensor: where it is (``link``; ``position``, ``rpy`` in link axes), how often
    it reads (``rate``, Hz) and its parameters (``params``, the type's ``DEFAULTS`` with the
    description's values), ``noise`` False for exact readings."""

    type: str
    name: str
    link: str
    position: Array = field(default_factory=lambda: np.zeros(3))
    rpy: Array = field(default_factory=lambda: np.zeros(3))
    params: tuple[tuple[str, float], ...] = ()
    noise: bool = True

    def __post_init__(self) -> None:
        if self.type not in DEFAULTS:
            raise ValueError(f"sensor type must be one of {list(DEFAULTS)}, got {self.type!r}")
        values = {**DEFAULTS[self.type], **dict(self.params)}
        unknown = set(values) - set(DEFAULTS[self.type])
        if unknown:
            raise ValueError(
                f"{self.type}: unknown parameters {sorted(unknown)}; known: {sorted(DEFAULTS[self.type])}"
            )
        for k, v in values.items():
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0.0):
                raise ValueError(f"{self.type} {k} must be a finite number >= 0, got {v!r}")
        if not values["rate"] > 0.0:
            raise ValueError(f"{self.type} rate must be > 0 Hz")
        if self.type == "camera":
            for k in ("width", "height"):
                if values[k] != int(values[k]) or not 1 <= values[k] <= 4096:
                    raise ValueError(
                        f"camera {k} must be a whole number of pixels in 1-4096, got {values[k]!r}"
                    )
            if not 0.0 < values["hfov"] < math.pi:
                raise ValueError(f"camera hfov must be in (0, pi) rad, got {values['hfov']!r}")
            if not abs(values.get("tilt", 0.0)) <= values["max_tilt"] <= math.pi / 2:
                raise ValueError("camera tilt must be within max_tilt, itself at most pi/2 rad")
        object.__setattr__(self, "params", tuple(sorted((k, float(v)) for k, v in values.items())))
        for name in ("position", "rpy"):
            vector = np.array(getattr(self, name), dtype=float).reshape(3)
            if not np.all(np.isfinite(vector)):
                raise ValueError(f"sensor {self.name}: {name} must be finite")
            object.__setattr__(self, name, vector)

    @property
    def rate(self) -> float:
        return dict(self.params)["rate"]

    def value(self, key: str) -> float:
        return dict(self.params)[key]
