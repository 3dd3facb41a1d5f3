"""Held-out error of an identified model: what the fit is worth on data it did not see.

With several recordings each one is left out in turn: the parameters are fitted on the others
and the fitted and the original model are both validated, window by window
(``windows.validate``), on the one left out. With a single recording the fit uses its first
two thirds and the validation its last third. A fitted command delay is applied to the
held-out recording's commands for the fitted model only (the original model has none).

What to fit is chosen by that error (``choose``): the damping alone, the damping with each
asked group (thrust, buoyancy, lag, delay) alone, and with all of them are each held out, and
the one with the least held-out speed DTW (the validation metric, ``windows``) is the result;
when none beats the described model on held-out data, the described parameters are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..model.system import System
from .bag import BagContents, time_slice
from .identified import apply_identified
from .identify import DELAY, Prepared, identify, prepare
from .windows import Run, run_from_recording, summary, validate


@dataclass
class HeldOut:
    original: dict[str, float]  # windows.summary over all held-out windows
    fitted: dict[str, float]
    folds: int
    how: str


def held_out(
    system: System,
    bags: list[BagContents],
    names: list[str],
    seconds: float = 12.0,
    impose: tuple[str, ...] = (),
    prepared: Prepared | None = None,
    **fit,
) -> HeldOut:
    """The original and the fitted model's windowed errors on held-out data (module doc);
    ``fit`` are ``identify``'s keyword arguments (its bootstrap is not run here);
    ``prepared``: ``identify.prepare`` of all ``bags`` (with ``fit``'s axes), shared by the
    folds (computed here if not given)."""
    fit = {**fit, "bootstrap": 0}
    axes, window = fit.pop("axes", (0, 1, 2, 5)), fit.pop("window", 5)
    folds: list[tuple[list[BagContents], Prepared | None, BagContents, str]] = []
    if len(bags) >= 2:
        if prepared is None:
            prepared = prepare(system, bags, axes, window, names)
        for k, bag in enumerate(bags):
            keep = [j for j in range(len(bags)) if j != k]
            folds.append(([bags[j] for j in keep], prepared.subset(keep), bag, names[k]))
        how = f"each of the {len(bags)} recordings left out in turn"
    else:
        t = np.asarray(bags[0].odometry.t)
        split = float(t[0] + (t[-1] - t[0]) * 2.0 / 3.0)
        train = [time_slice(bags[0], -np.inf, split)]
        folds.append((train, None, time_slice(bags[0], split, np.inf), names[0]))
        how = f"fitted on the first two thirds of {names[0]}, validated on the last third"
    original, fitted = [], []
    for train, part, test, name in folds:
        values = identify(system, train, axes=axes, window=window, prepared=part, **fit)
        run = run_from_recording(name, test)
        original += validate(system, [run], seconds, impose=impose)
        delay = values[DELAY][0] if DELAY in values.accepted() else 0.0
        fitted += validate(apply_identified(system, values), [_delayed(run, delay)], seconds, impose=impose)
    return HeldOut(summary(original), summary(fitted), len(folds), how)


def _delayed(run: Run, delay: float) -> Run:
    return replace(run, t_cmd=run.t_cmd + delay) if delay else run


GROUP_OPTIONS = ("thrust", "buoyancy", "lag", "delay")  # identify's keyword for each group


@dataclass
class Choice:
    """The held-out comparison of what could be fitted: each candidate (the groups fitted
    besides the damping) with its held-out errors, and the one chosen (None: the described
    parameters, which no candidate beats)."""

    candidates: list[tuple[tuple[str, ...], HeldOut]]
    chosen: tuple[str, ...] | None
    score: str = "speed_dtw"
    prepared: Prepared | None = None  # of all the recordings: the final fit can use it

    def verdict(self) -> str:
        original = self.candidates[0][1].original[self.score]
        if self.chosen is None:
            best = min(c[1].fitted[self.score] for c in self.candidates)
            return (
                f"no fit beats the described parameters on held-out data (best held-out speed DTW "
                f"{best:.3f} against {original:.3f} m/s described): the described parameters are kept"
            )
        fitted = dict(self.candidates)[self.chosen].fitted[self.score]
        return (
            f"chosen by held-out speed DTW: {_label(self.chosen)} ({fitted:.3f} against {original:.3f} m/s "
            "described)"
        )


def _label(groups: tuple[str, ...]) -> str:
    return "damping" + "".join(f" + {g}" for g in groups)


def candidates(groups: tuple[str, ...]) -> list[tuple[str, ...]]:
    """What is held out for ``groups`` asked: the damping alone, with each group alone, and
    with all of them (in that order, without repeats)."""
    out: list[tuple[str, ...]] = [()]
    for c in [*((g,) for g in groups), tuple(groups)]:
        if c not in out:
            out.append(c)
    return out


def choose(
    system: System,
    bags: list[BagContents],
    names: list[str],
    groups: tuple[str, ...],
    seconds: float = 12.0,
    impose: tuple[str, ...] = (),
    progress=None,
    **fit,
) -> Choice:
    """Each candidate of ``candidates(groups)`` held out (``held_out``; ``fit`` are
    ``identify``'s other keyword arguments), and the one with the least held-out speed DTW if
    it beats the described model's, else None (module doc). ``progress(label, HeldOut)`` is
    called after each."""
    bad = [g for g in groups if g not in GROUP_OPTIONS]
    if bad:
        raise ValueError(f"fit groups {bad} not among {list(GROUP_OPTIONS)}")
    rows = []
    if len(bags) >= 2:  # the folds' recordings, computed once for every candidate
        prepared = prepare(system, bags, fit.get("axes", (0, 1, 2, 5)), fit.get("window", 5), names)
    else:
        prepared = None
    for c in candidates(groups):
        options = {**fit, **{g: g in c for g in GROUP_OPTIONS}}
        check = held_out(system, bags, names, seconds, impose, prepared, **options)
        if not check.original["windows"]:
            raise ValueError(
                f"the held-out data ({check.how}) hold no whole {seconds:g} s window to choose the fit by: "
                "use a shorter --window or longer recordings"
            )
        rows.append((c, check))
        if progress is not None:
            progress(_label(c), check)
    best = min(rows, key=lambda r: r[1].fitted["speed_dtw"])
    chosen = best[0] if best[1].fitted["speed_dtw"] < best[1].original["speed_dtw"] else None
    return Choice(rows, chosen, prepared=prepared)
