"""Connected components (docs/dedup.md, Connected components): both engines against networkx on the same edges."""

from __future__ import annotations

import random

import pytest

from pipeline.dedup.spark.components import (
    connected_components,
    large_star,
    node_table,
    normalize_edges,
    small_star,
    star_components,
)
from tests.oracles import require_oracle

pytestmark = pytest.mark.spark
nx = require_oracle("networkx")

Edge = tuple[int, int]


def expected_labels(edges: list[Edge]) -> dict[int, int]:
    """networkx's components, each node labelled with its component's smallest node."""
    graph = nx.Graph()
    graph.add_edges_from(edges)
    labels: dict[int, int] = {}
    for comp in nx.connected_components(graph):
        smallest = min(comp)
        labels.update(dict.fromkeys(comp, smallest))
    return labels


def to_df(spark, edges: list[Edge]):
    return spark.createDataFrame(edges, "src long, dst long")


def labels_of(df) -> dict[int, int]:
    """``doc_id -> component``, failing on a node listed twice."""
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("doc_id", "bigint"),
        ("component", "bigint"),
    ]
    rows = df.toPandas()
    assert not rows["doc_id"].duplicated().any(), "a node has several rows"
    return dict(zip(rows["doc_id"].tolist(), rows["component"].tolist(), strict=True))


def random_graph(seed: int, nodes: int = 400, edges: int = 330) -> list[Edge]:
    """A sparse G(n, m) graph relabelled with random signed 64-bit ids."""
    rng = random.Random(seed)
    graph = nx.gnm_random_graph(nodes, edges, seed=seed)
    ids = list({rng.getrandbits(64) - 2**63 for _ in range(2 * nodes)})[:nodes]
    return [(ids[u], ids[v]) for u, v in graph.edges()]


@pytest.mark.parametrize(
    ("seed", "checkpoint_interval", "hub_threshold"),
    # small thresholds route most keys through the hub join; (2, 2, 3) is (1, 1, 2)'s plan on other data
    [(0, 3, 10_000), (1, 1, 2), pytest.param(2, 2, 3, marks=pytest.mark.same_plan)],
)
def test_random_graphs_match_networkx(spark, seed, checkpoint_interval, hub_threshold):
    edges = random_graph(seed)
    result = star_components(to_df(spark, edges), checkpoint_interval=checkpoint_interval, hub_threshold=hub_threshold)
    assert labels_of(result.labels) == expected_labels(edges)
    assert result.rounds >= 1


def test_path_of_ten_thousand_needs_several_rounds(spark):
    n = 10_000
    edges = [(i, i + 1) for i in range(n)]
    result = star_components(to_df(spark, edges))
    assert result.rounds > 1, "the path converged without iterating"
    assert labels_of(result.labels) == expected_labels(edges)


def test_star_of_hundred_thousand_leaves(spark):
    # The hub sits in the middle of the id range, so it has smaller and larger neighbours: it is a
    # hot key of both the large-star join (as dst) and the small-star join (as src).
    leaves, hub = 100_000, 50_000
    edges_df = spark.range(leaves + 1).filter(f"id != {hub}").selectExpr(f"{hub}L AS src", "id AS dst")
    labels = labels_of(connected_components(edges_df))
    graph = nx.star_graph(leaves)  # centre 0, leaves 1..n
    relabel = {0: hub, hub: 0}
    graph = nx.relabel_nodes(graph, lambda x: relabel.get(x, x))
    assert labels == expected_labels(list(graph.edges()))


def test_many_small_components(spark):
    rng = random.Random(7)
    ids = rng.sample(range(10**12), 9_000)
    edges: list[Edge] = []
    pos = 0
    for k in range(3_000):
        size = 2 + k % 3  # pairs, triangles (closed), paths of three edges
        members = ids[pos : pos + size]
        pos += size
        edges += list(zip(members, members[1:], strict=False))
        if size == 3:
            edges.append((members[2], members[0]))
    rng.shuffle(edges)
    assert labels_of(connected_components(to_df(spark, edges))) == expected_labels(edges)


def test_duplicates_reversed_edges_and_self_loops(spark):
    edges = [(1, 2), (2, 1), (1, 2), (3, 3), (4, 4), (5, 4), (5, 5), (7, 7), (7, 7), (9, 8), (8, 6)]
    labels = labels_of(connected_components(to_df(spark, edges)))
    assert labels == expected_labels(edges)
    assert labels[3] == 3 and labels[7] == 7  # nodes seen only in self loops are kept


def test_empty_edge_set(spark):
    labels = connected_components(to_df(spark, []))
    assert labels_of(labels) == {}


def test_star_forest_is_a_fixed_point_and_other_graphs_are_not(spark):
    """The convergence test (no node outside a star) must mean a round would change no edge."""

    def one_round(edges: list[Edge]) -> set[Edge]:
        current = normalize_edges(to_df(spark, edges))
        large = large_star(current, node_table(current), None)
        out = small_star(large, node_table(large), None)
        return {(r.src, r.dst) for r in out.collect()}

    stars = [(5, 1), (9, 1), (3, 1), (8, 2), (20, 11)]
    assert one_round(stars) == set(stars)
    assert one_round([(2, 1), (3, 2)]) != {(2, 1), (3, 2)}
    assert one_round([(3, 1), (3, 2)]) != {(3, 1), (3, 2)}


def test_max_iterations_is_enforced(spark):
    edges = [(i, i + 1) for i in range(200)]
    with pytest.raises(RuntimeError, match="did not converge in 1 rounds"):
        star_components(to_df(spark, edges), max_iterations=1)


@pytest.mark.parametrize("kwargs", [{"engine": "pregel"}, {"checkpoint_interval": 0}, {"max_iterations": 0}])
def test_bad_arguments_fail_before_spark(kwargs):
    with pytest.raises(ValueError):
        connected_components(None, **kwargs)


def graphframes_case(name: str) -> list[Edge]:
    """Small graphs of each shape the GraphFrames engine must get right (it is slow per round)."""
    rng = random.Random(name)
    ids = list({rng.getrandbits(64) - 2**63 for _ in range(1_000)})
    if name == "chain":  # a path over shuffled ids: the worst case for label propagation
        return [(ids[i], ids[i + 1]) for i in range(30)]
    if name == "star":  # hub in the middle of the id range: smaller and larger leaves
        return [(0, leaf) for leaf in range(-150, 151) if leaf != 0]
    if name == "giant":  # one giant component plus a few stragglers
        return [(ids[u], ids[v]) for u, v in nx.gnm_random_graph(300, 700, seed=5).edges()]
    if name == "pairs":
        return [(ids[2 * i], ids[2 * i + 1]) for i in range(200)]
    if name == "loops_and_duplicates":
        return [(1, 2), (2, 1), (1, 2), (3, 3), (4, 4), (5, 4), (5, 5), (7, 7), (7, 7), (9, 8), (8, 6), (-3, -3)]
    raise ValueError(name)


@pytest.mark.parametrize("case", ["chain", "star", "giant", "pairs", "loops_and_duplicates"])
def test_graphframes_labels_match_star_engine_and_networkx(graphframes_spark, case):
    spark = graphframes_spark
    edges = graphframes_case(case)
    labels = labels_of(connected_components(to_df(spark, edges), engine="graphframes", checkpoint_interval=2))
    assert labels == expected_labels(edges)
    assert labels == labels_of(connected_components(to_df(spark, edges), engine="star"))
