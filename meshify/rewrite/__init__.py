"""Source in, source out: ``@mesh`` functions -> ``jax.shard_map`` programs (see ``_driver``)."""

from meshify.rewrite._driver import NO_MESH_FUNCTIONS, Converted, GeneratedFunction, convert_source, rewrite_function
from meshify.rewrite._interp import FunctionPlan, Record

__all__ = ["NO_MESH_FUNCTIONS", "Converted", "GeneratedFunction", "FunctionPlan", "Record", "convert_source", "rewrite_function"]
