"""A control law in the drives' loop (``hil_nodes.runtime.servo_link``): the real-time half of the mock
drives that emulate a forward command controller whose law runs faster than any message loop.

In real time, with ``servo_link: true``, drives that emulate a forward command controller look
for a law offered on its command topic in this process at every frame. While one is there they
call it at every plant step with the joint positions the encoders measured after the step
before (a plant's ``positions()``, else its states' positions). Its output is checked as a command message of that step would be: the
controller's rules and the guard's limits (a refusal is counted and told, the command before it
stays), a valid one feeds the watchdog. No output (the law has no mode yet, or could not compute
the cycle) is no command for that step: the drives' own stop (NaN), as a forward command
controller's reset. While the watchdog brakes, the law is not asked (command messages are not
looked at either). After the frame the law may publish what it publishes once a frame. Lockstep
never links: each control cycle stays a frame of messages.

``ServoLink`` is a plain object the mock hardware node owns: it keeps the law it took, and is
handed the command topic, the node's plant, controller, watchdog and frame time as it needs them.
"""
from __future__ import annotations

from typing import Callable

from hil_nodes.runtime import servo_link


class ServoLink:
    """The law taken from the drives' command topic (the module docstring)."""

    def __init__(self, log):
        self._log = log                  # the node's logger
        self.law = None                  # the law the drives took, or None
        self.compiled = True             # quiet steps in one call where offered (False: the oracle loop)

    def take(self, command_topic: str, enabled: bool, steps: int, hold: Callable[[], None]):
        """The law offered on ``command_topic`` now (attached / detached as it comes and goes),
        or None: then the frame runs on the commands that came as messages. ``enabled``: the
        drives may take one (real time, servo_link, a forward command controller); ``steps``:
        plant steps per frame (told in the log); ``hold``: see ``let_go``."""
        law = servo_link.offered(command_topic) if enabled else None
        if law is not self.law:
            self.let_go(hold)
            if law is not None:
                law.attach()
                self._log.info(f'running the control law offered on {command_topic} at every '
                               f'plant step ({steps} per frame)')
            self.law = law
        return law

    def let_go(self, hold: Callable[[], None]) -> None:
        """Let the law go, and ``hold()`` the controller. Its last output was the command of one
        step, not a command to hold: the drives stop by themselves (NaN) until a command message
        comes. Held, a saturated table torque of the law's last step ran the table away at
        150 rad/s^2 for the watchdog's 50 ms when the controller was deactivated after a FAULT."""
        if self.law is not None:
            self.law.detach()
            self.law = None
            hold()

    def step_frame(self, t_ns: int, frame_ns: int, steps: int, h: float, rel: Callable[[int], float],
                   plant, controller, watchdog, refuse: Callable) -> None:
        """The frame from ``t_ns`` in ``steps`` plant steps of ``h`` s, each commanded by the law from
        the joints measured before it (``rel``: ns to the controller's time; ``refuse(verdict,
        t_ns)``: the node counts and tells a refused output)."""
        law = self.law
        step_ns = frame_ns // steps
        done = 0
        if self.compiled and not watchdog.braking:
            done = self._quiet_steps(t_ns, step_ns, steps, h, rel, plant, controller, watchdog)
        positions = getattr(plant, 'positions', None) or (lambda: plant.states()['position'])
        for i in range(done, steps):
            step_t_ns = t_ns + i * step_ns
            now = rel(step_t_ns)
            if not watchdog.braking:
                u = law.cycle(step_t_ns, positions())
                if u is not None:
                    verdict = controller.accept(u, step_t_ns)
                    if verdict.accepted:
                        watchdog.command_ok()
                        controller.apply(verdict.entry, now, now, plant.states)
                    else:
                        refuse(verdict, step_t_ns)
                else:
                    controller.hold(now)          # no command for this step: the drives' own stop
            plant.step(h, controller.commands(now, 1, h))
        law.frame_done(t_ns + frame_ns)

    def _quiet_steps(self, t_ns, step_ns, steps, h, rel, plant, controller, watchdog) -> int:
        """The frame's first quiet steps in one compiled call, where the law and the plant offer
        it (hybrid5: ``law.quiet_steps``, ``plant.drive_arrays``; hil_core.hybrid5.law_frame):
        the same commands, checks and plant steps as the loop below, which runs the rest of the
        frame from the first step that is not quiet. Returns the steps done."""
        quiet = getattr(self.law, 'quiet_steps', None)
        arrays = getattr(plant, 'drive_arrays', None)
        if quiet is None or arrays is None:
            return 0
        drive = arrays(h, controller)
        done = quiet(t_ns, step_ns, steps, drive) if drive is not None else None
        if done is None or not done.steps:
            return 0
        # what the loop does after a step's accepted command, once for the last one
        watchdog.command_ok()
        now = rel(t_ns + (done.steps - 1) * step_ns)
        controller.apply(done.command, now, now, plant.states)
        plant.took(done.command)
        return done.steps
