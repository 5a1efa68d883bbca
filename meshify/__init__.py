"""meshify: name your dims, describe the mesh, get a readable shard_map program.

Importing meshify is light: the rewriter (and libcst) load on first use of a ``@mesh``
function, and generated files import only ``meshify.runtime``.
"""

from meshify.annotate import MeshFunction, MeshSpec, Rules, Tensor, mesh
from meshify.errors import MeshifyError

__version__ = "0.1.0"

__all__ = ["Tensor", "mesh", "MeshFunction", "MeshSpec", "Rules", "MeshifyError", "__version__"]
