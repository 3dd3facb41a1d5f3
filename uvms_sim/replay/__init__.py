"""Rosbag replay, model-vs-vehicle comparison and identification (rosbags; no ROS install)."""
