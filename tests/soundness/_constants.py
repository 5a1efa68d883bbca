"""Arrays another module of the user's project defines (imported by imported_array_unnamed; not a case)."""
import jax.numpy as jnp

ROW_SCALE = jnp.arange(1.0, 9.0)[:, None]  # [8, 1]: one scale per example
