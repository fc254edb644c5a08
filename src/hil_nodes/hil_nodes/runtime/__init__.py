"""Process and transport plumbing: executor and container, intra-process delivery, grid timer, servo link, real-time setup, kernel loads, process exits."""
