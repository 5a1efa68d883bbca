"""``.reference`` of a converted file's function: the original ``@mesh`` function's, on demand.

A file written by ``meshify convert`` keeps only the sharded program; its header says
which file it came from (``# Regenerate: meshify convert SRC -o OUT``, both paths relative
to the converted file's folder).  Asking a function of it for ``.reference`` imports that
original file (running its top level, as any import does) and returns the untouched
function of the same qualified name.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import linecache
import os
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from meshify.errors import CallError

__all__ = ["original_reference"]

_REGENERATE = re.compile(r"# Regenerate: meshify convert (?P<args>(?P<src>.+?)(?: -o (?P<out>.+))?)$")
_HEADER_LINES = 12  # the header's comment lines (a long Regenerate line is wrapped onto "#     " lines)

_originals: dict[Path, ModuleType] = {}


def original_reference(local: Callable) -> Callable:
    """The single-device function that the converted ``local`` was generated from."""
    generated = inspect.getsourcefile(inspect.unwrap(local))  # a def under jax.jit: the def's file
    header = _logical_lines(linecache.getlines(generated)[:_HEADER_LINES]) if generated else []
    found = next((m for m in (_REGENERATE.match(line) for line in header) if m), None)
    if generated is None or found is None:
        raise CallError(f"{local.__qualname__} has no .reference: it was not written by meshify convert",
                        fix="call .reference on the original @mesh function")
    src, out = _paths(found)
    path = _source_file(Path(generated).resolve().parent, src, out)
    if path is None:
        raise CallError(f"cannot find {src}, which {Path(generated).name} was converted from, "
                        f"for {local.__qualname__}.reference",
                        fix="keep the original file where it was converted from (or beside the converted file), "
                            "or use the original module's function directly")
    target: object = _load(path)
    for part in local.__qualname__.split("."):
        target = getattr(target, part, None)
    reference = getattr(target, "reference", None)
    if reference is None:
        raise CallError(f"{path} has no @mesh function {local.__qualname__} any more",
                        fix=f"regenerate the converted file: {found.group(0)[len('# Regenerate: '):]}")
    original, converted = _load(path), getattr(inspect.unwrap(local), "__globals__", None)  # the converted module's
    if converted is None or not any(isinstance(c, type) and issubclass(c, tuple) and hasattr(c, "_fields")
                                    and c.__module__ == original.__name__ and c.__name__ in converted
                                    for c in vars(original).values()):
        return reference  # (no NamedTuple class of the module's own to return)

    mine, theirs = converted.get("__name__"), vars(original)

    @functools.wraps(reference)
    def in_converted_types(*args, **kwargs):
        # Arguments in the original's classes too: a scan body there builds its carry from the original's class,
        # which JAX checks against the carry it was given.
        args, kwargs = _retyped((args, kwargs), mine, theirs)
        return _retyped(reference(*args, **kwargs), original.__name__, converted)

    return in_converted_types


def _retyped(value, original: str | None, converted: dict):
    """``value`` with each NamedTuple of module ``original``'s classes made one of the class of that name and
    fields in namespace ``converted``: ``f.reference`` takes and returns the types ``f`` does (the same
    pytrees), while the original function inside it sees its own module's classes."""
    if isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple):
        cls = type(value)
        mine = converted.get(cls.__name__) if cls.__module__ == original else None
        items = [_retyped(v, original, converted) for v in value]
        if isinstance(mine, type) and getattr(mine, "_fields", None) == cls._fields:
            return mine(*items)
        return cls(*items)
    if isinstance(value, tuple | list):
        return type(value)(_retyped(v, original, converted) for v in value)
    if isinstance(value, dict):
        return {k: _retyped(v, original, converted) for k, v in value.items()}
    return value


def _logical_lines(lines: list[str]) -> list[str]:
    """The header's comments with each wrapped one joined again: the formatter breaks a comment longer
    than the line length (a deep path) onto lines that start ``#     ``."""
    out: list[str] = []
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("#     ") and out and out[-1].startswith("# "):
            out[-1] = f"{out[-1]} {line[1:].strip()}"
        else:
            out.append(line)
    return out


def _paths(found: re.Match) -> tuple[str, str | None]:
    """SRC and OUT of ``meshify convert SRC [-o OUT]``: shell-quoted, or as older headers wrote them."""
    try:
        words = shlex.split(found["args"])
    except ValueError:
        words = []
    if len(words) == 1 or len(words) == 3 and words[1] == "-o":
        return words[0], words[2] if len(words) == 3 else None
    return found["src"], found["out"]


def _source_file(here: Path, src: str, out: str | None) -> Path | None:
    """Where the original is now: as seen from the converted file's folder, else as written."""
    source = Path(src)
    candidates = []
    if out is not None and source.is_absolute() == Path(out).is_absolute():
        candidates.append(here / os.path.relpath(source, Path(out).parent))
    candidates += [source if source.is_absolute() else Path.cwd() / source, here / source.name]
    return next((c.resolve() for c in candidates if c.is_file()), None)


def _load(path: Path) -> ModuleType:
    if path not in _originals:
        name = f"_meshify_original_{abs(hash(str(path)))}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look modules up by name
        spec.loader.exec_module(module)
        _originals[path] = module
    return _originals[path]
