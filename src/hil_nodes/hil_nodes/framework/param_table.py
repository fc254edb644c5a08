"""A node's declared parameters: ``Param`` (type, default, range, choices, length, check) and
its validation, ``ParameterError`` (its message names the parameter), ``REQUIRED`` (no default)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from rclpy.parameter import Parameter

REQUIRED = object()   # Param default meaning "no default: must be given"

_PARAM_TYPES = {bool: Parameter.Type.BOOL, int: Parameter.Type.INTEGER, float: Parameter.Type.DOUBLE,
                str: Parameter.Type.STRING, 'float[]': Parameter.Type.DOUBLE_ARRAY,
                'int[]': Parameter.Type.INTEGER_ARRAY, 'str[]': Parameter.Type.STRING_ARRAY,
                'bool[]': Parameter.Type.BOOL_ARRAY}


class ParameterError(ValueError):
    """A parameter value that a node cannot run with; the message names the parameter."""


@dataclass(frozen=True)
class Param:
    """One declared parameter.

    ``type`` is bool, int, float, str or one of 'float[]', 'int[]', 'str[]', 'bool[]'.
    ``range`` (lo, hi) is inclusive and applies to every element of an array; ``length`` fixes
    an array's size; ``check`` returns an error text (or None) for anything a range cannot say.
    """
    name: str
    type: Any
    default: Any
    description: str
    range: tuple[float, float] | None = None
    choices: tuple[Any, ...] | None = None
    length: int | None = None
    check: Callable[[Any], str | None] | None = None
    dynamic: bool = False
    read_only: bool = False

    def constraints(self) -> str:
        parts = []
        if self.range is not None:
            parts.append(f'range [{self.range[0]}, {self.range[1]}]')
        if self.choices is not None:
            parts.append('one of ' + ', '.join(map(str, self.choices)))
        if self.length is not None:
            parts.append(f'{self.length} elements')
        if self.dynamic:
            parts.append('may change while active')
        return '; '.join(parts)

    def validate(self, value: Any) -> Any:
        """Return the value converted to its Python type, or raise ParameterError."""
        name = self.name
        if value is None:
            raise ParameterError(f"parameter '{name}' is required ({self.description}) but was not set")
        is_array = isinstance(self.type, str)
        values = list(value) if is_array else [value]
        if is_array and self.length is not None and len(values) != self.length:
            raise ParameterError(f"parameter '{name}' needs {self.length} elements, got {len(values)}")
        for v in values:
            if isinstance(v, float) and not math.isfinite(v):
                raise ParameterError(f"parameter '{name}' must be finite, got {v}")
            if self.range is not None and not (self.range[0] <= v <= self.range[1]):
                raise ParameterError(f"parameter '{name}' = {v} is outside its range "
                                     f'[{self.range[0]}, {self.range[1]}]')
        if self.choices is not None and value not in self.choices:
            raise ParameterError(f"parameter '{name}' = {value!r} is not one of {list(self.choices)}")
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ParameterError(f"parameter '{name}': {problem}")
        return [*values] if is_array else value
