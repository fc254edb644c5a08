"""The space_plant node: node.py (the ROS shell) and its own helpers."""
