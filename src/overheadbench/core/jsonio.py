"""JSON in and out: strict JSON (NaN as null), and reading a document's fields with errors that
name the field (the files it goes in are written atomically, :mod:`.files`).

Strict: every parser can read what we write (JavaScript's ``JSON.parse`` refuses a bare ``NaN``), so a
figure that was not measured is written as ``null`` and read back as NaN.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def strict(data: Any) -> Any:
    """``data`` as plain JSON values: every non-finite float replaced by None (JSON has no
    NaN or infinity), enum words as plain strings (so pickling-free channels such as xdist's carry them)."""
    if isinstance(data, str):
        return str(data)
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {strict(key): strict(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [strict(value) for value in data]
    return data


def dumps(data: Any) -> str:
    """Indented strict JSON (NaN and infinities as null)."""
    return json.dumps(strict(data), indent=1, allow_nan=False)


class ShapeError(ValueError):
    """A JSON document has the wrong shape; the message names the field (``results[3].ci``)."""


ABSURD = 1e12
"""No figure we store is this large: a ratio, a second, a byte count per call or a rate beyond it is a
hand-edited or corrupt file (a 1e300 ratio crashed the page and ``compare``). Raw samples (block
costs in ns, scaled to the baseline's calls) may be larger, and are only checked finite."""


class Bare:
    """A bare ``NaN`` or ``Infinity`` in a stored file (:func:`loads`): JSON has neither, we write null."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __repr__(self) -> str:
        return self.token


def loads(text: str | bytes) -> Any:
    """A stored document, each bare ``NaN``/``Infinity`` kept as a :class:`Bare` for its field's reader to
    refuse by name (Python's parser reads them as floats: a NaN ratio was accepted where Infinity was
    refused); :func:`bare_nan_as_null` reads the files that wrote them (schemas 1 and 2)."""
    return json.loads(text, parse_constant=Bare)


def bare_nan_as_null(data: Any) -> Any:
    """``data`` with every bare ``NaN`` read as null (an unmeasured figure, as schemas 1 and 2 wrote it)."""
    if isinstance(data, Bare):
        return None if data.token == "NaN" else data
    if isinstance(data, dict):
        return {key: bare_nan_as_null(value) for key, value in data.items()}
    if isinstance(data, list):
        return [bare_nan_as_null(value) for value in data]
    return data


class Fields:
    """Typed reads of one JSON object's fields, each error naming the field's path."""

    def __init__(self, data: Any, path: str) -> None:
        if not isinstance(data, dict):
            raise ShapeError(f"{path or 'the document'}: expected an object, got {_kind(data)}")
        self.data, self.path = data, path

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, optional: bool) -> Any:
        if key not in self.data:
            if optional:
                return None
            raise ShapeError(f"{self._at(key)}: missing")
        return self.data[key]

    def text(self, key: str, optional: bool = False) -> Any:
        """A string (None when optional and absent or null)."""
        return self._typed(key, str, "a string", optional)

    def number(self, key: str, optional: bool = False) -> float:
        """A number; null (a figure that was not measured) reads as NaN, as does an absent optional one."""
        value = self._get(key, optional)
        if value is None:
            return math.nan
        return self._number(value, self._at(key))

    def maybe_number(self, key: str) -> float | None:
        """A number that may be absent or null (a budget not given)."""
        value = self.data.get(key)
        return None if value is None else self._number(value, self._at(key))

    def whole(self, key: str, optional: bool = False) -> Any:
        """An int (None when optional and absent or null)."""
        return self._typed(key, int, "a whole number", optional)

    def flag(self, key: str, optional: bool = False) -> bool:
        return bool(self._typed(key, bool, "true or false", optional))

    def obj(self, key: str, optional: bool = False) -> Fields | None:
        value = self._get(key, optional)
        return None if value is None and optional else Fields(value, self._at(key))

    def items(self, key: str, read: Callable[[Any, str], T]) -> list[T]:
        """A list, each item read by ``read(item, path)``."""
        value = self._get(key, False)
        if not isinstance(value, list):
            raise ShapeError(f"{self._at(key)}: expected a list, got {_kind(value)}")
        return [read(item, f"{self._at(key)}[{index}]") for index, item in enumerate(value)]

    def numbers(self, key: str) -> list[float]:
        """A list of numbers (null items read as NaN)."""
        return self.items(key, lambda item, path: math.nan if item is None else self._number(item, path))

    def ratio(self, key: str, optional: bool = False) -> float:
        """A ratio: above zero, or NaN (null: not measured)."""
        value = self.number(key, optional)
        if value <= 0:
            raise ShapeError(f"{self._at(key)}: a ratio must be above zero, got {value!r}")
        return value

    def interval(self, key: str, size: int = 2) -> list[float]:
        """``[low, high]`` (``size`` 3: ``[value, low, high]``), low at most high where both were measured."""
        values = self.numbers(key)
        if len(values) != size:
            shape = "[low, high]" if size == 2 else "[value, low, high]"
            raise ShapeError(f"{self._at(key)}: expected {shape}, got {len(values)} values")
        low, high = values[-2:]
        if low > high:
            raise ShapeError(f"{self._at(key)}: the interval is reversed ({low!r} > {high!r})")
        return values

    def samples(self, key: str, signed: bool = False) -> list[float]:
        """A list of measured values: each a finite number, 0 or more unless ``signed`` (never
        null: a sample that was not measured is not stored, and one NaN, infinite or negative
        value poisons every statistic made from it)."""
        value = self._get(key, False)
        if isinstance(value, list) and set(map(type, value)) <= {int, float}:  # a bool is neither
            numbers = list(map(float, value))  # the usual list, checked whole (a history reads a thousand runs)
            if math.isfinite(sum(numbers)) and (signed or not numbers or min(numbers) >= 0):
                return numbers
        return self.items(key, lambda item, path: _sample(item, path, signed))  # the first bad item named

    def count(self, key: str, least: int = 1) -> int:
        """A whole number, ``least`` or more (calls per block, a schema version)."""
        value: int = self.whole(key)
        if value < least:
            raise ShapeError(f"{self._at(key)}: expected a whole number of at least {least}, got {value}")
        return value

    def choice(self, key: str, words: Callable[[str], T], default: T | None = None) -> T:
        """A string that must be one of an enum's words (``default`` when absent)."""
        value = self._get(key, default is not None)
        if value is None and default is not None:
            return default
        try:
            return words(value)
        except ValueError:
            raise ShapeError(f"{self._at(key)}: {value!r} is not one of the known values") from None

    def _typed(self, key: str, kind: type, what: str, optional: bool) -> Any:
        value = self._get(key, optional)
        if value is None and optional:
            return None
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ShapeError(f"{self._at(key)}: expected {what}, got {_kind(value)}")
        return value

    @staticmethod
    def _number(value: Any, path: str, bound: float = ABSURD) -> float:
        """A number, finite and within ``bound``: nothing we write is outside it (``1e999`` parses as
        infinity; a bare ``NaN`` is a :class:`Bare`, refused: an unmeasured figure is null)."""
        if isinstance(value, Bare):
            raise ShapeError(f"{path}: expected a finite number or null, got a bare {value.token}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ShapeError(f"{path}: expected a number, got {_kind(value)}")
        number = float(value)
        if math.isinf(number):
            raise ShapeError(f"{path}: expected a finite number, got {_kind(value)}")
        if abs(number) > bound:
            raise ShapeError(f"{path}: {number:g} is beyond any figure a run holds (±{bound:g}): a corrupt file")
        return number


def _sample(value: Any, path: str, signed: bool) -> float:
    if value is None:
        raise ShapeError(f"{path}: a sample is missing (null)")
    number = Fields._number(value, path, math.inf)
    if math.isnan(number):
        raise ShapeError(f"{path}: a sample must be a number, got NaN")
    if number < 0 and not signed:
        raise ShapeError(f"{path}: a sample cannot be negative, got {_kind(value)}")
    return number


def _kind(value: Any) -> str:
    """What a JSON value is, for a message (short: a stored file's text is not echoed whole)."""
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"
