"""Imaging sonar descriptions by a hostile author: 400 * ``FUZZ_SCALE`` descriptions of the
BlueROV2 Heavy carrying ``imaging_sonar`` sensors whose keys (``DEFAULTS['imaging_sonar']``,
``noise``, ``position``, ``rpy`` and keys of other types) take values of every kind and out of
every range (NaN, infinities, 0, negative, denormal, huge, texts, lists, mappings, booleans;
beams and bins beyond what a ping may hold), read through ``load``. What must hold: a
description is refused with a ``ConfigError`` of one line naming the file and the sensor's
key, or read; a read one's sonars, pinged into a scene (a sloping seabed and a box) from a few
poses, give 8-bit images of ranges x beams whose geometry (beam directions, ranges) is finite."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import yaml

from uvms_sim.model import ConfigError, load
from uvms_sim.model.sensor_specs import DEFAULTS
from uvms_sim.scene import Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed
from uvms_sim.sensors.imaging_sonar import imaging_sonar_of

CONFIG = Path(__file__).resolve().parents[1] / "config"
SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
HOSTILE = [0, -1, 1, 0.0, -0.0, 1e-320, 5e-324, 1e-9, 0.5, 1.5707963267948966, 3.2, -3.2, 1e300, -1e300,
           ".nan", ".inf", "-.inf", 2**70, True, False, "x", "", None, [], [1.0, 2.0, 3.0], {},
           {"noise": 1.0}, {"noise": ".nan"}, 3.14159, 4096, 4097, 1e-3, 1e4, 2.5]  # fmt: skip
OWN = [*DEFAULTS["imaging_sonar"], "noise", "position", "rpy"]
OTHER = [*sorted({k for d in DEFAULTS.values() for k in d} - set(OWN)), "bogus", "name", "link"]


def sonar_line(rng: np.random.Generator) -> str:
    fields: dict = {"type": "imaging_sonar", "name": f"s{int(rng.integers(3))}"}
    for _ in range(int(rng.integers(0, 5))):
        key = (
            OWN[int(rng.integers(len(OWN)))] if rng.random() < 0.85 else OTHER[int(rng.integers(len(OTHER)))]
        )
        if rng.random() < 0.45 and key in DEFAULTS["imaging_sonar"]:  # a value in range, perhaps
            value = float(DEFAULTS["imaging_sonar"][key]) * float(rng.choice([0.1, 0.5, 1.0, 2.0, -1.0]))
        else:
            value = HOSTILE[int(rng.integers(len(HOSTILE)))]
        if key in ("position", "rpy") and rng.random() < 0.5:
            value = [
                HOSTILE[int(rng.integers(len(HOSTILE)))] if rng.random() < 0.3 else 0.1 for _ in range(3)
            ]
        fields[key] = value
    if rng.random() < 0.8:  # most pings kept small enough to sample many
        fields.setdefault("beams", int(rng.integers(1, 80)))
        fields.setdefault("max_range", float(rng.uniform(1.0, 30.0)))
        fields.setdefault("range_resolution", 0.1)
    text = yaml.safe_dump(fields, default_flow_style=True, width=10_000).strip()
    for token in (".nan", ".inf", "-.inf"):  # YAML's own non-finite numbers, not texts
        text = text.replace(f"'{token}'", token)
    return text


def test_mutated_sonar_descriptions_are_read_or_refused_in_one_line(tmp_path):
    rng = np.random.default_rng(47)
    base = (CONFIG / "bluerov2_heavy.yaml").read_text()
    start = base.index("      - {type: imu, position")
    end = base.index("\n", base.index("      - {type: dvl"))
    box = Shape("box", (1.0, 6.0, 6.0), xyz=(6.0, 1.0, 2.0))
    rays = SceneRays(
        Scene(seabed=PlaneSeabed(depth=4.0, slope=(0.05, 0.0)), structures=(Structure("box", box),))
    )
    poses = [
        (np.eye(3), np.zeros(3)),
        (np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), np.array([1.0, -2.0, 3.9])),
        (np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]), np.array([0.0, 0.0, 10.0])),
    ]
    counts = {"read": 0, "refused": 0}
    pinged = 0
    n = 400 * SCALE
    for k in range(n):
        lines = [f"      - {sonar_line(rng)}" for _ in range(int(rng.integers(1, 3)))]
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
        for spec in (s for v in system.vehicles for s in v.sensors if s.type == "imaging_sonar"):
            v = spec.value
            if v("beams") * math.ceil(v("max_range") / v("range_resolution")) > 100_000 and k % 20:
                continue  # the largest pings: one in twenty
            sonar = imaging_sonar_of(spec, rays, np.random.default_rng(k))
            assert np.all(np.isfinite(sonar.beam_directions())) and np.all(np.isfinite(sonar.ranges))
            for R, p in poses[: 1 + k % 3]:
                image = sonar.ping(R, p)
                assert image.dtype == np.uint8 and image.shape == (len(sonar.ranges), sonar.beam_count)
                assert np.all(np.isfinite(sonar.echo(R, p)))
            pinged += 1
    assert counts["read"] > n // 10 and counts["refused"] > n // 4, counts
    print(f"imaging sonar descriptions: {n} mutated, {counts}, {pinged} sonars pinged")
