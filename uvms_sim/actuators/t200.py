"""Blue Robotics T200 thrust and current as functions of PWM and supply voltage.

A least-squares fit of Blue Robotics' public T200 performance data (September 2019 workbook:
bollard thrust and current at 10, 12, 14, 16, 18 and 20 V, PWM 1100-1900 us in 4 us steps;
``docs/references.md``), per direction of thrust:

    T(pwm, V) = ± Σ_{i=1..7} Σ_{j=0..3} c_ij x^i (V / 16)^j,  x = clip((|pwm - 1500| - 28) / 372, 0, 1)

(the same form for the current, in A), with the 28 us deadband the tables show at 14-18 V.
Worst thrust error against the tables over 1100-1900 us: 0.82 N forward and 0.87 N reverse
(both at 18 V), at most 0.75 N at 16 V; current within 0.32 A (``test_real_data.py`` checks
it against the tables whenever they are at hand). Outside 10-20 V there are no data, and the fit
refuses. The no-load shaft speed at full command follows ``rpm_max(V) = 3508 (V/16)^0.561``
(the tables' maxima, within 2 %).
"""

from __future__ import annotations

import functools

import numpy as np

from ..spatial import Array, Floats

V_MIN, V_MAX = 10.0, 20.0
DEADBAND = 28.0  # us

_FORWARD_THRUST = (
    (-104.53014577292002, 394.66159150940155, -484.7102654700092, 210.27047449427016),
    (1715.2498945073735, -6724.1977179670475, 8996.885218538155, -3841.2784925676806),
    (-10219.739516068345, 39297.34996124249, -50275.38297053595, 20555.904123024004),
    (33606.02148201096, -124750.72655215983, 152686.87366169607, -59714.930410209534),
    (-58926.83580117756, 212860.1059456114, -252057.99183818803, 95300.53454395315),
    (50507.585316886245, -179133.2939347088, 207465.8732896922, -76605.20921248915),
    (-16597.36621223916, 58146.264725647554, -66354.66972699556, 24099.10709064297),
)
_FORWARD_CURRENT = (
    (-100.48668644762907, 365.1677530367379, -428.7932367000833, 161.2379491260069),
    (1970.9054495589405, -7080.3047700437355, 8265.46842308112, -3069.486232533111),
    (-13115.629398160143, 46597.53435622038, -53564.27169052365, 19586.29501207315),
    (41035.90487348234, -144655.6470716944, 165134.7071393712, -59864.1422611234),
    (-65878.72216421617, 231207.98577123584, -262907.3890486224, 94865.28936874341),
    (52239.30988586803, -182860.90346758132, 207469.7558000626, -74673.21436973622),
    (-16152.244067085043, 56445.13976767785, -63960.18700658674, 22990.850294088297),
)
_REVERSE_THRUST = (
    (-55.64985657359595, 192.6040387380864, -224.4845766822529, 102.54848139187621),
    (1655.027512822752, -5952.085783014465, 7458.604817658922, -3068.1933935955703),
    (-11386.461556762712, 40594.27444042704, -48829.63662547348, 19216.360967706594),
    (36982.3204437715, -130268.84878611364, 152956.5283543874, -58474.11448842214),
    (-61375.127592883095, 214281.99135921767, -247608.38276251478, 92802.40013870328),
    (50093.41462680479, -173840.83847579992, 198720.9643814713, -73437.85700759233),
    (-15923.487774849827, 55045.78934145131, -62470.54595184754, 22852.834939893943),
)
_REVERSE_CURRENT = (
    (-123.15038005638759, 429.94529898166263, -486.06453021602533, 176.56730930070916),
    (2454.944273494663, -8504.861821432263, 9574.6881910607, -3441.529811416042),
    (-16232.845730834684, 55877.729079109864, -62256.04620699166, 22128.17195869135),
    (50081.820887931994, -171648.4365220607, 190523.98585963523, -67328.40149960136),
    (-79074.36224162269, 270516.28555516846, -299819.76312929334, 105673.9334029374),
    (61664.68874450139, -210837.1041966566, 233632.33997036735, -82271.27403256897),
    (-18775.010019678808, 64194.65410119097, -71169.30549537759, 25062.99507707069),
)
_C = {
    ("thrust", 1): np.array(_FORWARD_THRUST),
    ("thrust", -1): np.array(_REVERSE_THRUST),
    ("current", 1): np.array(_FORWARD_CURRENT),
    ("current", -1): np.array(_REVERSE_CURRENT),
}


def check_voltage(voltage: float) -> float:
    v = float(voltage)
    if not V_MIN <= v <= V_MAX:
        raise ValueError(f"T200 supply voltage {v} V is outside the 10-20 V of Blue Robotics' data")
    return v


_POWERS = np.arange(1, 8)  # x^1 .. x^7
_VOLTAGE_POWERS = np.arange(4)  # (V/16)^0 .. (V/16)^3


@functools.lru_cache(maxsize=256)
def _polynomials(kind: str, shape: tuple[int, ...], voltages: tuple[float, ...]) -> tuple[Array, Array]:
    """The coefficients of x^1..x^7 at each voltage (``shape`` + (7,)), forward and reverse:
    the fit's voltage terms summed, ``Σ_j c_ij (V/16)^j`` (computed once per set of voltages:
    a thruster's supply is held)."""
    vp = (np.array(voltages).reshape(shape) / 16.0)[..., None] ** _VOLTAGE_POWERS
    return vp @ _C[(kind, 1)].T, vp @ _C[(kind, -1)].T


def _evaluate(kind: str, pwm: Floats, voltage: Floats) -> Array:
    pwm = np.asarray(pwm, dtype=float)
    d = pwm - 1500.0
    x = np.clip((np.abs(d) - DEADBAND) / (400.0 - DEADBAND), 0.0, 1.0)
    v = np.asarray(voltage, dtype=float)
    fwd, rev = _polynomials(kind, v.shape, tuple(v.ravel().tolist()))
    xp = x[..., None] ** _POWERS
    return np.where(d >= 0.0, (xp * fwd).sum(axis=-1), (xp * rev).sum(axis=-1))


def thrust(pwm: Floats, voltage: Floats) -> Array:
    """Bollard thrust (N, signed: negative in reverse) at ``pwm`` (us) and ``voltage`` (V)."""
    return np.where(np.asarray(pwm, dtype=float) >= 1500.0, 1.0, -1.0) * _evaluate("thrust", pwm, voltage)


def current(pwm: Floats, voltage: Floats) -> Array:
    """Supply current (A) at bollard, ``pwm`` (us) and ``voltage`` (V)."""
    return np.maximum(_evaluate("current", pwm, voltage), 0.0)


def rpm_max(voltage: float) -> float:
    """No-load shaft speed (rpm) at full command."""
    return 3508.0 * (float(voltage) / 16.0) ** 0.561
