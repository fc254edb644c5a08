"""hil_nodes: thin rclpy lifecycle nodes around hil_core, the supervisor and the hil command."""
