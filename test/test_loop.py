"""The ROS-free simulation loop (``uvms_sim.loop``) in simulated time: step grouping between
events, command deadlines, pause and single steps, pacing with an injected clock, failures."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from uvms_sim.loop import Cadence, SimulationLoop, steps_per
from uvms_sim.model import load
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"


@pytest.fixture(scope="module")
def system():
    return load(CONFIG / "bluerov2.yaml")


def _loop(system, **kw) -> SimulationLoop:
    sim = Simulator.from_system(system)
    return SimulationLoop(sim, 0.01, **kw)


def test_steps_per_rounds_and_is_at_least_one():
    assert steps_per(50.0, 0.002) == 10 and steps_per(250.0, 0.002) == 2 and steps_per(1e4, 0.002) == 1


def test_a_cadence_keeps_its_period_in_simulated_time_and_its_wall_clock_cap():
    """Publish ticks of 0.02 s summed as simulated time is (100,000 of them: the sum drifts
    from the multiples of 0.02): an event of period 0.1 s is due at every fifth tick, never one
    early or late. With a wall-clock cap, a simulation faster than the wall clock gets one event
    per wall period, however many periods of simulated time passed; ``force`` ignores both."""
    cadence = Cadence(0.1)
    t, due = 0.0, []
    for k in range(1, 100_001):
        t += 0.02
        if cadence.due(t):
            due.append(k)
    assert due == list(range(1, 100_001, 5)) and abs(t - 2000.0) > 1e-12
    assert cadence.next_time == pytest.approx(t - 0.02 * 4 + 0.1)

    wall = [0.0]
    capped = Cadence(0.1, wall_period=1.0 / 30.0, clock=lambda: wall[0])
    fired = []
    for k in range(1, 301):  # 6 s of simulated time in 0.75 s of wall time
        wall[0] = k / 400.0
        if capped.due(0.02 * k):
            fired.append(k)
    # every 14th tick (the first after 1/30 s of wall time), not every 5th (10 Hz simulated)
    assert fired == list(range(1, 301, 14))
    assert not capped.due(6.0) and capped.due(6.0, force=True) and not capped.due(6.05)


def test_a_tick_groups_steps_between_autopilot_and_clock_events(system):
    """publish every 10 steps, autopilot every 4, clock every 5: the physics advances in groups
    that end at each event (4, 1, 3, 2 steps), the autopilot runs at steps 0, 4, 8 (with its
    period 4 dt), the clock at steps 5 and 10, and publishing once at the end; simulated time
    moves by exactly 10 dt."""
    loop = _loop(system, publish_every=10, clock_every=5, autopilot_every=4, real_time_factor=0.0)
    events = []
    groups = []
    advance = loop.sim.advance

    def counting(dt, n):
        groups.append(n)
        advance(dt, n)

    loop.sim.advance = counting
    loop.on_autopilot = [lambda period: events.append(("autopilot", loop.step_count, period))]
    loop.on_clock = lambda: events.append(("clock", loop.step_count))
    loop.on_publish = lambda: events.append(("publish", loop.step_count))
    loop.tick()
    assert groups == [4, 1, 3, 2]
    assert events == [
        ("autopilot", 0, pytest.approx(0.04)),
        ("autopilot", 4, pytest.approx(0.04)),
        ("clock", 5),
        ("autopilot", 8, pytest.approx(0.04)),
        ("clock", 10),
        ("publish", 10),
    ]
    assert loop.sim.state.t == pytest.approx(0.1, abs=1e-12)


def test_controllers_update_at_their_own_rate_after_the_autopilot(system):
    """publish every 10 steps, autopilot every 2, controllers every 4 (a rate of their own):
    the controllers run at steps 0, 4, 8 with their period 4 dt, after the autopilot of the
    same step, and the physics groups end at every event of either (2 steps each)."""
    loop = _loop(system, publish_every=10, autopilot_every=2, controller_every=4, real_time_factor=0.0)
    events, groups = [], []
    advance = loop.sim.advance

    def counting(dt, n):
        groups.append(n)
        advance(dt, n)

    loop.sim.advance = counting
    loop.on_autopilot = [lambda period: events.append(("autopilot", loop.step_count))]
    loop.on_controllers = [lambda period: events.append(("controllers", loop.step_count, period))]
    loop.tick()
    assert groups == [2, 2, 2, 2, 2]
    assert [e for e in events if e[0] == "controllers"] == [
        ("controllers", 0, pytest.approx(0.04)),
        ("controllers", 4, pytest.approx(0.04)),
        ("controllers", 8, pytest.approx(0.04)),
    ]
    assert events.index(("autopilot", 4)) + 1 == events.index(("controllers", 4, pytest.approx(0.04)))


def test_deadlines_expire_once_in_simulated_time_and_zero_disables(system):
    """A command touched at t = 0 with a 0.05 s timeout expires at the first event after
    0.05 s of simulated time (checked every autopilot period, 0.02 s here), once; a deadline
    never touched never expires; with timeout 0 nothing expires."""
    loop = _loop(system, publish_every=10, autopilot_every=2, timeout=0.05, real_time_factor=0.0)
    fired: list[float] = []
    d = loop.deadline(lambda: fired.append(loop.sim.state.t))
    loop.deadline(lambda: fired.append(-1.0))  # never touched
    d.touch(loop.sim.state.t)
    loop.tick()
    loop.tick()
    assert fired == [pytest.approx(0.06)]
    off = _loop(system, publish_every=10, timeout=0.0, real_time_factor=0.0)
    calls: list[int] = []
    off.deadline(lambda: calls.append(1)).touch(0.0)
    for _ in range(5):
        off.tick()
    assert not calls


def test_pacing_follows_the_real_time_factor_with_an_injected_clock(system):
    """At real_time_factor 2, after a 0.1 s tick at wall time 0.01 the next tick waits until
    wall 0.05; behind schedule it does not wait; restart_pacing takes the pace from now."""
    now = [0.0]
    loop = _loop(system, publish_every=10, real_time_factor=2.0, clock=lambda: now[0])
    assert loop.next_delay() == 0.0  # the first call takes the pace
    loop.tick()
    now[0] = 0.01
    assert loop.next_delay() == pytest.approx(0.04)
    now[0] = 0.2
    assert loop.next_delay() == 0.0
    loop.restart_pacing()
    assert loop.next_delay() == 0.0
    loop.tick()
    assert loop.next_delay() == pytest.approx(0.05)
    assert loop.achieved_real_time_factor() == pytest.approx(0.2 / 0.2)


def test_run_pauses_steps_on_request_and_recovers_from_a_failure(system):
    """Paused, ``run`` ticks exactly as often as steps are requested; a tick that raises
    FloatingPointError goes to ``on_failure`` and the loop runs on; other errors propagate."""
    loop = _loop(system, publish_every=5, real_time_factor=0.0)
    stop = threading.Event()
    loop.pause(True)
    assert not _loop(system).request_step()  # not paused: refused
    assert loop.request_step() and loop.request_step()
    loop.on_publish = lambda: stop.set() if loop.ticks == 2 else None
    worker = threading.Thread(target=loop.run, args=(stop,))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive() and loop.ticks == 2
    assert loop.sim.state.t == pytest.approx(0.1)

    failures: list[Exception] = []
    loop = _loop(system, publish_every=5, real_time_factor=0.0)
    state = {"raised": False}

    def once(period: float) -> None:
        if not state["raised"]:
            state["raised"] = True
            raise FloatingPointError("boom")

    loop.on_autopilot = [once]
    loop.on_failure = failures.append
    stop = threading.Event()
    loop.on_publish = lambda: stop.set() if loop.ticks == 3 else None
    loop.run(stop)
    assert [str(f) for f in failures] == ["boom"] and loop.ticks == 3
    assert np.all(np.isfinite(loop.sim.state.q))

    loop = _loop(system, publish_every=5, real_time_factor=0.0)
    loop.on_autopilot = [lambda period: 1 / 0]
    with pytest.raises(ZeroDivisionError):
        loop.run(threading.Event())


def test_lockstep_hooks_follow_the_peers_frames_in_simulated_time(system):
    """A peer stepping 4 ms frames (one in four calls brings none), with dt 10 ms, publish every
    5 steps and sensors every 3: the clock hook after each stepped frame; the sensor hook at
    steps 3, 6, ... as simulated time passes them (each once); publishing at the first frame,
    then at the first frame at or past each 50 ms since the last; after the peer restarts
    (time back to 0) at once again, and the sensor steps count from there. The peer waits for
    its frames without the loop's lock (an input is not held up by a silent peer) and steps
    holding it."""
    loop = _loop(system, publish_every=5, sensor_every=3, real_time_factor=0.0)
    stop = threading.Event()
    calls = {"n": 0, "frames": 0}
    events: list[tuple] = []

    free: list[bool] = []

    def serve(lock) -> bool:
        calls["n"] += 1
        other = threading.Thread(target=lambda: free.append(lock.acquire(timeout=0) and not lock.release()))
        other.start()
        other.join()
        if calls["n"] % 4 == 0:
            return False  # no frame within the wait
        with lock:
            calls["frames"] += 1
            if calls["frames"] == 61:  # the peer restarted: its state and time from the start
                loop.sim.reset(system.initial_q)
            loop.sim.step(0.004)
        if calls["frames"] == 80:
            stop.set()
        return True

    loop.on_clock = lambda: events.append(("clock",))
    loop.on_sensor = lambda step: events.append(("sensor", step))
    loop.on_publish = lambda: events.append(("publish", round(loop.sim.state.t, 9)))
    loop.run_lockstep(serve, stop)
    assert sum(e == ("clock",) for e in events) == 80
    published = [e[1] for e in events if e[0] == "publish"]
    before = [round(0.004 * k, 9) for k in (1, 14, 27, 40, 53)]  # 0.004, then >= 0.054, 0.108, ...
    after = [0.004, 0.056]
    assert published == before + after
    sensed = [e[1] for e in events if e[0] == "sensor"]
    assert sensed == [*range(3, 25, 3), 3, 6]  # 60 frames: 0.24 s; then 20 frames: 0.08 s
    assert loop.ticks == len(published) and loop.step_count == 8
    assert len(free) == calls["n"] and all(free)  # another thread could take the lock every time
    # a false ok() ends it as stop does, without serving
    loop.run_lockstep(lambda lock: 1 / 0, threading.Event(), ok=lambda: False)
