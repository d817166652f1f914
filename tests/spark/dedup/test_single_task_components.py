"""Small-graph components in one task (issue #16): union-find vs networkx, and vs the distributed engine."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pipeline.dedup.union_find import component_labels
from tests.oracles import require_oracle

nx = require_oracle("networkx")


def networkx_labels(edges: list[tuple[int, int]]) -> dict[int, int]:
    """Every node of ``edges`` with the smallest node of its networkx component."""
    graph = nx.Graph()
    graph.add_edges_from(edges)
    return {node: min(comp) for comp in nx.connected_components(graph) for node in comp}


def union_find_labels(edges: list[tuple[int, int]]) -> dict[int, int]:
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    nodes, labels = component_labels(src, dst)
    assert len(nodes) == len(set(nodes.tolist())), "a node was labelled twice"
    return dict(zip(nodes.tolist(), labels.tolist(), strict=True))


def random_graph(rng: random.Random, nodes: int, edges: int, id_range: int) -> list[tuple[int, int]]:
    """Random edges between ``nodes`` ids drawn from a wide range (sparse, non-contiguous, self loops possible)."""
    ids = list({rng.randrange(-id_range, id_range) for _ in range(nodes)})
    return [(rng.choice(ids), rng.choice(ids)) for _ in range(edges)]


@pytest.mark.parametrize("seed", range(30))
def test_union_find_equals_networkx_on_random_graphs(seed):
    rng = random.Random(seed)
    nodes = rng.choice([2, 10, 200, 3000])
    edges = random_graph(rng, nodes, rng.randint(1, 2 * nodes), 2**62)
    assert union_find_labels(edges) == networkx_labels(edges)


@pytest.mark.parametrize("shape", ["path_up", "path_down", "path_shuffled", "star_high_centre", "cycle"])
def test_union_find_equals_networkx_on_deep_shapes(shape):
    """Long paths and hubs are the worst cases for hooking; the labels must still be the minimum."""
    n, rng = 20_000, random.Random(7)
    order = list(range(n))
    if shape == "path_down":
        order.reverse()
    if shape == "path_shuffled":
        rng.shuffle(order)
    edges = list(zip(order, order[1:], strict=False))
    if shape == "star_high_centre":
        edges = [(n, i) for i in range(n)]
    if shape == "cycle":
        edges.append((order[-1], order[0]))
    labels = union_find_labels(edges)
    assert labels == networkx_labels(edges)
    assert set(labels.values()) == {0}


def test_union_find_of_no_edges_is_empty():
    nodes, labels = component_labels(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert len(nodes) == len(labels) == 0


def test_union_find_rejects_mismatched_ends():
    with pytest.raises(ValueError, match="one length"):
        component_labels(np.arange(3), np.arange(2))


@pytest.mark.spark
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.same_plan)])  # 1: other data
def test_single_task_and_distributed_paths_give_identical_labels(spark, seed):
    from pipeline.dedup.spark.components import connected_components
    from pipeline.dedup.spark.single_task_components import single_task_components

    rng = random.Random(100 + seed)
    edges = random_graph(rng, 300, 280, 10**12)
    edges.append((None, 5))  # null ends are ignored by both paths
    frame = spark.createDataFrame(edges, "src long, dst long")
    one_task = single_task_components(frame).toPandas().sort_values("doc_id").reset_index(drop=True)
    distributed = connected_components(frame).toPandas().sort_values("doc_id").reset_index(drop=True)
    assert len(one_task) > 100
    assert one_task.equals(distributed)
    expected = networkx_labels([e for e in edges if None not in e])
    assert dict(zip(one_task.doc_id, one_task.component, strict=True)) == expected


@pytest.mark.spark
def test_single_task_components_of_an_empty_edge_table(spark):
    from pipeline.dedup.spark.single_task_components import single_task_components

    labels = single_task_components(spark.createDataFrame([], "src long, dst long"))
    assert labels.count() == 0 and labels.columns == ["doc_id", "component"]
