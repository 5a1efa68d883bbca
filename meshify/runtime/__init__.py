"""meshify's runtime: meshes, binding per-device programs, and the local ops they call.

Generated files import only this module (plus jax and numpy).  Nothing here imports
libcst or the rewriter.  Several processes (hosts) join one job with ``initialize``;
``from_host``/``process_local``/``to_host`` move host data in and out of global arrays.
"""

from jax.sharding import PartitionSpec as P

from meshify.annotate._tensor import Tensor
from meshify.annotate._types import MeshSpec
from meshify.runtime._bind import ArgSpec, Each, Fields, Sharded, TreeSpec, bind, sharded
from meshify.runtime._devices import available_devices, build_mesh, set_devices, simulate_cpu_devices
from meshify.runtime._distributed import Topology, initialize
from meshify.runtime._placement import ProcessLocal, from_host, process_local, process_slice, to_host
from meshify.runtime.ops import (  # noqa: A004
    all_gather,
    call_block,
    bernoulli,
    canonical_dtype,
    categorical,
    debug_print,
    dtype_of,
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim,
    elementwise,
    entries,
    global_norm,
    global_shape,
    grouped_kv,
    kept_size,
    joined_dtype,
    like,
    local_block,
    local_draw,
    log_softmax,
    logsumexp,
    max,
    mean,
    method,
    method_receiver,
    min,
    multi_index,
    on_one_device,
    one_hot,
    pmax,
    pmin,
    psum,
    psum_scatter,
    quotient_dtype,
    refused,
    regathering,
    rows_at,
    scatter,
    shard_size,
    softmax,
    sum_dtype,
    take,
    take_along_axis,
    tree_flatten,
    tree_leaves,
    tree_map_each,
    varying,
)

__all__ = [
    "P", "Tensor", "MeshSpec", "ArgSpec", "TreeSpec", "Each", "Fields", "Sharded", "bind", "sharded",
    "available_devices", "build_mesh", "set_devices", "simulate_cpu_devices",
    "initialize", "Topology", "from_host", "to_host", "process_local", "process_slice", "ProcessLocal",
    "like", "shard_size", "sum_dtype", "psum", "psum_scatter", "all_gather", "global_shape", "one_hot", "take", "take_along_axis", "rows_at", "scatter", "local_block", "grouped_kv", "debug_print", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_index_in_dim", "local_draw", "log_softmax", "logsumexp", "mean", "on_one_device", "pmax", "pmin", "softmax",
    "max", "min", "method", "method_receiver", "regathering", "entries", "elementwise", "dtype_of", "canonical_dtype", "quotient_dtype", "joined_dtype", "refused",
    "varying", "bernoulli", "categorical", "global_norm", "multi_index", "tree_flatten", "tree_leaves", "tree_map_each",
]

# Reductions over split dims (runtime/_statistics.py, re-exported by ops).
from meshify.runtime.ops import (  # noqa: E402,A004
    all,
    any,
    argmax,
    argmin,
    average,
    cumprod,
    cumsum,
    cumulative,
    matrix_norm,
    nanmax,
    nanmean,
    nanmin,
    nanstd,
    nansum,
    nanvar,
    norm,
    prod,
    ptp,
    segment_max,
    segment_min,
    standardize,
    std,
    top_k,
    var,
)

__all__ += ["all", "any", "argmax", "argmin", "average", "cumprod", "cumsum", "cumulative", "matrix_norm", "nanmax",
            "nanmean", "nanmin", "nanstd", "nansum", "nanvar", "norm", "prod", "ptp", "segment_max", "segment_min",
            "standardize", "std", "top_k", "var"]

# Spatial parallelism: halo exchange and convolution over split spatial dims (runtime/_spatial.py).
from meshify.runtime._spatial import conv_halos, halo_conv, halo_exchange  # noqa: E402

__all__ += ["conv_halos", "halo_conv", "halo_exchange"]

# Pooling, padding, slicing, roll, flip and resize along split spatial dims (runtime/_spatial.py).
from meshify.runtime._spatial import (  # noqa: E402
    diagonal_block,
    halo_reduce_window,
    sectioned,
    spatial_concatenate,
    spatial_diff,
    spatial_entry,
    spatial_flip,
    spatial_pad,
    spatial_resize,
    spatial_roll,
    spatial_slice,
    split_sections,
)

__all__ += ["diagonal_block", "halo_reduce_window", "sectioned", "spatial_concatenate", "spatial_diff", "spatial_entry",
            "spatial_flip", "spatial_pad", "spatial_resize", "spatial_roll", "spatial_slice", "split_sections"]
