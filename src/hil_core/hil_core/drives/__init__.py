"""The drive emulation: plants, servo axes, JTC acceptance and sampling, the command watchdog, scripted motion, joint friction."""
