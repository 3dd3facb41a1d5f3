"""ArduSub as the simulator's autopilot: frames, RC mixing, arming and the three pilot modes.

Facts taken from ArduSub (ArduPilot ``libraries/AP_Motors/AP_Motors6DOF.cpp`` and
``ArduSub/mode_*.cpp``), re-expressed here:

- Frame factor tables (``FRAMES``): for each motor n (= SERVOn) its roll, pitch, yaw,
  throttle, forward and lateral factors, for ``vectored`` (BlueROV2, 6 thrusters),
  ``vectored_6dof`` (BlueROV2 Heavy, 8 thrusters) and ``bluerov1`` (the first BlueROV of
  Nielsen et al. 2018, 6 thrusters; mixed by ArduSub's generic 6-DOF mixer: sum and clip).
- RC input channels 1-6 are pitch, roll, throttle, yaw, forward, lateral; each is normalised
  as ``(pwm - 1500) / 400`` clipped to [-1, 1] (``RC_Channel::norm_input`` with 1100/1500/1900).
  Throttle up is positive.
- Mixing (``output_armed_stabilizing_vectored``): ``rpy = roll·r + pitch·p + yaw·y``,
  ``linear = throttle·t + forward·f + lateral·l`` where the forward command of the two front
  (motors 1, 2, when going backwards) or rear (3, 4, going forwards) thrusters is limited to
  ``1 - MOT_FV_CPLNG_K |throttle|``; output ``clip(direction · (rpy + linear), -1, 1)``.
  ``vectored_6dof``: roll/pitch/throttle and yaw/forward/lateral are summed separately, each
  group divided by its largest magnitude when that exceeds 1, then added.
- Output PWM ``1500 + 400 · output`` within [1100, 1900]; disarmed, every output is 1500.
- ``MOT_n_DIRECTION`` (``directions``): -1 reverses motor n's output.
- MANUAL passes the normalised sticks to the mixer.
- The camera mount and the lights (``ArduSub/Parameters.cpp``'s defaults: ``MNT1_TYPE`` 1, a
  servo mount, in ``MNT1_DEFLT_MODE`` RC targeting with ``RC8_OPTION`` 213, mount pitch, and
  ``MNT1_RC_RATE`` 30 deg/s; ``SERVO9_FUNCTION`` 59, RCIN9, and ``SERVO10_FUNCTION`` 7, mount
  tilt, off the Navigator): RC channel 8 is a tilt *rate*, not an angle. With
  ``MNT1_RC_RATE`` above zero ArduPilot's mount (``AP_Mount_Backend``, RC targeting) turns the
  normalised channel 8 into a pitch rate of ``MNT1_RC_RATE`` at full stick and integrates it
  into the angle, held within ``MNT1_PITCH_MIN``..``MNT1_PITCH_MAX`` (``mount_limits``: as
  BlueOS sets the mount up for the camera, its ``-max_tilt``..``max_tilt``); at 1500 us the
  camera stays where it is. That is why ArduSub's joystick code sends 1900 or 1100 on channel 8
  only while a tilt button is held and 1500 otherwise (``joystick.cpp``: ``cam_tilt``). The
  servo mount maps the angle linearly from ``MNT1_PITCH_MIN`` to ``MNT1_PITCH_MAX`` onto 1100
  to 1900 us on SERVO10 (``SRV_Channels::move_servo``). Channel 9 (lights 1) is passed
  through to SERVO9 as it comes (RCIN9), none (0 us) until it is given.

STABILIZE and ALT_HOLD are emulated with simple controllers (ArduSub's own are cascaded PIDs
on an EKF estimate; these act on the true state):

- attitude: roll and pitch sticks set angles (±``lean_max``), the yaw stick a yaw rate
  (±``yaw_rate_max``; released, the heading is held); each axis outputs
  ``clip(k_angle · error + k_int ∫error - k_rate · body_rate, -1, 1)`` (a turning yaw axis:
  ``k_angle · (rate target - rate)``);
- ALT_HOLD's vertical axis is ArduSub's own position controller with its defaults
  (``uvms_sim.actuators.althold``): the throttle stick's climb rate shaped with
  PILOT_ACCEL_Z, then a position / velocity / acceleration cascade.

Gains (``ModeGains`` defaults) were fitted to real ArduSub SITL flying the BlueROV2 Heavy
(``test/test_ardusub_traces.py``, docs/ardusub_traces.md): a 22.5 degree roll or pitch step
reaches about 11 degrees at once and creeps on towards the target on the integrator (about
18 degrees after 4 s), released it leaves a few degrees that decay over seconds; the yaw rate
is within 2 % of ArduSub's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from transforms3d.euler import mat2euler
from transforms3d.quaternions import quat2mat

from ..log import Throttle
from ..spatial import Array
from .althold import ALT_HOLD_DEFAULTS, AltHold, AltHoldParams, DepthEstimate, DepthSensing

# motor -> (roll, pitch, yaw, throttle, forward, lateral)
FRAMES: dict[str, dict[int, tuple[float, float, float, float, float, float]]] = {
    "bluerov1": {
        1: (0.0, 0.0, -1.0, 0.0, 1.0, 0.0),
        2: (0.0, 0.0, 1.0, 0.0, 1.0, 0.0),
        3: (-0.5, 0.5, 0.0, 0.45, 0.0, 0.0),
        4: (0.5, 0.5, 0.0, 0.45, 0.0, 0.0),
        5: (0.0, -1.0, 0.0, 1.0, 0.0, 0.0),
        6: (-0.25, 0.0, 0.0, 0.0, 0.0, 1.0),
    },
    "vectored": {
        1: (0.0, 0.0, 1.0, 0.0, -1.0, 1.0),
        2: (0.0, 0.0, -1.0, 0.0, -1.0, -1.0),
        3: (0.0, 0.0, -1.0, 0.0, 1.0, 1.0),
        4: (0.0, 0.0, 1.0, 0.0, 1.0, -1.0),
        5: (1.0, 0.0, 0.0, -1.0, 0.0, 0.0),
        6: (-1.0, 0.0, 0.0, -1.0, 0.0, 0.0),
    },
    "vectored_6dof": {
        1: (0.0, 0.0, 1.0, 0.0, -1.0, 1.0),
        2: (0.0, 0.0, -1.0, 0.0, -1.0, -1.0),
        3: (0.0, 0.0, -1.0, 0.0, 1.0, 1.0),
        4: (0.0, 0.0, 1.0, 0.0, 1.0, -1.0),
        5: (1.0, -1.0, 0.0, -1.0, 0.0, 0.0),
        6: (-1.0, -1.0, 0.0, -1.0, 0.0, 0.0),
        7: (1.0, 1.0, 0.0, -1.0, 0.0, 0.0),
        8: (-1.0, 1.0, 0.0, -1.0, 0.0, 0.0),
    },
}
MODES = ("MANUAL", "STABILIZE", "ALT_HOLD")
MODE_NUMBERS = {"STABILIZE": 0, "ALT_HOLD": 2, "MANUAL": 19}  # ArduSub's custom_mode numbers
RC_CHANNELS = ("pitch", "roll", "throttle", "yaw", "forward", "lateral", "camera_pan", "camera_tilt")
RC_INPUTS = 9  # channels taken from an override: the eight sticks and lights 1 (RC9)
MOUNT_RC_RATE = np.radians(30.0)  # rad/s at full channel 8: ArduSub's MNT1_RC_RATE default
MOUNT_LIMITS = (-np.radians(45.0), np.radians(45.0))  # rad: the default camera's -+max_tilt
TILT_SERVO, LIGHTS_SERVO = 10, 9  # SERVO10_FUNCTION 7 (mount tilt), SERVO9_FUNCTION 59 (RCIN9)
# vectored: which way each motor's forward command is limited (ArduSub forward_coupling_direction)
_FORWARD_COUPLING = {1: -1, 2: -1, 3: 1, 4: 1}


def constrain(x: float, lo: float, hi: float) -> float:
    """ArduPilot's ``constrain_float`` for one finite number: ``np.clip``'s result, without its
    wrapper (5 us a call on a scalar; the emulated autopilot clamps a dozen a cycle)."""
    return min(hi, max(lo, x))


def normalize_rc(pwm: Array | list[float]) -> list[float]:
    """``RC_Channel::norm_input`` for 1100/1500/1900 us: ``(pwm - 1500)/400`` in [-1, 1]."""
    return [constrain((float(x) - 1500.0) / 400.0, -1.0, 1.0) for x in pwm]


def thrust_to_pwm(output: Array | list[float]) -> list[float]:
    """``AP_Motors6DOF::calc_thrust_to_pwm``: 1500 + 400 · output within [1100, 1900] (rounded
    half to even, as ``np.rint``)."""
    return [constrain(float(round(1500.0 + 400.0 * float(x))), 1100.0, 1900.0) for x in output]


def mix(
    frame: str,
    roll: float,
    pitch: float,
    yaw: float,
    throttle: float,
    forward: float,
    lateral: float,
    directions: dict[int, float] | None = None,
    fv_coupling: float = 1.0,
    max_throttle: float = 1.0,
) -> dict[int, float]:
    """Motor outputs in [-1, 1] for the six axis commands (each in [-1, 1]), as ArduSub mixes
    them for ``frame``; ``directions`` are MOT_n_DIRECTION (default +1); ``max_throttle``: the
    upward throttle near the surface (``AltHoldParams.max_throttle``), which only the vectored
    6DOF mixer applies (``AP_Motors6DOF::output_armed_stabilizing_vectored_6dof``)."""
    table = FRAMES[frame]
    directions = directions or {}
    throttle = constrain(float(throttle), -1.0, 1.0)
    out: dict[int, float] = {}
    if frame == "vectored":
        limit = max(0.0, 1.0 - fv_coupling * abs(throttle))
        for m, (rf, pf, yf, tf, ff, lf) in table.items():
            fwd = forward
            d = _FORWARD_COUPLING.get(m, 0)
            if fwd != 0.0 and d != 0 and (fwd < 0) == (d < 0):
                fwd = constrain(float(fwd), -limit, limit)
            rpy = roll * rf + pitch * pf + yaw * yf
            linear = throttle * tf + fwd * ff + lateral * lf
            out[m] = constrain(float(directions.get(m, 1.0) * (rpy + linear)), -1.0, 1.0)
        return out
    if frame != "vectored_6dof":  # ArduSub's generic 6DOF mixer (output_armed_stabilizing)
        for m, (rf, pf, yf, tf, ff, lf) in table.items():
            total = roll * rf + pitch * pf + yaw * yf + throttle * tf + forward * ff + lateral * lf
            out[m] = constrain(float(directions.get(m, 1.0) * total), -1.0, 1.0)
        return out
    throttle = min(throttle, max_throttle)
    rpt = {m: roll * f[0] + pitch * f[1] + throttle * f[3] for m, f in table.items()}
    yfl = {m: yaw * f[2] + forward * f[4] + lateral * f[5] for m, f in table.items()}
    rpt_max = max(1.0, *(abs(x) for x in rpt.values()))
    yfl_max = max(1.0, *(abs(x) for x in yfl.values()))
    for m in table:
        out[m] = constrain(float(directions.get(m, 1.0) * (rpt[m] / rpt_max + yfl[m] / yfl_max)), -1.0, 1.0)
    return out


@dataclass(frozen=True)
class VehicleState:
    """What the emulated autopilot measures: Euler angles (rad, ZYX), body rates (rad/s),
    depth (m, down positive) and depth rate (m/s)."""

    roll: float
    pitch: float
    yaw: float
    rates: Array
    depth: float
    depth_rate: float

    @classmethod
    def from_body(cls, R: Array, p: Array, v: Array) -> VehicleState:
        """From a body's world rotation ``R`` (NED <- body), origin ``p`` (NED) and spatial
        velocity ``v`` in body axes (``data.R_world[i]``, ``data.p_world[i]``, ``data.v[i]``)."""
        roll, pitch, yaw = mat2euler(R, axes="sxyz")
        return cls(roll, pitch, yaw, np.array(v[3:6], dtype=float), float(p[2]), float((R @ v[:3])[2]))

    @classmethod
    def from_free_joint(cls, q: Array, v: Array) -> VehicleState:
        """From a free joint's q = [p (NED); quat] and v = [u v w p q r]."""
        R = quat2mat(np.asarray(q[3:7], dtype=float))  # normalises the quaternion itself
        roll, pitch, yaw = mat2euler(R, axes="sxyz")
        vel_ned = R @ np.asarray(v[:3], dtype=float)
        return cls(roll, pitch, yaw, np.array(v[3:6], dtype=float), float(q[2]), float(vel_ned[2]))


@dataclass(frozen=True)
class ModeGains:
    """Gains of the emulated STABILIZE / ALT_HOLD controllers (see module docstring)."""

    # fitted to real ArduSub SITL's STABILIZE steps on the Heavy (test/test_ardusub_traces.py):
    # a fast part of the step at once, the rest on the integrator over seconds, as its rate PIDs do
    k_angle: tuple[float, float, float] = (0.9, 0.9, 2.5)  # output per rad of roll/pitch/yaw error
    k_rate: tuple[float, float, float] = (0.35, 0.35, 0.2)  # output per rad/s of body rate
    k_int: tuple[float, float, float] = (0.3, 0.3, 1.0)  # output per rad s of angle error
    int_max: float = 0.5  # integrator limit (output)
    lean_max: float = np.radians(45.0)  # rad at full roll/pitch stick (ANGLE_MAX 4500 cd)
    yaw_rate_max: float = np.radians(45.0 * 3.375)  # rad/s at full yaw stick (4500 cd x ACRO_YAW_P)
    deadzone: float = 40.0 * 0.5 / 400.0  # yaw stick: RC4_DZ 40 us x joystick gain 0.5
    althold: AltHoldParams = ALT_HOLD_DEFAULTS  # the vertical axis of ALT_HOLD


# ArduSub's attitude loops as a pilot tunes them for a vehicle that the defaults cannot hold
# (roll and pitch: ATC_ANG_*_P and ATC_RAT_*_I raised, about 3x and 7x; yaw's angle term is the
# emulation's earlier 1.5, below the fitted 2.5): with the defaults (``ModeGains()``,
# fitted to ArduSub SITL) an arm's weight pitches the Heavy by up to 10 degrees, and real ArduSub
# SITL and this emulation alike let Nielsen et al.'s (2018) pair pitch past 70 degrees at 1800 us
# (tools/ardusub_pair_check.py --forward)
STIFF_GAINS = ModeGains(k_angle=(3.0, 3.0, 1.5), k_int=(2.0, 2.0, 1.0))


def infer_frame(motors: list[int | None]) -> str | None:
    """ArduSub frame of a vehicle from its motor numbers (6: vectored, 8: vectored_6dof)."""
    numbered = sorted(m for m in motors if m is not None)
    if numbered == list(range(1, 9)):
        return "vectored_6dof"
    if numbered == list(range(1, 7)):
        return "vectored"
    return None


@dataclass
class ArduSubEmulator:
    """Arming, mode and RC override in; motor PWM out (see module docstring)."""

    frame: str = "vectored"
    directions: dict[int, float] = field(default_factory=dict)
    gains: ModeGains = field(default_factory=ModeGains)
    fv_coupling: float = 1.0  # MOT_FV_CPLNG_K
    # RC_OPTIONS' ARMING_CHECK_THROTTLE (bit 5): the firmware's default; ArduPilot's sub.parm for
    # SITL sets RC_OPTIONS 0, with which ArduSub arms whatever the throttle stick
    arming_check_throttle: bool = True
    throttle_dead_zone: float = 30.0  # RC3_DZ (Sub::init_rc_in's default), us
    mount_limits: tuple[float, float] = MOUNT_LIMITS  # rad: MNT1_PITCH_MIN, MNT1_PITCH_MAX
    mount_rate: float = MOUNT_RC_RATE  # rad/s: MNT1_RC_RATE
    depth_sensing: DepthSensing = field(default_factory=DepthSensing)  # how it sees depth (althold)

    def __post_init__(self) -> None:
        if self.frame not in FRAMES:
            raise ValueError(f"unknown ArduSub frame {self.frame!r}; expected one of {sorted(FRAMES)}")
        self.armed = False
        self.mode = "MANUAL"
        self.rc = np.array([1500.0] * len(RC_CHANNELS) + [0.0])  # RC9 (lights): none yet
        self.mount_tilt = 0.0  # rad, + up: the mount's angle target
        self.motors = sorted(FRAMES[self.frame])
        self._heading: float | None = None
        self.althold = AltHold(self.gains.althold)
        self.max_throttle = 1.0  # motors.set_max_throttle: ALT_HOLD's near the surface, 1 after a mode change
        self.depth_estimate = DepthEstimate(self.depth_sensing)
        self._sensed = (0.0, 0.0)  # (depth, rate) as ArduSub takes them, at the last state
        self._i_att = np.zeros(3)
        self.throttle = Throttle()
        # the motors' throttle filter (AP_MotorsMulticopter::update_throttle_filter): its cutoff
        # is whatever the last mode to set one set (ALT_HOLD 2 Hz, STABILIZE PILOT_THR_FILT 0 =
        # none, MANUAL none of its own: after ALT_HOLD, MANUAL's throttle is low-passed at 2 Hz)
        self._throttle_cutoff = 0.0
        self._throttle_out: float | None = None

    # -- commands ---------------------------------------------------------------------------
    def arming_refusal(self) -> str | None:
        """Why ArduSub refuses to arm now, or None (``AP_Arming_Sub::arm``): with
        ``arming_check_throttle`` and THR_ARM_POS 1 (both defaults) the throttle channel must be
        within its trim +- RC3_DZ (``RC_Channel::in_trim_dz``: 1470-1530 us, ends included)."""
        if self.arming_check_throttle and abs(self.rc[2] - 1500.0) > self.throttle_dead_zone:
            return "Throttle not centered/close to trim"
        return None

    def arm(self, value: bool = True) -> None:
        self.armed = bool(value)
        self._reset_controllers()

    def _reset_controllers(self) -> None:
        self._heading = None
        self.althold.active = False  # init_U_controller at the next ALT_HOLD cycle
        self._i_att = np.zeros(3)

    def set_mode(self, mode: str) -> bool:
        """Switch pilot mode by name (any case) or by ArduSub's custom mode number as MAVROS
        passes it ("19" is MANUAL, "2" ALT_HOLD, "0" STABILIZE); an unknown mode is refused
        (returns False), as ArduSub does."""
        mode = mode.strip().upper()
        if mode.isdigit():  # MAVROS: a name it does not know is taken as the custom mode number
            mode = {n: name for name, n in MODE_NUMBERS.items()}.get(int(mode), mode)
        if mode not in MODES:
            return False
        if mode != self.mode:
            self._reset_controllers()
            self.max_throttle = 1.0  # Sub::exit_mode: motors.set_max_throttle(1)
        self.mode = mode
        return True

    def set_rc(self, channels: Array) -> int:
        """RC override, channel 1 first, as ArduSub takes RC_CHANNELS_OVERRIDE from MAVROS:
        65535 leaves a channel unchanged, and 0 releases it, which on a vehicle without an RC
        receiver (a BlueROV2) also leaves it where it was (``RC_Channel::update`` keeps
        ``radio_in`` with neither an override nor a receiver); from channel 9 on, MAVLink's
        RC_CHANNELS_OVERRIDE ignores 0 and 65535 and releases at 65534: each leaves it where it
        was. Channels 1-9 are taken (``RC_INPUTS``), the rest ignored. Values outside 1100-1900
        are clamped; non-finite values raise ValueError and change nothing. Returns how many
        were clamped."""
        arr = np.asarray(channels, dtype=float).reshape(-1)
        if not np.all(np.isfinite(arr)):
            self.throttle.warn("finite", "RC override rejected: non-finite channel values")
            raise ValueError("RC channels must be finite")
        new = self.rc.copy()
        clamped = 0
        for k, value in enumerate(arr[: len(new)]):
            if value in (0, 65535) or (k >= 8 and value == 65534):
                continue
            c = min(max(value, 1100.0), 1900.0)
            clamped += int(c != value)
            new[k] = c
        if clamped:
            self.throttle.warn(
                "range", f"RC override outside 1100-1900 us clamped: {arr[: len(new)].tolist()}"
            )
        self.rc = new
        return clamped

    def lose_pilot_input(self) -> None:
        """ArduSub's pilot input failsafe (``failsafe_pilot_input_check`` with its defaults
        FS_PILOT_INPUT = disarm): the control sticks to neutral, and disarmed."""
        self.rc[:6] = 1500.0
        self.arm(False)

    # -- the loop ---------------------------------------------------------------------------
    @property
    def needs_state(self) -> bool:
        """Whether ``update`` reads the vehicle's state: armed in a stabilised mode (disarmed or
        in MANUAL the outputs follow the sticks alone, so a caller may pass None)."""
        return self.armed and self.mode != "MANUAL"

    def update(self, state: VehicleState | None, dt: float) -> dict[int, float]:
        """One autopilot cycle: motor number -> PWM (us). ``state`` may be None when
        ``needs_state`` is false. The camera mount moves armed or not."""
        lo, hi = self.mount_limits
        rate = normalize_rc(self.rc[7:8])[0] * self.mount_rate  # channel 8: a tilt rate
        self.mount_tilt = min(hi, max(lo, self.mount_tilt + rate * dt))
        if state is not None:  # its estimate runs armed or not, while it is given the state
            self._sensed = self.depth_estimate.update(state.depth, state.depth_rate, dt)
        else:  # not given it (MANUAL through the shim): the estimate starts again when it is
            self.depth_estimate.restart()
        if not self.armed:
            return {m: 1500.0 for m in self.motors}
        sticks = dict(zip(RC_CHANNELS, normalize_rc(self.rc[: len(RC_CHANNELS)].tolist()), strict=True))
        if self.mode == "MANUAL":
            roll, pitch, yaw = sticks["roll"], sticks["pitch"], sticks["yaw"]
            throttle = self._filter_throttle(sticks["throttle"], dt)
        elif state is None:
            raise ValueError(f"ArduSub's {self.mode} needs the vehicle's state")
        elif self.mode == "STABILIZE":
            roll, pitch, yaw = self._attitude(state, sticks, dt)
            self._throttle_cutoff = 0.0  # PILOT_THR_FILT
            throttle = self._filter_throttle(sticks["throttle"], dt)
        else:
            roll, pitch, yaw = self._attitude(state, sticks, dt)
            throttle = self._depth(state, sticks, dt)  # low-passed at 2 Hz by AltHold itself
            self._throttle_cutoff, self._throttle_out = self.althold.params.throttle_filt_hz, throttle
        out = mix(
            self.frame, roll, pitch, yaw, throttle, sticks["forward"], sticks["lateral"], self.directions,
            self.fv_coupling, self.max_throttle,
        )  # fmt: skip
        return {m: float(p) for m, p in zip(out, thrust_to_pwm(list(out.values())), strict=True)}

    def _filter_throttle(self, throttle: float, dt: float) -> float:
        """The motors' first-order throttle filter at the current cutoff (0: passed through)."""
        if self._throttle_out is None or self._throttle_cutoff <= 0.0:
            self._throttle_out = throttle
        else:
            rc = 1.0 / (2.0 * np.pi * self._throttle_cutoff)
            self._throttle_out += dt / (dt + rc) * (throttle - self._throttle_out)
        return self._throttle_out

    def servo_outputs(self, motors: dict[int, float]) -> tuple[int, ...]:
        """SERVO1 first, through SERVO10: the motors' PWMs ``motors`` (0 where none), the
        lights (SERVO9: RC9 as it comes, 0 before any) and the camera mount (SERVO10: its angle
        from ``MNT1_PITCH_MIN`` to ``MNT1_PITCH_MAX`` as 1100 to 1900 us)."""
        out = [round(motors.get(k, 0.0)) for k in range(1, max(TILT_SERVO, *self.motors) + 1)]
        lo, hi = self.mount_limits
        out[LIGHTS_SERVO - 1] = round(float(self.rc[8]))
        out[TILT_SERVO - 1] = int(
            1100.0 + 800.0 * (self.mount_tilt - lo) / (hi - lo)
        )  # truncated, as its uint16
        return tuple(out)

    def _attitude(self, s: VehicleState, sticks: dict, dt: float) -> tuple[float, float, float]:
        g = self.gains
        yaw_stick = sticks["yaw"] if abs(sticks["yaw"]) > g.deadzone else 0.0
        if yaw_stick != 0.0 or self._heading is None:
            self._heading = s.yaw
        err = np.array(
            [
                sticks["roll"] * g.lean_max - s.roll,
                sticks["pitch"] * g.lean_max - s.pitch,
                (self._heading - s.yaw + np.pi) % (2.0 * np.pi) - np.pi,
            ]
        )
        self._i_att = np.minimum(
            np.maximum(self._i_att + np.asarray(g.k_int) * err * dt, -g.int_max), g.int_max
        )
        cmd = np.asarray(g.k_angle) * err + self._i_att - np.asarray(g.k_rate) * s.rates
        if yaw_stick != 0.0:  # rate control while the pilot turns
            self._i_att[2] = 0.0
            cmd[2] = g.k_angle[2] * (yaw_stick * g.yaw_rate_max - s.rates[2])
        roll, pitch, yaw = (constrain(x, -1.0, 1.0) for x in cmd.tolist())
        return roll, pitch, yaw

    def _depth(self, s: VehicleState, sticks: dict, dt: float) -> float:
        depth, rate = self._sensed
        self.max_throttle = self.althold.params.max_throttle(-depth)
        return self.althold.update(-depth, -rate, float(self.rc[2]), dt)
