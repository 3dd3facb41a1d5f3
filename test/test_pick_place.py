"""The pick-and-place demo (uvms_sim.pick_place, docs/arm.md "Pick and place"), run headless:
the Heavy with the Alpha 5, ArduSub's ALT_HOLD holding depth, picks the sample off the seabed
and puts it in the basket."""

from __future__ import annotations

import math

from uvms_sim.pick_place import run


def test_the_sample_ends_in_the_basket_and_depth_is_held(tmp_path) -> None:
    """At 1 kHz: the sample is lifted off the seabed and ends inside the basket's walls, on its
    floor; while the arm moves (about 35 s, the sample's 0.8 N and the arm's weight carried
    forward and round), ALT_HOLD keeps the depth within 2 cm (0.6 cm measured) and the
    attitude hold roll, pitch and yaw within 5° (1.6°, 2.2°, 2.6° measured)."""
    res = run(1000.0, tmp_path)
    assert res.held, res.log
    assert res.in_basket, (res.sample, res.log)
    assert res.depth_excursion < 0.02
    assert max(res.roll_excursion, res.pitch_excursion, res.yaw_excursion) < math.radians(5.0)
