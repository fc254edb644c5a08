"""The mock_ft node: node.py (the ROS shell) and its own helpers."""
