"""Hypothesis strategies shared by the tests: array shapes, dtypes and vmap layouts."""

from __future__ import annotations

from hypothesis import strategies as st

FLOAT_DTYPES = ("float32", "bfloat16", "float16")


def shapes(min_ndim: int = 0, max_ndim: int = 3, max_side: int = 4):
    """Small array shapes as tuples of ints."""
    return st.lists(st.integers(1, max_side), min_size=min_ndim, max_size=max_ndim).map(tuple)


@st.composite
def vmap_layouts(draw, operands: int = 3, max_ndim: int = 2):
    """(per-example shape, batch size, in_axes) with at least one operand batched.

    Each operand's batch axis is None (unbatched) or any position its batched array allows, so
    the layouts include equal axes, differing axes and unbatched operands.
    """
    example = draw(shapes(max_ndim=max_ndim))
    size = draw(st.integers(1, 4))
    axis = st.none() | st.integers(0, len(example))
    in_axes = draw(st.lists(axis, min_size=operands, max_size=operands)
                   .filter(lambda axes: any(a is not None for a in axes)))
    return example, size, tuple(in_axes)


def batched_shape(example: tuple[int, ...], size: int, axis: int | None) -> tuple[int, ...]:
    """The shape of an operand batched along ``axis`` (or unbatched)."""
    if axis is None:
        return example
    return (*example[:axis], size, *example[axis:])
