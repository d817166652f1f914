"""The mixed-size corpus builder's pure parts (corpora/mixed.py) on small archives and pages the tests write,
and the two commands bench_vs_bigcode.py --as-user runs, read by the pipeline's own argument parser."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from bench import bench_vs_bigcode
from corpora import archives, mixed
from pipeline.cli.commands import build_parser
from tests.debian_packages import build_deb


def write_tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_kind_of_members() -> None:
    assert mixed.kind("p-1/src/parser.c", 1_500_000) == "code"
    assert mixed.kind("p-1/static/app.min.js", 900_000) == "code"  # minified code is kept here
    assert mixed.kind("p-1/big.py", 2_000_000) == "code"
    assert mixed.kind("p-1/big.py", 2_000_001) is None
    assert mixed.kind("p-1/empty.py", 0) is None
    assert mixed.kind("p-1/LICENSE", 1_000) == "licence"
    assert mixed.kind("p-1/licenses/COPYING.txt", 1_000) == "licence"
    assert mixed.kind("p-1/data.json", 1_000) is None


def test_releases_interleave_members_and_delete_each_archive(tmp_path: Path, monkeypatch) -> None:
    archives = {
        "1.0": {"pkg-1.0/b.py": b"b = 1\n", "pkg-1.0/LICENSE": b"MIT\n", "pkg-1.0/x.bin": b"\x00"},
        "2.0": {"pkg-2.0/b.py": b"b = 2\n", "pkg-2.0/LICENSE": b"MIT\n", "pkg-2.0/new.c": b"int n;\n"},
    }
    pins, sdists = {}, tmp_path / "sdists"
    sdists.mkdir()
    for version, members in archives.items():
        path = write_tar(sdists / f"pkg-{version}.tar.gz", members)
        pins[f"pkg=={version}"] = {"filename": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    (tmp_path / "mixed_archives.json").write_text(json.dumps(pins))
    monkeypatch.setattr(mixed, "MIXED_RELEASES", {"pkg": ["1.0", "2.0"]})
    monkeypatch.setattr(mixed, "PINS", tmp_path / "mixed_archives.json")
    assert list(mixed.releases(sdists)) == [
        ("licence", "pkg-1.0/LICENSE", "MIT\n"),
        ("licence", "pkg-2.0/LICENSE", "MIT\n"),
        ("code", "pkg-1.0/b.py", "b = 1\n"),
        ("code", "pkg-2.0/b.py", "b = 2\n"),
        ("code", "pkg-2.0/new.c", "int n;\n"),
    ]
    assert list(sdists.iterdir()) == []


def test_statistics_count_sizes_exact_and_changed_copies(tmp_path: Path) -> None:
    records = [
        ("code", "pkg-1.0/a.py", "a" * 500),
        ("code", "pkg-2.0/a.py", "a" * 500),  # exact copy
        ("code", "pkg-1.0/b.py", "b" * 5_000),
        ("code", "pkg-2.0/b.py", "c" * 5_000),  # changed copy
        ("licence", "/usr/share/common-licenses/MIT", "d" * 50_000),
        ("prose", "manpages-de=4.18.1-1/usr/share/man/de/man1/x.1.gz", "e" * 1_500_000),
    ]
    with open(tmp_path / "part-00000.jsonl", "w") as out:
        for source, path, text in records:
            out.write(json.dumps({"source": source, "path": path, "text": text}) + "\n")
    stats = mixed.statistics(tmp_path)
    assert stats["documents"] == 6 and stats["bytes"] == 1_000 + 10_000 + 50_000 + 1_500_000
    assert stats["sources"]["code"] == {"documents": 4, "bytes": 11_000}
    assert stats["prose packages"] == {"manpages-de": {"documents": 1, "bytes": 1_500_000}}
    assert [(count, size) for _, count, size in stats["histogram"]] == [
        (2, 1_000),
        (2, 10_000),
        (1, 50_000),
        (0, 0),
        (1, 1_500_000),
    ]
    assert stats["exact copies"] == pytest.approx(1 / 6) and stats["changed copies"] == pytest.approx(1 / 6)


def test_as_user_runs_the_ingest_then_the_dedup_command(tmp_path: Path) -> None:
    config = tmp_path / "ours.yaml"
    commands = bench_vs_bigcode.our_commands(config, as_user=True)
    assert list(commands) == ["ingest", "dedup"]
    for stage, cmd in commands.items():
        assert cmd[1:3] == ["-m", "pipeline"]
        parsed = build_parser().parse_args(cmd[3:])
        assert (parsed.command, parsed.config) == (stage, str(config))
    assert list(bench_vs_bigcode.our_commands(config, as_user=False)) == ["ours"]


DOC_FILES = {
    "usr/share/doc/x/html/index.html": "<h1>Einf\u00fchrung</h1><p>Gr\u00fc\u00dfe aus Debian</p>".encode(),
    "usr/share/man/de/man1/ls.1.gz": gzip.compress(b".TH LS 1\n.SH NAME\nls \\- Verzeichnis\n"),
    "usr/share/man/man1/dir.1.gz": gzip.compress(b".so man1/ls.1\n"),
    "usr/share/doc/x/html/latin.html": "<p>caf\u00e9</p>".encode("latin-1"),
    "usr/share/doc/x/logo.png": b"\x89PNG\r\n\x1a\n",
    "usr/share/doc/x/guide.txt": b"a plain-text copy of the HTML\n",
}


def test_deb_members_are_what_dpkg_deb_unpacks(tmp_path: Path) -> None:
    deb = build_deb(tmp_path, DOC_FILES)
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:  # the oracle: dpkg-deb's own unpacking
        expected = {m.name.removeprefix("./"): archive.extractfile(m).read() for m in archive if m.isfile()}  # type: ignore[union-attr]
    assert dict(archives.deb_members(deb)) == expected == DOC_FILES


def test_package_prose_keeps_html_text_and_manual_pages_only(tmp_path: Path, monkeypatch) -> None:
    deb = build_deb(tmp_path, DOC_FILES)
    monkeypatch.setattr(archives, "fetch_deb", lambda package, version: deb)
    got = {path: text for _, path, text in mixed.package_prose("docs-test", "1.0")}
    assert sorted(got) == [
        "docs-test=1.0/usr/share/doc/x/html/index.html",
        "docs-test=1.0/usr/share/man/de/man1/ls.1.gz",
    ]
    page = got["docs-test=1.0/usr/share/doc/x/html/index.html"]
    assert "Einf\u00fchrung" in page and "Gr\u00fc\u00dfe aus Debian" in page and "<" not in page
    assert got["docs-test=1.0/usr/share/man/de/man1/ls.1.gz"].startswith(".TH LS 1\n")


def test_a_missing_package_names_it_and_the_apt_command(tmp_path: Path, monkeypatch) -> None:
    calls = []

    def apt(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 100, b"", b"E: Version '9.9' for 'foo-doc' was not found")

    monkeypatch.setattr(archives.subprocess, "run", apt)
    with pytest.raises(
        SystemExit,
        match=r"^Debian package foo-doc=1:9\.9 not available: run `apt-get update && apt-get download foo-doc=1:9\.9`",
    ):
        archives.fetch_deb("foo-doc", "1:9.9", tmp_path)
    assert calls == [["apt-get", "download", "foo-doc=1:9.9"]]
    (tmp_path / "foo-doc_1%3a9.9_all.deb").write_bytes(b"!<arch>\n")  # apt's name for an epoch: fetched once
    assert archives.fetch_deb("foo-doc", "1:9.9", tmp_path).name == "foo-doc_1%3a9.9_all.deb" and len(calls) == 1


def test_prose_packages_are_pinned_and_not_the_cloud_cli_pages() -> None:
    assert all(version and version[0].isdigit() for version in mixed.PROSE_PACKAGES.values())
    assert not any("gcloud" in package or "google" in package for package in mixed.PROSE_PACKAGES)
    prose = mixed.streams(Path("/nonexistent"))["prose"][1]
    assert prose.__name__ == "interleave"  # the packages' documentation, not /usr/share/man's pages
