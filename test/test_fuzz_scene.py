"""Fuzz of the ``scene:`` of a description: random (and hostile) seabeds and structures. What
must hold: each loads, or is one ``ConfigError`` line naming the file; nothing else escapes, and
what loads casts finite or infinite ranges, never NaN. ``FUZZ_SCALE`` times as many in
``make fuzz``."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import trimesh
import yaml

from uvms_sim.model import ConfigError, load
from uvms_sim.scene import SceneRays

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
HEAVY = (Path(__file__).resolve().parents[1] / "config" / "bluerov2_heavy.yaml").read_text()
NUMBERS = [0.0, -1.0, 1.0, 3.5, 1e-320, 1e300, -1e300, math.nan, math.inf, -math.inf, 2**70, True, None,
           "3", "", [], {}, [1.0], [1.0, 2.0], [1.0, 2.0, 3.0], [[1.0, 2.0], [3.0, 4.0]]]  # fmt: skip
FILES = ["rock.stl", "garbage.stl", "flat.stl", "missing.stl", "grid.npy", "grid.csv", "bad.csv", "/dev/zero",
         "../../../../etc/passwd", "rock.obj", ""]  # fmt: skip


def value(rng):
    return NUMBERS[int(rng.integers(len(NUMBERS)))]


def seabed(rng):
    kind = str(rng.choice(["plane", "heightmap", "mesh", "sand", 7]))
    out = {"type": kind}
    keys = ["depth", "slope", "spacing", "depths", "file", "origin", "scale", "xyz", "rpy", "colour"]
    for key in map(str, rng.choice(keys, size=int(rng.integers(0, 5)), replace=False)):
        if key == "file":
            out[key] = FILES[int(rng.integers(len(FILES)))]
        elif key == "depths" and rng.random() < 0.5:
            out[key] = rng.normal(10.0, 3.0, size=tuple(rng.integers(1, 5, size=2))).tolist()
        else:
            out[key] = value(rng)
    return out


def structure(rng, k: int):
    out = {
        "name": str(rng.choice([f"s{k}", "s0", "", 3])),
        "shape": str(rng.choice(["box", "cylinder", "sphere", "mesh", "cone"])),
    }
    for key in map(
        str,
        rng.choice(
            ["size", "file", "scale", "xyz", "rpy", "mass"], size=int(rng.integers(0, 4)), replace=False
        ),
    ):
        out[key] = FILES[int(rng.integers(len(FILES)))] if key == "file" else value(rng)
    return out


def test_random_scenes_load_or_fail_with_one_line(tmp_path):
    rng = np.random.default_rng(38)
    trimesh.creation.box(extents=(2.0, 2.0, 2.0)).export(tmp_path / "rock.stl")
    trimesh.creation.icosphere(subdivisions=1).export(tmp_path / "rock.obj")
    (tmp_path / "garbage.stl").write_bytes(bytes(rng.integers(0, 256, size=2000, dtype=np.uint8)))
    trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]], process=False).export(
        tmp_path / "flat.stl"
    )
    np.save(tmp_path / "grid.npy", rng.normal(10.0, 1.0, size=(4, 5)))
    (tmp_path / "grid.csv").write_text("1,2,3\n4,5,6\n")
    (tmp_path / "bad.csv").write_text("1,2,x\n,,\n")
    base = yaml.safe_load(HEAVY)
    loaded = refused = 0
    for k in range(150 * SCALE):
        top = dict(base)
        scene: dict = {}
        if rng.random() < 0.8:
            scene["seabed"] = seabed(rng)
        if rng.random() < 0.6:
            scene["structures"] = [structure(rng, i) for i in range(int(rng.integers(0, 4)))]
        if rng.random() < 0.05:
            scene["extra"] = value(rng)
        top["scene"] = scene if rng.random() > 0.05 else value(rng)
        path = tmp_path / f"s{k % 7}.yaml"
        path.write_text(yaml.safe_dump(top))
        try:
            system = load(path)
        except ConfigError as exc:
            text = str(exc)
            assert path.name in text and "\n" not in text.strip() and "Traceback" not in text, text
            refused += 1
            continue
        loaded += 1
        rays = SceneRays(system.scene)
        ranges = rays.cast(rng.normal(0.0, 5.0, size=(8, 3)), np.tile([0.0, 0.0, 1.0], (8, 1)))
        assert not np.any(np.isnan(ranges)) and np.all(ranges >= 0.0)
    assert loaded > 10 and refused > 10, (loaded, refused)


def contact_law(rng):
    keys = ["stiffness", "restitution", "friction", "tangential_stiffness", "margin", "period", "glue"]
    return {k: value(rng) for k in map(str, rng.choice(keys, size=int(rng.integers(0, 4)), replace=False))}


def scene_object(rng, k: int):
    out = {"name": str(rng.choice([f"o{k}", "o0", "", "Heavy", "base_link", 5])),
           "shape": str(rng.choice(["box", "cylinder", "sphere", "mesh", "torus"]))}  # fmt: skip
    keys = ["size", "file", "scale", "mass", "density", "xyz", "rpy", "hydrodynamics", "color", "spin"]
    for key in map(str, rng.choice(keys, size=int(rng.integers(1, 6)), replace=False)):
        if key == "file":
            out[key] = FILES[int(rng.integers(len(FILES)))]
        elif key == "xyz" and rng.random() < 0.7:
            out[key] = [float(x) for x in rng.normal([2.0, 0.0, 5.0], 1.0)]
        elif key in ("mass", "density") and rng.random() < 0.7:
            out[key] = float(rng.uniform(0.1, 3000.0))
        elif key == "size" and rng.random() < 0.7:
            out[key] = [float(x) for x in rng.uniform(0.01, 0.5, size=int(rng.integers(1, 4)))]
        else:
            out[key] = value(rng)
    return out


def test_random_contact_laws_and_objects_load_or_fail_with_one_line(tmp_path):
    """``scene.contact`` and ``scene.objects`` with random and hostile values: each loads and
    steps with a finite state, or is one ``ConfigError`` line naming the file."""
    from uvms_sim.simulator import Simulator

    rng = np.random.default_rng(381)
    trimesh.creation.box(extents=(0.2, 0.2, 0.2)).export(tmp_path / "rock.stl")
    trimesh.creation.icosphere(subdivisions=1, radius=0.1).export(tmp_path / "rock.obj")
    (tmp_path / "garbage.stl").write_bytes(bytes(rng.integers(0, 256, size=2000, dtype=np.uint8)))
    trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]], process=False).export(
        tmp_path / "flat.stl"
    )
    base = yaml.safe_load(HEAVY)
    loaded = refused = 0
    for k in range(60 * SCALE):
        top = dict(base)
        scene: dict = {"seabed": {"type": "plane", "depth": float(rng.uniform(5.5, 20.0))}}
        if rng.random() < 0.7:
            scene["contact"] = contact_law(rng) if rng.random() < 0.9 else value(rng)
        if rng.random() < 0.8:
            scene["objects"] = [scene_object(rng, i) for i in range(int(rng.integers(0, 4)))]
            if rng.random() < 0.05:
                scene["objects"] = value(rng)
        top["scene"] = scene
        path = tmp_path / f"c{k % 7}.yaml"
        path.write_text(yaml.safe_dump(top))
        try:
            sim = Simulator.from_system(load(path))
        except ConfigError as exc:
            text = str(exc)
            assert path.name in text and "\n" not in text.strip() and "Traceback" not in text, text
            refused += 1
            continue
        loaded += 1
        sim.advance(0.001, 50)
        assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.state.v))
    assert loaded > 5 and refused > 5, (loaded, refused)
