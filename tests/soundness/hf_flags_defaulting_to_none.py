"""HF's flags: ``output_attentions=None``, ``output_hidden_states=None``, ``return_dict=None``, each read off the
config when not given (``output_attentions = output_attentions if output_attentions is not None else
config.output_attentions``), choosing the results through a helper and ``if not return_dict: return (...)``.
Each is a flag of the value it resolves to: one version per combination, the runtime reading the config for a
call passing None.  Before, "the branches of this conditional expression have different layouts" (the flags
had to become ``bool`` parameters and the fallback lines deleted)."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@dataclasses.dataclass(frozen=True)
class Config:
    output_attentions: bool = False
    output_hidden_states: bool = False
    use_return_dict: bool = True


def layer(h, w, output_attentions):
    a = jax.nn.softmax(h @ w, axis=-1)
    out = jnp.tanh(a @ w.T) + h
    return (out, a) if output_attentions else (out,)


@mesh(batch=2, model=4, rules={"e": "model"})
def forward(x: Tensor["batch", "d"], w: Tensor["d", "e"], output_attentions=None, output_hidden_states=None,
            return_dict=None, *, config):
    output_attentions = output_attentions if output_attentions is not None else config.output_attentions
    output_hidden_states = (
        output_hidden_states if output_hidden_states is not None else config.output_hidden_states
    )
    return_dict = return_dict if return_dict is not None else config.use_return_dict
    all_hidden = () if output_hidden_states else None
    all_attn = () if output_attentions else None
    h = x
    for _ in range(2):
        if output_hidden_states:
            all_hidden = all_hidden + (h,)
        outs = layer(h, w, output_attentions)
        h = outs[0]
        if output_attentions:
            all_attn = all_attn + (outs[1],)
    if not return_dict:
        return tuple(v for v in [h, all_hidden, all_attn] if v is not None)
    return {"last_hidden_state": h, "hidden_states": all_hidden, "attentions": all_attn}


def inputs():
    rng = np.random.default_rng(291)
    return (rng.standard_normal((4, 8)).astype(np.float32), (rng.standard_normal((8, 16)) / 3).astype(np.float32))


def scenario(mod, pick):
    """Flags passed, and left None for several configs."""
    x, w = inputs()
    out = {}
    for cfg in (Config(), Config(True, True, False), Config(False, True, True)):
        out[f"{cfg}-none"] = pick(mod.forward)(x, w, config=cfg)
        for attn in (False, True):
            out[f"{cfg}-{attn}"] = pick(mod.forward)(x, w, output_attentions=attn, return_dict=not attn, config=cfg)
    return out
