"""Reading the working water of a description: ``environment.waves`` (``hydro.waves``) and the
top-level ``tethers`` (``tether.properties.TetherSpec``), every value checked where it is written
(one ``ConfigError`` naming the file, the line, the key and what was expected)."""

from __future__ import annotations

import math

import numpy as np

from ..hydro.environment import Environment
from ..hydro.waves import WaveField, regular, sea_state, spectrum_sea
from ..spatial import Array
from ..tether.properties import FATHOM, PRESETS, PROPERTIES, TetherSpec
from .kinematics import placements
from .model import Model
from .yaml_source import Cursor

WAVE_KINDS = {
    "regular": (("height", "period"), ("phase",)),
    "jonswap": (("significant_height", "peak_period"), ("gamma", "components", "band", "seed")),
    "pierson_moskowitz": (("significant_height", "peak_period"), ("components", "band", "seed")),
    "spectrum": (("frequencies", "density"), ("seed",)),
}
WAVE_COMMON = ("type", "direction", "depth", "description")
TETHER_KEYS = ("type", "segments", "reel", *PROPERTIES, "description")
REEL_KEYS = ("speed", "min_length", "max_length", "max_tension")


def read_waves(cur: Cursor, env: Environment) -> WaveField:
    """``environment.waves``: a regular (Airy) wave or an irregular sea (see docs/config.md);
    a wave beyond breaking, a spectrum with a NaN or waves without a free surface are errors."""
    every = {k for req, opt in WAVE_KINDS.values() for k in (*req, *opt)}
    cur.mapping(("type",), (*sorted(every), *WAVE_COMMON))
    kind = cur["type"].choice(sorted(WAVE_KINDS))
    req, opt = WAVE_KINDS[kind]
    cur.mapping(("type", *req), (*opt, *WAVE_COMMON))
    if env.surface is None:
        raise cur.error("waves need a free surface (environment.surface is null)")
    direction = cur["direction"].number() if "direction" in cur else 0.0
    depth = cur["depth"].number(positive=True) if "depth" in cur else math.inf
    g = env.gravity
    if not g > 0.0:
        raise cur.error("waves need gravity > 0")
    spec = tuple((k, _plain(c.value)) for k, c in cur.items() if k != "description")
    seed = cur["seed"].integer(lo=0) if "seed" in cur else 0
    try:
        if kind == "regular":
            w = regular(cur["height"].number(lo=0.0), cur["period"].number(positive=True), direction,
                        cur["phase"].number() if "phase" in cur else 0.0, g, depth)  # fmt: skip
            return WaveField(w.amplitude, w.omega, w.direction, w.phase, g, depth, spec)
        if kind == "spectrum":
            n = len(cur["frequencies"].value) if isinstance(cur["frequencies"].value, list) else -1
            if n < 1:
                raise cur["frequencies"].error("expected a list of frequencies (rad/s)")
            omega, density = cur["frequencies"].vector(n), cur["density"].vector(n)
            return sea_state(density, omega, direction, seed, g, depth, spec)
        band = tuple(cur["band"].vector(2)) if "band" in cur else (0.5, 3.0)
        return spectrum_sea(
            kind,
            cur["significant_height"].number(lo=0.0),
            cur["peak_period"].number(positive=True),
            cur["gamma"].number() if "gamma" in cur else 3.3,
            cur["components"].integer(lo=1) if "components" in cur else 64,
            (float(band[0]), float(band[1])),
            direction,
            seed,
            g,
            depth,
            spec,
        )
    except ValueError as exc:
        raise cur.error(str(exc)) from None


def _plain(value):
    """A YAML value as plain Python (lists and mappings of numbers and text)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def read_tethers(cur: Cursor, model: Model, q0: Array) -> tuple[TetherSpec, ...]:
    """The top-level ``tethers`` list: each from ``anchor`` (world NED) to ``position`` on
    ``link``; a tether shorter than the distance between them at the initial pose, or outside
    its reel's lengths, is an error."""
    out: list[TetherSpec] = []
    names: set[str] = set()
    data = model.create_data()
    placements(model, data, q0)
    links = {b.name for b in model.bodies}
    for c in cur.seq("a list of tethers"):
        c.mapping(("name", "link", "position", "anchor", "length"), TETHER_KEYS)
        name = c["name"].text()
        if name in names:
            raise c["name"].error(f"tether name {name!r} is used twice")
        names.add(name)
        link = c["link"].text()
        if link not in links:
            raise c["link"].error(f"no link named {link!r}; links are {sorted(links)}")
        props = dict(PRESETS[c["type"].choice(sorted(PRESETS))] if "type" in c else FATHOM)
        for key in PROPERTIES:
            if key in c:
                props[key] = c[key].number(lo=0.0)
        for key in ("diameter", "mass_per_length", "breaking_strength", "axial_stiffness"):
            if not props[key] > 0.0:
                raise c[key].error(f"expected a number > 0, got {props[key]}")
        reel: dict[str, float] = {}
        if "reel" in c:
            r = c["reel"].mapping(optional=REEL_KEYS)
            reel = {k: r[k].number(positive=True) for k in REEL_KEYS if k in r}
        length = c["length"].number(positive=True)
        position, anchor = c["position"].vector(3), c["anchor"].vector(3)
        b = model.body_index(link)
        end = data.p_world[b] + data.R_world[b] @ position
        distance = float(np.linalg.norm(end - anchor))
        if length < distance:
            raise c["length"].error(
                f"the tether ({length:g} m) is shorter than the {distance:.4g} m from its anchor to "
                f"{link}'s attachment point at the initial pose"
            )
        segments = c["segments"].integer(lo=1) if "segments" in c else 50
        kwargs = {k if k != "speed" else "reel_speed": v for k, v in reel.items()}
        kwargs.setdefault("max_length", max(300.0, length))
        kwargs.setdefault("min_length", min(1.0, length))
        kwargs.setdefault("max_tension", 0.5 * props["breaking_strength"])
        try:
            out.append(TetherSpec(name, link, position, anchor, length, segments, props, **kwargs))
        except ValueError as exc:
            raise c.error(str(exc)) from None
    return tuple(out)
