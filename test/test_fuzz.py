"""Malformed, huge and hostile input at the boundaries: thousands of cases per surface, seeded,
fast enough for every CI run (``FUZZ_SCALE=10 pytest test/test_fuzz.py`` runs ten times as
many). What must hold: no exception other than the documented one, nothing non-finite out.

Surfaces here: description files (``load`` / ``uvms-sim check``), the SITL JSON backend's UDP
port, the MAVLink HIL link. The node's topics and parameters are fuzzed in ``test_node.py``.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import socket
import struct
import zlib
from pathlib import Path

os.environ.setdefault("MAVLINK20", "1")  # before pymavlink chooses its dialect

import numpy as np
import pytest
import yaml
from pymavlink import mavutil

from uvms_sim.hil.mavlink_hil import MavlinkHil
from uvms_sim.hil.sitl_json import MAGIC_16, MAGIC_32, SitlJsonBackend, encode_servo_packet
from uvms_sim.model import ConfigError, load
from uvms_sim.model.yaml_source import read_yaml
from uvms_sim.simulator import Simulator

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
NASTY = [None, True, -1, 0, 1e300, -1e300, float("nan"), float("inf"), "x", "", [], [1], [1, 2, 3], {},
         {"a": 1}, [[1, 2], [3]], 2**70, "1e999", [None] * 6, [float("nan")] * 3]  # fmt: skip


def _paths(node, prefix=()):
    """Every (path, value) of a nested YAML structure."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _mutate(doc, rng):
    doc = copy.deepcopy(doc)
    paths = [p for p, _ in _paths(doc) if p]
    for _ in range(1 if rng.random() < 0.7 else int(rng.integers(2, 4))):
        path = paths[int(rng.integers(len(paths)))]
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            last = path[-1]
            roll = rng.random()
            value = parent[last]
            if isinstance(value, int | float) and not isinstance(value, bool) and roll < 0.5:
                parent[last] = float(
                    float(value or 1.0) * 10.0 ** rng.uniform(-6, 6) * (-1.0 if rng.random() < 0.2 else 1.0)
                )
            elif roll < 0.15 and isinstance(parent, dict):
                del parent[last]
            elif roll < 0.25 and isinstance(parent, dict):
                parent[f"{last}_typo"] = parent.pop(last)
            else:
                parent[last] = copy.deepcopy(NASTY[int(rng.integers(len(NASTY)))])
        except (KeyError, IndexError, TypeError):
            continue
    return doc


@pytest.mark.parametrize("config", ["bluerov2_heavy", "bluerov2_light_arm", "bluerov_pair_seed001"])
def test_descriptions_either_load_and_run_or_say_what_is_wrong(tmp_path, config):
    """Mutated shipped descriptions (numbers scaled by up to 1e±6 and negated, values replaced
    by wrong types, NaN, 1e300, huge ints, keys deleted or misspelt): each one loads and steps,
    or raises ConfigError; never another exception, never a non-finite state after a step that
    did not raise."""
    base = json.loads(json.dumps(read_yaml(f"config/{config}.yaml")))  # YAML 1.2 numbers, plain types
    rng = np.random.default_rng(zlib.crc32(config.encode()))
    counts = {"loaded": 0, "refused": 0}
    for included in Path("config").glob("*.yaml"):  # what a description includes sits beside it
        shutil.copy(included, tmp_path)
    path = tmp_path / f"fuzzed_{config}.yaml"
    for _ in range(300 * SCALE):
        path.write_text(yaml.safe_dump(_mutate(base, rng)))
        try:
            system = load(path)
        except ConfigError as exc:
            counts["refused"] += 1
            counts["last"] = str(exc)
            continue
        counts["loaded"] += 1
        sim = Simulator.from_system(system)
        try:
            sim.step(0.01)
        except ValueError:  # a documented refusal (NonFiniteStateError is one)
            continue
        assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.state.v))
    assert counts["refused"] > 100 and counts["loaded"] > 10, counts


def test_hostile_yaml_files_are_config_errors(tmp_path):
    """Billion laughs, deep nesting, binary, unhashable keys, empty and huge files."""
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join(['*' + chr(97 + k)] * 10)}]\n" for k in range(8)
    ) + "vehicles: *i\n"  # fmt: skip
    cases = {
        "laughs.yaml": laughs,
        "deep.yaml": "a: " + "[" * 5000 + "]" * 5000,
        "binary.yaml": b"\xff\xfe\x00\x01" * 100,
        "keys.yaml": "{[1, 2]: 3}",
        "empty.yaml": "",
        "scalar.yaml": "42",
        "huge.yaml": "vehicles:\n" + "  - {name: v, links: []}\n" * 20000,
    }
    for name, text in cases.items():
        p = tmp_path / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        with pytest.raises(ConfigError):
            load(p)


def test_sitl_udp_survives_random_and_mutated_datagrams():
    """Random bytes, truncations, extensions and bit flips of valid servo packets, every
    frame count and rate: the backend answers only well-formed frames, never raises, and every
    answer is finite JSON text."""
    sim = Simulator.from_system(load("config/bluerov2_heavy.yaml"))
    backend = SitlJsonBackend(sim, port=0)
    rng = np.random.default_rng(16)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.bind(("127.0.0.1", 0))
    sender.settimeout(0.5)
    answered = 0
    try:
        for k in range(2000 * SCALE):
            kind = k % 5
            good = encode_servo_packet(int(rng.integers(1, 65536)), int(rng.integers(0, 2**32)),
                                       rng.integers(0, 65536, size=16).tolist())  # fmt: skip
            if kind == 0:
                data = rng.bytes(int(rng.integers(0, 300)))
            elif kind == 1:
                data = good[: int(rng.integers(0, len(good)))]
            elif kind == 2:
                data = good + rng.bytes(int(rng.integers(1, 40)))
            elif kind == 3:
                flip = bytearray(good)
                flip[int(rng.integers(len(flip)))] ^= 1 << int(rng.integers(8))
                data = bytes(flip)
            else:
                data = struct.pack("<HHI32H", MAGIC_32 if rng.random() < 0.5 else MAGIC_16, 400, k,
                                   *rng.integers(0, 65536, size=32).tolist())  # fmt: skip
            sender.sendto(data, ("127.0.0.1", backend.port))
            if backend.serve_once(0.5):
                reply = sender.recv(65535)
                answered += 1
                assert reply.startswith(b'\n{"timestamp":') and b"nan" not in reply and b"inf" not in reply
        assert np.all(np.isfinite(sim.state.q))
        assert answered > 100 and sum(backend.counters.dropped.values()) > 500
    finally:
        sender.close()
        backend.close()


def test_mavlink_hil_survives_random_bytes_and_random_messages():
    """Random bytes and well-formed actuator messages with random fields (NaN, huge, negative
    PWM) on the HIL link: the bridge keeps stepping, the state stays finite, the PWM stays in
    range."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    bridge = MavlinkHil(Simulator.from_system(load("config/bluerov2_heavy.yaml")), f"udpin:127.0.0.1:{port}")
    board = mavutil.mavlink_connection(f"udpout:127.0.0.1:{port}", source_system=1, source_component=1)
    raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rng = np.random.default_rng(18)
    specials = [float("nan"), float("inf"), -1e30, 1e30, 0.0, 1.0, -1.0, 7.5]
    try:
        for k in range(600 * SCALE):
            if k % 3 == 0:
                raw.sendto(rng.bytes(int(rng.integers(1, 280))), ("127.0.0.1", port))
            elif k % 3 == 1:
                controls = [specials[int(i)] for i in rng.integers(len(specials), size=16)]
                stamp, mode, flags = (
                    int(rng.integers(0, 2**63)),
                    int(rng.integers(0, 256)),
                    int(rng.integers(0, 2**63)),
                )
                board.mav.hil_actuator_controls_send(stamp, controls, mode, flags)
            else:
                board.mav.servo_output_raw_send(int(rng.integers(0, 2**32)), int(rng.integers(0, 256)),
                                                *rng.integers(0, 65536, size=16).tolist())  # fmt: skip
            bridge.step(0.004)
        pwm = bridge.sim.thrusters.pwm
        assert np.all(np.isfinite(bridge.sim.state.q)) and np.all((pwm >= 1100) & (pwm <= 1900))
        assert bridge.dropped > 10
    finally:
        raw.close()
        board.close()
        bridge.close()
