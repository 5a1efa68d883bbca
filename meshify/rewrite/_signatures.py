"""The whole signature of every JAX function meshify has a rule for, as the installed JAX has it.

An op rule declares which of these parameters it models (:func:`meshify.rewrite.rules.op`);
:func:`bind` maps a call's arguments onto the declared parameters by Python's own rules,
so an argument meshify does not model can never be dropped or passed through unseen: it is
either modelled, at its default, or (for elementwise families) a static value that keeps
the op elementwise; anything else is a positioned error.

The table is written out here, not read from JAX at rewrite time (``explain`` imports no
JAX); ``tests/test_signatures.py`` checks it against ``inspect.signature`` of the installed
JAX, and ``python -m meshify.rewrite._signatures NAME...`` prints the entries to paste
after a JAX upgrade.  A default that is not a literal is written ``...``.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass

from meshify._unary import UNARY  # (the runtime reads it too, without the rewriter)

__all__ = ["UNARY", "BINARY", "STATS", "REFUSED_ELEMENTWISE", "SIGNATURES", "Param", "Signature", "signature", "describe", "resolve"]

#: Elementwise functions of two arrays (numpy broadcasting), registered the same way.
BINARY: dict[str, str] = {
    "jax.numpy.maximum": "*args, out=None, where=None",
    "jax.numpy.minimum": "*args, out=None, where=None",
    "jax.numpy.power": "x1, x2, /",
    "jax.numpy.add": "*args, out=None, where=None",
    "jax.numpy.subtract": "*args, out=None, where=None",
    "jax.numpy.multiply": "*args, out=None, where=None",
    "jax.numpy.divide": "x1, x2, /",
    "jax.numpy.true_divide": "x1, x2, /",
    "jax.numpy.greater": "x, y, /",
    "jax.numpy.less": "x, y, /",
    "jax.numpy.equal": "x, y, /",
    "jax.numpy.not_equal": "x, y, /",
    "jax.numpy.greater_equal": "x, y, /",
    "jax.numpy.less_equal": "x, y, /",
    "jax.numpy.logical_and": "*args, out=None, where=None",
    "jax.numpy.logical_or": "*args, out=None, where=None",
    "jax.numpy.logaddexp": "*args, out=None, where=None",
    # The rest of the elementwise functions of two arrays (jax.lax's take equal ranks, as on one device).
    "jax.numpy.arctan2": "x1, x2, /",
    "jax.numpy.atan2": "x1, x2, /",
    "jax.numpy.copysign": "x1, x2, /",
    "jax.numpy.heaviside": "x1, x2, /",
    "jax.numpy.hypot": "x1, x2, /",
    "jax.numpy.float_power": "x, y, /",
    "jax.numpy.floor_divide": "x1, x2, /",
    "jax.numpy.fmod": "x1, x2, /",
    "jax.numpy.mod": "x1, x2, /",
    "jax.numpy.remainder": "x1, x2, /",
    "jax.numpy.fmax": "x1, x2",
    "jax.numpy.fmin": "x1, x2",
    "jax.numpy.gcd": "x1, x2",
    "jax.numpy.lcm": "x1, x2",
    "jax.numpy.nextafter": "x, y, /",
    "jax.numpy.logaddexp2": "*args, out=None, where=None",
    "jax.numpy.bitwise_and": "*args, out=None, where=None",
    "jax.numpy.bitwise_or": "*args, out=None, where=None",
    "jax.numpy.bitwise_xor": "*args, out=None, where=None",
    "jax.numpy.left_shift": "x, y, /",
    "jax.numpy.right_shift": "x1, x2, /",
    "jax.numpy.bitwise_left_shift": "x, y, /",
    "jax.numpy.bitwise_right_shift": "x1, x2, /",
    "jax.numpy.logical_xor": "*args, out=None, where=None",
    "jax.lax.add": "x, y",
    "jax.lax.atan2": "x, y",
    "jax.lax.bitwise_and": "x, y",
    "jax.lax.bitwise_or": "x, y",
    "jax.lax.bitwise_xor": "x, y",
    "jax.lax.div": "x, y",
    "jax.lax.eq": "x, y",
    "jax.lax.ge": "x, y",
    "jax.lax.gt": "x, y",
    "jax.lax.igamma": "a, x",
    "jax.lax.le": "x, y",
    "jax.lax.lt": "x, y",
    "jax.lax.max": "x, y",
    "jax.lax.min": "x, y",
    "jax.lax.mul": "x, y, *, out_dtype=None",
    "jax.lax.ne": "x, y",
    "jax.lax.nextafter": "x1, x2",
    "jax.lax.pow": "x, y",
    "jax.lax.rem": "x, y",
    "jax.lax.shift_left": "x, y",
    "jax.lax.shift_right_arithmetic": "x, y",
    "jax.lax.shift_right_logical": "x, y",
    "jax.lax.sub": "x, y",
    "jax.lax.zeta": "x, q",
    "jax.scipy.special.beta": "a, b",
    "jax.scipy.special.betaln": "a, b",
    "jax.scipy.special.gammainc": "a, x",
    "jax.scipy.special.xlog1py": "x, y",
    "jax.scipy.special.xlogy": "x, y",
    "jax.scipy.special.boxcox": "x, lmbda",
    "jax.scipy.special.boxcox1p": "x, lmbda",
    # (found missing by tests/test_elementwise_surface.py's scan of JAX's namespaces)
    "jax.numpy.isclose": "a, b, rtol=1e-05, atol=1e-08, equal_nan=False",
    "jax.numpy.ldexp": "x1, x2, /",
    "jax.numpy.pow": "x1, x2, /",
    "jax.lax.complex": "x, y",
    "jax.lax.igamma_grad_a": "a, x",
    "jax.lax.igammac": "a, x",
    "jax.lax.polygamma": "m, x",
    "jax.scipy.special.comb": "N, k, *, repetition=False",
    "jax.scipy.special.gammaincc": "a, x",
    "jax.scipy.special.kl_div": "p, q",
    "jax.scipy.special.owens_t": "h, a",
    "jax.scipy.special.poch": "z, m",
    "jax.scipy.special.rel_entr": "p, q",
}

#: Elementwise functions refused on split or partial blocks all the same, each with why (the generic "no rule"
#: fix, unsplitting a dim, would be wrong advice for an elementwise function).
REFUSED_ELEMENTWISE: dict[str, str] = {
    **{f"jax.scipy.special.{n}": "it runs a loop (or a switch) whose carry starts from constants, which jax.shard_map's "
                                 "replication check refuses on a device's block (jax 0.10.2)"
       for n in ("exp1", "expi", "expn", "spence", "polygamma")},
    "jax.lax.mulhi": "XLA:CPU cannot compile it inside jax.shard_map (jax 0.10.2)",
}

#: jax.scipy.stats' univariate distributions' densities, distribution functions and quantiles: elementwise in
#: every array argument (x, the shape parameters, loc, scale), numpy broadcasting.  Each was checked on a
#: device's block under shard_map (values and gradients); not here: beta's cdf family (a while_loop fails
#: shard_map's check_vma in jax 0.10.2), and those whose check failed for other reasons (bernoulli.cdf/ppf,
#: betabinom, poisson.cdf, uniform.logpdf/pdf, gumbel ppf).
STATS: dict[str, str] = {
    "jax.scipy.stats.bernoulli.logpmf": "k, p, loc=0",
    "jax.scipy.stats.bernoulli.pmf": "k, p, loc=0",
    "jax.scipy.stats.beta.logpdf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.beta.pdf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.binom.logpmf": "k, n, p, loc=0",
    "jax.scipy.stats.binom.pmf": "k, n, p, loc=0",
    "jax.scipy.stats.cauchy.logpdf": "x, loc=0, scale=1",
    "jax.scipy.stats.cauchy.pdf": "x, loc=0, scale=1",
    "jax.scipy.stats.cauchy.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.cauchy.logcdf": "x, loc=0, scale=1",
    "jax.scipy.stats.cauchy.sf": "x, loc=0, scale=1",
    "jax.scipy.stats.cauchy.logsf": "x, loc=0, scale=1",
    "jax.scipy.stats.cauchy.ppf": "q, loc=0, scale=1",
    "jax.scipy.stats.cauchy.isf": "q, loc=0, scale=1",
    "jax.scipy.stats.chi2.logpdf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.chi2.pdf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.chi2.cdf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.chi2.logcdf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.chi2.sf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.chi2.logsf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.expon.logpdf": "x, loc=0, scale=1",
    "jax.scipy.stats.expon.pdf": "x, loc=0, scale=1",
    "jax.scipy.stats.expon.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.expon.logcdf": "x, loc=0, scale=1",
    "jax.scipy.stats.expon.sf": "x, loc=0, scale=1",
    "jax.scipy.stats.expon.logsf": "x, loc=0, scale=1",
    "jax.scipy.stats.expon.ppf": "q, loc=0, scale=1",
    "jax.scipy.stats.gamma.logpdf": "x, a, loc=0, scale=1",
    "jax.scipy.stats.gamma.pdf": "x, a, loc=0, scale=1",
    "jax.scipy.stats.gamma.cdf": "x, a, loc=0, scale=1",
    "jax.scipy.stats.gamma.logcdf": "x, a, loc=0, scale=1",
    "jax.scipy.stats.gamma.sf": "x, a, loc=0, scale=1",
    "jax.scipy.stats.gamma.logsf": "x, a, loc=0, scale=1",
    "jax.scipy.stats.gennorm.logpdf": "x, beta",
    "jax.scipy.stats.gennorm.pdf": "x, beta",
    "jax.scipy.stats.gennorm.cdf": "x, beta",
    "jax.scipy.stats.geom.logpmf": "k, p, loc=0",
    "jax.scipy.stats.geom.pmf": "k, p, loc=0",
    "jax.scipy.stats.gumbel_l.logpdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_l.pdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_l.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_l.logcdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_l.sf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_l.logsf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_r.logpdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_r.pdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_r.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_r.logcdf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_r.sf": "x, loc=0, scale=1",
    "jax.scipy.stats.gumbel_r.logsf": "x, loc=0, scale=1",
    "jax.scipy.stats.laplace.logpdf": "x, loc=0, scale=1",
    "jax.scipy.stats.laplace.pdf": "x, loc=0, scale=1",
    "jax.scipy.stats.laplace.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.logistic.logpdf": "x, loc=0, scale=1",
    "jax.scipy.stats.logistic.pdf": "x, loc=0, scale=1",
    "jax.scipy.stats.logistic.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.logistic.sf": "x, loc=0, scale=1",
    "jax.scipy.stats.logistic.ppf": "x, loc=0, scale=1",
    "jax.scipy.stats.logistic.isf": "x, loc=0, scale=1",
    "jax.scipy.stats.nbinom.logpmf": "k, n, p, loc=0",
    "jax.scipy.stats.nbinom.pmf": "k, n, p, loc=0",
    "jax.scipy.stats.norm.logpdf": "x, loc=0, scale=1",
    "jax.scipy.stats.norm.pdf": "x, loc=0, scale=1",
    "jax.scipy.stats.norm.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.norm.logcdf": "x, loc=0, scale=1",
    "jax.scipy.stats.norm.sf": "x, loc=0, scale=1",
    "jax.scipy.stats.norm.logsf": "x, loc=0, scale=1",
    "jax.scipy.stats.norm.ppf": "q, loc=0, scale=1",
    "jax.scipy.stats.norm.isf": "q, loc=0, scale=1",
    "jax.scipy.stats.pareto.logpdf": "x, b, loc=0, scale=1",
    "jax.scipy.stats.pareto.pdf": "x, b, loc=0, scale=1",
    "jax.scipy.stats.pareto.cdf": "x, b, loc=0, scale=1",
    "jax.scipy.stats.pareto.logcdf": "x, b, loc=0, scale=1",
    "jax.scipy.stats.pareto.sf": "x, b, loc=0, scale=1",
    "jax.scipy.stats.pareto.logsf": "x, b, loc=0, scale=1",
    "jax.scipy.stats.pareto.ppf": "q, b, loc=0, scale=1",
    "jax.scipy.stats.poisson.logpmf": "k, mu, loc=0",
    "jax.scipy.stats.poisson.pmf": "k, mu, loc=0",
    "jax.scipy.stats.t.logpdf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.t.pdf": "x, df, loc=0, scale=1",
    "jax.scipy.stats.truncnorm.logpdf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.truncnorm.pdf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.truncnorm.cdf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.truncnorm.logcdf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.truncnorm.sf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.truncnorm.logsf": "x, a, b, loc=0, scale=1",
    "jax.scipy.stats.uniform.cdf": "x, loc=0, scale=1",
    "jax.scipy.stats.uniform.ppf": "q, loc=0, scale=1",
    "jax.scipy.stats.vonmises.logpdf": "x, kappa",
    "jax.scipy.stats.vonmises.pdf": "x, kappa",
    "jax.scipy.stats.wrapcauchy.logpdf": "x, c",
    "jax.scipy.stats.wrapcauchy.pdf": "x, c",
}

SIGNATURES: dict[str, str] = {
    **UNARY,
    **BINARY,
    **STATS,
    # -- elementwise, other
    "jax.numpy.where": "condition, x=None, y=None, /, *, size=None, fill_value=None",
    "jax.numpy.result_type": "*args",
    "jax.numpy.clip": "arr=None, /, min=None, max=None",
    "builtins.sum": "iterable, /, start=0",
    "functools.reduce": "function, iterable, initial=None, /",
    "jax.numpy.astype": "x, dtype, /, *, copy=False, device=None",
    "jax.numpy.asarray": "a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None",
    "jax.numpy.array": "object, dtype=None, *args, copy=True, order='K', ndmin=0, device=None, out_sharding=None",
    # -- dynamic slices (rules/dynamic.py) -----------------------------------------------------------
    "jax.lax.dynamic_update_slice": "operand, update, start_indices, *, allow_negative_indices=True",
    "jax.lax.dynamic_update_slice_in_dim": "operand, update, start_index, axis, *, allow_negative_indices=True",
    "jax.lax.dynamic_slice_in_dim": "operand, start_index, slice_size, axis=0, *, allow_negative_indices=True",
    "jax.lax.dynamic_slice": "operand, start_indices, slice_sizes, *, allow_negative_indices=True",
    "jax.lax.top_k": "operand, k, *, axis=-1",
    "jax.lax.dynamic_index_in_dim": "operand, index, axis=0, keepdims=True, *, allow_negative_indices=True",
    "jax.lax.dynamic_update_index_in_dim": "operand, update, index, axis, *, allow_negative_indices=True",
    # -- reductions and the softmax family ---------------------------------------------------------
    "jax.numpy.sum": "a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, "
                     "promote_integers=True",
    "jax.numpy.mean": "a, axis=None, dtype=None, out=None, keepdims=False, *, where=None",
    "jax.numpy.max": "a, axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.numpy.min": "a, axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.numpy.amax": "a, axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.numpy.amin": "a, axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.nn.softmax": "x, axis=-1, where=None",
    "jax.nn.dot_product_attention": "query, key, value, bias=None, mask=None, *, scale=None, is_causal=False, "
                                    "query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None, "
                                    "implementation=None, return_residual=False",
    "jax.nn.log_softmax": "x, axis=-1, where=None",
    "jax.nn.logsumexp": "a, axis=None, b=None, keepdims=False, return_sign=False, where=None",
    "jax.scipy.special.logsumexp": "a, axis=None, b=None, keepdims=False, return_sign=False, where=None",
    # -- statistics (rules/statistics.py) ----------------------------------------------------------------
    "jax.numpy.var": "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, "
                     "correction=None",
    "jax.numpy.std": "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, "
                     "correction=None",
    # -- einops (rules/rearranging.py) ------------------------------------------------------------------------
    "einops.rearrange": "tensor, pattern, **axes_lengths",
    "einops.repeat": "tensor, pattern, **axes_lengths",
    "einops.reduce": "tensor, pattern, reduction, **axes_lengths",
    "jax.numpy.nansum": "a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None",
    "jax.numpy.nanmean": "a, axis=None, dtype=None, out=None, keepdims=False, where=None",
    "jax.numpy.nanvar": "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None",
    "jax.numpy.nanstd": "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None",
    "jax.numpy.nanmax": "a, axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.numpy.nanmin": "a, axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.numpy.linalg.norm": "x, ord=None, axis=None, keepdims=False",
    "jax.numpy.linalg.slogdet": "a, *, method=None",
    "jax.numpy.linalg.det": "a",
    "jax.ops.segment_sum": "data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, "
                           "bucket_size=None, mode=None, out_sharding=None",
    "jax.ops.segment_max": "data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, "
                           "bucket_size=None, mode=None, out_sharding=None",
    "jax.ops.segment_min": "data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, "
                           "bucket_size=None, mode=None, out_sharding=None",
    "jax.numpy.prod": "a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, "
                      "promote_integers=True",
    "jax.numpy.argmax": "a, axis=None, out=None, keepdims=None",
    "jax.numpy.argmin": "a, axis=None, out=None, keepdims=None",
    "jax.numpy.any": "a, axis=None, out=None, keepdims=False, *, where=None",
    "jax.numpy.all": "a, axis=None, out=None, keepdims=False, *, where=None",
    "jax.numpy.count_nonzero": "a, axis=None, keepdims=False",
    "jax.numpy.cumsum": "a, axis=None, dtype=None, out=None",
    "jax.numpy.cumprod": "a, axis=None, dtype=None, out=None",
    "jax.numpy.nancumsum": "a, axis=None, dtype=None, out=None",
    "jax.numpy.nancumprod": "a, axis=None, dtype=None, out=None",
    "jax.numpy.nanargmax": "a, axis=None, out=None, keepdims=None",
    "jax.numpy.nanargmin": "a, axis=None, out=None, keepdims=None",
    # -- contractions --------------------------------------------------------------------------------
    "jax.numpy.einsum": "subscripts, /, *operands, out=None, optimize='auto', precision=None, "
                        "preferred_element_type=None, _dot_general=..., out_sharding=None",
    "jax.numpy.matmul": "a, b, *, precision=None, preferred_element_type=None, out_sharding=None",
    "jax.numpy.dot": "a, b, *, precision=None, preferred_element_type=None, out_sharding=None",
    "jax.numpy.outer": "a, b, out=None",
    "jax.numpy.nan_to_num": "x, copy=True, nan=0.0, posinf=None, neginf=None",
    "jax.numpy.inner": "a, b, *, precision=None, preferred_element_type=None",
    "jax.numpy.kron": "a, b",
    "jax.lax.dot_general": "lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, "
                           "out_sharding=None",
    "jax.numpy.tensordot": "a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None",
    "jax.numpy.expand_dims": "a, axis",
    "jax.numpy.squeeze": "a, axis=None",
    # -- shapes ----------------------------------------------------------------------------------------
    "jax.numpy.transpose": "a, axes=None",
    "jax.numpy.swapaxes": "a, axis1, axis2",
    "jax.numpy.moveaxis": "a, source, destination",
    "jax.numpy.permute_dims": "a, /, axes",
    "jax.numpy.linalg.vector_norm": "x, /, *, axis=None, keepdims=False, ord=2",
    "jax.debug.print": "fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False, "
                       "_use_logging=False, **kwargs",
    "jax.nn.standardize": "x, axis=-1, mean=None, variance=None, epsilon=1e-05, where=None, *, algorithm='fast'",
    "optax.safe_norm": "x, min_norm, ord=None, axis=None, keepdims=False",
    "jax.numpy.matrix_transpose": "x, /",
    "jax.numpy.reshape": "a, shape, order='C', *, copy=None, out_sharding=None",
    "jax.numpy.concatenate": "arrays, axis=0, dtype=None",
    "jax.numpy.concat": "arrays, /, *, axis=0",
    "jax.numpy.append": "arr, values, axis=None",
    "jax.lax.concatenate": "operands, dimension",
    "jax.numpy.repeat": "a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None",
    "jax.numpy.broadcast_to": "array, shape, *, out_sharding=None",
    "jax.numpy.tile": "A, reps",
    "jax.numpy.stack": "arrays, axis=0, out=None, dtype=None",
    "jax.numpy.hstack": "tup, dtype=None",
    "jax.numpy.vstack": "tup, dtype=None",
    "jax.numpy.column_stack": "tup",
    "jax.numpy.split": "ary, indices_or_sections, axis=0",
    "jax.numpy.array_split": "ary, indices_or_sections, axis=0",
    # -- constructors and masks ------------------------------------------------------------------------
    "jax.numpy.zeros": "shape, dtype=None, *, device=None, out_sharding=None",
    "jax.numpy.ones": "shape, dtype=None, *, device=None, out_sharding=None",
    "jax.numpy.empty": "shape, dtype=None, *, device=None, out_sharding=None",
    "jax.numpy.full": "shape, fill_value, dtype=None, *, device=None, out_sharding=None",
    "jax.numpy.arange": "start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None",
    "jax.numpy.eye": "N, M=None, k=0, dtype=None, *, device=None",
    "jax.numpy.identity": "n, dtype=None",
    "jax.numpy.linspace": "start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None",
    "jax.numpy.zeros_like": "a, dtype=None, shape=None, *, device=None, out_sharding=None",
    "jax.numpy.ones_like": "a, dtype=None, shape=None, *, device=None, out_sharding=None",
    "jax.numpy.empty_like": "prototype, dtype=None, shape=None, *, device=None",
    "jax.numpy.full_like": "a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None",
    "jax.numpy.tril": "m, k=0",
    "jax.numpy.triu": "m, k=0",
    "jax.numpy.diagonal": "a, offset=0, axis1=0, axis2=1",
    "jax.numpy.bincount": "x, weights=None, minlength=0, *, length=None, out_sharding=None",
    "jax.numpy.triu_indices": "n, k=0, m=None",
    "jax.numpy.tril_indices": "n, k=0, m=None",
    "jax.numpy.diag": "v, k=0",
    "jax.numpy.trace": "a, offset=0, axis1=0, axis2=1, dtype=None, out=None",
    # -- lookups ---------------------------------------------------------------------------------------
    "jax.numpy.take": "a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False, "
                      "fill_value=None",
    "jax.numpy.take_along_axis": "arr, indices, axis=-1, mode=None, fill_value=None, *, wrap_negative_indices=None",
    "jax.nn.one_hot": "x, num_classes, *, dtype=None, axis=-1",
    # -- randomness --------------------------------------------------------------------------------------
    "jax.random.split": "key, num=2",
    "jax.numpy.vdot": "a, b, *, precision=None, preferred_element_type=None",
    "jax.lax.conv_transpose": "lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, "
                              "transpose_kernel=False, precision=None, preferred_element_type=None, "
                              "use_consistent_padding=False",
    # -- optax's elementwise losses (rules.elementwise._optax_elementwise) ------------------------------------
    "optax.huber_loss": "predictions, targets=None, *, delta=1.0",
    "optax.losses.huber_loss": "predictions, targets=None, *, delta=1.0",
    "optax.l2_loss": "predictions, targets=None",
    "optax.losses.l2_loss": "predictions, targets=None",
    "optax.squared_error": "predictions, targets=None",
    "optax.losses.squared_error": "predictions, targets=None",
    "optax.log_cosh": "predictions, targets=None",
    "optax.losses.log_cosh": "predictions, targets=None",
    "optax.sigmoid_focal_loss": "logits, labels, *, alpha=None, gamma=2.0",
    "optax.losses.sigmoid_focal_loss": "logits, labels, *, alpha=None, gamma=2.0",
    "optax.hinge_loss": "predictor_outputs, targets",
    "optax.losses.hinge_loss": "predictor_outputs, targets",
    "jax.random.normal": "key, shape=(), dtype=None, *, out_sharding=None",
    "jax.random.uniform": "key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None",
    "jax.random.bernoulli": "key, p=0.5, shape=None, mode='low', *, out_sharding=None",
    "jax.random.truncated_normal": "key, lower, upper, shape=None, dtype=None, *, out_sharding=None",
    "jax.random.randint": "key, shape, minval, maxval, dtype=None, *, out_sharding=None",
    "jax.random.gumbel": "key, shape=(), dtype=None, mode=None, *, out_sharding=None",
    "jax.random.categorical": "key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None",
    "jax.random.laplace": "key, shape=(), dtype=None, *, out_sharding=None",
    "jax.random.exponential": "key, shape=(), dtype=None, *, out_sharding=None",
    "jax.random.rademacher": "key, shape=(), dtype=None, *, out_sharding=None",
    "jax.random.beta": "key, a, b, shape=None, dtype=None, *, out_sharding=None",
    "jax.random.gamma": "key, a, shape=None, dtype=None, *, out_sharding=None",
    "jax.random.permutation": "key, x, axis=0, independent=False, *, out_sharding=None",
    # -- convolution (rules/convolution.py) ------------------------------------------------------------------
    "jax.lax.conv_general_dilated": "lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None, "
                                    "dimension_numbers=None, feature_group_count=1, batch_group_count=1, "
                                    "precision=None, preferred_element_type=None, out_sharding=None",
    "jax.lax.conv": "lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None",
    "jax.lax.conv_with_general_padding": "lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, "
                                         "precision=None, preferred_element_type=None",
    # -- split spatial dims (rules/spatial.py) ----------------------------------------------------------------
    "jax.lax.reduce_window": "operand, init_value, computation, window_dimensions, window_strides=None, "
                             "padding='VALID', base_dilation=None, window_dilation=None",
    "jax.numpy.pad": "array, pad_width, mode='constant', **kwargs",
    "jax.lax.pad": "operand, padding_value, padding_config",
    "jax.numpy.roll": "a, shift, axis=None",
    "jax.numpy.fft.fft": "a, n=None, axis=-1, norm=None",
    "jax.numpy.fft.ifft": "a, n=None, axis=-1, norm=None",
    "jax.numpy.fft.rfft": "a, n=None, axis=-1, norm=None",
    "jax.numpy.fft.irfft": "a, n=None, axis=-1, norm=None",
    "jax.numpy.fft.hfft": "a, n=None, axis=-1, norm=None",
    "jax.numpy.fft.ihfft": "a, n=None, axis=-1, norm=None",
    "jax.numpy.fft.fft2": "a, s=None, axes=(-2, -1), norm=None",
    "jax.numpy.fft.ifft2": "a, s=None, axes=(-2, -1), norm=None",
    "jax.numpy.fft.rfft2": "a, s=None, axes=(-2, -1), norm=None",
    "jax.numpy.fft.irfft2": "a, s=None, axes=(-2, -1), norm=None",
    "jax.numpy.fft.fftn": "a, s=None, axes=None, norm=None",
    "jax.numpy.fft.ifftn": "a, s=None, axes=None, norm=None",
    "jax.numpy.fft.rfftn": "a, s=None, axes=None, norm=None",
    "jax.numpy.fft.irfftn": "a, s=None, axes=None, norm=None",
    "jax.numpy.fft.fftshift": "x, axes=None",
    "jax.numpy.fft.ifftshift": "x, axes=None",
    "jax.numpy.flip": "m, axis=None",
    "jax.numpy.fliplr": "m",
    "jax.numpy.flipud": "m",
    "jax.image.resize": "image, shape, method, antialias=True, precision=...",
    # -- control flow ------------------------------------------------------------------------------------
    "jax.lax.scan": "f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False",
    "jax.lax.associative_scan": "fn, elems, reverse=False, axis=0",
    "jax.lax.fori_loop": "lower, upper, body_fun, init_val, *, unroll=None",
    "jax.lax.while_loop": "cond_fun, body_fun, init_val",
    "jax.lax.cond": "pred, true_fun, false_fun, *operands, operand=...",
    "jax.lax.switch": "index, branches, *operands, operand=...",
    # -- array methods (x.sum(...)): the method's parameters after self ------------------------------------
    "jax.Array.sum": "axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True",
    "jax.Array.mean": "axis=None, dtype=None, out=None, keepdims=False, *, where=None",
    "jax.Array.max": "axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.Array.min": "axis=None, out=None, keepdims=False, initial=None, where=None",
    "jax.Array.reshape": "*args, order='C', out_sharding=None",
    "jax.Array.transpose": "*args",
    "jax.Array.squeeze": "axis=None",
    "jax.Array.swapaxes": "axis1, axis2",
    "jax.Array.astype": "dtype, copy=False, device=None",
    "jax.Array.clip": "min=None, max=None",
    "jax.Array.var": "axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None",
    "jax.Array.std": "axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None",
    "jax.Array.prod": "axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, "
                      "promote_integers=True",
    "jax.Array.argmax": "axis=None, out=None, keepdims=None",
    "jax.Array.argmin": "axis=None, out=None, keepdims=None",
    "jax.Array.any": "axis=None, out=None, keepdims=False, *, where=None",
    "jax.Array.all": "axis=None, out=None, keepdims=False, *, where=None",
    "jax.Array.cumsum": "axis=None, dtype=None, out=None",
    "jax.Array.conj": "",
    "jax.Array.diagonal": "offset=0, axis1=0, axis2=1",
    "jax.Array.trace": "offset=0, axis1=0, axis2=1, dtype=None, out=None",
    "jax.Array.conjugate": "",
    "jax.Array.cumprod": "axis=None, dtype=None, out=None",
    "jax.Array.sort": "axis=-1, *, kind=None, order=None, stable=True, descending=False",
    "jax.Array.argsort": "axis=-1, *, kind=None, order=None, stable=True, descending=False",
    # -- along one dim, each row on its own (rules.statistics._along_rule) ------------------------------
    "jax.numpy.sort": "a, axis=-1, *, kind=None, order=None, stable=True, descending=False",
    "jax.numpy.argsort": "a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None",
    "jax.numpy.diff": "a, n=1, axis=-1, prepend=None, append=None",
    "jax.numpy.median": "a, axis=None, out=None, overwrite_input=False, keepdims=False",
    "jax.numpy.nanmedian": "a, axis=None, out=None, overwrite_input=False, keepdims=False",
    "jax.numpy.quantile": "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False, *, weights=None",
    "jax.numpy.percentile": "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False, *, weights=None, out_sharding=None",
    "jax.numpy.nanquantile": "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False, *, weights=None",
    "jax.numpy.nanpercentile": "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False, *, weights=None",
    "jax.numpy.ptp": "a, axis=None, out=None, keepdims=False",
    "jax.numpy.average": "a, axis=None, weights=None, returned=False, keepdims=False",
    "jax.nn.glu": "x, axis=-1",
    "jax.lax.cumsum": "operand, axis=0, reverse=False",
    "jax.lax.cumprod": "operand, axis=0, reverse=False",
    "jax.lax.cummax": "operand, axis=0, reverse=False",
    "jax.lax.cummin": "operand, axis=0, reverse=False",
    "jax.lax.cumlogsumexp": "operand, axis=0, reverse=False",
}


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str  # "positional" (positional-only), "either", "varargs", "keyword", "varkw" (``**kwargs``)
    default: object = inspect.Parameter.empty  # ``...`` where the default is not a literal


@dataclass(frozen=True, slots=True)
class Signature:
    params: tuple[Param, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def get(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def varkw(self) -> Param | None:
        """``**kwargs``: what takes a keyword no other parameter names."""
        return next((p for p in self.params if p.kind == "varkw"), None)


@functools.cache
def signature(name: str) -> Signature | None:
    """The declared signature of a qualified name (``jax.numpy.take``), or None."""
    text = SIGNATURES.get(name)
    return None if text is None else _parse(text)


def _parse(text: str) -> Signature:
    args = ast.parse(f"def f({text}): pass").body[0].args  # type: ignore[attr-defined]
    params: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "positional" if i < len(args.posonlyargs) else "either"
        params.append(Param(arg.arg, kind, _literal(default)))
    if args.vararg is not None:
        params.append(Param(args.vararg.arg, "varargs"))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(Param(arg.arg, "keyword", inspect.Parameter.empty if default is None else _literal(default)))
    if args.kwarg is not None:
        params.append(Param(args.kwarg.arg, "varkw"))
    return Signature(tuple(params))


def _literal(node) -> object:
    if node is inspect.Parameter.empty:
        return node
    return ast.literal_eval(node)


# -- checking against JAX (tests and maintainers; never at rewrite time) ----------------------------------


#: Functions whose signature CPython does not expose (C functions without ``__text_signature__``): their entry
#: is written from the documentation, and the test checks that inspect still cannot read one.
UNINSPECTABLE = {"functools.reduce": "reduce(function, iterable[, initial], /), CPython's C function"}


def resolve(name: str) -> Callable:
    """The installed JAX object a qualified name denotes (``jax.Array.sum``: the method of an array)."""
    import importlib

    if name.startswith("jax.Array."):
        import jax.numpy as jnp

        return getattr(jnp.zeros(1), name.rpartition(".")[2])
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def describe(fn: Callable) -> str:
    """``fn``'s parameters written as a :data:`SIGNATURES` entry."""
    parts: list[str] = []
    params = list(inspect.signature(fn).parameters.values())
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and (i == 0 or params[i - 1].kind not in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)):
            parts.append("*")
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        elif p.default is p.empty:
            parts.append(p.name)
        else:
            parts.append(f"{p.name}={_default_text(p.default)}")
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    return ", ".join(parts)


def _default_text(value: object) -> str:
    try:
        text = repr(value)
        ast.literal_eval(text)
        return text
    except (ValueError, SyntaxError, TypeError):
        return "..."


if __name__ == "__main__":  # python -m meshify.rewrite._signatures jax.numpy.take ...
    import sys

    for qualified in sys.argv[1:] or sorted(SIGNATURES):
        print(f'    "{qualified}": "{describe(resolve(qualified))}",')
