"""The sensors a MAVLink HIL bridge sends an autopilot, with the project's noise models.

- IMU (``HIL_SENSOR`` accel and gyro, every step): ``sensors.imu.Imu`` of the vehicle's
  declared IMU (or the data-sheet defaults), sampled at the step rate, so its white noise has
  the density of the part (the standard deviation per sample grows with the square root of the
  rate).
- Magnetometer (mag fields, at its rate rounded to whole steps): ``sensors.magnetometer`` with the
  World Magnetic Model's field at the home position and date (``sensors.geomag``), in gauss.
- Pressure (abs_pressure and temperature, at its rate): ``sensors.pressure`` (a Bar30's noise
  and resolution) gives water pressure; the depth it measures is sent as the air pressure of
  the altitude ``home_alt - depth`` (``hil.px4.pressure_for_altitude``: why, there). The
  temperature is the water's with the part's 0.01 degC resolution as white noise.
- GPS (``HIL_GPS`` at ``gps.rate``): while the vehicle's origin is no deeper than ``gps.depth``
  (its antenna above the water) a 3D fix with a Gauss-Markov position error and white velocity
  noise; under water a GPS receives nothing, and what is sent is chosen by ``gps.underwater``:
  ``"nofix"`` (default) the receiver's messages without a fix (``fix_type`` 1, no satellites), as
  a real receiver in a dry housing reports; ``"acoustic"`` a fix from an acoustic positioning
  system fed to the autopilot as a GPS (as Water Linked's Underwater GPS does for a BlueROV2),
  with its larger error, at ``gps.acoustic_rate``.

Every sample carries fresh noise, so no value repeats exactly from one message to the next (PX4's
DataValidator marks a sensor stale after 100 equal values, 1000 for a magnetometer). Each
sensor has its own random stream from ``seed``; ``noise=False`` sends exact values (a test of the
stale rule)."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace

import numpy as np

from ..model.sensor_specs import SensorSpec
from ..sensors.geomag import wmm_field
from ..sensors.imu import Imu
from ..sensors.magnetometer import Magnetometer
from ..sensors.mount import Mount
from ..sensors.pressure import PressureSensor
from ..sensors.truth import P_ATM, current_accelerations, specific_force
from .px4 import pressure_for_altitude

EARTH_RADIUS = 6378137.0  # m, WGS 84 equatorial
GAUSS = 1e4  # per tesla
# HIL_SENSOR.fields_updated (PX4's SensorSource)
ACCEL, GYRO, MAG, BARO = 0b111, 0b111000, 0b111000000, 0b1101000000000
FIX_3D, NO_FIX = 3, 1
UNKNOWN = 65535  # HIL_GPS eph/epv/vel/cog unknown


@dataclass(frozen=True)
class GpsSpec:
    """HIL_GPS: ``rate`` Hz; position error a Gauss-Markov process of ``sigma_h`` / ``sigma_v``
    (m, 1 sigma) and correlation time ``correlation_time`` s; velocity white noise
    ``sigma_vel`` (m/s); reported accuracies ``eph``/``epv`` (m); a fix while the vehicle's
    origin is no deeper than ``depth`` m; under water ``underwater`` ("nofix" or "acoustic",
    the latter at ``acoustic_rate`` Hz with ``acoustic_sigma`` m plus ``acoustic_range`` of
    the depth)."""

    rate: float = 5.0
    sigma_h: float = 0.3
    sigma_v: float = 0.5
    correlation_time: float = 60.0
    sigma_vel: float = 0.05
    eph: float = 1.0
    epv: float = 1.5
    satellites: int = 12
    depth: float = 0.3
    underwater: str = "nofix"
    acoustic_rate: float = 2.0
    acoustic_sigma: float = 0.3
    acoustic_range: float = 0.01

    def __post_init__(self) -> None:
        if self.underwater not in ("nofix", "acoustic"):
            raise ValueError(f"underwater GPS must be 'nofix' or 'acoustic', got {self.underwater!r}")
        for name in ("rate", "acoustic_rate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"GPS {name} must be a positive number of Hz, got {value!r}")


def _declared(vehicle, kind: str, root: str) -> SensorSpec:
    for spec in vehicle.sensors if vehicle is not None else ():
        if spec.type == kind:
            return spec
    return SensorSpec(kind, kind, root)


class HilSensors:
    """The HIL sensor stream of a simulator's first vehicle at step ``dt`` (see module doc)."""

    def __init__(
        self,
        sim,
        dt: float,
        home: tuple[float, float, float],
        date: dt.date,
        gps: GpsSpec,
        seed: int = 0,
        noise: bool = True,
    ) -> None:
        system = sim.system
        vehicle = system.vehicles[0] if system is not None else None
        root = vehicle.root if vehicle is not None else sim.model.bodies[1].name
        self.root = sim.model.body_index(root)
        self.sim, self.dt, self.home, self.gps = sim, dt, home, gps
        specs = {k: _declared(vehicle, k, root) for k in ("imu", "magnetometer", "pressure")}
        rate = 1.0 / dt
        params = dict(specs["imu"].params) | {"rate": rate}
        specs["imu"] = replace(specs["imu"], params=tuple(params.items()))
        if not noise:
            specs = {k: replace(s, noise=False) for k, s in specs.items()}
        rng = [np.random.default_rng([seed, k]) for k in range(5)]
        mount = {k: Mount.of(s, sim.model.body_index(s.link)) for k, s in specs.items()}
        self.imu = Imu(specs["imu"], mount["imu"], rng[0])
        self.mag = Magnetometer(specs["magnetometer"], mount["magnetometer"], rng[1])
        self.field = wmm_field(home[0], home[1], home[2], date)
        self.mag.field = self.field
        self.baro = PressureSensor(specs["pressure"], mount["pressure"], rng[2])
        self.mag_every = max(1, round(rate / specs["magnetometer"].rate))
        self.baro_every = max(1, round(rate / specs["pressure"].rate))
        self.noise = noise
        self.rng, self.gps_rng = rng[3], rng[4]
        self.water_temperature = 15.0
        self.gps_error = np.zeros(3)
        self.gps_next = 0.0
        self.fields = 0
        self.specific_force = np.zeros(3)
        self.last_mag = np.zeros(3)  # the fields of a sensor not sampled this step: its last value
        self.last_baro = (0.0, 0.0, self.water_temperature)

    def reset(self) -> None:
        self.gps_next = 0.0
        self.gps_error[:] = 0.0

    # -- HIL_SENSOR -------------------------------------------------------------------------------
    def depth_of_pressure(self, pressure: float) -> float:
        """The depth (m) a water-pressure reading means."""
        env = self.sim.env
        return (pressure - P_ATM) / (env.density * env.gravity)

    def hil_sensor(self, step: int) -> tuple[float, ...]:
        """HIL_SENSOR's fields after physics step ``step`` (the sim's current state), in the
        order of ``hil_sensor_send`` after time_usec: acc (3), gyro (3), mag (3, gauss),
        abs_pressure (hPa), diff_pressure, pressure_alt, temperature, fields_updated. A sensor
        not due this step repeats its last value, its bits clear in fields_updated."""
        sim = self.sim
        _, acc = current_accelerations(sim)
        gyro, accel = self.imu.read(sim.data, acc, sim.env.gravity)
        self.specific_force = specific_force(sim.data, acc, self.root, sim.env.gravity)
        fields = ACCEL | GYRO
        if (step - 1) % self.mag_every == 0:  # step 1 (the first message) carries every sensor
            fields |= MAG
            self.last_mag = self.mag.read(sim.data) * GAUSS
        if (step - 1) % self.baro_every == 0:
            fields |= BARO
            water = self.baro.read(sim.data, sim.env.surface, sim.env.density, sim.env.gravity)
            altitude = self.home[2] - self.depth_of_pressure(water)
            jitter = 0.01 * float(self.rng.standard_normal()) if self.noise else 0.0
            self.last_baro = (
                pressure_for_altitude(altitude) / 100.0,
                altitude,
                self.water_temperature + jitter,
            )
        pressure, altitude, temperature = self.last_baro
        mag = self.last_mag
        self.fields = fields
        return (*accel, *gyro, *mag, pressure, 0.0, altitude, temperature, fields)

    # -- HIL_GPS ------------------------------------------------------------------------------
    def gps_due(self, t: float) -> bool:
        return t >= self.gps_next - 1e-9

    def hil_gps(self, t: float) -> tuple:
        """HIL_GPS's fields after time_usec (fix_type, lat, lon, alt, eph, epv, vel, vn, ve, vd,
        cog, satellites_visible) for the state at ``t``; schedules the next one."""
        g, sim = self.gps, self.sim
        p = sim.data.p_world[self.root]
        R = sim.data.R_world[self.root]
        v_ned = R @ sim.data.v[self.root][:3]
        surface = sim.env.surface or 0.0
        depth = float(p[2]) - surface
        if depth <= g.depth:
            self.gps_next = t + 1.0 / g.rate
            sigma = np.array([g.sigma_h, g.sigma_h, g.sigma_v])
            eph, epv = g.eph, g.epv
        elif g.underwater == "acoustic":
            self.gps_next = t + 1.0 / g.acoustic_rate
            s = g.acoustic_sigma + g.acoustic_range * depth
            sigma = np.array([s, s, g.sigma_v])
            eph, epv = 2.0 * s, g.epv
        else:
            self.gps_next = t + 1.0 / g.rate
            return (NO_FIX, 0, 0, 0, UNKNOWN, UNKNOWN, UNKNOWN, 0, 0, 0, UNKNOWN, 0)
        if self.noise:
            phi = math.exp(-1.0 / (g.rate * g.correlation_time))
            self.gps_error = phi * self.gps_error + math.sqrt(
                1.0 - phi**2
            ) * sigma * self.gps_rng.standard_normal(3)
            v_ned = v_ned + g.sigma_vel * self.gps_rng.standard_normal(3)
        north, east, down = np.asarray(p, dtype=float) + self.gps_error
        lat0 = math.radians(self.home[0])
        lat = self.home[0] + math.degrees(north / EARTH_RADIUS)
        lon = self.home[1] + math.degrees(east / (EARTH_RADIUS * math.cos(lat0)))
        alt = self.home[2] - (down - surface)
        speed = math.hypot(v_ned[0], v_ned[1])
        cog = math.degrees(math.atan2(v_ned[1], v_ned[0])) % 360.0
        cm = [int(np.clip(round(100 * x), -32768, 32767)) for x in v_ned]
        return (FIX_3D, round(lat * 1e7), round(lon * 1e7), round(alt * 1000),
                int(min(eph * 100, UNKNOWN - 1)), int(min(epv * 100, UNKNOWN - 1)),
                int(min(round(speed * 100), UNKNOWN - 1)), *cm, round(cog * 100) % 36000,
                g.satellites)  # fmt: skip
