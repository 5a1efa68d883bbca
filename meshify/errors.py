"""meshify's user-facing errors.

Every error a user can cause carries a stable code, the place in their source
(``path:line:col``), the offending source line with a caret under the culprit,
and a suggested fix.  ``str(err)`` renders all of it, mypy-style::

    model.py:12:9: error[MSH104]: jax.numpy.fft.fft is not supported on split dim 'd_ff'
        h = jnp.fft.fft(x)
            ^^^^^^^^^^^^^^
      fix: map 'd_ff' to no mesh axis (rules={'d_ff': None}) or ...
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MeshifyError",
    "SourceError",
    "AnnotationError",
    "RulesError",
    "UnsupportedError",
    "LayoutError",
    "CallError",
    "StartupError",
    "SourceSpan",
]


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """Where an error points: 1-based line, 1-based column, and the span's width."""

    path: str
    line: int
    col: int
    source_line: str = ""
    width: int = 1

    def render(self) -> str:
        if not self.source_line:
            return ""
        text = self.source_line.rstrip("\n")
        caret_width = max(1, min(self.width, len(text) - (self.col - 1)))
        return f"    {text}\n    {' ' * (self.col - 1)}{'^' * caret_width}"


class MeshifyError(Exception):
    """Base class of every error meshify raises on purpose.

    Attributes:
        code: a stable identifier such as ``MSH104``.
        headline: one sentence saying what is wrong, naming the offending value.
        span: where in the user's source, if known.
        fix: what the user can change.
    """

    code = "MSH000"

    def __init__(self, headline: str, *, span: SourceSpan | None = None, fix: str = "",
                 code: str | None = None) -> None:
        self.headline = headline
        self.span = span
        self.fix = fix
        if code is not None:
            self.code = code
        super().__init__(self._render())

    def with_span(self, span: SourceSpan) -> MeshifyError:
        """Returns the same error pointing at ``span`` (if it had no place yet)."""
        if self.span is not None:
            return self
        return type(self)(self.headline, span=span, fix=self.fix, code=self.code)

    def _render(self) -> str:
        where = ""
        if self.span is not None:
            where = f"{self.span.path}:{self.span.line}:{self.span.col}: "
        parts = [f"{where}error[{self.code}]: {self.headline}"]
        if self.span is not None and self.span.source_line:
            parts.append(self.span.render())
        if self.fix:
            parts.append(f"  fix: {self.fix}")
        return "\n".join(parts)

    def __reduce__(self):  # keep errors picklable (pytest-xdist, multiprocessing)
        return (_rebuild, (type(self), self.headline, self.span, self.fix, self.code))


def _rebuild(cls, headline, span, fix, code):
    return cls(headline, span=span, fix=fix, code=code)


class SourceError(MeshifyError):
    """The input file cannot be read or parsed (syntax error, bad encoding, empty)."""

    code = "MSH001"


class AnnotationError(MeshifyError):
    """A ``Tensor[...]`` hint or an ``@mesh(...)`` decorator is malformed."""

    code = "MSH010"


class RulesError(MeshifyError):
    """Layout rules name unknown mesh axes, or would split one value twice over an axis."""

    code = "MSH020"


class UnsupportedError(MeshifyError):
    """A construct or op that meshify cannot shard where it stands."""

    code = "MSH030"


class LayoutError(MeshifyError):
    """Dims or layouts do not fit: einsum ranks, mismatched dims, a wrong return hint."""

    code = "MSH040"


class CallError(MeshifyError):
    """A sharded function was called with inputs the mesh cannot take."""

    code = "MSH050"


class StartupError(MeshifyError):
    """Processes cannot form one job: bad coordinator address, process ids or device counts."""

    code = "MSH080"
