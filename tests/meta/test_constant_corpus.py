"""The constant-rate scale corpus (corpora/constant.py): every window of a small build holds the configured
exact and near-duplicate shares, counted from the written shards alone with digests and datasketch's MinHash LSH
at the dedup's parameters, not from the builder's own labels."""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import random
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from datasketch import MinHash, MinHashLSH

from corpora import archives, constant, mixed
from tests.debian_packages import build_deb

THRESHOLD = 0.7  # conf/dataproc.yaml's dedup threshold
NUM_PERM = 256  # conf/dataproc.yaml's num_perm


def fresh_texts(seed: int = 3) -> Iterator[constant.Record]:
    """Distinct documents of random words (60-200 words, in paragraphs): no two are near-duplicates."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(5000)
    ]
    for number in range(100_000):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(60, 200))]
        paragraphs = [" ".join(words[at : at + 40]) for at in range(0, len(words), 40)]
        yield "web", f"doc-{number}", "\n\n".join(paragraphs)


def signature(text: str) -> MinHash:
    grams = constant.shingle_set(text, constant.NGRAM)
    minhash = MinHash(num_perm=NUM_PERM)
    minhash.update_batch([g.encode() for g in grams])
    return minhash


def classify(texts: list[str]) -> list[str]:
    """Per text: ``exact`` when an earlier text is equal, ``near`` when datasketch's LSH finds an earlier text
    whose estimated Jaccard is >= THRESHOLD, else ``fresh``."""
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    seen: set[bytes] = set()
    signatures: list[MinHash] = []
    kinds = []
    for number, text in enumerate(texts):
        digest = hashlib.sha256(text.encode()).digest()
        minhash = signature(text)
        signatures.append(minhash)
        if digest in seen:
            kinds.append("exact")
            continue
        seen.add(digest)
        near = [key for key in lsh.query(minhash) if signatures[key].jaccard(minhash) >= THRESHOLD]
        kinds.append("near" if near else "fresh")
        lsh.insert(number, minhash)
    return kinds


@pytest.mark.parametrize(("exact", "near"), [(0.15, 0.15), (0.1, 0.2)])
def test_every_window_holds_the_configured_shares(tmp_path: Path, exact: float, near: float) -> None:
    records = constant.documents(fresh_texts(), exact, near, seed=5)
    stats = constant.write_corpus(records, tmp_path / "c", target=2_400_000, shard_bytes=800_000, window_bytes=600_000)
    lines = [json.loads(line) for shard in sorted((tmp_path / "c").glob("part-*.jsonl")) for line in shard.open()]
    assert stats["shards"] == len(list((tmp_path / "c").glob("part-*.jsonl"))) >= 3
    kinds = classify([line["text"] for line in lines])
    assert len(kinds) >= 2400
    for start in range(0, len(kinds) - 600, 600):  # windows of 600 documents (3 blocks of 200)
        window = kinds[start : start + 600]
        assert window.count("exact") / 600 == pytest.approx(exact, abs=0.01)
        assert window.count("near") / 600 == pytest.approx(near, abs=0.01)
    assert len(stats["windows"]) == 4
    for window in stats["windows"][:-1]:  # the builder's own windows of 600 kB
        assert window["exact"] / window["documents"] == pytest.approx(exact, abs=0.03)
        assert window["near"] / window["documents"] == pytest.approx(near, abs=0.03)
    # the paths name each copy's original and its kind; LSH may miss a near copy now and then, as dedup would
    labels = [line["path"].rsplit("#", 1)[1] if "#" in line["path"] else "fresh" for line in lines]
    missed = sum(label == "near" and kind == "fresh" for label, kind in zip(labels, kinds, strict=True))
    assert missed <= 0.02 * labels.count("near")
    assert all(label == kind for label, kind in zip(labels, kinds, strict=True) if (label, kind) != ("near", "fresh"))


def test_uniform_shuffles_the_fresh_documents_and_plants_the_copies_again(tmp_path: Path) -> None:
    def halves() -> Iterator[constant.Record]:  # 1,500 PyPI files, then 1,500 Debian files (code and manuals)
        for number, (_, path, text) in enumerate(itertools.islice(fresh_texts(), 3000)):
            suffix = ".py" if number < 1500 else (".c", ".html")[number % 2]
            yield ("pypi" if number < 1500 else "debian"), f"p=1/{path}{suffix}", text

    constant.write_corpus(constant.documents(halves(), seed=5), tmp_path / "c", target=None, shard_bytes=800_000)
    before = [json.loads(line) for shard in sorted((tmp_path / "c").glob("part-*.jsonl")) for line in shard.open()]
    directory = constant.build_uniform(tmp_path / "c")
    assert directory == tmp_path / "c-uniform"
    lines = [json.loads(line) for shard in sorted(directory.glob("part-*.jsonl")) for line in shard.open()]
    fresh = [line for line in lines if "#" not in line["path"]]
    assert sorted(line["text"] for line in fresh) == sorted(line["text"] for line in before if "#" not in line["path"])
    assert len(fresh) == 3000  # every fresh document once, and no other
    labels = {(Path(line["path"]).suffix, line["source"]) for line in fresh}
    assert labels == {(".py", "pypi"), (".c", constant.CODE_SOURCE), (".html", "debian")}  # code of Debian's its own
    kinds = classify([line["text"] for line in lines])
    for start in range(0, len(lines) - 600, 600):
        window, window_kinds = lines[start : start + 600], kinds[start : start + 600]
        assert window_kinds.count("exact") / 600 == pytest.approx(0.15, abs=0.01)
        assert window_kinds.count("near") / 600 == pytest.approx(0.15, abs=0.01)
        pypi = sum(line["source"] == "pypi" for line in window)
        assert 0.35 < pypi / 600 < 0.65  # the whole's half, where the first window of ``before`` is all PyPI
    assert all(line["source"] == "pypi" for line in before[:600])


def test_near_copies_are_real_edits_above_the_threshold() -> None:
    pairs: list[tuple[str, str]] = []
    records = constant.documents(fresh_texts(), pairs=pairs, keep_pairs=30)
    for _ in zip(range(3000), records, strict=False):
        pass
    assert len(pairs) == 30
    for original, copy in pairs:
        assert copy != original
        assert signature(original).jaccard(signature(copy)) >= THRESHOLD
    checked = constant.datasketch_check(pairs)
    assert checked["above_threshold"] == checked["pairs"] == 30


def test_one_version_of_each_file_newest_first() -> None:
    releases = {"1.0": [("a.py", "a1"), ("old.py", "o")], "2.0": [("a.py", "a2"), ("b.py", "b2")]}
    got = list(constant.newest_first("pkg", ["1.0", "2.0"], lambda _pkg, version: releases[version]))
    assert got == [("pypi", "pkg-2.0/a.py", "a2"), ("pypi", "pkg-2.0/b.py", "b2"), ("pypi", "pkg-1.0/old.py", "o")]


def test_running_out_of_fresh_documents_says_how_many(tmp_path: Path) -> None:
    few = (record for _, record in zip(range(50), fresh_texts(), strict=False))
    with pytest.raises(SystemExit, match=r"fresh documents ran out after 50 \("):
        constant.build(100, tmp_path / "c", fresh=lambda: few)
    assert not (tmp_path / "c").exists() and not (tmp_path / "c.partial").exists()


def test_bad_shares_name_the_option() -> None:
    with pytest.raises(SystemExit, match="--exact"):
        constant.check_shares(1.2, 0.1)
    with pytest.raises(SystemExit, match=r"--exact \+ --near"):
        constant.check_shares(0.6, 0.5)


def test_scale_bench_reuses_the_smallest_corpus_large_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "constant-corpus-500mb",
        "constant-corpus-2000mb",
        "constant-corpus-1000mb",
        "constant-corpus-900mb-0.1-0.2",
    ):
        (tmp_path / name).mkdir()
    monkeypatch.setattr(constant.real, "DEFAULT_DIR", tmp_path)
    assert constant.at_least(750) == tmp_path / "constant-corpus-1000mb"
    assert constant.at_least(1000) == tmp_path / "constant-corpus-1000mb"
    assert constant.at_least(1500) == tmp_path / "constant-corpus-2000mb"


def test_added_sources_join_after_the_first_bytes_without_changing_them() -> None:
    first = [("pypi", f"p{n}", "x" * 100) for n in range(10)]
    added = {"debian:a": (1.0, iter([("debian", f"a{n}", "y" * 50) for n in range(4)]))}
    got = list(constant.joined(iter(first), 300, added))
    assert got[:3] == first[:3]  # 300 bytes of the first sources as they were, then both
    assert sorted(got) == sorted(first + [("debian", f"a{n}", "y" * 50) for n in range(4)])
    assert [r[1] for r in got[3:7]] == ["p3", "a0", "a1", "p4"]  # ADDED_SHARE: half the text each while both last


def test_package_texts_read_sources_inside_shipped_archives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w:xz") as archive:
        files = {"src/main.go": b"package main\n", "src/blob.bin": b"\x00\x01", "src/big.c": b"x" * 1_000_001}
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    deb = build_deb(
        tmp_path,
        {
            "usr/src/tree.tar.xz": inner.getvalue(),
            "usr/share/emacs/28.2/lisp/simple.el.gz": gzip.compress(b"(defun f ())\n"),
            "usr/share/doc/j/api.html": b"<p>Class Object</p>",
            "usr/share/doc/j/logo.png": b"\x89PNG",
            "usr/share/go/src/archive/zip/testdata/bad.zip": b"PK\x05\x06 a broken test archive",
        },
    )
    monkeypatch.setattr(archives, "fetch_deb", lambda package, version: deb)
    got = [(path, text.strip()) for _, path, text in constant.package_texts("src-test", "1.0")]
    assert sorted(got) == [
        ("src-test=1.0/usr/share/doc/j/api.html", "Class Object"),
        ("src-test=1.0/usr/share/emacs/28.2/lisp/simple.el.gz", "(defun f ())"),
        ("src-test=1.0/usr/src/tree.tar.xz/src/main.go", "package main"),
    ]


def test_added_packages_are_pinned_and_not_the_mixed_corpus_ones() -> None:
    assert set(constant.ADDED_PACKAGES).isdisjoint(mixed.PROSE_PACKAGES)
    assert all(version[0].isdigit() for version in constant.ADDED_PACKAGES.values())
    earlier = {name.lower() for name in [*mixed.MIXED_RELEASES, *archives.RELEASES]}
    assert earlier.isdisjoint(name.lower() for name in constant.ADDED_RELEASES)
    # nor a Debian packaging of them or of their manuals (python3-sympy, python-astropy-doc)
    projects = {re.sub(r"-docs?$", "", re.sub(r"^python3?-", "", name)) for name in constant.ADDED_PACKAGES}
    assert earlier.isdisjoint(projects)
    pinned = json.loads(constant.ADDED_PINS.read_text())
    assert set(pinned) == {f"{name}=={version}" for name, version in constant.ADDED_RELEASES.items()}


def test_an_unpinned_added_sdist_names_the_pin_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constant, "ADDED_PINS", tmp_path / "constant_archives.json")  # none pinned
    with pytest.raises(
        SystemExit, match=r"^grpcio==1\.0: not in constant_archives\.json: run `python -m bench constant_corpus --pin`"
    ):
        next(constant.sdist_texts("grpcio", "1.0", tmp_path))
