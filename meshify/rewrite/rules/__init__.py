"""Op rules, one module per family.

Importing this package registers every rule in :data:`_api.REGISTRY` (and array methods
in ``METHODS``).  Each rule declares which parameters of its JAX function it models
(``op(..., reads=...)``); the function's whole signature is declared in
:mod:`meshify.rewrite._signatures`.
"""

from meshify.rewrite.rules import constructors, contractions, control, elementwise, lookups, reductions, shapes
from meshify.rewrite.rules import statistics
from meshify.rewrite.rules import convolution
from meshify.rewrite.rules import spatial
from meshify.rewrite.rules import dynamic
from meshify.rewrite.rules import rearranging
from meshify.rewrite.rules import segments
from meshify.rewrite.rules import spectral
from meshify.rewrite.rules import debugging
from meshify.rewrite.rules._api import BODY_OPS, METHODS, MODELS, REGISTRY, REQUIRED, Call, closed_world, op

__all__ = ["BODY_OPS", "METHODS", "MODELS", "REGISTRY", "REQUIRED", "Call", "closed_world", "op",
           "constructors", "contractions", "control", "elementwise", "lookups", "reductions", "shapes", "statistics"]
__all__ += ["convolution", "debugging", "dynamic", "rearranging", "segments", "spatial", "spectral"]
