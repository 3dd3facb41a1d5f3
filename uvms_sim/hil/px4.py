"""What PX4 does with HIL messages, as facts the bridge and the PX4 stand-in share (read from
PX4-Autopilot's source; paths relative to its root).

Pressure. PX4 has no water-pressure path: ``simulator_mavlink`` (SITL) and ``mavlink_receiver``
(HITL) publish ``HIL_SENSOR.abs_pressure`` (hPa) as a barometer's air pressure, and
``src/modules/sensors/vehicle_air_data/VehicleAirData.cpp`` turns it into an altitude with
``getAltitudeFromPressure`` (``src/lib/atmosphere/atmosphere.cpp``): the troposphere of the
International Standard Atmosphere, ``h = ((p / p0)^(-a R / g) - 1) T0 / a`` with
``p0 = SENS_BARO_QNH`` (default 1013.25 hPa), ``T0 = 288.15 K``, ``a = -6.5 K/km``,
``R = 287.1 J/(kg K)`` and ``g = 9.80665 m/s^2``. Sent as water pressure, 1 m of depth (9.8 kPa)
reads as -786 m of altitude. The bridge therefore sends the air pressure at which that
formula gives the altitude ``home_alt - depth`` (``pressure_for_altitude``): the barometric
altitude PX4 computes is the vehicle's height, metre for metre, and agrees with HIL_GPS.

Motor order and directions. ``MOTOR_AXES`` holds, for each PX4 airframe of a BlueROV2 Heavy,
the thrust axis (body FRD) of each rotor for a positive command and its position quadrant:
``ROMFS/px4fmu_common/init.d-posix/airframes/1022_gazebo-classic_uuv_bluerov2_heavy`` (the SITL
airframe of v1.16, still on main) and ``ROMFS/px4fmu_common/init.d/airframes/60002_uuv_bluerov2_heavy``
(its successor on main, also the hardware airframe): ``CA_ROTORn_A[XYZ]`` and ``CA_ROTORn_P[XY]``,
an unset axis taking ``control_allocator/module.yaml``'s default (0, 0, -1). Both reverse
motors 1, 2, 5 and 8 against ArduSub's SUB_FRAME_VECTORED_6DOF table (what the shipped
description follows); ``motor_map`` derives each output's sign from the description's
thruster directions, so it holds for any description whose thrusters sit where the airframe
says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# src/lib/atmosphere/atmosphere.h, src/lib/geo/geo.h
P0_QNH = 101325.0  # Pa, SENS_BARO_QNH default 1013.25 hPa
T0 = 288.15  # K, kTempRefKelvin
LAPSE = -6.5e-3  # K/m, kTempGradient
R_AIR = 287.1  # J/(kg K), kAirGasConstant
G0 = 9.80665  # m/s^2, CONSTANTS_ONE_G
EXPONENT = -(LAPSE * R_AIR) / G0

DEFAULT_HOME = (47.397742, 8.545594, 488.0)  # PX4 SITL's default home: PX4_HOME_LAT/LON/ALT
LOCKSTEP_FLAG = 1  # HIL_ACTUATOR_CONTROLS.flags bit 0: SimulatorMavlink::actuator_controls_from_outputs
MAV_MODE_FLAG_SAFETY_ARMED = 128


def altitude_from_pressure(pressure: float, qnh: float = P0_QNH) -> float:
    """PX4's ``getAltitudeFromPressure`` (m) of an air pressure (Pa), in double precision."""
    return ((pressure / qnh) ** EXPONENT * T0 - T0) / LAPSE


def pressure_for_altitude(altitude: float, qnh: float = P0_QNH) -> float:
    """The air pressure (Pa) whose standard-atmosphere altitude is ``altitude`` m: the inverse
    of ``altitude_from_pressure``."""
    return qnh * (1.0 + LAPSE * altitude / T0) ** (1.0 / EXPONENT)


@dataclass(frozen=True)
class Airframe:
    name: str
    source: str
    axes: tuple[tuple[float, float, float], ...]  # rotor n-1: thrust axis for +1, body FRD
    quadrants: tuple[tuple[int, int], ...]  # rotor n-1: signs of its x and y position


_UP = (0.0, 0.0, -1.0)
_HORIZONTAL_QUADRANTS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
AIRFRAMES = {
    "px4-1022": Airframe(
        "px4-1022",
        "ROMFS/px4fmu_common/init.d-posix/airframes/1022_gazebo-classic_uuv_bluerov2_heavy",
        ((1, -1, 0), (1, 1, 0), (1, 1, 0), (1, -1, 0), _UP, (0, 0, 1), (0, 0, 1), _UP),
        _HORIZONTAL_QUADRANTS * 2,
    ),
    "px4-60002": Airframe(
        "px4-60002",
        "ROMFS/px4fmu_common/init.d/airframes/60002_uuv_bluerov2_heavy",
        ((1, -1, 0), (1, 1, 0), (1, 1, 0), (1, -1, 0), _UP, (0, 0, 1), (0, 0, 1), _UP),
        _HORIZONTAL_QUADRANTS * 2,
    ),
}
MOTOR_MAPS = ("ardusub", *AIRFRAMES)


def motor_map(name: str, motors: dict[int, tuple[np.ndarray, np.ndarray]]) -> dict[int, float]:
    """Sign per output (motor number -> +1 or -1) that makes output n of autopilot ``name``
    push the description's thruster n the way the autopilot means. ``motors``: motor number ->
    (position, thrust direction for a positive command) in body FRD. ``ardusub``: the
    description's own numbering and directions (all +1). A PX4 airframe: the sign of the dot
    product of the airframe's rotor axis and the thruster's direction; ValueError when a
    thruster is missing, sits in another quadrant or is not along the rotor's axis."""
    if name == "ardusub":
        return dict.fromkeys(motors, 1.0)
    if name not in AIRFRAMES:
        raise ValueError(f"motor map {name!r} is not one of {list(MOTOR_MAPS)}")
    frame = AIRFRAMES[name]
    signs = {}
    for n, (axis, quadrant) in enumerate(zip(frame.axes, frame.quadrants, strict=True), start=1):
        if n not in motors:
            raise ValueError(f"{name} drives motors 1-{len(frame.axes)}: the description has no motor {n}")
        position, direction = motors[n]
        a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        d = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
        dot = float(a @ d)
        if abs(abs(dot) - 1.0) > 0.05:
            raise ValueError(
                f"{name} rotor {n} pushes along {a.round(3).tolist()}; the description's motor {n} "
                f"along {d.round(3).tolist()}: not the same axis"
            )
        where = tuple(int(np.sign(x)) for x in np.asarray(position, dtype=float)[:2])
        if where != quadrant:
            raise ValueError(
                f"{name} rotor {n} sits at x, y signs {quadrant}; the description's motor {n} at {where}"
            )
        signs[n] = 1.0 if dot > 0.0 else -1.0
    return signs
