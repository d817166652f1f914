"""The pinned PyPI source releases of the release corpus (``bench/release_corpus.py``): downloading them once,
checking them against their pinned SHA-256, and reading their text files.

How it measures: docs/benchmarks.md, Method notes, release_archives.
"""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PINS = HERE / "release_archives.json"
SDIST_DIR = Path(os.environ.get("PIPELINE_BENCH_DATA", "/tmp/pipeline-bench")) / "sdists"
PYPI = "https://pypi.org/pypi"
MAX_BYTES = 1_000_000
TEXT_SUFFIXES = (
    *(".py", ".pyi", ".pyx", ".pxd", ".pxi", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".f", ".f90", ".js", ".css"),
    *(".rst", ".md", ".txt", ".html", ".htm", ".tex", ".cfg", ".toml", ".ini", ".in", ".yml", ".yaml", ".sh"),
)

# Per package, consecutive feature releases, oldest first (the last patch release of each minor version).
RELEASES: dict[str, tuple[str, ...]] = {
    "ansible": tuple(f"13.{m}.0" for m in range(3, 9)) + ("14.0.0", "14.1.0", "14.2.0", "14.3.1", "14.4.0", "14.5.0"),
    "google-cloud-aiplatform": ("1.162.0", "1.163.0", "1.164.0", "1.165.1", "2.0.1", "2.1.3")
    + tuple(f"2.{m}.0" for m in range(2, 8)),
    "scipy": ("1.9.3", "1.10.1", "1.11.4", "1.12.0", "1.13.1", "1.14.1", "1.15.3", "1.16.3"),
    "transformers": ("5.13.1", "5.14.1", "5.15.1", "5.16.1", "5.17.0", "5.18.0", "5.19.0", "5.20.2", "5.21.1"),
    "numpy": ("1.21.6", "1.22.4", "1.23.5", "1.24.4", "1.25.2", "1.26.4", "2.0.2", "2.1.3", "2.2.6", "2.3.5"),
    "homeassistant": ("2025.12.5", "2026.1.3", "2026.2.3", "2026.3.4", "2026.4.4", "2026.5.4", "2026.6.4")
    + ("2026.7.4", "2026.8.3", "2026.9.4", "2026.10.4", "2026.11.0"),
    "salt": tuple(f"3007.{m}" for m in range(12, 18)) + ("3008.0", "3008.1", "3008.2", "3008.3"),
    "plotly": ("6.0.1", "6.1.2", "6.2.0", "6.3.1", "6.4.0", "6.5.2", "6.6.0", "6.7.0", "6.8.0", "6.9.0"),
    "SQLAlchemy": ("0.9.10", "1.0.19", "1.1.18", "1.2.19", "1.3.24", "1.4.54", "2.0.58", "2.1.9"),
    "sympy": ("1.3", "1.4", "1.5.1", "1.6.2", "1.7.1", "1.8", "1.9", "1.10.1", "1.11.1", "1.12.1", "1.13.3", "1.14.0"),
    "astropy": ("4.2.1", "4.3.1", "5.0.8", "5.1.1", "5.2.2", "5.3.4", "6.0.1", "6.1.7", "7.0.2", "7.1.1"),
    "nova": ("30.1.0", "30.2.1", "30.3.0", "31.0.1", "31.1.0", "31.2.0", "31.3.1", "32.0.0", "32.1.0", "32.2.1"),
    "neutron": ("23.4.0", "23.5.0", "24.0.1", "24.1.0", "24.2.2", "25.0.0", "25.1.0", "25.2.3", "26.0.6", "27.0.4"),
    "pandas": ("1.0.5", "1.1.5", "1.2.5", "1.3.5", "1.4.4", "1.5.3", "2.0.3", "2.1.4", "2.2.3", "2.3.3", "3.0.6"),
    "Django": ("2.2.28", "3.0.14", "3.1.14", "3.2.25", "4.0.10", "4.1.13", "4.2.30", "5.0.14", "5.1.15", "5.2.19"),
    "scikit-learn": ("0.23.2", "0.24.2", "1.0.2", "1.1.3", "1.2.2", "1.3.2", "1.4.2", "1.5.2", "1.6.1", "1.7.2"),
    "matplotlib": ("3.0.3", "3.1.3", "3.2.2", "3.3.4", "3.4.3", "3.5.3", "3.6.3", "3.7.5", "3.8.4", "3.9.4"),
    "twisted": ("22.4.0", "22.8.0", "22.10.0", "23.8.0", "23.10.0", "24.3.0", "24.7.0", "24.10.0", "24.11.0"),
    "mypy": ("1.14.1", "1.15.0", "1.16.1", "1.17.1", "1.18.2", "1.19.1", "1.20.2", "2.0.0", "2.1.0", "2.2.0"),
    "statsmodels": ("0.9.0", "0.10.2", "0.11.1", "0.12.2", "0.13.5", "0.14.6"),
    "wagtail": ("5.2.8", "6.0.6", "6.1.3", "6.2.4", "6.3.8", "6.4.2", "7.0.10", "7.1.3", "7.2.3", "7.3.4"),
    "dask": ("2025.4.1", "2025.5.1", "2025.7.0", "2025.9.3", "2025.10.0", "2025.11.0", "2025.12.0", "2026.1.3"),
    "cython": ("0.25.2", "0.26.1", "0.27.3", "0.28.6", "0.29.37", "3.0.12", "3.1.8", "3.2.9", "3.3.1"),
    "sphinx": ("6.2.1", "7.0.1", "7.1.2", "7.2.6", "7.3.7", "7.4.7", "8.0.2", "8.1.3", "8.2.3", "9.0.4", "9.1.1"),
    "pygments": tuple(f"2.{m}.{p}" for m, p in ((10, 0), (11, 2), (12, 0), (13, 0), (14, 0), (15, 1), (16, 1)))
    + ("2.17.2", "2.18.0", "2.19.2", "2.20.0"),
    "docutils": ("0.12", "0.13.1", "0.14", "0.15.2", "0.16", "0.17.1", "0.18.1", "0.19", "0.20.1", "0.21.2"),
    "pip": ("24.0", "24.1.2", "24.2", "24.3.1", "25.0.1", "25.1.1", "25.2", "25.3", "26.0.1", "26.1.2"),
    "setuptools": ("80.4.0", "80.6.0", "80.7.1", "80.8.0", "80.9.0", "80.10.2", "81.0.0", "82.0.1", "83.0.0"),
    "requests": ("2.23.0", "2.24.0", "2.25.1", "2.26.0", "2.27.1", "2.28.2", "2.29.0", "2.30.0", "2.31.0"),
    "flask": ("0.12.5", "1.0.4", "1.1.4", "2.0.3", "2.1.3", "2.2.5", "2.3.3", "3.0.3", "3.1.3"),
    "jinja2": ("2.7.3", "2.8.1", "2.9.6", "2.10.3", "2.11.3", "3.0.3", "3.1.6"),
}

Member = tuple[str, str]  # (name inside the release without its top directory, text)


def keep_member(name: str, size: int) -> bool:
    """Whether an archive member of this name and size may become a document (see the module docstring)."""
    lower = name.lower()
    if not lower.endswith(TEXT_SUFFIXES) or lower.endswith((".min.js", ".min.css")):
        return False
    return 0 < size <= MAX_BYTES


def decode(data: bytes) -> str | None:
    """The text of a member's bytes, or None when it is not UTF-8, has a NUL byte or was generated by Cython."""
    if b"\x00" in data or b"Generated by Cython" in data[:1024]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _inner(name: str) -> str:
    """A member's name without the archive's top directory (``Django-4.2/django/x.py`` -> ``django/x.py``)."""
    return name.split("/", 1)[1] if "/" in name else name


def read_archive(path: Path) -> list[Member]:
    """The kept text members of an sdist (.tar.gz, .tar.bz2 or .zip), sorted by name."""
    raw: dict[str, bytes] = {}
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.is_dir() and keep_member(info.filename, info.file_size):
                    raw[_inner(info.filename)] = archive.read(info)
    else:
        with tarfile.open(path) as archive:  # read in archive order: one pass over the compressed stream
            for entry in archive:
                if entry.isfile() and keep_member(entry.name, entry.size):
                    handle = archive.extractfile(entry)
                    if handle is not None:
                        raw[_inner(entry.name)] = handle.read()
    texts = ((name, decode(data)) for name, data in sorted(raw.items()))
    return [(name, text) for name, text in texts if text is not None and text.strip()]


def pins() -> dict[str, dict[str, Any]]:
    """The pinned archives, ``{"Django==4.2.30": {"filename": ..., "sha256": ...}}``."""
    if not PINS.is_file():
        raise SystemExit(f"no pins at {PINS}: run `python -m bench release_corpus --pin`")
    pinned: dict[str, dict[str, Any]] = json.loads(PINS.read_text())
    return pinned


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sdist_file(package: str, version: str) -> dict[str, str]:
    """PyPI's listing of a release's sdist: filename, sha256 and the URL to fetch it from."""
    url = f"{PYPI}/{package}/json"
    with urllib.request.urlopen(url, timeout=120) as response:
        listing = json.load(response)
    for entry in listing["releases"].get(version, []):
        if entry["packagetype"] == "sdist":
            return {
                "filename": entry["filename"],
                "sha256": entry["digests"]["sha256"],
                "url": urllib.parse.urljoin(url, entry["url"]),
            }
    raise SystemExit(f"{package}=={version}: PyPI lists no sdist")


def _download(url: str, sha256: str, path: Path) -> None:
    """Download ``url`` to ``path`` (through a partial file) if its SHA-256 is ``sha256``, else fail."""
    with urllib.request.urlopen(url, timeout=600) as response:
        data = response.read()
    if _sha256(data) != sha256:
        raise SystemExit(f"{url}: the download's SHA-256 is not {sha256}")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    partial.rename(path)


def pin_all(directory: Path = SDIST_DIR) -> dict[str, dict[str, Any]]:
    """Pin every release of RELEASES not pinned yet: its sdist's file name, SHA-256 and size as PyPI lists them,
    and the bytes of text it gives (the mix's weights); downloads each once. Rewrites the pins file."""
    pinned = json.loads(PINS.read_text()) if PINS.is_file() else {}
    for package, versions in RELEASES.items():
        for version in versions:
            key = f"{package}=={version}"
            if key in pinned:
                continue
            found = _sdist_file(package, version)
            path = directory / found["filename"]
            if not path.is_file() or _sha256(path.read_bytes()) != found["sha256"]:
                _download(found["url"], found["sha256"], path)
            text = sum(len(t.encode("utf-8")) for _, t in read_archive(path))
            pinned[key] = {"filename": found["filename"], "sha256": found["sha256"], "size": path.stat().st_size}
            pinned[key]["text_bytes"] = text
            PINS.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n")
            print(f"{key:<36} {path.stat().st_size / 1e6:7.1f} MB archive {text / 1e6:8.1f} MB text", flush=True)
    return pinned


def fetch(package: str, version: str, directory: Path = SDIST_DIR, pinned: dict[str, Any] | None = None) -> Path:
    """The path of a release's sdist, downloaded once and checked against its pin (``pinned``, default the pins
    file) on every call."""
    key = f"{package}=={version}"
    pin = (pins() if pinned is None else pinned).get(key)
    if pin is None:
        raise SystemExit(f"{key}: not in {PINS.name}: run `python -m bench release_corpus --pin`")
    path: Path = directory / pin["filename"]
    if not path.is_file():
        found = _sdist_file(package, version)
        if found["filename"] != pin["filename"]:
            raise SystemExit(f"{key}: PyPI lists {found['filename']}, not the pinned {pin['filename']}")
        _download(found["url"], pin["sha256"], path)
    elif _sha256(path.read_bytes()) != pin["sha256"]:
        raise SystemExit(f"{path}: SHA-256 differs from its pin in {PINS.name}: delete it to download it again")
    return path


def release_members(package: str, version: str) -> list[Member]:
    """The kept text members of one pinned release."""
    return read_archive(fetch(package, version))
