"""The Gymnasium environments under hostile callers: thousands of actions (wrong shapes and
types, NaN, infinities, huge and subnormal numbers, lists, scalars, None, dicts, complex and
object arrays), constructor arguments and reset seeds and options, for ``UvmsEnv`` and
``UvmsVectorEnv`` (``FUZZ_SCALE`` times as many). What must hold: an argument is accepted or
refused with a ``ValueError`` naming it; an accepted step returns a finite observation inside
the observation space, a finite reward and boolean flags; the caller's action is never
written."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from uvms_sim.gym import UvmsEnv, UvmsVectorEnv

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
HOSTILE_NUMBERS = [0, -1, 1, 0.0, -0.0, 1e-320, 5e-324, 1e300, -1e300, math.nan, math.inf, -math.inf,
                   2**70, -(2**70), 1.5, True, False, "1", "", None, [], [1.0], (0.01,), {}, b"x",
                   complex(1, 1), np.float32(0.01), np.int64(2), np.nan, object()]  # fmt: skip
ARGUMENTS = {
    "num_envs": [1, 2, 3, *HOSTILE_NUMBERS],
    "control_dt": [0.01, 0.02, 1.0, 1.0001, *HOSTILE_NUMBERS],
    "substeps": [1, 2, 1000, 1001, *HOSTILE_NUMBERS],
    "max_steps": [1, 5, 10**9, 10**9 + 1, *HOSTILE_NUMBERS],
    "current": [None, [0.1, 0, 0], [10.0, -10.0, 0.0], [10.01, 0, 0], [math.nan, 0, 0], [0, 0], [[0, 0, 0]],
                ["a", 0, 0], [1e300, 0, 0], np.zeros(3), np.zeros(3, dtype=complex), 0.1, "north", {}],
    "seed": [None, 0, 1, 2**63, 2**200, -1, 1.0, "0", [0], np.int32(4), True],
    "task": ["station_keeping", "waypoint", "depth_hold", "dance", "", None, 3, ["waypoint"]],
    "action_type": ["normalized", "pwm", "volts", None, 1],
    "observation": ["truth", "sensors", "noise", None, 0],
    "description": ["bluerov2_heavy", "bluerov2", "bluerov2_light_arm", "no_such_robot", "x.yaml", None, 5,
                    "walker"],
}  # fmt: skip
NAMES = {"num_envs", "control_dt", "substeps", "max_steps", "current", "seed", "task", "action_type",
         "observation", "description"}  # fmt: skip


def check_step(env, out, n: int | None) -> None:
    """An accepted step: finite observation within the space, finite reward, boolean flags."""
    obs, reward, terminated, truncated, info = out
    space = env.single_observation_space if n else env.observation_space
    rows = obs if n else obs[None, :]
    assert rows.dtype == np.float32 and np.all(np.isfinite(rows))
    assert all(space.contains(r) for r in rows)
    rewards = np.atleast_1d(np.asarray(reward, dtype=float))
    assert np.all(np.isfinite(rewards)) and rewards.shape == ((n,) if n else (1,))
    if n:
        assert terminated.dtype == bool and truncated.dtype == bool and info["invalid_action"].shape == (n,)
    else:
        assert isinstance(terminated, bool) and isinstance(truncated, bool) and isinstance(reward, float)


def hostile_action(rng: np.random.Generator, shape: tuple[int, ...], low, high):
    """An action: mostly of the right shape with hostile numbers, sometimes of the wrong kind."""
    kind = rng.integers(12)
    if kind == 0:
        odd = [
            None,
            {},
            {"thrust": 1},
            0.5,
            np.float64(0.1),
            "0.1",
            b"\x00",
            (),
            [[]],
            object(),
            np.array(1.0),
        ]
        return [*odd, np.zeros(0)][int(rng.integers(12))]
    if kind == 1:  # a wrong shape
        wrong = list(shape)
        wrong[int(rng.integers(len(wrong)))] += int(rng.choice([-1, 1, 5]))
        if rng.random() < 0.3:
            wrong.append(1)
        return np.zeros([max(w, 0) for w in wrong])
    if kind == 2:  # another element type
        dtype = [complex, object, bool, str, np.float16, np.int8, np.uint64, np.int64][int(rng.integers(8))]
        return np.zeros(shape).astype(dtype)
    a = rng.uniform(low, high, shape)
    if kind in (3, 4):  # hostile numbers in some entries
        pool = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 5e-324, -0.0, 1e6, -1e6])
        mask = rng.random(shape) < 0.3
        a[mask] = rng.choice(pool, int(mask.sum()))
    if kind == 5:
        return a.tolist()  # a list of numbers is an action too
    if kind == 6:
        return a.astype(np.float32)
    if kind == 7:
        return np.rint(a).astype(np.int64)  # integers are numbers too
    return a


@pytest.mark.parametrize(
    "vector, kwargs",
    [
        (False, {"description": "bluerov2_heavy"}),
        (False, {"description": "bluerov2_light_arm", "task": "waypoint"}),
        (
            False,
            {"description": "bluerov2", "action_type": "pwm", "observation": "sensors", "task": "depth_hold"},
        ),
        (True, {"num_envs": 5, "description": "bluerov2_heavy"}),
        (
            True,
            {"num_envs": 3, "description": "bluerov2_light_arm", "action_type": "pwm", "task": "depth_hold"},
        ),
    ],
)
def test_hostile_actions_are_refused_or_stepped_finitely_and_never_written(vector, kwargs):
    rng = np.random.default_rng(11)
    env = (UvmsVectorEnv if vector else UvmsEnv)(seed=1, **kwargs)
    env.reset(seed=1)
    n = kwargs.get("num_envs")
    space = env.action_space
    refused = stepped = 0
    for _ in range(600 * SCALE):
        action = hostile_action(rng, space.shape, space.low, space.high)
        copy = action.copy() if isinstance(action, np.ndarray) else None
        try:
            out = env.step(action)
        except ValueError as exc:
            assert "action" in str(exc), exc
            refused += 1
        else:
            check_step(env, out, n)
            stepped += 1
            if not vector and (out[2] or out[3]):
                env.reset()
        if copy is not None:  # the caller's array, bit for bit (NaN included)
            assert copy.dtype == action.dtype and copy.tobytes() == action.tobytes()
    assert refused > 50 and stepped > 300
    print(f"{type(env).__name__} {kwargs}: {refused} refused, {stepped} stepped")


def test_hostile_constructor_arguments_are_refused_naming_the_argument():
    """Random combinations of good and hostile constructor arguments: each is a ValueError
    whose message names one of the arguments, or an environment that steps finitely."""
    rng = np.random.default_rng(5)
    built = refused = 0
    for i in range(1200 * SCALE):
        vector = bool(i % 2)
        kwargs = {}
        for name, pool in ARGUMENTS.items():
            if name == "num_envs" and not vector:
                continue
            if rng.random() < 0.35:  # hostile (or good) for this argument, the default otherwise
                kwargs[name] = pool[int(rng.integers(len(pool)))]
        try:
            env = (UvmsVectorEnv if vector else UvmsEnv)(**kwargs)
        except ValueError as exc:
            message = str(exc)
            named = NAMES | {"x.yaml", "no_such_robot", "walker"}
            assert "\n" not in message and any(name in message for name in named), message
            refused += 1
            continue
        built += 1
        env.reset(seed=int(rng.integers(1000)))
        zero = np.zeros(env.action_space.shape)
        for _ in range(3):
            check_step(env, env.step(zero), env.num_envs if vector else None)
    assert built > 20 and refused > 500
    print(f"constructor arguments: {built} built, {refused} refused")


def test_hostile_reset_seeds_and_options():
    """Seeds and options of every kind: a ValueError naming ``seed`` or ``options``, or a reset
    (the same seed, the same first observation)."""
    rng = np.random.default_rng(9)
    seeds = [None, 0, 1, 2**32, 2**63 - 1, 2**64, 2**200, -1, -(2**70), 0.0, 1.5, math.nan, "3", b"3", [1, 2],
             (1,), {}, True, np.int64(7), np.uint8(3), np.float64(2.0), np.array([1, 2])]  # fmt: skip
    options = [None, {}, {"a": 1}, [], "x", 0, {"seed": 1}, {None: None}]
    accepted = refused = 0
    for env in (UvmsEnv(seed=0), UvmsVectorEnv(num_envs=4, seed=0)):
        for _ in range(700 * SCALE):
            seed = seeds[int(rng.integers(len(seeds)))]
            option = options[int(rng.integers(len(options)))]
            try:
                first, _ = env.reset(seed=seed, options=option)
            except ValueError as exc:
                assert "seed" in str(exc) or "options" in str(exc), exc
                refused += 1
                continue
            accepted += 1
            assert np.all(np.isfinite(first))
            if seed is not None:
                again, _ = env.reset(seed=seed)
                np.testing.assert_array_equal(first, again)
    assert accepted > 100 and refused > 500
    print(f"reset: {accepted} accepted, {refused} refused")
