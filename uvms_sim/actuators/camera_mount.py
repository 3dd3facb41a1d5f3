"""The BlueROV2's camera tilt servo and lights as ArduSub drives them: by servo outputs.

ArduSub's defaults (``ArduSub/Parameters.h``, ``defaults_table``): on every board but the
Navigator (Pixhawk, and SITL) ``SERVO9_FUNCTION = 59`` (RCIN9: the lights, which ArduSub's
joystick buttons set through RC channel 9) and ``SERVO10_FUNCTION = 7`` (mount tilt, with
``MNT1_TYPE = 1``: a servo mount); on a Navigator (the BlueOS BlueROV2) ``SERVO13_FUNCTION =
181`` (lights 1) and ``SERVO16_FUNCTION = 7`` with ``SERVO16_REVERSED = 1``.

The tilt servo is a physical device: it turns the camera linearly from ``-max_tilt`` at the
first PWM of ``tilt_pwm`` to ``+max_tilt`` at the second (1100 and 1900 us by default:
ArduPilot's ``SERVOn_MIN`` and ``SERVOn_MAX``; swap them for a servo turning the other way),
held at the ends. ArduSub maps its mount angle to PWM linearly between ``MNT1_PITCH_MIN`` and
``MNT1_PITCH_MAX`` (``SRV_Channels::move_servo``): set them to ``-max_tilt`` and ``+max_tilt``
in degrees (-45 and 45 for the default camera) and ArduSub's angles are the camera's, as
BlueOS's camera-mount setup has them set on a real vehicle. With ArduPilot's own defaults
(-90 and 20) ArduSub's 0 degrees is 1755 us, +29 degrees here: a mount not set up.

The lights: Blue Robotics' Lumen takes 1100 us (off) to 1900 us (full brightness), linearly.
A PWM of 0 is an output that is not set up: nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

LUMEN_PWM = (1100.0, 1900.0)  # us: off, full (Blue Robotics Lumen data sheet)
TILT_SERVO, LIGHTS_SERVO = 10, 9  # ArduSub's defaults off the Navigator (SITL's)


@dataclass(frozen=True)
class CameraMount:
    """Which servo outputs (1-based) drive the tilt and the lights (0: none), and the tilt
    servo's PWM at its two ends (``-max_tilt``, ``+max_tilt``)."""

    max_tilt: float  # rad
    tilt_servo: int = TILT_SERVO
    lights_servo: int = LIGHTS_SERVO
    tilt_pwm: tuple[float, float] = (1100.0, 1900.0)

    def tilt(self, pwm: tuple[int, ...]) -> float | None:
        """The tilt (rad, + up) the servo outputs ``pwm`` (SERVO1 first) hold, or None when
        the tilt output is not among them or not set up (0)."""
        value = self._output(pwm, self.tilt_servo)
        if value is None:
            return None
        lo, hi = self.tilt_pwm
        v = min(1.0, max(0.0, (value - lo) / (hi - lo)))
        return self.max_tilt * (2.0 * v - 1.0)

    def lights(self, pwm: tuple[int, ...]) -> float | None:
        """The lights' level (0: off, 1: full) the outputs hold, or None (as ``tilt``)."""
        value = self._output(pwm, self.lights_servo)
        if value is None:
            return None
        lo, hi = LUMEN_PWM
        return min(1.0, max(0.0, (value - lo) / (hi - lo)))

    @staticmethod
    def _output(pwm: tuple[int, ...], servo: int) -> float | None:
        if not 1 <= servo <= len(pwm) or pwm[servo - 1] == 0:
            return None
        return float(pwm[servo - 1])


def check_tilt_pwm(tilt_pwm) -> tuple[float, float]:
    """The tilt servo's two PWMs, or ValueError in one line naming the node's parameter."""
    pair = list(tilt_pwm) if isinstance(tilt_pwm, list | tuple) else None
    if (
        pair is None
        or len(pair) != 2
        or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in pair)
        or not all(500.0 <= x <= 2500.0 for x in pair)
        or abs(pair[1] - pair[0]) < 10.0
    ):
        raise ValueError(
            "parameter mount_tilt_pwm: expected two PWMs 500-2500 us at least 10 us apart (the servo at "
            f"-max_tilt, at +max_tilt; ArduSub's SERVOn_MIN, SERVOn_MAX: [1100, 1900]), got {tilt_pwm!r}"
        )
    return float(pair[0]), float(pair[1])
