"""One way to refuse a bad configuration: every hil_core config with a ``problem()`` method
(``None`` when valid, else one line naming the parameter) is checked by :func:`valid_config`
when the object using it is built, so nothing runs on a configuration that was refused."""
from __future__ import annotations

from typing import Protocol, TypeVar


class Checkable(Protocol):
    def problem(self) -> str | None: ...


C = TypeVar('C', bound=Checkable)


def valid_config(config: C) -> C:
    """``config`` itself when it has no problem; otherwise ValueError with its problem."""
    problem = config.problem()
    if problem:
        raise ValueError(problem)
    return config
