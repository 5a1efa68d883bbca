"""An embedding whose vocab and the token ids are both split over 'model' (rules vocab->model,
batch->model): the ids are gathered over 'model', each device looks every id up in its block of
the vocabulary, and the partial sum is reduce-scattered back to the batch split of the return hint
(was refused: "lookup whose index and table are split over the same axis")."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"vocab": "model", "batch": "model", "d": "data"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch", "length"]) -> Tensor["batch", "length", "d"]:
    return emb[ids] * 2.0


def inputs():
    r = np.random.default_rng(7)
    emb = r.standard_normal((16, 6)).astype(np.float32)
    ids = r.integers(-16, 16, (8, 3)).astype(np.int32)  # negative ids wrap
    return emb, ids
