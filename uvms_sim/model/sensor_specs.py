"""The sensors a vehicle carries, as a description declares them (``vehicles[].sensors``;
``docs/config.md``), with defaults from the data sheets of the parts a BlueROV2 carries
(``docs/references.md``). The models that read them are in ``uvms_sim.sensors``.

Each sensor: ``type``, ``name`` (default: the type), ``link`` (default: the vehicle's root),
``position`` and ``rpy`` (its frame in the link's axes; default the link origin and axes),
``rate`` (Hz of simulated time) and its parameters (``DEFAULTS``, within ``RANGES``).

``noise`` means one thing for every type: the standard deviations of its noise (``NOISE_KEYS``),
as a number (the type's one standard deviation, ``MAIN_NOISE``: not for the IMU, whose two
have different units) or a mapping of them (``{gyro_noise_density: 1e-4}``); ``noise: false``
is an alias of exact readings (every standard deviation 0) and ``noise: true`` of the defaults.
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
# imaging_sonar: Blueprint Subsea Oculus M750d data sheet, its 750 kHz mode (130 x 20 degree
#   field of view, 512 beams, ranges to 120 m, range resolution 4 mm, up to 40 pings/s; the
#   1.2 MHz mode: 70 x 12 degrees, to 40 m), the -3 dB azimuth beam width of that mode (1
#   degree; 0.6 at 1.2 MHz); this project's choices: 10 pings/s at a 20 m range setting in 2 cm
#   bins (1000 ranges), a noise floor of 2 % of full scale.
# light: Blue Robotics Lumen subsea light (1500 lumens, 135 degree beam); not a sensor but a
#   part placed the same way (x along its beam), lighting the vehicle's cameras' scene at the
#   level ArduSub's lights output sets (uvms_sim.sensors.camera).
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
    "imaging_sonar": {
        "rate": 10.0,  # pings/s
        "frequency": 750e3,  # Hz
        "hfov": 130.0 * DEG,  # rad, across the fan
        "vfov": 20.0 * DEG,  # rad, the vertical aperture (-3 dB)
        "beams": 512.0,
        "beam_width": 1.0 * DEG,  # rad, -3 dB width of a beam across the fan
        "max_range": 20.0,  # m, the range setting
        "range_resolution": 0.02,  # m, the range bins
        "gain": 1.0,  # of full scale for a return of unit strength in one bin (echo.quantise)
        "tvg": 1.0,  # fraction (0-1) of the spreading and absorption losses the gain makes up
        "noise": 0.02,  # of full scale: the noise floor (with Rayleigh speckle)
    },
    "light": {
        "lumens": 1500.0,  # lm, the whole beam's luminous flux
        "beam_width": 135.0 * DEG,  # rad, full angle at half the axis' intensity
    },
    "dvl": {
        "rate": 10.0,
        "beam_angle": 22.5 * DEG,  # rad, of each beam from the DVL's axis
        "min_altitude": 0.05,  # m, along a beam
        "max_altitude": 50.0,  # m, along a beam
        "velocity_noise": 0.002,  # m/s per beam (1 sigma)
    },
}

# The noise standard deviations of each type: what ``noise`` may set (module doc), and the one
# a bare number sets (the IMU's two have different units: a mapping names them).
NOISE_KEYS: dict[str, tuple[str, ...]] = {
    "imu": ("gyro_noise_density", "gyro_bias_instability", "gyro_random_walk", "accel_noise_density",
            "accel_bias_instability", "accel_random_walk"),
    "pressure": ("noise",),
    "magnetometer": ("noise",),
    "altimeter": ("noise",),
    "dvl": ("velocity_noise",),
    "camera": ("pixel_noise",),
    "imaging_sonar": ("noise",),
    "light": (),
}  # fmt: skip
MAIN_NOISE = {"pressure": "noise", "magnetometer": "noise", "altimeter": "noise", "dvl": "velocity_noise",
              "camera": "pixel_noise", "imaging_sonar": "noise"}  # fmt: skip
MAX_NOISE = 1.0e6  # in the parameter's unit: beyond this no reading would mean anything
MAX_RATE = 10_000.0  # Hz
MAX_OFFSET = 100.0  # m: a sensor this far from its link is a slip
MAX_RANGE = 10_000.0  # m
# parameter -> (lowest, highest, lowest excluded, highest excluded); the noise keys: 0..MAX_NOISE
RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "rate": (0.0, MAX_RATE, True, False),
    "bias_correlation_time": (0.0, 1.0e7, True, False),
    "resolution": (0.0, 1.0e5, False, False),  # Pa; 0: no rounding, else at least MIN_RESOLUTION
    "field_strength": (0.0, 1.0e-3, True, False),  # T (the Earth's: 25-65 uT)
    "inclination": (-math.pi / 2, math.pi / 2, False, False),  # rad (negative: southern hemisphere)
    "declination": (-math.pi, math.pi, False, False),  # rad (negative: west of true north)
    "beam_width": (0.0, math.pi, True, True),  # rad, full cone
    "beam_angle": (0.0, math.pi / 2, True, True),  # rad from the DVL's axis
    "min_range": (0.0, MAX_RANGE, False, False),
    "max_range": (0.0, MAX_RANGE, True, False),
    "min_altitude": (0.0, MAX_RANGE, False, False),
    "max_altitude": (0.0, MAX_RANGE, True, False),
    "width": (1.0, 4096.0, False, False),  # camera pixels
    "height": (1.0, 4096.0, False, False),
    "hfov": (0.0, math.pi, True, True),  # rad
    "tilt": (-math.pi / 2, math.pi / 2, False, False),  # rad, + up
    "max_tilt": (0.0, math.pi / 2, False, False),
    "frequency": (1.0e3, 1.0e7, False, False),  # Hz
    "vfov": (0.0, math.pi, True, True),  # rad
    "beams": (1.0, 4096.0, False, False),
    "range_resolution": (1.0e-3, MAX_RANGE, False, False),  # m
    "gain": (0.0, 1.0e6, True, False),
    "tvg": (0.0, 1.0, False, False),
    "lumens": (0.0, 1.0e6, False, False),  # lm
}
MAX_SONAR_SAMPLES = 1 << 22  # beams x range bins of one ping: 4 MB of 8-bit samples
MIN_RESOLUTION = 1.0e-3  # Pa: a finer step (1e-320) is a slip that would divide by almost nothing
ANGLES = {"inclination", "declination", "beam_width", "beam_angle", "hfov", "vfov", "tilt", "max_tilt"}


def check_value(kind: str, key: str, value: float) -> str | None:
    """Why ``value`` cannot be sensor parameter ``key`` of a ``kind`` sensor (``RANGES``), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"expected a finite number, got {value!r}"
    lo, hi, lo_open, hi_open = RANGES.get(key, (0.0, MAX_NOISE, False, False))
    if (value <= lo if lo_open else value < lo) or (value >= hi if hi_open else value > hi):
        unit = f" rad ({math.degrees(lo):g} to {math.degrees(hi):g} deg)" if key in ANGLES else ""
        return (
            f"expected {'more than' if lo_open else 'from'} {lo:g} {'to less than' if hi_open else 'to'} "
            f"{hi:g}{unit}, got {value:g}"
        )
    if key == "resolution" and 0.0 < value < MIN_RESOLUTION:
        return f"expected 0 (no rounding) or at least {MIN_RESOLUTION:g} Pa, got {value:g}"
    return None


def check_pair(values: dict[str, float]) -> tuple[str, str] | None:
    """(key, why) when a minimum is not below its maximum, else None."""
    for lo, hi in (("min_range", "max_range"), ("min_altitude", "max_altitude")):
        if lo in values and hi in values and not values[lo] < values[hi]:
            return hi, f"expected more than {lo} ({values[lo]:g}), got {values[hi]:g}"
    return None


def check_sonar(values: dict[str, float]) -> tuple[str, str] | None:
    """(key, why) when an imaging sonar's beams are not a whole number or its image would be
    larger than ``MAX_SONAR_SAMPLES``, else None."""
    if values["beams"] != int(values["beams"]):
        return "beams", f"expected a whole number of beams, got {values['beams']:g}"
    bins = math.ceil(values["max_range"] / values["range_resolution"] - 1e-9)
    if values["beams"] * bins > MAX_SONAR_SAMPLES:
        return "range_resolution", (
            f"expected at most {MAX_SONAR_SAMPLES} samples a ping (beams x max_range / range_resolution), "
            f"got {values['beams']:g} x {bins}"
        )
    return None


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
            why = check_value(self.type, k, v)
            if why is not None:
                raise ValueError(f"sensor {self.name}: {k}: {why}")
        pair = check_pair(values)
        if pair is not None:
            raise ValueError(f"sensor {self.name}: {pair[0]}: {pair[1]}")
        if self.type == "camera":
            for k in ("width", "height"):
                if values[k] != int(values[k]):
                    raise ValueError(
                        f"sensor {self.name}: {k}: expected a whole number of pixels, got {values[k]:g}"
                    )
            if not abs(values["tilt"]) <= values["max_tilt"]:
                raise ValueError(
                    f"sensor {self.name}: tilt: expected within max_tilt ({values['max_tilt']:g} rad)"
                )
        sonar = check_sonar(values) if self.type == "imaging_sonar" else None
        if sonar is not None:
            raise ValueError(f"sensor {self.name}: {sonar[0]}: {sonar[1]}")
        object.__setattr__(self, "params", tuple(sorted((k, float(v)) for k, v in values.items())))
        for name in ("position", "rpy"):
            vector = np.array(getattr(self, name), dtype=float).reshape(3)
            if not np.all(np.abs(vector) <= MAX_OFFSET):
                raise ValueError(f"sensor {self.name}: {name} must be finite numbers within {MAX_OFFSET:g}")
            object.__setattr__(self, name, vector)

    @property
    def rate(self) -> float:
        return dict(self.params)["rate"]

    def value(self, key: str) -> float:
        return dict(self.params)[key]
