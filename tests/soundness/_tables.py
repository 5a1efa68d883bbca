"""Module arrays another case module reads (``module_array_rebound_outside``)."""
import jax.numpy as jnp

from meshify import Tensor

TABLE: Tensor["n"] = jnp.arange(16.0)
