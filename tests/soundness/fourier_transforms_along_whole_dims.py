"""Fourier transforms along dims whole on every device, other dims split (Hyena's FFT long convolution, FNet's
token mixing, a spectral filter): ``rfft``/``irfft`` with ``n=2 * L`` and the slice back to ``L``, ``fft``/``ifft``
and ``.real``, ``fft2`` over two whole dims, ``fftshift``, ``jnp.real``/``imag``/``conj``/``angle``.  Each device
transforms its own rows; a partial sum (``y @ w_out`` over split ``d_inner``) is completed before the transform.
Before, "jax.numpy.fft.rfft has no meshify rule" with a fix unsplitting the batch."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"
TOL = 2e-4
GRAD = True


def fft_conv(u, k):
    L = u.shape[1]
    n = 2 * L
    uf = jnp.fft.rfft(u, n=n, axis=1)
    kf = jnp.fft.rfft(k, n=n, axis=0)
    return jnp.fft.irfft(uf * kf[None], n=n, axis=1)[:, :L]


def fnet_mix(x):
    return jnp.real(jnp.fft.fft2(x, axes=(1, 2)))


@mesh(batch=2, model=4, rules={"d_inner": "model"})
def f(x: Annotated[jax.Array, "batch", "length", "d_model"], w_in: Annotated[jax.Array, "d_model", "d_inner"],
      k: Annotated[jax.Array, "length", "d_inner"], w_out: Annotated[jax.Array, "d_inner", "d_model"],
      bias: Annotated[jax.Array, "d_inner"]):
    v = x @ w_in
    y = fft_conv(v, k) + v * bias
    y = jnp.fft.ifft(jnp.fft.fft(y, axis=1), axis=1).real
    spec = jnp.fft.rfft(y, axis=1)
    y = jnp.fft.fftshift(y, axes=1) + jnp.abs(spec).mean(1, keepdims=True) + jnp.angle(spec).mean()
    z = jnp.fft.fftn(y, axes=(1,))
    y = y + jnp.imag(jnp.conj(z)) * 0.01 + z.conj().real * 0.01
    return x + fnet_mix(y @ w_out) / 64


@mesh(batch=8)
def g(x: Annotated[jax.Array, "batch", "length", "d_model"]) -> Annotated[jax.Array, "batch", "length", "d_model"]:
    spec = jnp.fft.rfft2(x, s=(32, 16), axes=(1, 2))
    back = jnp.fft.irfft2(spec * 0.5, s=(32, 16), axes=(1, 2))
    return x + back[:, :x.shape[1], :x.shape[2]] + jnp.fft.ifftshift(jnp.fft.hfft(jnp.fft.ihfft(x, axis=1), n=16,
                                                                                  axis=1), axes=1)


def inputs():
    r = np.random.default_rng(231)
    B, L, D, F = 8, 16, 8, 16
    args = (r.standard_normal((B, L, D)), r.standard_normal((D, F)) * 0.3, r.standard_normal((L, F)) * 0.3,
            r.standard_normal((F, D)) * 0.3, r.standard_normal(F))
    args = tuple(a.astype(np.float32) for a in args)
    return {"f": args, "g": (args[0],)}
