"""What the child trusts, and values generated code cannot talk its way through.

``assert candidate(x) == 3`` passes for an object whose ``__eq__`` always returns True.  The
harness rewrites every comparison in the (trusted) test code so that each operand first goes
through a checker (:func:`checker`), and the child wraps the candidate's entry point so that every
value it returns goes through the same checker.  Plain data (numbers, strings, bytes, None and the
built-in containers of them, by exact type) passes untouched.  An instance of a class written in
Python once the candidate started (its own class) fails when that class defines behaviour of its
own: any special method beyond construction and display.  Any other object must not claim to equal, or to
be both below and above, probes it cannot have anticipated (a fresh object, a random integer, a
random string), and what it holds is checked too.

Trusted code (the HumanEval prompt, MBPP's imports and setup) travels in front of the program,
framed by :func:`frame`, so that the child can run it alone before the candidate's code.
"""

from __future__ import annotations

import ast
import collections
import gc
import os
import weakref
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from types import CodeType, MappingProxyType, MemberDescriptorType, ModuleType

from .syntax import compile_module, parse

HELPER = "__cbench_honest__"
TESTS_FILENAME = "<cbench-tests>"
_TRUSTED_MARK = "#cbench-trusted "

_SCALARS = frozenset({int, float, complex, bool, str, bytes, bytearray, type(None), range, Decimal})
_PLAIN_SEQUENCES = frozenset({list, tuple, set, frozenset})
# Containers (and their subclasses) whose items are checked too (dicts: keys and values).
_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_ITERABLE = (list, tuple, set, frozenset, collections.deque, *_VIEWS)
# Built-in objects that compare by contents they do not let one iterate: checked through their referents.
_OPAQUE = frozenset({MappingProxyType, slice})
# A class's own names that give its instances no behaviour: construction, display, bookkeeping.
_INERT = frozenset(
    {
        "__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__slots__",
        "__annotations__", "__match_args__", "__orig_bases__", "__parameters__", "__type_params__",
        "__abstractmethods__", "__dataclass_fields__", "__dataclass_params__", "__firstlineno__",
        "__static_attributes__", "__init__", "__new__", "__post_init__", "__init_subclass__",
        "__class_getitem__", "__repr__", "__getnewargs__", "_abc_impl",
    }
)  # fmt: skip
_CHECKED_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python (not in C)


class _Probe:
    """An object no honest value equals."""

    __slots__ = ()


def frame(trusted: str, own: Iterable[str], program: str) -> str:
    """``program`` behind the trusted code the child runs alone first.

    ``own`` are the names the candidate provides although the trusted code defines them (the entry
    point, functions it only declares).  The harness frames every program it builds, so the
    candidate's text never comes first and cannot forge a frame.
    """
    return f"{_TRUSTED_MARK}{len(trusted)} {' '.join(own)}\n{trusted}{program}"


def unframe(text: str) -> tuple[str, frozenset[str], str]:
    """(trusted code, the candidate's own names, program); an unframed text is all program."""
    if not text.startswith(_TRUSTED_MARK):
        return "", frozenset(), text
    header, _, rest = text.partition("\n")
    size, *own = header[len(_TRUSTED_MARK) :].split(" ")
    return rest[: int(size)], frozenset(own) - {""}, rest[int(size) :]


def existing_classes() -> dict[int, type]:
    """Every class alive now, by id (kept by identity: a class's metaclass may lie about equality)."""
    subclasses, found, stack = type.__subclasses__, {}, [object]
    while stack:
        cls = stack.pop()
        if id(cls) not in found:
            found[id(cls)] = cls
            stack.extend(subclasses(cls))
    return found


def checker(
    known: Mapping[int, type] | None = None, trusted: Mapping[int, type] | None = None
) -> tuple[Callable[[object], object], Callable]:
    """``(honest, guard)``: the value check for comparisons, and the wrapper for candidate callables.

    ``known`` are the classes that existed before the candidate ran (None: trust every class, for
    use outside a sample); ``trusted`` the sample's trusted code's classes, filled in once it ran.
    Everything both closures need is bound here, before the candidate runs, so that rebinding
    builtins or this module's attributes afterwards changes nothing.  ``known`` is read once, into
    a snapshot nothing can add to (the server makes the checks before forking, so children share
    it); ``trusted`` should be reachable from no module.
    """
    kind_of, a_class, a_string, a_dict, ident, subclass, some = type, type, str, dict, id, issubclass, any
    get_attr, has_attr, is_callable, items_of = getattr, hasattr, callable, iter
    dict_keys, dict_values, starts, ends = dict.keys, dict.values, str.startswith, str.endswith
    urandom, from_bytes, probe_class = os.urandom, int.from_bytes, _Probe
    fail, error, missing = AssertionError, Exception, AttributeError
    mro_of, dict_of, flags_of = (type.__dict__[name].__get__ for name in ("__mro__", "__dict__", "__flags__"))
    iterable, inert = _ITERABLE, _INERT
    # By id: a set looks a class up with its metaclass's __hash__ and __eq__, which may lie.
    scalars, plain, opaque = (frozenset(map(id, kinds)) for kinds in (_SCALARS, _PLAIN_SEQUENCES, _OPAQUE))
    referents, member, heap_type = gc.get_referents, MemberDescriptorType, _HEAP_TYPE
    proxy, callable_proxy = weakref.ProxyType, weakref.CallableProxyType
    no_attributes = (type, ModuleType)
    known_ids = frozenset(known) if known is not None else None
    trusted_get = (trusted if trusted is not None else {}).get

    def made_before(cls: type, held: tuple[type, ...] = tuple(known.values()) if known else ()) -> bool:
        """Whether ``cls`` existed before the sample (``held`` keeps their ids theirs) or trusted code
        made it."""
        key = ident(cls)
        return known_ids is None or key in known_ids or trusted_get(key) is cls

    def is_known(cls: type) -> bool:
        """Whether ``cls`` is no class of the candidate's: made before it, or written in C (an
        extension module's, such as numpy's scalars: a sample cannot write one)."""
        return made_before(cls) or not flags_of(cls) & heap_type

    def own_behaviour(kind: type) -> str | None:
        """What the candidate's own classes in ``kind``'s lineage change: a special method, or anything
        at all over a trusted class written in Python (whose code reads its attributes)."""
        if known_ids is None:
            return None
        lineage = mro_of(kind)
        over_python = some(flags_of(cls) & heap_type and is_known(cls) for cls in lineage)
        for cls in lineage:
            if is_known(cls):
                continue
            for name in dict_of(cls):
                if kind_of(name) is not a_string:
                    return "a name that is not a string"
                if name not in inert and (over_python or (starts(name, "__") and ends(name, "__"))):
                    return name if cls is kind else f"{cls.__qualname__}.{name}"
        return None

    def lies(value: object) -> bool:
        probes = (probe_class(), from_bytes(urandom(16), "little"), urandom(16).hex())
        for probe in probes:
            try:
                if value == probe or probe == value or not (value != probe):
                    return True
            except error:  # refusing to compare is honest
                pass
            try:
                if (value < probe) and (value > probe):
                    return True
            except error:
                pass
            if has_attr(kind_of(value), "__contains__"):  # never iterate (and so consume) an iterator
                try:
                    if probe in value:
                        return True
                except error:
                    pass
        return False

    def problem(value: object) -> str | None:
        """What is wrong with ``value`` or anything it holds (None: nothing)."""
        stack, seen = [value], {}
        while stack:
            item = stack.pop()
            kind = kind_of(item)
            if ident(kind) in scalars:
                continue
            if seen.get(ident(item)) is item:
                continue
            seen[ident(item)] = item
            if kind is proxy or kind is callable_proxy:
                return "a weak proxy (it forwards everything to an object the checks cannot see)"
            if ident(kind) in plain:
                stack.extend(item)
                continue
            if kind is a_dict:
                stack.extend(dict_keys(item))
                stack.extend(dict_values(item))
                continue
            behaviour = own_behaviour(kind)
            if behaviour is not None:
                return f"an instance of the candidate's own class {kind.__name__} (it defines {behaviour})"
            if subclass(kind, a_dict):
                stack.extend(dict_keys(item))
                stack.extend(dict_values(item))
            elif subclass(kind, iterable):
                stack.extend(items_of(item))
            elif ident(kind) in opaque:
                stack.extend(referents(item))
            elif not made_before(kind) and has_attr(kind, "__len__"):  # a container new to the process
                try:  # (numpy's arrays, which may hold objects): what it yields
                    stack.extend(items_of(item))
                except error:
                    pass
            if not subclass(kind, no_attributes):  # what its attributes hold
                attributes = get_attr(item, "__dict__", None)
                if subclass(kind_of(attributes), a_dict):  # a dict subclass is checked like any value
                    stack.append(attributes)
            if flags_of(kind) & heap_type and not subclass(kind, a_class):  # and its slots
                for cls in mro_of(kind):
                    for slot in dict_of(cls).values():
                        if kind_of(slot) is member:
                            try:
                                stack.append(slot.__get__(item, kind))
                            except missing:  # an empty slot
                                pass
            if lies(item):
                return f"a value of class {kind.__name__} that claims to equal values it cannot know"
        return None

    def honest(value: object) -> object:
        """Return ``value`` unchanged, or raise AssertionError when it (or anything it holds) lies."""
        found = problem(value)
        if found is not None:
            raise fail(f"the tests compared {found}")
        return value

    def guard(function: object) -> object:
        """``function`` with every value it returns checked like a compared one (a class that is not the
        candidate's stays as it is: the tests may construct it)."""
        if not is_callable(function) or (subclass(kind_of(function), a_class) and is_known(function)):
            return function

        def candidate(*args: object, **kwargs: object) -> object:
            result = function(*args, **kwargs)
            found = problem(result)
            if found is not None:
                raise fail(f"the candidate returned {found}")
            return result

        return candidate

    return honest, guard


#: The check for use outside a sample: every class counts as trusted, only the probes apply.
honest = checker()[0]


# Nodes that hold no comparison: the walk below does not descend into them.
_LEAVES = (ast.Constant, ast.Name, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _guard(expr: ast.expr) -> ast.expr:
    name = ast.copy_location(ast.Name(HELPER, ast.Load()), expr)
    return ast.copy_location(ast.Call(name, [expr], []), expr)


def _checked_compares(tree: ast.AST):
    """Every comparison node whose operands must be checked (a lean walk: it runs per problem)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, _LEAVES))
            elif isinstance(value, ast.AST) and not isinstance(value, _LEAVES):
                stack.append(value)
        if type(node) is ast.Compare and any(isinstance(op, _CHECKED_OPS) for op in node.ops):
            yield node


def harden_tree(source: str) -> ast.Module:
    """The test source's tree with every value comparison's operands routed through :func:`honest`."""
    tree = parse(source, TESTS_FILENAME)
    for node in list(_checked_compares(tree)):
        node.left = _guard(node.left)
        node.comparators = [_guard(c) for c in node.comparators]
    return tree


def compile_tests(source: str) -> CodeType:
    """Hardened test code, ready to run (SyntaxError when the tests themselves are broken)."""
    return compile_module(harden_tree(source), TESTS_FILENAME)
