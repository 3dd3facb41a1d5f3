"""Sweep specs under mutation: thousands of specs derived from a full Monte-Carlo and a full
identification spec (values replaced by hostile ones, scaled by up to 10^6, keys dropped,
misspelt, moved to the other kind of sweep, added), and random YAML text (``FUZZ_SCALE`` times
as many). What must hold: ``uvms-sim sweep`` refuses a spec in one line naming the spec file
(and, where there is one, the line and the key), before Ray starts; an accepted Monte-Carlo
spec's samples run (its first sample here, shortened to 0.3 s of simulated time) to a row of
finite numbers, or one that says the state did not stay finite."""

from __future__ import annotations

import copy
import math
import os
import re

import numpy as np
import yaml
from test_fuzz import NASTY, _mutate

from uvms_sim.cli import main
from uvms_sim.model import ConfigError
from uvms_sim.sweep import read_spec

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
MONTE_CARLO = {
    "kind": "monte_carlo", "description": "bluerov2", "samples": 20, "seed": 3, "duration": 5.0, "dt": 0.01,
    "command": {"forward": 0.3, "lateral": -0.2, "throttle": 0.1, "yaw": 0.05},
    "vary": {"surge": [-0.2, 0.2], "sway": [-0.1, 0.1], "heave": [0.0, 0.1], "current_north": [-0.3, 0.3],
             "current_east": [-0.1, 0.1], "current_down": [0.0, 0.05], "damping_scale": [0.8, 1.2],
             "thrust_scale": [0.8, 1.0], "buoyancy_offset": [-2.0, 2.0], "thruster_failure": 0.1},
}  # fmt: skip
IDENTIFICATION = {
    "kind": "identification", "description": "bluerov2_heavy", "seed": 1,
    "recordings": ["dive1.BIN", "runs/*.csv.gz"], "fit": ["thrust", "buoyancy", "lag", "delay"],
    "axes": ["u", "v", "w", "r"], "reversed_motors": [1, 2, 5, 8],
}  # fmt: skip
OTHER_KEYS = {key: value for kind in (MONTE_CARLO, IDENTIFICATION) for key, value in kind.items()}


def mutated(rng: np.random.Generator) -> dict | list | str:
    base = MONTE_CARLO if rng.random() < 0.6 else IDENTIFICATION
    roll = rng.random()
    if roll < 0.6:
        return _mutate(base, rng)
    doc = copy.deepcopy(base)
    if roll < 0.75:  # a key of the other kind, or of none
        names = [*OTHER_KEYS, "colour", "Samples", "", "kind "]
        key = names[int(rng.integers(len(names)))]
        doc[key] = copy.deepcopy(OTHER_KEYS.get(key, NASTY[int(rng.integers(len(NASTY)))]))
    elif roll < 0.85:  # each number scaled by a power of ten
        for section in (doc, doc.get("vary", {}), doc.get("command", {})):
            for key, value in section.items():
                if isinstance(value, float | int) and not isinstance(value, bool) and rng.random() < 0.5:
                    section[key] = value * 10.0 ** int(rng.integers(-12, 13))
    elif roll < 0.95:  # names of fits, axes and motors
        doc = copy.deepcopy(IDENTIFICATION)
        fits = ["thrust", "lag", "drag", "", "Thrust", "delay"]
        doc["fit"] = [fits[int(k)] for k in rng.integers(len(fits), size=int(rng.integers(0, 4)))]
        doc["axes"] = ["uvwpqrxyz"[int(k)] for k in rng.integers(9, size=int(rng.integers(0, 4)))]
        doc["reversed_motors"] = [int(m) for m in rng.integers(-1, 11, int(rng.integers(0, 5)))]
    else:
        doc = base["kind"] if rng.random() < 0.5 else [base]
    return doc


def test_mutated_specs_are_refused_in_one_line_naming_the_file_or_run(tmp_path, capsys):
    from uvms_sim.sweep import monte_carlo_sample

    (tmp_path / "dive1.BIN").write_bytes(b"\0" * 64)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.csv.gz").write_bytes(b"\0" * 64)
    rng = np.random.default_rng(17)
    refused, accepted, ran, diverged, via_cli = 0, 0, 0, 0, 0
    for i in range(2500 * SCALE):
        path = tmp_path / f"spec{i % 7}.yaml"
        doc = mutated(rng)
        path.write_text(yaml.safe_dump(doc))
        try:
            spec = read_spec(path)
        except ConfigError as exc:
            message = str(exc)
            assert message.startswith(f"{path}:") and "\n" not in message, message
            named = re.match(r"(?::\d+)?: (.+?): ", message[len(str(path)) :])
            assert named, message
            top = named.group(1).split(".")[0].split("[")[0]
            assert top == "<top>" or (isinstance(doc, dict) and top in map(str, doc)), message
            refused += 1
            if i % 50 == 0:  # the command line says the same in one line, exit 2
                assert main(["sweep", str(path)]) == 2
                err = capsys.readouterr().err
                assert err.count("\n") == 1 and str(path) in err, err
                via_cli += 1
            continue
        accepted += 1
        if spec["kind"] == "monte_carlo" and ran < 40:
            short = {**spec, "duration": min(spec["duration"], 0.3), "dt": max(spec["dt"], 0.001)}
            row = monte_carlo_sample(short, int(rng.integers(spec["samples"])))
            numbers = [v for v in row.values() if isinstance(v, float)]
            assert row["finite"] == all(math.isfinite(v) for v in numbers) or not row["finite"], row
            ran += 1
            diverged += not row["finite"]
    print(f"sweep specs: {refused} refused ({via_cli} through the command line), {accepted} accepted, "
          f"{ran} Monte-Carlo samples run ({diverged} not finite)")  # fmt: skip
    assert refused > 1000 and accepted > 100 and ran == 40


def test_random_text_as_a_spec_is_refused_in_one_line(tmp_path):
    """Bytes and YAML that are not a spec: a ConfigError naming the file, never another error."""
    rng = np.random.default_rng(23)
    pieces = [b"kind: ", b"monte_carlo", b"\n", b"  ", b"- ", b"{", b"}", b"[", b"]", b": ", b"&a ", b"*a ",
              b"!!python/object:os.system ", b"\xff\xfe", b"\x00", b"'", b'"', b"samples: 1e999", b"# ",
              b"%YAML"]  # fmt: skip
    for i in range(1500 * SCALE):
        path = tmp_path / f"text{i % 5}.yaml"
        path.write_bytes(
            b"".join(pieces[int(k)] for k in rng.integers(len(pieces), size=int(rng.integers(1, 30))))
        )
        try:
            read_spec(path)
        except ConfigError as exc:
            assert str(exc).startswith(str(path)) and "\n" not in str(exc), exc
