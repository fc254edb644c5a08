"""The operator's web HMI (docs/hmi.md): a viser page with the live 3D view, the HIL panel and
bag replay. ``node.py`` is the ROS shell; the other modules are plain Python (no rclpy)."""
