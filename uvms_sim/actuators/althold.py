"""ArduSub's depth hold (ALT_HOLD's vertical axis): the pilot's climb rate shaped into a
target trajectory and tracked by a position -> velocity -> acceleration cascade.

Re-expressed from ArduPilot (``ArduSub/mode_althold.cpp``, ``ArduSub/Attitude.cpp``,
``libraries/AC_AttitudeControl/AC_PosControl.cpp``, ``libraries/AP_Math/control.cpp``,
``libraries/AC_PID``), with ArduSub's parameter sets (``ALT_HOLD_SITL``, the default, and
``ALT_HOLD_FIRMWARE``). Vertical quantities
are positive up, in metres, as in ArduPilot's U axis.

- Stick to climb rate (``Sub::get_pilot_desired_climb_rate``): the throttle channel's
  ``control_in`` (``RC_Channel::pwm_to_range``: 0-1000 over 1130-1900 us, the channel's own
  dead zone RC3_DZ of 30 us taken off its bottom, truncated to an integer; its middle,
  ``get_control_mid``, is 480) outside a dead band of ``THR_DZ`` x the joystick gain
  (100 x 0.5 = 50 control_in units, 1462-1538 us) scales linearly to ``PILOT_SPEED_UP`` /
  ``PILOT_SPEED_DN`` at the stick's ends: 1300 us asks 0.973 x PILOT_SPEED_DN.
- Shaping (``input_vel_accel_U_m``): the desired velocity approaches that rate through a
  square-root controller on the velocity error whose acceleration is limited to
  ``PILOT_ACCEL_Z`` and whose jerk is limited to ``PSC_JERK_Z`` (further limited by the
  acceleration PID's filter); the desired position integrates it, and stops moving in a
  direction in which the motors are saturated. A released stick therefore stops the target
  after ``v^2 / (2 a)`` plus the jerk-limited ramp, not at once: ``stopping_distance``.
- Position P (``AC_P_1D`` with its error limited so that its output stays within the climb
  speeds and ``PILOT_ACCEL_Z``), velocity P (``PSC_VELZ_P``, target and error filtered at
  5 Hz), acceleration PID with feed-forward (``PSC_ACCZ_*``, error filtered at 20 Hz) on the
  measured vertical acceleration, giving a throttle around
  the hover throttle 0.5, low-passed at 2 Hz (``POSCONTROL_THROTTLE_CUTOFF_FREQ_HZ``) as
  ``set_throttle_out`` does, and passed to the mixer as ``2 (throttle - 0.5)``.
- At the surface (``SURFACE_DEPTH``, -10 cm) with the stick in its dead band, the target is
  kept below the surface depth; within a metre of it the upward throttle is limited, down to
  ``SURFACE_MAX_THR`` (0.1) at it (``AltHoldParams.max_throttle``, applied by the vectored
  6DOF mixer as ``AP_Motors6DOF`` applies it; a mode change sets it back to 1, as
  ``Sub::exit_mode`` does).
- The acceleration PID's integrator limit is raised to the hover throttle (``IMAX`` at least
  ``MOT_THST_HOVER`` x 1000, which ArduSub sets to 0.5), and the motors' throttle filter is
  held within 0..1 (``AP_MotorsMulticopter::update_throttle_filter``), as ArduPilot does.

What differs from the real vehicle: the state is the true one, or what ``DepthSensing`` makes
of it (ArduSub's is its EKF's), the measured vertical acceleration is the velocity's difference
over one autopilot cycle, and the throttle limits are those of the bidirectional throttle (+-1).

How ArduSub sees depth (``DepthSensing``; measured against real ArduSub SITL, docs/actuators.md):
its depth sensor reads ``(p - p_ground) / (9800 BARO_SPEC_GRAV)`` metres
(``AP_Baro::update_field_elevation``'s water branch), zeroed where it was calibrated at boot;
and EKF3 fuses it as if it were ``EK3_HGT_DELAY`` (60 ms) old. A sensor that is less late than
that makes the estimate lead the vehicle by about what it moved over the difference: EKF3 fits
its delayed-horizon state to a reading of (nearly) now and carries it forward on the IMU over
the delay. ArduPilot's SITL simulates its depth sensor with no delay of its own
(``SIM_BARO_DELAY`` 0; a sample 0-10 ms old, which EKF3 dates 6 ms earlier still: about even)
in water of 1024 kg/m^3 (``AP_Baro::SimpleUnderWaterAtmosphere``): ``DepthSensing.sitl``. The
lead is modelled as the steady-motion extrapolation ``2 x(t) - x(t - lead)`` of depth and rate,
an approximation: EKF3 weighs the readings by their noise and smooths its output over
``EK3_TAU_OUTPUT`` (0.25 s), most visibly in the rate while the vehicle stops.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from ..hydro.environment import STANDARD_GRAVITY  # ArduPilot's GRAVITY_MSS


@dataclass(frozen=True)
class AltHoldParams:
    """ArduSub's parameters of the depth hold; the field defaults are the firmware's compiled-in
    values except the acceleration gains. Two complete sets: ``ALT_HOLD_SITL`` (the default of
    the emulation) is what ArduPilot's sub parameter file for SITL sets
    (``Tools/autotest/default_params/sub.parm``: PILOT_SPEED_UP 200 cm/s, PILOT_ACCEL_Z
    200 cm/s/s, PSC_JERK_Z 8, PSC_ACCZ_P 2, _I 4, _FF 0.75); ``ALT_HOLD_FIRMWARE`` is the
    firmware's own (100 cm/s, 100 cm/s/s, 50 m/s^3, 0.5, 0.1, 0), with which a released dive
    overshoots its stop by 7-10 cm, as real ArduSub does on the same physics."""

    pilot_speed_up: float = 1.0  # m/s, PILOT_SPEED_UP (ArduSub's default 100 cm/s)
    pilot_speed_dn: float = 0.0  # m/s, PILOT_SPEED_DN (0: as PILOT_SPEED_UP)
    pilot_accel_z: float = 1.0  # m/s^2, PILOT_ACCEL_Z (100 cm/s/s)
    jerk_z: float = 50.0  # m/s^3, PSC_JERK_Z (ArduSub's default)
    throttle_deadzone: float = 100.0  # THR_DZ, control_in units before the joystick gain
    rc3_dz: int = 30  # RC3_DZ, us: the throttle channel's dead zone (Sub::init_rc_in's default)
    joystick_gain: float = 0.5  # JS_GAIN_DEFAULT
    pos_p: float = 3.0  # PSC_POSZ_P, 1/s
    vel_p: float = 8.0  # PSC_VELZ_P, (cm/s^2)/(cm/s)
    vel_filt_hz: float = 5.0  # PSC_VELZ_FLTT and _FLTE
    acc_p: float = 2.0  # PSC_ACCZ_P, throttle/1000 per cm/s^2
    acc_i: float = 4.0  # PSC_ACCZ_I
    acc_ff: float = 0.75  # PSC_ACCZ_FF
    acc_imax: float = 100.0  # PSC_ACCZ_IMAX (throttle/1000)
    acc_filt_hz: float = 20.0  # PSC_ACCZ_FLTE
    throttle_filt_hz: float = 2.0  # POSCONTROL_THROTTLE_CUTOFF_FREQ_HZ
    surface_depth: float = -0.10  # m (up), SURFACE_DEPTH -10 cm
    surface_max_throttle: float = 0.1  # SURFACE_MAX_THR: the upward throttle at the surface

    @property
    def speed_down(self) -> float:
        """``Sub::get_pilot_speed_dn``: PILOT_SPEED_DN, or PILOT_SPEED_UP when it is 0."""
        return abs(self.pilot_speed_dn) if self.pilot_speed_dn else abs(self.pilot_speed_up)

    def max_throttle(self, z: float) -> float:
        """``ModeAlthold::control_depth``'s ``motors.set_max_throttle``: the upward throttle
        allowed at height ``z`` (m, up), from 1 at a metre or more below SURFACE_DEPTH down to
        SURFACE_MAX_THR at it (the vectored 6DOF mixer applies it, ``ardusub.mix``)."""
        distance = min(max(self.surface_depth - z, 0.0), 1.0)
        return self.surface_max_throttle + (1.0 - self.surface_max_throttle) * distance

    @property
    def jerk_max(self) -> float:
        """``set_max_speed_accel_U_m``: PSC_JERK_Z, limited so that the acceleration PID's
        error filter can follow it."""
        accel = min(STANDARD_GRAVITY, self.pilot_accel_z)
        return min(self.jerk_z, accel * 2.0 * math.pi * self.acc_filt_hz / 5.0)


ALT_HOLD_FIRMWARE = AltHoldParams(acc_p=0.5, acc_i=0.1, acc_ff=0.0)
ALT_HOLD_SITL = AltHoldParams(pilot_speed_up=2.0, pilot_accel_z=2.0, jerk_z=8.0)
ALT_HOLD_DEFAULTS = ALT_HOLD_SITL  # checked against real ArduSub SITL: docs/actuators.md


EKF_HEIGHT_DELAY = 0.060  # s, EK3_HGT_DELAY (60 ms)


@dataclass(frozen=True)
class DepthSensing:
    """What ArduSub takes for depth (module doc): ``scale`` x (true depth - ``ground_depth``),
    leading the vehicle by its motion over ``lead`` seconds. The default is the true depth."""

    scale: float = 1.0  # ArduSub's metres per true metre: rho g / (9800 BARO_SPEC_GRAV)
    ground_depth: float = 0.0  # m: the true depth at which ArduSub calibrated its depth sensor
    lead: float = 0.0  # s: EK3_HGT_DELAY less the sensor's own delay

    @classmethod
    def sitl(
        cls, ground_depth: float, density: float = 1024.0, specific_gravity: float = 1.0
    ) -> DepthSensing:
        """ArduSub SITL's: a depth sensor in water of ``density`` (SITL's 1024 kg/m^3) read by
        ArduSub as water of ``specific_gravity`` (BARO_SPEC_GRAV, 1: fresh), with no delay
        (SIM_BARO_DELAY 0) under EKF3's 60 ms (EK3_HGT_DELAY), calibrated at ``ground_depth``."""
        return cls(density * STANDARD_GRAVITY / (9800.0 * specific_gravity), ground_depth, EKF_HEIGHT_DELAY)


class DepthEstimate:
    """``DepthSensing`` applied cycle by cycle: ``update(depth, rate, dt)`` gives the depth and
    depth rate (m, m/s, down) ArduSub flies: each scaled and zeroed, plus its change over the
    last ``lead`` seconds (the estimate carried forward over the delay)."""

    def __init__(self, sensing: DepthSensing) -> None:
        self.sensing = sensing
        self.t = 0.0
        self.past: deque[tuple[float, float, float]] = deque()

    def restart(self) -> None:
        """Forget the past samples (the estimate was not given the state for a while)."""
        self.past.clear()

    def update(self, depth: float, rate: float, dt: float) -> tuple[float, float]:
        s = self.sensing
        d, r = s.scale * (depth - s.ground_depth), s.scale * rate
        if s.lead <= 0.0:
            return d, r
        self.t += max(dt, 0.0)
        self.past.append((self.t, d, r))
        while len(self.past) > 1 and self.past[1][0] <= self.t - s.lead + 1e-9:
            self.past.popleft()
        _, d0, r0 = self.past[0]
        return 2.0 * d - d0, 2.0 * r - r0


RC_MIN, RC_MAX = 1100, 1900  # RC3_MIN, RC3_MAX (us)
THROTTLE_HOVER = 0.5  # MOT_THST_HOVER, which ArduSub sets (Sub::load_parameters)


def throttle_control_in(params: AltHoldParams, pwm: float) -> tuple[int, int]:
    """The throttle channel's ``control_in`` for a PWM and its ``get_control_mid``
    (``RC_Channel::pwm_to_range_dz`` with RC3_DZ, range 1000, both stored as integers)."""
    low = RC_MIN + params.rc3_dz
    r = min(max(int(pwm), RC_MIN), RC_MAX)  # radio_in is an integer number of us
    control = int(1000.0 * (r - low) / (RC_MAX - low)) if r > low else 0
    mid = (1000 * ((RC_MIN + RC_MAX) // 2 - low)) // (RC_MAX - low)
    return control, mid


def climb_rate(params: AltHoldParams, pwm: float) -> float:
    """``Sub::get_pilot_desired_climb_rate`` for a throttle PWM (m/s, up positive)."""
    control, mid = throttle_control_in(params, pwm)
    band = params.throttle_deadzone * params.joystick_gain
    top, bottom = mid + band, mid - band
    if control < bottom:
        rate = params.speed_down * (control - bottom) / bottom
    elif control > top:
        rate = params.pilot_speed_up * (control - top) / (1000.0 - top)
    else:
        rate = 0.0
    return min(max(rate, -params.speed_down), params.pilot_speed_up)


def sqrt_controller(error: float, p: float, second_ord_lim: float, dt: float) -> float:
    """``sqrt_controller``: linear near zero, ``sqrt(2 a e)`` beyond, never past the error in
    one step ``dt`` (0: no such clamp)."""
    if second_ord_lim <= 0.0:
        rate = error * p
    elif p == 0.0:
        rate = math.copysign(math.sqrt(2.0 * second_ord_lim * abs(error)), error) if error else 0.0
    else:
        linear = second_ord_lim / (p * p)
        if abs(error) > linear:
            rate = math.copysign(math.sqrt(2.0 * second_ord_lim * (abs(error) - linear / 2.0)), error)
        else:
            rate = error * p
    if dt > 0.0:
        return min(max(rate, -abs(error) / dt), abs(error) / dt)
    return rate


def inv_sqrt_controller(output: float, p: float, d_max: float) -> float:
    """``inv_sqrt_controller``: the error at which ``sqrt_controller`` gives ``output``."""
    if d_max > 0.0 and p == 0.0:
        return output * output / (2.0 * d_max)
    if d_max <= 0.0 and p > 0.0:
        return output / p
    if d_max <= 0.0 and p == 0.0:
        return 0.0
    if abs(output) < d_max / p:
        return output / p
    linear = d_max / (p * p)
    return math.copysign(linear / 2.0 + output * output / (2.0 * d_max), output)


def _alpha(cutoff_hz: float, dt: float) -> float:
    """First-order low-pass coefficient (``calc_lowpass_alpha_dt``)."""
    if cutoff_hz <= 0.0 or dt <= 0.0:
        return 1.0
    rc = 1.0 / (2.0 * math.pi * cutoff_hz)
    return dt / (dt + rc)


def input_vel_accel(
    p: AltHoldParams,
    target: tuple[float, float, float],
    rate: float,
    dt: float,
    limit: float = 0.0,
    pos_error: float = 0.0,
    vel_error: float = 0.0,
) -> tuple[float, float, float]:
    """``input_vel_accel_U_m``: the desired (position, velocity, acceleration) moved on by
    ``dt`` (``update_pos_vel_accel``: not further in a direction in which the motors are
    saturated, ``limit`` = +1 or -1, while the position or velocity error points that way),
    then the acceleration shaped towards the climb ``rate`` at PILOT_ACCEL_Z and the jerk
    limit, both raised while the velocity is beyond the pilot speeds."""
    pos, vel, accel = target
    delta = vel * dt + accel * 0.5 * dt * dt
    if not (delta * limit > 0.0 and pos_error * limit > 0.0):
        pos += delta
    dv = accel * dt
    if dv * limit > 0.0 and vel_error * limit > 0.0:  # update_vel_accel
        reach = abs(vel) if vel * limit < 0.0 else 0.0
        dv = min(max(dv, -reach), reach)
    vel += dv
    speed_max = p.speed_down if vel < 0.0 else p.pilot_speed_up
    over = 2.0 * abs(vel) / speed_max if abs(vel) > speed_max else 1.0  # calculate_overspeed_gain
    return pos, vel, _shape_vel_accel(rate, vel, accel, p.pilot_accel_z * over, p.jerk_max * over, dt)


def stopping_distance(params: AltHoldParams, speed: float, dt: float = 0.0025) -> float:
    """How far the shaped target moves on after the stick is released at a steady ``speed``
    (m/s, either sign; the answer has its sign): ``input_vel_accel`` alone, stepped by ``dt``."""
    target = (0.0, speed, 0.0)
    for _ in range(int(60.0 / dt)):
        target = input_vel_accel(params, target, 0.0, dt)
        if abs(target[1]) < 1e-6 and abs(target[2]) < 1e-6:
            break
    return target[0]


def _shape_vel_accel(
    vel_input: float, vel: float, accel: float, accel_max: float, jerk: float, dt: float
) -> float:
    """``shape_vel_accel`` with no feed-forward acceleration and symmetric limits: the new
    desired acceleration."""
    accel_min = -min(accel_max, 7.5)
    error = vel_input - vel
    kpa = jerk / accel_max if error > 0.0 else jerk / -accel_min
    target = min(max(sqrt_controller(error, kpa, jerk, dt), accel_min), accel_max)
    return accel + min(max(target - accel, -jerk * dt), jerk * dt)


class AltHold:
    """The vertical controller of ALT_HOLD for one vehicle (see module doc)."""

    def __init__(self, params: AltHoldParams = ALT_HOLD_DEFAULTS) -> None:
        self.params = params
        self.active = False

    def reset(self, z: float, vz: float, throttle: float = 0.0) -> None:
        """``init_U_controller``: targets at the measured height and climb rate, filters reset,
        the acceleration integrator holding ``throttle`` (bidirectional, -1..1)."""
        self.pos_desired, self.vel_desired, self.accel_desired = z, vz, 0.0
        self.limit = 0.0  # +1: throttle at its top, -1: at its bottom
        self.p_error = 0.0
        self.vel_target_filt: float | None = None
        self.vel_error = 0.0
        self.acc_error: float | None = None
        self.acc_integrator = throttle / 2.0 * 1000.0
        self.throttle_in = 0.5 + throttle / 2.0  # 0..1, hover 0.5
        self.last_vz = vz
        self.active = True

    def update(self, z: float, vz: float, pwm: float, dt: float) -> float:
        """One cycle: height ``z`` and climb rate ``vz`` (m, m/s, up), the throttle channel's
        PWM: the bidirectional throttle for the mixer, in [-1, 1]."""
        p = self.params
        if not self.active:
            self.reset(z, vz)
        rate = climb_rate(p, pwm)
        if abs(rate) < 0.0005 and z > p.surface_depth:  # at the surface, stick neutral
            self.pos_desired = min(self.pos_desired, p.surface_depth)
        self.pos_desired, self.vel_desired, self.accel_desired = input_vel_accel(
            p,
            (self.pos_desired, self.vel_desired, self.accel_desired),
            rate,
            dt,
            self.limit,
            self.p_error,
            self.vel_error,
        )
        # position P, its error kept where its output is within the speeds and PILOT_ACCEL_Z
        err_min = inv_sqrt_controller(-p.speed_down, p.pos_p, p.pilot_accel_z)
        err_max = inv_sqrt_controller(p.pilot_speed_up, p.pos_p, p.pilot_accel_z)
        self.p_error = min(max(self.pos_desired - z, err_min), err_max)
        self.pos_desired = z + self.p_error
        vel_target = sqrt_controller(self.p_error, p.pos_p, p.pilot_accel_z, 0.0) + self.vel_desired
        # velocity P (cm/s in, cm/s^2 out), target and error low-passed
        a_v = _alpha(p.vel_filt_hz, dt)
        if self.vel_target_filt is None:
            self.vel_target_filt = vel_target
            self.vel_error = vel_target - vz
        else:
            self.vel_target_filt += a_v * (vel_target - self.vel_target_filt)
            self.vel_error += a_v * ((self.vel_target_filt - vz) - self.vel_error)
        accel_target = p.vel_p * self.vel_error + self.accel_desired
        # acceleration PID (cm/s^2 in, throttle/1000 out) on the measured vertical acceleration
        measured = (vz - self.last_vz) / dt
        self.last_vz = vz
        error = (accel_target - measured) * 100.0
        if self.acc_error is None:
            self.acc_error = error
        else:
            self.acc_error += _alpha(p.acc_filt_hz, dt) * (error - self.acc_error)
        if not self.limit or self.acc_integrator * self.acc_error < 0.0:
            self.acc_integrator += self.acc_error * p.acc_i * dt
            imax = max(p.acc_imax, THROTTLE_HOVER * 1000.0)  # raised to overcome the hover throttle
            self.acc_integrator = min(max(self.acc_integrator, -imax), imax)
        pid = p.acc_p * self.acc_error + self.acc_integrator + p.acc_ff * accel_target * 100.0
        throttle = pid * 0.001 + THROTTLE_HOVER
        self.throttle_in += _alpha(p.throttle_filt_hz, dt) * (throttle - self.throttle_in)
        self.throttle_in = min(max(self.throttle_in, 0.0), 1.0)  # update_throttle_filter's reset
        out = 2.0 * (self.throttle_in - 0.5)
        self.limit = 1.0 if out >= 1.0 else -1.0 if out <= -1.0 else 0.0
        return min(max(out, -1.0), 1.0)
