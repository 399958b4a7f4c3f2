"""Pytrees: flattening nested containers into a list of leaves and a structure, and back."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, NamedTuple


class NodeType(NamedTuple):
    name: str
    to_iterable: Callable  # node -> (metadata, children)
    from_iterable: Callable  # (metadata, children) -> node


node_types: dict[type, NodeType] = {}


def register_pytree_node(ty: type, to_iterable: Callable, from_iterable: Callable) -> None:
    node_types[ty] = NodeType(ty.__name__, to_iterable, from_iterable)


def _dict_to_iterable(d):
    # Sorted keys: two dicts with the same keys get the same structure, whatever their order.
    keys = sorted(d)
    return tuple(keys), [d[k] for k in keys]


register_pytree_node(tuple, lambda t: (None, t), lambda _, children: tuple(children))
register_pytree_node(list, lambda lst: (None, lst), lambda _, children: list(children))
register_pytree_node(dict, _dict_to_iterable, lambda keys, children: dict(zip(keys, children)))


class PyTreeDef(NamedTuple):
    node_type: NodeType
    node_metadata: Hashable
    child_treedefs: tuple

    def __repr__(self):
        # The containers by name and a leaf as *, as JAX prints its own: PyTreeDef((Point(*, *),))
        return f"PyTreeDef({_structure(self)})"


def _structure(treedef) -> str:
    if not isinstance(treedef, PyTreeDef):
        return repr(treedef)
    children = [_structure(child) for child in treedef.child_treedefs]
    name = treedef.node_type.name
    if name == "tuple":
        return f"({children[0]},)" if len(children) == 1 else f"({', '.join(children)})"
    if name == "list":
        return f"[{', '.join(children)}]"
    if name == "dict":
        pairs = zip(treedef.node_metadata, children)
        return "{" + ", ".join(f"{key!r}: {child}" for key, child in pairs) + "}"
    return f"{name}({', '.join(children)})"


class Leaf:
    def __repr__(self):
        return "*"


leaf = Leaf()


def tree_flatten(x: Any) -> tuple[list, Any]:
    """The leaves of ``x`` left to right, and its structure (a PyTreeDef, or ``leaf``)."""
    node_type = node_types.get(type(x))
    if node_type is None:
        return [x], leaf
    metadata, children = node_type.to_iterable(x)
    leaves: list = []
    child_treedefs = []
    for child in children:
        child_leaves, child_treedef = tree_flatten(child)
        leaves.extend(child_leaves)
        child_treedefs.append(child_treedef)
    return leaves, PyTreeDef(node_type, metadata, tuple(child_treedefs))


def tree_unflatten(treedef, leaves) -> Any:
    """Rebuild the container described by ``treedef`` with ``leaves`` in its leaf positions."""
    leaves = iter(leaves)

    def build(td):
        if td is leaf:
            return next(leaves)
        children = [build(child) for child in td.child_treedefs]
        return td.node_type.from_iterable(td.node_metadata, children)

    return build(treedef)


class Store:
    """A cell written exactly once: the output structure, known only after the call."""

    _unset = object()

    def __init__(self):
        self.val = self._unset

    def set_value(self, val):
        assert self.val is self._unset, "the flattened function ran twice"
        self.val = val

    def __call__(self):
        assert self.val is not self._unset, "the flattened function has not run yet"
        return self.val


def flatten_fun(f, in_tree):
    """``f`` as a function from a flat list of leaves to a flat list of leaves.

    Returns the flat function and a Store that holds ``f``'s output structure once it has run.
    """
    store = Store()

    def f_flat(*leaves):
        out_leaves, out_tree = tree_flatten(f(*tree_unflatten(in_tree, leaves)))
        store.set_value(out_tree)
        return out_leaves

    return f_flat, store

