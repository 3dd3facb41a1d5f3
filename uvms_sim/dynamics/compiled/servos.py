"""The Reach Alpha 5's joint firmware (``actuators.servo.JointServos.update``), compiled: the
servos' torques at the start of every physics step, from the rows of ``flat``'s servo tables."""

from __future__ import annotations

import math

from ..flat import (
    SERVO_CURRENT,
    SERVO_DISABLE,
    SERVO_EFFORT,
    SERVO_POSITION,
    SERVO_STANDBY,
    SI_IQ,
    SI_IV,
    SI_MODE,
    SV_CAP,
    SV_CURRENT,
    SV_EFFORT,
    SV_FF,
    SV_INTEGRAL,
    SV_IS,
    SV_KI,
    SV_KP,
    SV_KT,
    SV_KV,
    SV_LOWER,
    SV_Q,
    SV_SAVED,
    SV_TARGET,
    SV_UPPER,
    SV_V,
    SV_VMAX,
)
from .buffers import kernel


@kernel
def _current(kt, static, torque):
    """``ServoSpec.current``: the current (mA) that gives ``torque`` (Blueprint Lab's map)."""
    if torque == 0.0:
        return 0.0
    return kt * torque + math.copysign(static, torque)


@kernel
def _clamp(x, lo, hi):
    """``min(max(x, lo), hi)`` as Python evaluates it (the first argument wins a tie)."""
    # Python's max and min keep their first argument on a tie: -0.0 stays -0.0, as in the
    # reference (numba's may not)
    if lo > x:  # noqa: PLR1730
        x = lo
    if hi < x:  # noqa: PLR1730
        x = hi
    return x


@kernel
def _servo_torques(SF, SI, q, v, h, tau):
    """Every servo's torque for a step of h from (q, v) into its entry of ``tau``, the law of
    ``JointServos.update`` operation for operation (position and velocity loops with their
    limits, the current cap and its anti-windup, the dead band of the gear train); the state
    interfaces, current and torque into the servo rows, and each integral before the update
    into ``SV_SAVED`` (``_servo_restore``)."""
    for k in range(SF.shape[0]):
        pos, vel = q[SI[k, SI_IQ]], v[SI[k, SI_IV]]
        SF[k, SV_Q] = pos
        SF[k, SV_V] = vel
        SF[k, SV_SAVED] = SF[k, SV_INTEGRAL]
        mode = SI[k, SI_MODE]
        kt, static, cap = SF[k, SV_KT], SF[k, SV_IS], SF[k, SV_CAP]
        if mode in (SERVO_STANDBY, SERVO_DISABLE):
            current = 0.0
        elif mode == SERVO_CURRENT:
            current = SF[k, SV_TARGET]
        elif mode == SERVO_EFFORT:
            current = _current(kt, static, SF[k, SV_TARGET])
        else:
            vmax = SF[k, SV_VMAX]
            if mode == SERVO_POSITION:
                ref = SF[k, SV_FF] + SF[k, SV_KP] * (SF[k, SV_TARGET] - pos)
            else:
                ref = SF[k, SV_TARGET]
            ref = _clamp(ref, -vmax, vmax)
            if (ref > 0.0 and pos >= SF[k, SV_UPPER]) or (ref < 0.0 and pos <= SF[k, SV_LOWER]):
                ref = 0.0
            err = ref - vel
            torque = SF[k, SV_KV] * err + SF[k, SV_INTEGRAL]
            current = _current(kt, static, torque)
            if abs(current) < cap:
                SF[k, SV_INTEGRAL] += SF[k, SV_KI] * err * h
        current = _clamp(current, -cap, cap)
        SF[k, SV_CURRENT] = current
        excess = abs(current) - static
        effort = math.copysign(excess / kt, current) if excess > 0.0 else 0.0
        SF[k, SV_EFFORT] = effort
        tau[SI[k, SI_IV]] = effort


@kernel
def _servo_restore(SF):
    """The integrals as they were before the last ``_servo_torques`` (a step handed back)."""
    for k in range(SF.shape[0]):
        SF[k, SV_INTEGRAL] = SF[k, SV_SAVED]
