"""Real documents for the rule filters' conformance test and benchmark: the shared fixtures' texts cut into
documents of varied sizes, Python source files, text extracted from Debian's HTML documentation (resiliparse)
and Debian copyright files. Every part is sorted and cut with a seeded generator, so a run is repeatable."""

from __future__ import annotations

import random
import sysconfig
from collections.abc import Iterator
from pathlib import Path

FIXTURE_TEXTS = ("corpus.en", "tinystories_sample.txt", "german.txt", "address.txt")
HTML_ROOT = Path("/usr/share/doc")
SIZES = (40, 200, 800, 3000, 12000)
MAX_FILE = 8_000  # characters taken from one file


def cut(text: str, rng: random.Random, sizes: tuple[int, ...] = SIZES) -> list[str]:
    """``text`` in consecutive pieces of sizes drawn from ``sizes``."""
    pieces, at = [], 0
    while at < len(text):
        size = rng.choice(sizes)
        pieces.append(text[at : at + size])
        at += size
    return pieces


def fixture_documents(fixtures: Path, seed: int = 0) -> list[tuple[str, str]]:
    """The shared fixture texts whole and cut into pieces."""
    rng = random.Random(seed)
    docs = []
    for name in FIXTURE_TEXTS:
        text = (fixtures / name).read_text(encoding="utf-8")
        docs.append((name, text[:50_000]))
        docs += [(name, piece) for piece in cut(text, rng)]
    return docs


def python_sources() -> Iterator[tuple[str, str]]:
    """Python files of the installed packages, sorted by path."""
    root = Path(sysconfig.get_paths()["purelib"])
    for path in sorted(root.glob("*/*.py")):
        yield str(path.relative_to(root)), path.read_text(encoding="utf-8", errors="replace")


def html_texts() -> Iterator[tuple[str, str]]:
    """Plain text of Debian's HTML documentation pages (resiliparse's extraction), sorted by path."""
    from resiliparse.extract.html2text import extract_plain_text

    for path in sorted(HTML_ROOT.rglob("*.html")):
        if path.is_file():
            yield str(path), extract_plain_text(path.read_text(encoding="utf-8", errors="replace"))


def copyright_files() -> Iterator[tuple[str, str]]:
    """Debian packages' copyright files, sorted by path."""
    for path in sorted(HTML_ROOT.glob("*/copyright")):
        yield str(path), path.read_text(encoding="utf-8", errors="replace")


def real_documents(fixtures: Path, per_kind: int, seed: int = 0, max_file: int = MAX_FILE) -> list[tuple[str, str]]:
    """(origin, text) of the fixtures plus about ``per_kind`` characters from each other kind: every file's first
    ``max_file`` characters, whole or cut into pieces (a seeded coin decides), until the kind's budget is spent."""
    rng = random.Random(seed)
    docs = fixture_documents(fixtures, seed)
    for kind in (python_sources(), html_texts(), copyright_files()):
        spent = 0
        for origin, text in kind:
            if spent >= per_kind:
                break
            text = text[:max_file]
            parts = cut(text, rng) if rng.random() < 0.3 else [text]
            docs += [(origin, part) for part in parts]
            spent += len(text)
    return docs


def edge_cases() -> list[tuple[str, str]]:
    """Small hand-made documents at the rules' edges."""
    prose = "The cat sat on the mat and looked at the door. It was a quiet day with the sun in the sky. "
    long_prose = prose * 3 + "We have to go to the shop, and then we will be home. " * 4
    return [
        ("empty", ""),
        ("newlines", "\n\n\n"),
        ("spaces", "   \t  "),
        ("one word", "word"),
        ("curly", long_prose + "\nThe value of x is {1, 2} in this set.\n" + long_prose),
        ("lorem", "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n" + long_prose),
        ("javascript", long_prose + "\nPlease enable JavaScript to view this page.\n" + long_prose),
        ("policy", long_prose + "\nRead our privacy policy for more.\nThis site uses cookies to work.\n"),
        ("ellipsis lines", "\n".join(f"And then the story went on and on... part {i}..." for i in range(20))),
        ("ellipsis symbols", " ".join(["wait…"] * 60)),
        ("bullets", "\n".join(f"• item number {i} of the list with the words" for i in range(60))),
        ("dashes", "\n".join(f"  - the {i} thing to do with that and the other" for i in range(60))),
        ("hashes", " ".join(["#tag the word"] * 40)),
        ("citations", (prose + "[1] " + prose + "[edit]\n") * 5 + "Something [citation needed].\n"),
        ("repeated lines", ("the same line over and over again.\n" * 30) + long_prose),
        ("repeated paragraphs", ("A paragraph of the text.\n\n" * 10) + long_prose),
        ("repeated words", "the " * 300),
        ("long word", "a" * 1200 + " is long.\n" + long_prose),
        ("crlf", long_prose.replace(". ", ".\r\n")),
        ("unicode lines", long_prose.replace(". ", ".\u2028") + "\x0bend...\x0c- x"),
        ("short lines", "\n".join(["Yes.", "No!", "Maybe?", "ok"] * 20)),
        ("no punctuation", "\n".join(["a line without a stop at its end and more words here"] * 3)),
        ("symbols only", "!!! ??? ... ### --- *** ;;; ::: ,,, ..."),
        ("digits", " ".join(str(i) for i in range(200))),
        ("list", "\n".join(f"Extraordinarily_{i:03d} comprehensively." for i in range(40))),
        ("split n-grams", "ab c d e f g " * 3 + "a bc d e f g " * 3 + long_prose),
    ]
