"""Connected components of an edge list in one process, vectorised with numpy (no Spark import).

Used by the dedup stage when the verified edges are few enough for one task
(docs/dedup.md, Connected components): the labels are the same as the distributed large/small-star
engine's, the smallest node id of each component.

Method: hook-and-compress over dense node indices. Node ids are mapped to ``0..n-1`` in increasing
order, so the smallest index of a component is its smallest id. Every node starts as its own root;
each round hooks, for every edge whose ends have different roots, the larger root under the smaller
(``numpy.minimum.at``), then compresses every path to its root by pointer jumping. Parents only ever
point to smaller indices, so the forest stays acyclic and every root is its tree's minimum. The loop
stops when no edge joins two roots.
"""

from __future__ import annotations

import numpy as np


def component_labels(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes, labels)``: every node of the undirected edges ``src[i] - dst[i]`` (sorted) and its
    component's smallest node id. Self loops are allowed; the inputs must be equal-length integer arrays.
    """
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    if src.shape != dst.shape or src.ndim != 1:
        raise ValueError(f"src and dst must be 1-d arrays of one length, got shapes {src.shape} and {dst.shape}")
    nodes, inverse = np.unique(np.concatenate([src, dst]), return_inverse=True)
    u, v = inverse[: len(src)], inverse[len(src) :]
    parent = np.arange(len(nodes), dtype=np.int64)
    while True:
        ru, rv = parent[u], parent[v]
        apart = ru != rv
        if not apart.any():
            break
        ru, rv = ru[apart], rv[apart]
        np.minimum.at(parent, np.maximum(ru, rv), np.minimum(ru, rv))
        _compress(parent)
        u, v = u[apart], v[apart]  # edges already inside one tree stay inside it
    return nodes, nodes[parent]


def _compress(parent: np.ndarray) -> None:
    """Point every node straight at its root, in place (pointer jumping: O(log depth) passes)."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return
        parent[:] = grand
