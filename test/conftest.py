"""Test session set-up: keep DDS discovery on this machine and away from other runs."""

from __future__ import annotations

import os
import random

import pytest

# Set before any rclpy.init(): discovery only on loopback, and a domain of this run's own so
# parallel runs on one machine do not see each other's topics.
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.Random(os.getpid()).randint(1, 100)))
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path_factory, monkeypatch):
    """Every test runs in an empty directory of its own: what it reads is found from its own
    file (the repository), never from the directory pytest was started in."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
