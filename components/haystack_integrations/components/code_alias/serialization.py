"""One `to_dict` / `from_dict` for the package's components and stores, instead of one written out in each.

Haystack's convention is that `__init__` stores each argument under its own name (its `component_to_dict` relies on
it for a component without a `to_dict`); the components here follow it, so one implementation reads the parameters
from the signature rather than each class listing them a second time, where a new parameter can be forgotten.
`from_dict` passes the data through `with_current_type`, so YAML saved under the old flat module paths still loads.
"""

from __future__ import annotations

import inspect
from collections.abc import Collection
from enum import Enum
from typing import Any, ClassVar, Self, TypeVar

from haystack.core.component import Component
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict

from ._legacy import with_current_type

_T = TypeVar("_T")


def init_parameters(obj: object, *, leave_out: Collection[str] = ()) -> dict[str, Any]:
    """
    Each `__init__` parameter of `obj` (in the signature's order) with the value of the attribute of its name.

    A nested component is serialised with Haystack's `component_to_dict` (so one without a `to_dict` works too),
    an enum (e.g. a `FilterPolicy`) as its value; a nested store or other object with a `to_dict` is serialised by
    `default_to_dict` itself.

    :param obj: The component or store.
    :param leave_out: Parameters not serialised (objects that only live at run time).
    """
    values: dict[str, Any] = {}
    for name, parameter in inspect.signature(type(obj).__init__).parameters.items():
        if name == "self" or name in leave_out or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        value = getattr(obj, name)
        if isinstance(value, Component):
            value = component_to_dict(value, name=name)
        elif isinstance(value, Enum):
            value = value.value
        values[name] = value
    return values


def from_init_parameters(cls: type[_T], data: dict[str, Any]) -> _T:
    """`cls` rebuilt from what `init_parameters` wrote (Haystack's `default_from_dict`), old `type:` paths too."""
    return default_from_dict(cls, with_current_type(data))


class SerializedByInitParameters:
    """
    Mixin: `to_dict` writes every `__init__` parameter (`init_parameters`), `from_dict` reads it back (old `type:`
    paths included). A subclass names what it does not serialise in `_not_serialized`.

    ### Usage example

    ```python
    @component
    class Shout(SerializedByInitParameters):
        def __init__(self, *, times: int = 2) -> None:
            self.times = times

        @component.output_types(text=str)
        def run(self, text: str) -> dict[str, str]:
            return {"text": text.upper() * self.times}

    assert Shout.from_dict(Shout(times=3).to_dict()).times == 3
    ```
    """

    _not_serialized: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        """Serialise: Haystack's `{"type", "init_parameters"}` envelope over the `__init__` parameters."""
        return default_to_dict(self, **init_parameters(self, leave_out=self._not_serialized))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Deserialise what `to_dict` wrote; a nested store or component is rebuilt from its recorded type."""
        return from_init_parameters(cls, data)
