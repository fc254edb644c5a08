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

A mixin of ``MockHardwareNode``: it uses the node's command topic, plant, controller, watchdog and
frame time.
"""
from __future__ import annotations

from hil_nodes.runtime import servo_link


class ServoLinkStepping:
    _linked_law = None

    def _servo_law(self):
        """The law offered on the command topic (attached / detached as it comes and goes), or
        None: then the frame runs on the commands that came as messages."""
        law = None
        if self.p.servo_link and not self.p.lockstep and not self.robot.spec.trajectory:
            law = servo_link.offered(self.command_topic)
        if law is not self._linked_law:
            self._unlink()
            if law is not None:
                law.attach()
                self.get_logger().info(f'running the control law offered on {self.command_topic} at every '
                                       f'plant step ({self.m} per frame)')
            self._linked_law = law
        return law

    def _unlink(self) -> None:
        """Let the law go. Its last output was the command of one step, not a command to hold:
        the drives stop by themselves (NaN) until a command message comes. Held, a saturated
        table torque of the law's last step ran the table away at 150 rad/s^2 for the watchdog's
        50 ms when the controller was deactivated after a FAULT."""
        if self._linked_law is not None:
            self._linked_law.detach()
            self._linked_law = None
            self.controller.hold(self._rel(self.t_ns))

    def _step_linked(self, law) -> None:
        """The frame's plant steps, each commanded by the law from the joints measured before it."""
        step_ns = self.frame_ns // self.m
        plant, controller = self.plant, self.controller
        positions = getattr(plant, 'positions', None) or (lambda: plant.states()['position'])
        for i in range(self.m):
            t_ns = self.t_ns + i * step_ns
            now = self._rel(t_ns)
            if not self._watchdog.braking:
                u = law.cycle(t_ns, positions())
                if u is not None:
                    verdict = controller.accept(u, t_ns)
                    if verdict.accepted:
                        self._watchdog.command_ok()
                        controller.apply(verdict.entry, now, now, plant.states)
                    else:
                        self._refuse(verdict, t_ns)
                else:
                    controller.hold(now)          # no command for this step: the drives' own stop
            plant.step(self.h, controller.commands(now, 1, self.h))
        law.frame_done(self.t_ns + self.frame_ns)
