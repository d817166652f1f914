"""A synthetic corpus: the standard library's docstrings as prose, with planted near and exact copies."""

from __future__ import annotations

import importlib
import inspect
import json
import random
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from corpora.store import DATA

MODULES = tuple(
    "argparse asyncio collections csv datetime decimal email functools http.client inspect json logging "
    "pathlib pickle random re shutil socket sqlite3 statistics string subprocess tarfile threading "
    "typing unittest urllib.request uuid zipfile textwrap heapq bisect fractions".split()
)


def paragraphs(min_chars: int = 200) -> list[str]:
    """Distinct docstrings of standard-library modules, classes and functions."""
    seen, out = set(), []
    for name in MODULES:
        module = importlib.import_module(name)
        objects = [module] + [v for _, v in sorted(vars(module).items()) if inspect.isclass(v) or callable(v)]
        for obj in objects:
            doc = inspect.getdoc(obj)
            if doc and len(doc) >= min_chars and doc not in seen:
                seen.add(doc)
                out.append(" ".join(doc.split()))
    return out


def mutate(text: str, rng: random.Random, rate: float) -> str:
    """Edit about ``rate`` of the words: replace, delete or duplicate."""
    words = text.split(" ")
    out = []
    for w in words:
        r = rng.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            out.append(rng.choice(words))
            continue
        out.append(w)
        if r < rate:
            out.append(w)
    return " ".join(out)


def documents(
    n: int, seed: int = 0, dup_rate: float = 0.2, exact_rate: float = 0.05, parts: tuple[int, int] = (2, 6)
) -> Iterator[str]:
    """``n`` documents; about ``dup_rate`` are near-copies and ``exact_rate`` exact copies of earlier ones."""
    rng = random.Random(seed)
    pool = paragraphs()
    made: list[str] = []
    for _ in range(n):
        r = rng.random()
        if made and r < exact_rate:
            doc = rng.choice(made)
        elif made and r < exact_rate + dup_rate:
            doc = mutate(rng.choice(made), rng, rng.uniform(0.01, 0.08))
        else:
            doc = "\n\n".join(rng.choice(pool) for _ in range(rng.randint(*parts)))
        made.append(doc)
        if len(made) > 5000:
            made.pop(rng.randrange(len(made)))
        yield doc


def jsonl_of_size(path: Path, megabytes: float, seed: int = 0) -> Path:
    """A JSONL corpus of about ``megabytes`` MB of text (cached on disk by name)."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for i, doc in enumerate(take(documents(10**9, seed=seed), megabytes * 1e6)):
            f.write(json.dumps({"text": doc, "url": f"https://example.org/{path.stem}/{i}"}) + "\n")
    return path


def build(megabytes: float, seed: int = 0) -> Path:
    """A JSONL corpus of about ``megabytes`` MB of text, generated once and cached under DATA."""
    return jsonl_of_size(DATA / f"corpus-{megabytes:g}mb-{seed}.jsonl", megabytes, seed)


def take(docs: Iterable[str], limit: float, size: Callable[[str], int] = len) -> Iterator[str]:
    """The first of ``docs`` until the sum of their ``size`` (default: characters) reaches ``limit``."""
    total = 0
    for doc in docs:
        if total >= limit:
            return
        total += size(doc)
        yield doc
