"""hil_core: the algorithms of hil_suite as pure, documented, testable Python.

Nothing in this package imports rclpy (test/repo/test_layout.py enforces it): every
function here can be called from a node, a notebook, a benchmark or a test alike.
"""
