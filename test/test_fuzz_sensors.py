"""Sensor descriptions by a hostile author: 1500 * ``FUZZ_SCALE`` descriptions of the BlueROV2
Heavy whose ``sensors`` list is mutated (every key of every type, and names that are none,
given values of every kind and out of every range: NaN, infinities, 0, negative, denormal, huge,
texts, lists, mappings, booleans; ``noise`` as a switch, a number or a mapping; names used
twice), read through ``load``. What must hold: a description is refused with a ``ConfigError``
of one line naming the file and the sensor's key, or read; a read one's sensors, sampled on the
moving vehicle, give finite readings (or the documented +-inf of an altimeter out of range)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from uvms_sim.model import ConfigError, load
from uvms_sim.model.sensor_specs import DEFAULTS
from uvms_sim.sensors.acoustic import DvlReading
from uvms_sim.sensors.suite import SensorSuite
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
HOSTILE = [0, -1, 1, 0.0, -0.0, 1e-320, 5e-324, 1e-9, 0.5, 1.5707963267948966, 3.2, -3.2, 1e300, -1e300,
           ".nan", ".inf", "-.inf", 2**70, True, False, "x", "", None, [], [1.0, 2.0, 3.0], {},
           {"noise": 1.0}, {"gyro_noise_density": ".nan"}, {"velocity_noise": 0.1}, 100.0, 1e4,
           1e5]  # fmt: skip
KEYS = sorted({k for d in DEFAULTS.values() for k in d} | {"noise", "name", "link", "position", "rpy", "type",
                                                           "description", "bogus"})  # fmt: skip


def sensor_line(rng: np.random.Generator) -> str:
    kind = list(DEFAULTS)[int(rng.integers(len(DEFAULTS)))]
    fields = {"type": kind, "name": f"s{int(rng.integers(4))}"}
    own = [*DEFAULTS[kind], "noise", "position", "rpy"]
    for _ in range(int(rng.integers(0, 4))):
        key = own[int(rng.integers(len(own)))] if rng.random() < 0.8 else KEYS[int(rng.integers(len(KEYS)))]
        if rng.random() < 0.4:  # a value in range, perhaps
            value = float(DEFAULTS[kind].get(key, 0.1)) * float(rng.choice([0.5, 1.0, 2.0, -1.0]))
        else:
            value = HOSTILE[int(rng.integers(len(HOSTILE)))]
        if key in ("position", "rpy") and rng.random() < 0.5:
            value = [
                HOSTILE[int(rng.integers(len(HOSTILE)))] if rng.random() < 0.3 else 0.1 for _ in range(3)
            ]
        fields[key] = value
    text = yaml.safe_dump(fields, default_flow_style=True, width=10_000).strip()
    for token in (".nan", ".inf", "-.inf"):  # YAML's own non-finite numbers, not texts
        text = text.replace(f"'{token}'", token)
    return text


def reading_values(r) -> np.ndarray:
    """What must be finite in a reading: all of it, but the +-inf of an altimeter out of range
    and the NaN velocity of a DVL without lock (documented, with ``valid`` False)."""
    if isinstance(r.value, DvlReading):
        return np.r_[r.value.velocity, np.ravel(r.value.covariance)] if r.value.valid else np.zeros(1)
    values = np.hstack([np.ravel(x) for x in r.value]) if isinstance(r.value, tuple) else r.value
    values = np.ravel(np.asarray(values, dtype=float))
    return values[~np.isinf(values)] if r.sensor.spec.type == "altimeter" else values


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mutated_sensor_descriptions_are_read_or_refused_in_one_line(tmp_path):
    rng = np.random.default_rng(43)
    base = (CONFIG / "bluerov2_heavy.yaml").read_text()
    start = base.index("      - {type: imu, position")
    end = base.index("\n", base.index("      - {type: dvl"))
    counts = {"read": 0, "refused": 0}
    sampled = 0
    n = 1500 * SCALE
    for k in range(n):
        lines = [f"      - {sensor_line(rng)}" for _ in range(int(rng.integers(1, 4)))]
        path = tmp_path / "fuzzed.yaml"
        path.write_text(base[:start] + "\n".join(lines) + base[end:])
        try:
            system = load(path)
        except ConfigError as exc:
            text = str(exc)
            assert "fuzzed.yaml" in text and "sensors" in text and "\n" not in text, text
            counts["refused"] += 1
            continue
        counts["read"] += 1
        if counts["read"] % 10 == 1:  # sampled on a moving vehicle: finite readings
            sampled += 1
            sim = Simulator.from_system(system)
            suite = SensorSuite(system, 0.002, seed=k)
            sim.state.v[:6] = [0.3, 0.1, -0.2, 0.2, -0.1, 0.4]
            for step in range(1, 101):
                sim.step(0.002)
                for r in suite.sample(sim, step):
                    assert np.all(np.isfinite(reading_values(r))), (lines, r.sensor.spec)
    assert counts["read"] > n // 10 and counts["refused"] > n // 2, counts
    print(f"sensor descriptions: {n} mutated, {counts}, {sampled} sampled on a moving vehicle")
