"""ROS 2 layer: the only part of uvms_sim that imports rclpy."""
