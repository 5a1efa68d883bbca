# Fuzz crash found by tests/fuzz on the 1x8 mesh.
# crash: convert_source raised: KeyError: 'x' [meshify/rewrite/_interp.py:1230 in run_helper]
# Fixed: a custom_vjp fwd binding its parameters by the primal's names (rms_grad(sqrt) vs _rms_grad_fwd(x)): KeyError
# Found by: python tests/fuzz/run.py --seed 3610 --only 0
# Rerun: python -m pytest tests/test_regressions.py -k crash_custom_vjp_fwd_params_named_otherwise_5af5b3cd
import jax
import jax.numpy as jnp
from jax.numpy import einsum as es

from meshify import Tensor, mesh


mean = jnp.mean
sinc = jnp.sinc


@jax.custom_vjp
def rms_grad(sqrt):
    return sqrt * 1.0


def _rms_grad_fwd(x):
    return x * 1.0, x


def _rms_grad_bwd(x, g):
    return (g / (sqrt(mean(g * g)) + 1.0) + 0.01 * jnp.tanh(x),)


rms_grad.defvjp(_rms_grad_fwd, _rms_grad_bwd)


@mesh(data=1, model=8)
def f(x0: Tensor["batch", "seq", "d_model"], x1: Tensor["d_model"]) -> Tensor["batch", "seq"]:
    v0 = x0 @ x1
    v1: Tensor["batch", "seq", "d_model"] = sinc(x0)
    return rms_grad(v0)


sqrt = jnp.sqrt


FUZZ = {'mesh': '1x8',
 'sizes': {'batch': 2, 'seq': 2, 'd_model': 2},
 'args': [{'name': 'x0',
           'dims': ['batch', 'seq', 'd_model'],
           'kind': 'float',
           'high': 0,
           'std': 1.0},
          {'name': 'x1', 'dims': ['d_model'], 'kind': 'float', 'high': 0, 'std': 0.7071}],
 'grad': False,
 'seed': 3610010830,
 'provoked': '',
 'triggers': [['rms_grad: a helper with a custom derivative',
               ['rms_grad(',
                'return x * 1.0',
                'return x * 1.0, x',
                'return (g / (sqrt(mean(g * g)) + 1.0) + 0.01 * jnp.tanh(x),)',
                'einsum_',
                'opaque',
                'Opaque',
                'placeholder',
                'cannot infer the dims',
                'whose dims meshify cannot infer',
                'of dims meshify cannot infer']],
              ["helper rms_grad's parameter sqrt is named as a module alias: no alias anywhere",
               ['sqrt(', '(sqrt,', ', sqrt)', "'sqrt'"]]],
 'expect': 'accepted'}
