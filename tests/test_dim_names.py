"""Names meshify gives dims it infers: sliced dims (``d[::2]?``) and the dim slices join back to."""
from hypothesis import given, settings
from hypothesis import strategies as st

from meshify.annotate._types import joined_slices, slice_size, sliced_dim, unsliced

_BOUND = st.one_of(st.none(), st.integers(-6, 6))
_SLICE = st.tuples(_BOUND, _BOUND, st.one_of(st.none(), st.integers(1, 4)))


def test_rotary_halves_join_back():
    assert joined_slices(["d[::2]?", "d[1::2]?"]) == "d"
    assert joined_slices(["d[1::2]?", "d[::2]?"]) == "d"  # order: only the length counts
    assert joined_slices(["d[half:]?", "d[:half]?"]) == "d"  # rotate-half, by a named Python int
    assert joined_slices(["d[::3]?", "d[1::3]?", "d[2::3]?"]) == "d"
    assert joined_slices(["s[1:][::2]?", "s[1:][1::2]?"]) == "s[1:]?"


def test_slices_that_do_not_cover_the_dim_are_not_joined():
    assert joined_slices(["d[::2]?", "d[::2]?"]) is None  # twice the even entries
    assert joined_slices(["d[:half]?", "d[:half]?"]) is None
    assert joined_slices(["d[:4]?", "d[5:]?"]) is None
    assert joined_slices(["d[:h]?", "d[-h:]?"]) is None  # h and the last h: as long as d for one h only
    assert joined_slices(["d[:a]?", "d[b:]?"]) is None  # two names
    assert joined_slices(["d[::2]?", "e[1::2]?"]) is None
    assert joined_slices(["d?", "d?"]) is None


def test_named_bounds_have_no_size():
    assert slice_size("d[:half]?", {"d": 8}) is None
    assert slice_size("d[1::2]?", {"d": 7}) == 3
    assert unsliced("d[:half]?") == "d" and unsliced("seq[1:][::2]?") == "seq"


@settings(max_examples=300, deadline=None)
@given(st.lists(_SLICE, min_size=2, max_size=4))
def test_joined_only_where_the_lengths_add_up_for_every_size(slices):
    dims = [sliced_dim("d", *s) for s in slices]
    joined = joined_slices(dims)
    adds_up = all(sum(len(range(n)[slice(*s)]) for s in slices) == n for n in range(80))
    assert (joined == "d") == adds_up, (dims, joined)
