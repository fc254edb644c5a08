"""The mock_hardware node: node.py (the ROS shell) and its own helpers."""
