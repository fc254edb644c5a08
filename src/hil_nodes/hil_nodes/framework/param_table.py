"""A node's declared parameters: ``Param`` (type, default, range, choices, length, check) and
its validation, ``ParameterError`` (its message names the parameter), ``REQUIRED`` (no default);
``ConfigFields``, how a node builds a hil_core configuration from its validated values, and
``values_with_defaults``, the values a node ran with from those a run recorded.

Each node's table lives in ``<node>/params.py``, the only place its parameters are declared;
config files, docs pages and the report are checked against it or generated from it
(``hil_nodes.framework.param_docs``, the repository test test_param_home.py)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Iterable, Mapping

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
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

    def descriptor(self) -> ParameterDescriptor:
        """The rclpy descriptor: the description, the constraints in words, and for a scalar int
        or float with a range the native range, so ``ros2 param describe`` shows it and rcl refuses
        an out-of-range set (rcl has no ranges for arrays: their elements are checked by
        ``validate``, as every value is)."""
        d = ParameterDescriptor(description=self.description, additional_constraints=self.constraints(),
                                read_only=self.read_only)
        if self.range is not None and self.type is float:
            d.floating_point_range = [FloatingPointRange(from_value=float(self.range[0]),
                                                         to_value=float(self.range[1]), step=0.0)]
        elif self.range is not None and self.type is int:
            d.integer_range = [IntegerRange(from_value=int(self.range[0]), to_value=int(self.range[1]), step=1)]
        return d

    def out_of_range(self, value: Any) -> str | None:
        """The refusal of ``validate`` for a scalar value outside the range, else None."""
        if self.range is None or isinstance(self.type, str) or isinstance(value, bool) \
                or not isinstance(value, (int, float)) or self.range[0] <= value <= self.range[1]:
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return f"parameter '{self.name}' must be finite, got {value}"
        return f"parameter '{self.name}' = {value} is outside its range [{self.range[0]}, {self.range[1]}]"

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


@dataclass(frozen=True)
class ConfigFields:
    """How a node builds one hil_core configuration dataclass from its validated parameter values,
    declared once next to its Param table. Every init field of ``config`` takes the parameter of
    the same name, unless ``renamed`` names the parameter it takes (config field -> parameter),
    ``derived`` computes it from all the values (config field -> function of the values), or
    ``fixed`` leaves it at the dataclass default (not a parameter of the node). Array parameters
    arrive as tuples: a configuration holds values, not lists a caller could change.
    test_param_home checks that every field is covered by a parameter of the node's table."""
    config: type
    renamed: Mapping[str, str] = field(default_factory=dict)
    derived: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    fixed: frozenset[str] = frozenset()

    def fields(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self.config) if f.init]

    def parameter(self, field_name: str) -> str | None:
        """The parameter a field takes (None for a derived or fixed field)."""
        if field_name in self.derived or field_name in self.fixed:
            return None
        return self.renamed.get(field_name, field_name)

    def build(self, values: Any) -> Any:
        """The configuration for ``values`` (a namespace of parameter values, as ``node.p``);
        the dataclass's own checks raise ValueError."""
        kwargs = {}
        for name in self.fields():
            if name in self.fixed:
                continue
            if name in self.derived:
                kwargs[name] = self.derived[name](values)
                continue
            value = getattr(values, self.parameter(name))
            kwargs[name] = tuple(value) if isinstance(value, list) else value
        return self.config(**kwargs)


def values_with_defaults(params: Iterable[Param], given: Mapping[str, Any] | None) -> SimpleNamespace:
    """The values a node ran with: ``given`` (a run's recorded parameters) over the table's
    defaults (None where a parameter is required), numbers typed as declared (a 1600 recorded
    for a double is 1600.0). Nothing is range-checked: a report reads what a run used."""
    given = given or {}
    values = {}
    for p in params:
        value = given.get(p.name)
        if value is None:
            value = None if p.default is REQUIRED else p.default
        elif p.type is float:
            value = float(value)
        elif p.type == 'float[]':
            value = [float(v) for v in value]
        values[p.name] = value
    return SimpleNamespace(**values)
