"""view_throttle: the newest message of each stream the HMI draws, at its view rate."""
