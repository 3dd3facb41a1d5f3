"""Malformed, huge and hostile input at the working water's boundaries: the description's
``environment.waves`` and ``tethers`` keys, and the reel's run-time parameters (directly and
through the node's parameter service). Thousands of cases, seeded; ``FUZZ_SCALE`` multiplies
them. What must hold: a one-line ConfigError (or ValueError, or a refusal with a reason) and
nothing else, and nothing non-finite from what was accepted."""

from __future__ import annotations

import copy
import math
import os
import shutil
from pathlib import Path

import numpy as np
import yaml
from test_fuzz import NASTY, _mutate

from uvms_sim.model import ConfigError, load
from uvms_sim.ros.water_topics import check_reel, tether_parameter
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
SCALE = int(os.environ.get("FUZZ_SCALE", "1"))

WAVES = [
    {"type": "regular", "height": 0.5, "period": 5.0, "direction": 0.3, "phase": 1.0, "depth": 20.0},
    {"type": "jonswap", "significant_height": 1.0, "peak_period": 6.0, "gamma": 3.3, "components": 16,
     "band": [0.5, 3.0], "seed": 4, "direction": -1.0},
    {"type": "pierson_moskowitz", "significant_height": 0.5, "peak_period": 4.0, "components": 8,
     "depth": 10.0},
    {"type": "spectrum", "frequencies": [0.8, 1.0, 1.2, 1.5], "density": [0.01, 0.05, 0.03, 0.01], "seed": 1},
]  # fmt: skip


def _base() -> dict:
    data = yaml.safe_load((CONFIG / "bluerov2_tethered.yaml").read_text())
    return data


def _one_line(exc: Exception) -> str:
    message = str(exc)
    assert message and "\n" not in message, message
    return message


def test_wave_descriptions_load_with_finite_water_or_say_what_is_wrong(tmp_path):
    """Mutated ``environment.waves`` of every kind (numbers scaled by 1e±6 and negated, NaN,
    infinities, wrong types, keys deleted or misspelt): a one-line ConfigError naming
    ``environment.waves``, or waves whose elevation and kinematics are finite everywhere and a
    forward dynamics that stays finite."""
    rng = np.random.default_rng(43)
    base = _base()
    base.pop("tethers")
    for included in CONFIG.glob("*.yaml"):
        shutil.copy(included, tmp_path)
    path = tmp_path / "waves.yaml"
    counts = {"loaded": 0, "refused": 0}
    for k in range(1000 * SCALE):
        doc = copy.deepcopy(base)
        doc["environment"]["waves"] = _mutate(WAVES[k % len(WAVES)], rng)
        if rng.random() < 0.05:
            doc["environment"]["waves"] = copy.deepcopy(NASTY[int(rng.integers(len(NASTY)))])
        path.write_text(yaml.safe_dump(doc))
        try:
            system = load(path)
        except ConfigError as exc:
            assert "environment.waves" in _one_line(exc), str(exc)
            counts["refused"] += 1
            continue
        counts["loaded"] += 1
        waves = system.environment.waves
        for x, y, z, t in rng.uniform(-50, 50, (3, 4)):
            assert math.isfinite(waves.elevation(x, y, t))
            v, a = waves.kinematics(x, y, -abs(z), t)
            assert np.all(np.isfinite(v)) and np.all(np.isfinite(a))
        if counts["loaded"] % 10 == 1:
            sim = Simulator.from_system(system)
            sim.attach_tethers(())
            assert np.all(np.isfinite(sim.acceleration()))
    assert counts["refused"] > 200 and counts["loaded"] > 100, counts


TETHER = {"name": "tether", "link": "base_link", "position": [-0.2, 0.0, -0.1], "anchor": [0.0, 0.0, 0.0],
          "length": 50.0, "segments": 20, "type": "fathom", "diameter": 0.0076, "axial_stiffness": 43000.0,
          "normal_drag": 1.2,
          "reel": {"speed": 0.5, "min_length": 5.0, "max_length": 300.0, "max_tension": 700.0}}  # fmt: skip


def test_tether_descriptions_load_or_say_what_is_wrong(tmp_path):
    """Mutated ``tethers`` entries (lengths negative, zero, NaN or shorter than the distance
    to the vehicle, properties scaled and negated, wrong types, reels out of order, keys
    deleted or misspelt): a one-line ConfigError naming ``tethers``, or a tether whose spec
    holds what was checked (its length within its reel and at least the distance to its
    vehicle); one in twenty of those is started in MoorDyn and stepped (finite, or a one-line
    ValueError or FloatingPointError, which the node recovers from by a reset)."""
    rng = np.random.default_rng(44)
    base = _base()
    base["environment"].pop("waves")
    for included in CONFIG.glob("*.yaml"):
        shutil.copy(included, tmp_path)
    path = tmp_path / "tether.yaml"
    counts = {"loaded": 0, "refused": 0, "started": 0}
    for _ in range(1000 * SCALE):
        doc = copy.deepcopy(base)
        doc["tethers"] = [_mutate(TETHER, rng)]
        if rng.random() < 0.05:
            doc["tethers"] = copy.deepcopy(NASTY[int(rng.integers(len(NASTY)))])
        path.write_text(yaml.safe_dump(doc))
        try:
            system = load(path)
        except ConfigError as exc:
            assert "tethers" in _one_line(exc), str(exc)
            counts["refused"] += 1
            continue
        counts["loaded"] += 1
        for spec in system.tethers:
            assert spec.min_length <= spec.length <= spec.max_length
            assert all(math.isfinite(v) and v >= 0 for v in spec.properties.values())
        if counts["loaded"] % 20 == 1 and system.tethers:
            counts["started"] += 1
            try:
                sim = Simulator.from_system(system)
                for _ in range(20):
                    sim.step(0.001)
            except (ValueError, FloatingPointError) as exc:  # MoorDyn refused or lost the line
                _one_line(exc)
                continue
            assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.tethers[0].force))
            sim.attach_tethers(())
    assert counts["refused"] > 200 and counts["loaded"] > 100 and counts["started"] > 5, counts


def test_reel_commands_take_hostile_values():
    """Thousands of hostile reel commands (negative, NaN, infinite, huge, of the wrong type):
    ValueError with one line, or a target inside the reel's range at a speed within its own."""
    system = load(CONFIG / "bluerov2_tethered.yaml")
    sim = Simulator.from_system(system)
    tether = sim.tethers[0]
    spec = tether.spec
    rng = np.random.default_rng(45)
    values = [*NASTY, -0.0, 1e-300, 5e-324, 2**63, -(2**63), "3", b"3", 3j]
    for _ in range(3000 * SCALE):
        length = values[int(rng.integers(len(values)))] if rng.random() < 0.4 else float(
            10.0 ** rng.uniform(-9, 9) * (-1 if rng.random() < 0.2 else 1))  # fmt: skip
        speed = None if rng.random() < 0.3 else (
            values[int(rng.integers(len(values)))] if rng.random() < 0.4
            else float(rng.normal(0.3, 1.0)))  # fmt: skip
        try:
            target, rate = tether.command(length, speed)  # type: ignore[arg-type]
        except (ValueError, TypeError) as exc:
            _one_line(exc)
            continue
        assert spec.min_length <= target <= spec.max_length
        assert 0.0 <= rate <= spec.reel_speed
        for fieldname, value in (("length", length), ("speed", speed)):
            try:
                check_reel(fieldname, value)
            except ValueError as exc:
                _one_line(exc)
    for _ in range(50):
        sim.step(0.001)
    assert np.all(np.isfinite(sim.state.q)) and math.isfinite(tether.length)
    for name in ("tethers.tether.length", "tethers.tether.speed", "tethers.a.b.length", "tethers..length",
                 "tethers.length", "tether.x.length", "tethers.tether.colour", ""):  # fmt: skip
        parsed = tether_parameter(name)
        assert parsed is None or (parsed[1] in ("length", "speed") and parsed[0])


def test_the_reel_parameters_refuse_hostile_values_through_the_node():
    """The reel's parameters set through the node's parameter service with hostile values of
    every type: refused with a reason, or taken; the node keeps running and its tether's
    length stays within the reel."""
    from rclpy.parameter import Parameter
    from ros_helpers import simulator

    rng = np.random.default_rng(46)
    values = [-1.0, math.nan, math.inf, -math.inf, 1e300, 0.0, 3.0, 60.0, "x", True, [1.0], 2**40, -5]
    with simulator(description="bluerov2_tethered", ardusub_frame="none", physics_rate=500.0,
                   command_timeout=60.0) as (node, _, _):  # fmt: skip
        refused = taken = 0
        for _ in range(100 * SCALE):
            name = "tethers.tether.length" if rng.random() < 0.6 else "tethers.tether.speed"
            value = values[int(rng.integers(len(values)))]
            result = node.set_parameters([Parameter(name, value=value)])[0]
            if result.successful:
                taken += 1
            else:
                refused += 1
                assert result.reason and "\n" not in result.reason
        tether = node.sim.tethers[0]
        assert tether.spec.min_length <= tether.target <= tether.spec.max_length
        assert node.thread.is_alive() and node.failed is None
        assert refused > 20 and taken > 10, (refused, taken)
