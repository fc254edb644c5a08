"""The hybrid_controller node: node.py (the ROS shell) and its own helpers."""
