"""Held-out error of an identified model: what the fit is worth on data it did not see.

With several recordings each one is left out in turn: the parameters are fitted on the others
and the fitted and the original model are both validated, window by window
(``windows.validate``), on the one left out. With a single recording the fit uses its first
two thirds and the validation its last third. A fitted command delay is applied to the
held-out recording's commands for the fitted model only (the original model has none).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..model.system import System
from .bag import BagContents, time_slice
from .identified import apply_identified
from .identify import DELAY, identify
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
    **fit,
) -> HeldOut:
    """The original and the fitted model's windowed errors on held-out data (module doc);
    ``fit`` are ``identify``'s keyword arguments (its bootstrap is not run here)."""
    fit = {**fit, "bootstrap": 0}
    folds: list[tuple[list[BagContents], BagContents, str]] = []
    if len(bags) >= 2:
        for k, bag in enumerate(bags):
            folds.append(([b for j, b in enumerate(bags) if j != k], bag, names[k]))
        how = f"each of the {len(bags)} recordings left out in turn"
    else:
        t = np.asarray(bags[0].odometry.t)
        split = float(t[0] + (t[-1] - t[0]) * 2.0 / 3.0)
        folds.append(([time_slice(bags[0], -np.inf, split)], time_slice(bags[0], split, np.inf), names[0]))
        how = f"fitted on the first two thirds of {names[0]}, validated on the last third"
    original, fitted = [], []
    for train, test, name in folds:
        values = identify(system, train, **fit)
        run = run_from_recording(name, test)
        original += validate(system, [run], seconds, impose=impose)
        delay = values[DELAY][0] if DELAY in values else 0.0
        fitted += validate(apply_identified(system, values), [_delayed(run, delay)], seconds, impose=impose)
    return HeldOut(summary(original), summary(fitted), len(folds), how)


def _delayed(run: Run, delay: float) -> Run:
    return replace(run, t_cmd=run.t_cmd + delay) if delay else run
