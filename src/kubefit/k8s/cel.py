"""CEL device selectors as Kubernetes evaluates them for DRA (`k8s.io/dynamic-resource-allocation/cel`).

The expression language is cel-python's (`celpy`: its parser, value types and standard functions); on top
of it this module adds what the Kubernetes environment has and celpy has not:

* the `device` variable of `compile.go` (`DeviceMatches`): `device.driver`, `device.attributes[domain]
  .name` (int, bool, string, or a version as a Semver) and `device.capacity[domain].name` (a Quantity),
  where an attribute without a domain gets the driver's, and a domain the device does not have is an
  empty map (`newStringInterfaceMapWithDefault`);
* the Kubernetes libraries `quantity()` / `isQuantity()` with `sign`, `isInteger`, `asInteger`,
  `asApproximateFloat`, `add`, `sub`, `isGreaterThan`, `isLessThan`, `compareTo`
  (`apiserver/pkg/cel/library/quantity.go`), `semver()` / `isSemver()` (with the `normalize` argument)
  with `major`, `minor`, `patch`, `isGreaterThan`, `isLessThan`, `compareTo` (`semverlib.go`), the
  Kubernetes lists library's `sum`, `min`, `max`, `isSorted`, `indexOf`, `lastIndexOf`, and the strings
  extension's usual functions;
* `cel.bind(name, init, expr)` (cel-go's `ext.Bindings`);
* cel-go's runtime cost accounting (`interpreter/runtimecost.go`: 1 per variable and per field or index
  step, 1 per call, string comparisons and concatenations by size, 10 per list and 30 per map literal,
  comprehensions step by step) with DRA's limit `CELSelectorExpressionMaxCost` (1,000,000): past it the
  evaluation stops with cel-go's `operation cancelled: actual cost limit exceeded`;
* logical operators that short-circuit as cel-go's (`false && error` is false, without evaluating the error).

An expression is compiled once (`compile_selector`, cached); celpy then interprets its tree. A device's
attributes never change during a run, so a verdict is cached per (expression, what the expression can
read of the device) by `Selector.matches`: devices that agree on the attributes a selector reads share
one evaluation. cel-go's type checker is not reproduced: its compile errors that the API server would
have refused at creation (a selector of the wrong type, an unknown function) are refused when the object
is loaded, a mistyped operand at run time is cel-go's `no such overload`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import celpy.celtypes as ct
import lark
from celpy.celparser import CELParseError, CELParser
from celpy.evaluation import Activation, CELEvalError, Evaluator, base_functions

from kubefit.api.dra import CEL_SELECTOR_MAX_COST, SEMVER, Device, DeviceAttribute
from kubefit.k8s.quantity import NANO, QuantityError, parse_quantity

COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"
STRING_TRAVERSAL_COST_FACTOR = 0.1  # cel-go common.StringTraversalCostFactor
REGEX_STRING_LENGTH_COST_FACTOR = 0.25  # common.RegexStringLengthCostFactor
LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST = 10, 30  # common.ListCreateBaseCost, MapCreateBaseCost
MAX_INT64 = 2**63 - 1


class CelError(Exception):
    """A selector that does not compile (what the API server refuses when the object is created)."""


class CelRuntimeError(Exception):
    """A selector that failed on a device: the allocator stops with this error (a Filter error)."""


class _CostExceeded(Exception):
    """Raised through the evaluation when the cost passes the limit (cel-go panics likewise)."""


# --------------------------------------------------------------------------- Kubernetes value types

@dataclass(frozen=True, eq=False)
class Quantity:
    """`kubernetes.Quantity`: an exact value (nano-units, as kubefit keeps quantities) and its text."""

    nanos: int
    text: str = ""

    def _other(self, other: Any) -> Quantity:
        if not isinstance(other, Quantity):
            raise TypeError("no such overload")
        return other

    def __eq__(self, other: Any) -> bool:  # Quantity.Equal: by value
        return self.nanos == self._other(other).nanos

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __repr__(self) -> str:
        return f"quantity({self.text or self.nanos / NANO!r})"


_SEMVER_PARTS = re.compile(r"^([^-+]*)(?:-([^+]*))?(?:\+(.*))?$")


@dataclass(frozen=True, eq=False)
class Semver:
    """`kubernetes.Semver` (blang/semver's Version): ordered by semver 2.0.0, build metadata ignored."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    text: str = ""

    def compare(self, other: Semver) -> int:
        """`Version.Compare`: -1, 0 or 1; a release is above its pre-releases; numeric identifiers sort
        below alphanumeric ones."""
        a, b = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre) if self.pre or other.pre else 0
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            if isinstance(x, int) != isinstance(y, int):
                return -1 if isinstance(x, int) else 1
            return -1 if x < y else 1  # type: ignore[operator]
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: Any) -> bool:  # Semver.Equal: Version.Equals
        if not isinstance(other, Semver):
            raise TypeError("no such overload")
        return self.compare(other) == 0

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))


def parse_semver(text: str) -> Semver:
    """blang/semver's strict `Parse` (semver 2.0.0); ValueError with its message otherwise."""
    if not text:
        raise ValueError("Version string empty")
    if not SEMVER.match(text):
        core = _SEMVER_PARTS.match(text).group(1)  # type: ignore[union-attr]
        parts = core.split(".")
        if len(parts) != 3:
            raise ValueError("No Major.Minor.Patch elements found")
        for name, part in zip(("major", "minor", "patch"), parts, strict=True):
            if not part.isdigit():
                raise ValueError(f"Invalid character(s) found in {name} number {part!r}")
            if len(part) > 1 and part[0] == "0":
                raise ValueError(f"{name.capitalize()} number must not contain leading zeroes {part!r}")
        raise ValueError(f"Invalid pre-release or build metadata in {text!r}")
    core, pre, _build = _SEMVER_PARTS.match(text).groups()  # type: ignore[union-attr]
    major, minor, patch = (int(p) for p in core.split("."))
    identifiers = tuple(int(p) if p.isdigit() else p for p in pre.split(".")) if pre else ()
    return Semver(major, minor, patch, identifiers, text)


def normalize_semver(text: str) -> Semver:
    """semverlib's `normalizeAndParse`: a leading "v" dropped, leading zeros trimmed, missing minor/patch 0."""
    body = text[1:] if text.startswith("v") else text
    parts = body.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in "0123456789":
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse_semver(".".join(parts))


def _quantity(text: Any) -> Quantity:
    if not isinstance(text, str):
        raise TypeError("no such overload")
    try:
        return Quantity(parse_quantity(text), text)
    except QuantityError as exc:
        raise ValueError(str(exc).split(", got ")[0]) from None


def _is_quantity(text: Any) -> ct.BoolType:
    try:
        _quantity(text)
    except ValueError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def _semver(text: Any, normalize: Any = ct.BoolType(False)) -> Semver:
    if not isinstance(text, str) or not isinstance(normalize, ct.BoolType):
        raise TypeError("no such overload")
    return normalize_semver(text) if normalize else parse_semver(text)


def _is_semver(text: Any, normalize: Any = ct.BoolType(False)) -> ct.BoolType:
    try:
        _semver(text, normalize)
    except ValueError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def _as_int64(q: Quantity) -> int | None:
    """`Quantity.AsInt64`: the value when it is a whole number within int64."""
    whole, frac = divmod(q.nanos, NANO)
    return whole if not frac and -MAX_INT64 - 1 <= whole <= MAX_INT64 else None


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.nanos > b.nanos) - (a.nanos < b.nanos)
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    raise TypeError("no such overload")


def _as_integer(q: Any) -> ct.IntType:
    value = _as_int64(_only(q, Quantity))
    if value is None:
        raise ValueError("cannot convert value to integer")
    return ct.IntType(value)


def _only(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise TypeError("no such overload")
    return value


def _plus(q: Any, other: Any, sign: int) -> Quantity:
    q = _only(q, Quantity)
    if isinstance(other, Quantity):
        return Quantity(q.nanos + sign * other.nanos)
    if isinstance(other, ct.IntType) and not isinstance(other, ct.BoolType):
        return Quantity(q.nanos + sign * int(other) * NANO)
    raise TypeError("no such overload")


def _list_items(values: Any) -> list:
    return list(_only(values, ct.ListType))


def _list_sum(values: Any) -> Any:
    items = _list_items(values)
    if not items:
        return ct.IntType(0)
    total = items[0]
    for item in items[1:]:
        total = total + item
    return total


def _list_extreme(values: Any, pick: Callable) -> Any:
    items = _list_items(values)
    if not items:
        raise ValueError("min called on empty list" if pick is min else "max called on empty list")
    return pick(items)


def _is_sorted(values: Any) -> ct.BoolType:
    items = _list_items(values)
    return ct.BoolType(all(not (b < a) for a, b in zip(items, items[1:], strict=False)))


def _index_of(target: Any, item: Any, last: bool = False) -> ct.IntType:
    if isinstance(target, str) and not isinstance(target, ct.ListType):
        return ct.IntType(target.rfind(item) if last else target.find(item))
    items = _list_items(target)
    positions = [i for i, v in enumerate(items) if type(v) is type(item) and v == item]
    return ct.IntType((positions[-1] if last else positions[0]) if positions else -1)


def _split(text: Any, sep: Any, limit: Any = None) -> ct.ListType:
    parts = str(text).split(str(sep)) if limit is None or int(limit) < 0 else \
        ([] if int(limit) == 0 else str(text).split(str(sep), int(limit) - 1))
    return ct.ListType([ct.StringType(p) for p in parts])


def _substring(text: Any, start: Any, end: Any = None) -> ct.StringType:
    s = str(text)
    stop = len(s) if end is None else int(end)
    if not 0 <= int(start) <= stop <= len(s):
        raise ValueError(f"index out of range: {int(start) if int(start) > len(s) or int(start) < 0 else stop}")
    return ct.StringType(s[int(start):stop])


# Method name → implementation (target first). The Kubernetes and extension libraries come first; the
# rest falls back to celpy's standard functions (`contains`, `startsWith`, `matches`, `size`, ...).
METHODS: dict[str, Callable[..., Any]] = {
    "compareTo": lambda a, b: ct.IntType(_compare(a, b)),
    "isGreaterThan": lambda a, b: ct.BoolType(_compare(a, b) == 1),
    "isLessThan": lambda a, b: ct.BoolType(_compare(a, b) == -1),
    "sign": lambda q: ct.IntType((_only(q, Quantity).nanos > 0) - (q.nanos < 0)),
    "isInteger": lambda q: ct.BoolType(_as_int64(_only(q, Quantity)) is not None),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: ct.DoubleType(_only(q, Quantity).nanos / NANO),
    "add": lambda q, o: _plus(q, o, 1),
    "sub": lambda q, o: _plus(q, o, -1),
    "major": lambda v: ct.IntType(_only(v, Semver).major),
    "minor": lambda v: ct.IntType(_only(v, Semver).minor),
    "patch": lambda v: ct.IntType(_only(v, Semver).patch),
    "sum": _list_sum,
    "min": lambda values: _list_extreme(values, min),
    "max": lambda values: _list_extreme(values, max),
    "isSorted": _is_sorted,
    "indexOf": _index_of,
    "lastIndexOf": lambda target, item: _index_of(target, item, last=True),
    "lowerAscii": lambda s: ct.StringType(str(_only(s, str)).translate(_LOWER)),
    "upperAscii": lambda s: ct.StringType(str(_only(s, str)).translate(_UPPER)),
    "trim": lambda s: ct.StringType(str(_only(s, str)).strip()),
    "replace": lambda s, old, new, n=None: ct.StringType(str(s).replace(str(old), str(new),
                                                                        -1 if n is None else int(n))),
    "split": _split,
    "substring": _substring,
    "charAt": lambda s, i: ct.StringType(str(s)[int(i):int(i) + 1]) if 0 <= int(i) <= len(s) else _range(i),
    "find": lambda s, pattern: _find(s, pattern, 1),
    "findAll": lambda s, pattern, n=None: _find(s, pattern, -1 if n is None else int(n)),
    "join": lambda items, sep=ct.StringType(""): ct.StringType(str(sep).join(str(_only(v, str)) for v in
                                                                                _list_items(items))),
}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "sign": METHODS["sign"],
}
_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}
MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# functions of celpy's standard library that the Kubernetes environment has too
STANDARD = frozenset({"size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string",
                      "bool", "bytes", "type", "dyn", "has", "duration", "timestamp", "getDate", "getDayOfMonth",
                      "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours", "getMilliseconds", "getMinutes",
                      "getMonth", "getSeconds"})
KNOWN_FUNCTIONS = frozenset(METHODS) | frozenset(FUNCTIONS) | MACROS | STANDARD
# calls whose cost the Kubernetes library's CostEstimator (library/cost.go) sizes by their string argument
_SIZED_BY_ARGUMENT = frozenset({"quantity", "isQuantity", "semver", "isSemver"})


def _find(text: Any, pattern: Any, limit: int) -> Any:
    """The Kubernetes regex library: `find` (first match, "" when none) and `findAll` (up to `limit`)."""
    import re2

    try:
        matches = [m.group(0) for m in re2.finditer(str(_only(pattern, str)), str(_only(text, str)))]
    except re2.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    if limit == 1:
        return ct.StringType(matches[0] if matches else "")
    return ct.ListType([ct.StringType(m) for m in (matches if limit < 0 else matches[:limit])])


def _range(i: Any) -> Any:
    raise ValueError(f"index out of range: {int(i)}")


# --------------------------------------------------------------------------- the device variable

class DefaultMap(ct.MapType):
    """`newStringInterfaceMapWithDefault`: a key that is not there reads as an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return ct.MapType()


def _cel_attribute(attribute: DeviceAttribute) -> Any:
    if attribute.kind in ("ints", "bools", "strings", "versions"):  # DRAListTypeAttributes: a list value
        scalar = attribute.kind[:-1]
        return ct.ListType([_cel_attribute(DeviceAttribute(scalar, v)) for v in attribute.value])
    if attribute.kind == "int":
        return ct.IntType(attribute.value)
    if attribute.kind == "bool":
        return ct.BoolType(attribute.value)
    if attribute.kind == "version":
        return parse_semver(str(attribute.value))
    return ct.StringType(attribute.value)


LIST_KINDS = ("ints", "bools", "strings", "versions")


def unsupported_attribute(device: Device, lists: bool) -> str | None:
    """`DeviceMatches` converts every attribute first: the name of one it cannot (a list value without
    DRAListTypeAttributes in v1.36, no value at all), else None."""
    for name, attribute in device.attributes.items():
        if attribute.kind in LIST_KINDS:
            if not lists or attribute.value is None:
                return name
        elif attribute.kind not in ("int", "bool", "string", "version"):
            return name
    return None


def split_qualified(name: str, driver: str) -> tuple[str, str]:
    """`parseQualifiedName`: (domain, id), the driver's domain for a name without one."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_value(driver: str, device: Device, multiple: bool = False) -> ct.MapType:
    """The `device` variable of a selector (`DeviceMatches`): driver, attributes and capacity by domain, and
    with DRAConsumableCapacity (`multiple`) `allowMultipleAllocations` (false when unset)."""
    attributes: dict[str, dict] = {}
    for name, attribute in device.attributes.items():
        domain, ident = split_qualified(name, driver)
        attributes.setdefault(domain, {})[ct.StringType(ident)] = _cel_attribute(attribute)
    capacity: dict[str, dict] = {}
    for name, nanos in device.capacity.items():
        domain, ident = split_qualified(name, driver)
        capacity.setdefault(domain, {})[ct.StringType(ident)] = Quantity(nanos)
    fields = {
        ct.StringType("driver"): ct.StringType(driver),
        ct.StringType("attributes"): DefaultMap({ct.StringType(d): ct.MapType(v) for d, v in attributes.items()}),
        ct.StringType("capacity"): DefaultMap({ct.StringType(d): ct.MapType(v) for d, v in capacity.items()}),
    }
    if multiple:
        fields[ct.StringType("allowMultipleAllocations")] = ct.BoolType(bool(device.allow_multiple))
    return ct.MapType(fields)


# --------------------------------------------------------------------------- evaluation with costs

class _Budget:
    """cel-go's CostTracker: the actual cost so far and its limit."""

    __slots__ = ("cost", "limit")

    def __init__(self, limit: int) -> None:
        self.cost, self.limit = 0, limit

    def add(self, amount: int) -> None:
        self.cost += amount
        if self.cost > self.limit:
            raise _CostExceeded


def _size(value: Any) -> int:
    """cel-go's `actualSize`: a string's, list's or map's size, else 1."""
    return len(value) if isinstance(value, (str, bytes, list, dict)) else 1


def _call_cost(name: str, args: list) -> int:
    """`CostTracker.costCall` (with the Kubernetes CostEstimator) for the calls a selector makes."""
    if name in _SIZED_BY_ARGUMENT and args:
        return math.ceil(_size(args[0]) * STRING_TRAVERSAL_COST_FACTOR)
    if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_") and all(isinstance(a, (str, bytes)) for a in args):
        return math.ceil(min(_size(args[0]), _size(args[1])) * STRING_TRAVERSAL_COST_FACTOR)
    if name == "_in_" and len(args) == 2 and isinstance(args[1], list):
        return _size(args[1])
    if name == "_+_" and all(isinstance(a, (str, bytes)) for a in args):
        return math.ceil((_size(args[0]) + _size(args[1])) * STRING_TRAVERSAL_COST_FACTOR)
    if name in ("startsWith", "endsWith") and args:
        return math.ceil(_size(args[0]) * STRING_TRAVERSAL_COST_FACTOR)
    if name == "matches" and len(args) == 2:
        return (math.ceil((1 + _size(args[0])) * STRING_TRAVERSAL_COST_FACTOR)
                * math.ceil(_size(args[1]) * REGEX_STRING_LENGTH_COST_FACTOR))
    if name == "contains" and len(args) == 2 and isinstance(args[0], str):
        return (math.ceil(_size(args[0]) * STRING_TRAVERSAL_COST_FACTOR)
                * math.ceil(_size(args[1]) * STRING_TRAVERSAL_COST_FACTOR))
    return 1


_OPERATORS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
              "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_", "addition_add": "_+_",
              "addition_sub": "_-_", "multiplication_mul": "_*_", "multiplication_div": "_/_",
              "multiplication_mod": "_%_", "unary_not": "!_", "unary_neg": "-_"}


def _error(message: str, cause: type = TypeError) -> CELEvalError:
    return CELEvalError(message, cause, None)


class SelectorEvaluator(Evaluator):
    """celpy's interpreter with cel-go's evaluation order and costs, the Kubernetes libraries and `cel.bind`."""

    def __init__(self, ast: lark.Tree, activation: Activation, budget: _Budget,
                 local: dict[str, Any] | None = None) -> None:
        super().__init__(ast, activation)
        self.budget = budget
        self.local = local or {}  # comprehension and cel.bind variables, innermost last

    def sub_evaluator(self, ast: lark.Tree) -> SelectorEvaluator:
        return SelectorEvaluator(ast, self.activation, self.budget, dict(self.local))

    def ident_value(self, name: str, root_scope: bool = False) -> Any:
        if name in self.local:
            return self.local[name]
        return super().ident_value(name, root_scope)

    def _bound(self, tree: lark.Tree, name: str, value: Any) -> Any:
        """`tree` evaluated with `name` bound to `value` (a comprehension variable), same budget."""
        saved = self.local.get(name, _MISSING)
        self.local[name] = value
        try:
            return self.visit(tree)
        finally:
            if saved is _MISSING:
                del self.local[name]
            else:
                self.local[name] = saved

    # ------------------------------------------------------------------ logical operators
    def conditionalor(self, tree: lark.Tree) -> Any:
        return self._logical(tree, ct.logical_or, stop=True)

    def conditionaland(self, tree: lark.Tree) -> Any:
        return self._logical(tree, ct.logical_and, stop=False)

    def _logical(self, tree: lark.Tree, combine: Callable, stop: bool) -> Any:
        """cel-go's evalOr/evalAnd: the left side first; a decisive bool ends it, else the right one too."""
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        left = self.visit(tree.children[0])
        if isinstance(left, ct.BoolType) and bool(left) is stop:
            return left
        right = self.visit(tree.children[1])
        try:
            return combine(left, right)
        except TypeError:
            return _error("no such overload")

    def expr(self, tree: lark.Tree) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        condition = self.visit(tree.children[0])
        if isinstance(condition, CELEvalError):
            return condition
        if not isinstance(condition, ct.BoolType):
            return _error("no such overload")
        return self.visit(tree.children[1] if condition else tree.children[2])

    # ------------------------------------------------------------------ operators (calls)
    def relation(self, tree: lark.Tree) -> Any:
        return self._binary(tree)

    def addition(self, tree: lark.Tree) -> Any:
        return self._binary(tree)

    def multiplication(self, tree: lark.Tree) -> Any:
        return self._binary(tree)

    def _binary(self, tree: lark.Tree) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        op_tree, right_tree = tree.children
        name = _OPERATORS[op_tree.data]
        left = self.visit(op_tree.children[0])
        right = self.visit(right_tree)
        return self._call(name, base_functions[name], [left, right])

    def unary(self, tree: lark.Tree) -> Any:
        if len(tree.children) == 1:
            return self.visit(tree.children[0])
        op_tree, operand = tree.children
        name = _OPERATORS[op_tree.data]
        return self._call(name, base_functions[name], [self.visit(operand)])

    def _call(self, name: str, function: Callable, args: list) -> Any:
        """A function call: an error argument is the result; else its cost, then the function."""
        for arg in args:
            if isinstance(arg, CELEvalError):
                return arg
        self.budget.add(_call_cost(name, args))
        try:
            result = function(*args)
        except (TypeError, AttributeError):
            return _error("no such overload")
        except ZeroDivisionError:
            return _error("division by zero", ZeroDivisionError)
        except (ValueError, OverflowError) as exc:
            return _error(str(exc) or "return error for overflow", ValueError)
        return result

    # ------------------------------------------------------------------ selection
    def member_dot(self, tree: lark.Tree) -> Any:
        member = self.visit(tree.children[0])
        return self._select(member, ct.StringType(tree.children[1].value))

    def member_index(self, tree: lark.Tree) -> Any:
        member = self.visit(tree.children[0])
        index = self.visit(tree.children[1])
        if isinstance(index, CELEvalError):
            return index
        return self._select(member, index)

    def _select(self, member: Any, key: Any) -> Any:
        """A field or index step (a qualifier: cost 1); a missing key is cel-go's `no such key: k`."""
        if isinstance(member, CELEvalError):
            return member
        self.budget.add(1)
        if isinstance(member, ct.MapType):
            try:
                return member[key]
            except KeyError:
                return _error(f"no such key: {key}", KeyError)
            except TypeError:
                return _error("unsupported key type")
        if isinstance(member, ct.ListType):
            if not isinstance(key, ct.IntType) or isinstance(key, ct.BoolType):
                return _error("unsupported index type")
            if not 0 <= int(key) < len(member):
                return _error(f"index out of bounds: {int(key)}", IndexError)
            return member[int(key)]
        return _error(f"type '{type(member).__name__}' does not support field selection")

    def primary(self, tree: lark.Tree) -> Any:
        child = tree.children[0]
        kind = child.data
        if kind == "ident":
            self.budget.add(1)
            name = child.children[0].value
            try:
                return self.ident_value(name)
            except KeyError:
                return _error(f"undeclared reference to '{name}' (in container '')", KeyError)
        if kind == "list_lit":
            self.budget.add(LIST_CREATE_BASE_COST)
            return super().primary(tree)
        if kind == "map_lit":
            self.budget.add(MAP_CREATE_BASE_COST)
            return super().primary(tree)
        if kind == "ident_arg":
            name = child.children[0].value
            if name in ("has", "dyn"):
                return super().primary(tree)
            args = self.visit_children(child.children[1]) if len(child.children) > 1 else []
            function = FUNCTIONS.get(name) or base_functions.get(name)
            if function is None:
                return _error(f"undeclared reference to '{name}' (in container '')", KeyError)
            return self._call(name, function, args)
        return super().primary(tree)

    # ------------------------------------------------------------------ methods and macros
    def member_dot_arg(self, tree: lark.Tree) -> Any:
        member_tree, name_token = tree.children[0], tree.children[1]
        name = name_token.value
        arg_trees = list(tree.children[2].children) if len(tree.children) > 2 else []
        if name == "bind" and _is_ident(member_tree, "cel") and len(arg_trees) == 3:
            return self._bind(arg_trees)
        if name in MACROS and len(arg_trees) in (2, 3) and _ident_name(arg_trees[0]) is not None:
            return self._comprehension(name, self.visit(member_tree), arg_trees)
        target = self.visit(member_tree)
        args = [self.visit(a) for a in arg_trees]
        function = METHODS.get(name) or base_functions.get(name)
        if function is None:
            return _error(f"undeclared reference to '{name}' (in container '')", KeyError)
        return self._call(name, function, [target, *args])

    def _bind(self, args: list[lark.Tree]) -> Any:
        """`cel.bind(v, init, expr)`: a comprehension over `[]` with `v = init` (cost 10 + init + expr)."""
        self.budget.add(LIST_CREATE_BASE_COST)
        value = self.visit(args[1])
        return self._bound(args[2], _ident_name(args[0]), value)

    def _comprehension(self, macro: str, target: Any, args: list[lark.Tree]) -> Any:
        """all / exists / exists_one / map / filter as cel-go expands them (`parser/macro.go`), step by step
        with cel-go's costs: the loop condition and step, the accumulator's reads and the result."""
        if isinstance(target, CELEvalError):
            return target
        if isinstance(target, ct.MapType):
            items: Iterable = list(target.keys())
        elif isinstance(target, ct.ListType):
            items = list(target)
        else:
            return _error("no such overload")
        var, body = _ident_name(args[0]), args[-1]
        budget = self.budget
        if macro in ("all", "exists"):
            stop = macro == "exists"  # the value that ends the loop
            accu: Any = ct.BoolType(not stop)
            for item in items:
                budget.add(2 if macro == "all" else 3)  # @not_strictly_false(accu) [of !accu]
                if isinstance(accu, ct.BoolType) and bool(accu) is stop:
                    break
                budget.add(1)  # accu read by the step
                value = self._bound(body, var, item)
                try:
                    accu = (ct.logical_or if stop else ct.logical_and)(accu, value)
                except TypeError:
                    accu = _error("no such overload")
            budget.add(1)
            return accu
        if macro == "exists_one":
            count = 0
            for item in items:
                value = self._bound(body, var, item)
                if isinstance(value, CELEvalError):
                    return value
                budget.add(3 if value else 1)
                count += 1 if value else 0
            budget.add(2)
            return ct.BoolType(count == 1)
        budget.add(LIST_CREATE_BASE_COST)  # map / filter: accumulate into a list
        out = []
        for item in items:
            if macro == "filter" or len(args) == 3:
                keep = self._bound(args[1], var, item)
                if isinstance(keep, CELEvalError):
                    return keep
                if not isinstance(keep, ct.BoolType):
                    return _error("no such overload")
                if not keep:
                    budget.add(1)
                    continue
            value = item if macro == "filter" else self._bound(body, var, item)
            if isinstance(value, CELEvalError):
                return value
            budget.add(1 + LIST_CREATE_BASE_COST + 1 + (1 if macro == "filter" else 0))
            out.append(value)
        budget.add(1)
        return ct.ListType(out)


def _ident_name(tree: Any) -> str | None:
    """The identifier an expression tree is made of alone (a comprehension variable), else None."""
    node = tree
    while isinstance(node, lark.Tree) and len(node.children) == 1 and node.data != "ident":
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "ident":
        return node.children[0].value
    return None


def _is_ident(tree: Any, name: str) -> bool:
    return _ident_name(tree) == name


# --------------------------------------------------------------------------- compiling

@dataclass(eq=False)
class Selector:
    """A compiled selector: its tree, what it reads of a device, and its verdicts so far."""

    expression: str
    tree: lark.Tree
    reads: tuple[tuple[str, ...], ...] | None  # device paths it reads (None: possibly anything)
    verdicts: dict[tuple, bool | str] = field(default_factory=dict)  # read key → verdict or error text

    def matches(self, driver: str, device: Device, limit: int = CEL_SELECTOR_MAX_COST, *,
                multiple: bool = False, lists: bool = True) -> bool:
        """Whether `device` (of `driver`) passes; CelRuntimeError when the expression fails on it. `multiple`:
        the environment of DRAConsumableCapacity (`device.allowMultipleAllocations` defined); `lists`:
        DRAListTypeAttributes (without it a list value cannot be converted, `getAttributeValue`)."""
        unsupported = unsupported_attribute(device, lists)
        if unsupported is not None:
            raise CelRuntimeError(f"attribute {unsupported}: unsupported attribute value")
        key = (multiple, self.read_key(driver, device))
        verdict = self.verdicts.get(key)
        if verdict is None:
            verdict = self.verdicts[key] = self._evaluate(device_value(driver, device, multiple), limit)
        if isinstance(verdict, str):
            raise CelRuntimeError(verdict)
        return verdict

    def read_key(self, driver: str, device: Device) -> tuple:
        """What the expression can read of the device: equal keys, equal verdicts."""
        if self.reads is None:
            return device.content_key(driver)
        return tuple(_read(driver, device, path) for path in self.reads)

    def _evaluate(self, value: ct.MapType, limit: int) -> bool | str:
        budget = _Budget(limit)
        activation = Activation(vars={"device": value})
        try:
            result = SelectorEvaluator(self.tree, activation, budget).visit(self.tree)
        except _CostExceeded:
            return COST_LIMIT_EXCEEDED
        except RecursionError:
            return "expression too deeply nested"
        if isinstance(result, CELEvalError):
            return str(result.args[0]) if result.args else "evaluation error"
        if not isinstance(result, ct.BoolType):
            return f"CEL result of type {type(result).__name__} could not be converted to bool"
        return bool(result)


_MISSING = object()


def _read(driver: str, device: Device, path: tuple[str, ...]) -> Any:
    """The value at `path` of the device variable, as a hashable key part."""
    if not path:
        return device.content_key(driver)
    if path[0] == "driver":
        return driver
    if path[0] == "allowMultipleAllocations":
        return device.allow_multiple
    if path[0] not in ("attributes", "capacity"):
        return None
    source = device.attributes if path[0] == "attributes" else device.capacity
    entries = tuple(sorted((split_qualified(k, driver), _hashable(v)) for k, v in source.items()))
    if len(path) == 1:
        return entries
    domain = tuple(e for e in entries if e[0][0] == path[1])
    if len(path) == 2:
        return domain
    return next((v for (d, i), v in domain if i == path[2]), _MISSING)


def _hashable(value: Any) -> Any:
    return (value.kind, value.value) if isinstance(value, DeviceAttribute) else value


def _device_reads(tree: lark.Tree) -> tuple[tuple[str, ...], ...] | None:
    """The paths below `device` the expression reads with literal keys (`device.attributes["d"].x` reads
    ("attributes", "d", "x")); a shorter path where `device` or a map of it is used otherwise (iterated,
    bound, passed on). None when no path can be told (then every verdict is keyed by the whole device)."""
    paths: set[tuple[str, ...]] = set()

    def walk(node: Any) -> None:
        if not isinstance(node, lark.Tree):
            return
        chain = _member_chain(node)
        if chain is not None:
            root, steps, rest = chain
            if root == "device":
                paths.add(tuple(steps[:3]))
                for sub in rest:
                    walk(sub)
                return
        for child in node.children:
            walk(child)

    walk(tree)
    if any(_shadows_device(tree) for _ in (0,)):
        return None
    return tuple(sorted(paths))


def _member_chain(node: lark.Tree) -> tuple[str, list[str], list] | None:
    """For a member expression rooted at an identifier: (identifier, the literal keys from it outwards until
    the first step that is not a literal field or index, the sub-trees still to inspect), else None."""
    steps: list[tuple[str, Any]] = []
    others: list = []
    cur = node
    while isinstance(cur, lark.Tree):
        if cur.data in ("member_dot",):
            steps.append(("key", cur.children[1].value))
            cur = cur.children[0]
        elif cur.data == "member_index":
            literal = _string_literal(cur.children[1])
            steps.append(("key", literal) if literal is not None else ("stop", None))
            others.append(cur.children[1])
            cur = cur.children[0]
        elif cur.data == "member_dot_arg":
            steps.append(("stop", None))
            others.extend(cur.children[2:])
            cur = cur.children[0]
        elif cur.data in ("member", "primary") and len(cur.children) == 1:
            cur = cur.children[0]
        elif cur.data == "ident":
            keys = []
            for kind, value in reversed(steps):
                if kind != "key":
                    break
                keys.append(value)
            return cur.children[0].value, keys, others
        else:
            return None
    return None


def _string_literal(tree: Any) -> str | None:
    node = tree
    while isinstance(node, lark.Tree) and len(node.children) == 1 and node.data != "literal":
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "literal":
        token = node.children[0]
        if token.type == "STRING_LIT" and token.value[:1] not in "rR":
            try:
                return str(ct.StringType(_unquote(token.value)))
            except ValueError:
                return None
    return None


def _unquote(text: str) -> str:
    from celpy.evaluation import celstr

    return celstr(lark.Token("STRING_LIT", text))


def _shadows_device(tree: lark.Tree) -> bool:
    """A comprehension or binding variable named `device` (reads through it are not tracked)."""
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg" and len(node.children) > 2:
            args = node.children[2].children
            if args and _ident_name(args[0]) == "device":
                return True
    return False


_PARSER: CELParser | None = None


def _parse(expression: str) -> lark.Tree:
    global _PARSER
    if _PARSER is None:
        _PARSER = CELParser()
    try:
        return _PARSER.parse(expression)
    except CELParseError as exc:
        where = f"<input>:{exc.line or 1}:{exc.column or 1}"
        first = str(exc.args[0]).strip().splitlines()[0] if exc.args else "syntax error"
        raise CelError(f"compilation failed: ERROR: {where}: Syntax error: {first}") from None
    except RecursionError:
        raise CelError("compilation failed: expression nested too deeply") from None


@functools.lru_cache(maxsize=4096)
def compile_selector(expression: str) -> Selector:
    """Compile once: parse, check the functions it calls exist and that it can be a boolean."""
    tree = _parse(expression)
    for node in tree.iter_subtrees():
        name = None
        if node.data == "ident_arg":
            name = node.children[0].value
        elif node.data == "member_dot_arg":
            name = node.children[1].value
            if name == "bind" and _is_ident(node.children[0], "cel"):
                continue
        if name is not None and name not in KNOWN_FUNCTIONS:
            raise CelError(f"compilation failed: ERROR: <input>:{node.meta.line}:{node.meta.column}: "
                           f"undeclared reference to '{name}' (in container '')")
    _check_references(tree, frozenset({"device"}))
    kind = _static_type(tree)
    if kind not in ("bool", "dyn"):
        raise CelError(f"must evaluate to bool or the unknown type, not {kind}")
    return Selector(expression, _collapse(tree), _device_reads(tree))


# identifiers that name types (`type(x) == int`) and the `cel` namespace of cel.bind
_TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
                         "google"})


def _check_references(tree: Any, bound: frozenset[str]) -> None:
    """cel-go's checker for names: every identifier is `device`, a type name, or a variable a comprehension or
    `cel.bind` binds around it; else "undeclared reference to 'x' (in container '')"."""
    if not isinstance(tree, lark.Tree):
        return
    if tree.data == "ident":
        name = tree.children[0].value
        if name not in bound and name not in _TYPE_NAMES:
            raise CelError(f"compilation failed: ERROR: <input>:{tree.meta.line}:{tree.meta.column}: "
                           f"undeclared reference to '{name}' (in container '')")
        return
    if tree.data == "member_dot_arg" and len(tree.children) > 2:
        member, name, args = tree.children[0], tree.children[1].value, list(tree.children[2].children)
        if name == "bind" and _is_ident(member, "cel") and len(args) == 3 and _ident_name(args[0]):
            _check_references(args[1], bound)
            _check_references(args[2], bound | {_ident_name(args[0])})
            return
        if name in MACROS and len(args) in (2, 3) and _ident_name(args[0]):
            _check_references(member, bound)
            for arg in args[1:]:
                _check_references(arg, bound | {_ident_name(args[0])})
            return
    for child in tree.children:
        _check_references(child, bound)


# grammar levels that hold a single child when no operator is present: the evaluator passes through them
_PASSTHROUGH = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
                          "unary", "member"})


def _collapse(tree: Any) -> Any:
    """The tree without its pass-through levels (`expr → conditionalor → … → member` around each operand):
    the same evaluation, five times fewer nodes to visit."""
    if not isinstance(tree, lark.Tree):
        return tree
    while tree.data in _PASSTHROUGH and len(tree.children) == 1 and isinstance(tree.children[0], lark.Tree):
        tree = tree.children[0]
    tree.children = [_collapse(c) for c in tree.children]
    return tree


def _static_type(tree: Any) -> str:
    """The type of an expression when its form tells (a literal, an arithmetic or a comparison), else dyn."""
    node = tree
    while isinstance(node, lark.Tree) and len(node.children) == 1 and node.data not in ("literal", "primary"):
        node = node.children[0]
    if not isinstance(node, lark.Tree):
        return "dyn"
    if node.data in ("conditionalor", "conditionaland", "relation") or \
            (node.data == "unary" and node.children[0].data == "unary_not"):
        return "bool"
    if node.data == "primary":
        inner = node.children[0]
        if inner.data == "literal":
            return _literal_type(inner.children[0].type)
        if inner.data == "list_lit":
            return "list(dyn)"
        if inner.data == "map_lit":
            return "map(dyn, dyn)"
        if inner.data == "paren_expr":
            return _static_type(inner.children[0])
    if node.data == "literal":
        return _literal_type(node.children[0].type)
    if node.data in ("addition", "multiplication") and len(node.children) == 2:
        left, right = _static_type(node.children[0].children[0]), _static_type(node.children[1])
        return left if left == right and left in ("int", "double", "string") else "dyn"
    return "dyn"


def _literal_type(token_type: str) -> str:
    return {"INT_LIT": "int", "UINT_LIT": "uint", "FLOAT_LIT": "double", "STRING_LIT": "string",
            "MLSTRING_LIT": "string", "BYTES_LIT": "bytes", "BOOL_LIT": "bool", "NULL_LIT": "null_type"}.get(
        token_type, "dyn")
