"""The repository cites its own contract: every ``docs/<page>.md, <Heading>`` citation names a page and a
heading that exist, docs pages link to pages that exist, and no citation of the old product spec remains."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
OLD_CITATION = "SPEC " + "\u00a7"  # written split so that this file does not cite it
CITATION = re.compile(r"docs/(\w+\.md)(?:, (?!docs/)([^\n]*))?")  # ", docs/..." lists pages
EXPECTED_PAGES = {
    "stages.md",
    "dedup.md",
    "tokenizer.md",
    "indexed_dataset.md",
    "blending.md",
    "running.md",
    "bad_input.md",
    "api.md",
    "config.md",
    "sizing.md",
    "benchmarks.md",
}
README_MAX_LINES = 250  # a newcomer reads it in five minutes (issue #42, item 6); the rest is in docs/


def repository_text_files() -> list[Path]:
    """Tracked and untracked (not ignored) files of the checkout that read as UTF-8 text."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        paths = [REPO / name for name in listed]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (e.g. an unpacked sdist)
        paths = [p for p in REPO.rglob("*") if ".git" not in p.parts]
    files = []
    for path in paths:
        if not path.is_file() or path.suffix in (".jsonl", ".parquet", ".zst", ".gz", ".bin", ".idx", ".npy", ".png"):
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


def headings(page: Path) -> list[str]:
    """The page's Markdown headings (any level), outside fenced code blocks."""
    found, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+?)\s*$", line)):
            found.append(m.group(1))
    return found


def citation_problems(text: str, where: str) -> list[str]:
    """What is wrong with each docs citation in ``text``: a missing page, or a heading the page does not have."""
    problems = []
    for m in CITATION.finditer(text):
        page, after = DOCS / m.group(1), m.group(2)
        if not page.is_file():
            problems.append(f"{where}: cites docs/{m.group(1)}, which does not exist")
            continue
        if after is not None and not any(after.startswith(h) for h in headings(page)):
            problems.append(f"{where}: cites docs/{m.group(1)}, {after[:40]!r}: no such heading in that page")
    return problems


@pytest.fixture(scope="module")
def files() -> list[Path]:
    found = repository_text_files()
    assert any(p.name == "README.md" for p in found) and any(p.suffix == ".py" for p in found)
    return found


def test_the_contract_pages_exist():
    assert EXPECTED_PAGES <= {p.name for p in DOCS.glob("*.md")}
    for name in EXPECTED_PAGES:
        assert headings(DOCS / name), name


def test_no_citation_of_the_product_spec_remains(files):
    offenders = [
        f"{p.relative_to(REPO)}:{n}"
        for p in files
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if OLD_CITATION in line
    ]
    assert offenders == []
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "SPEC.md" not in readme and "docs/" in readme


def test_every_docs_citation_names_a_page_and_heading_that_exist(files):
    problems, cited = [], 0
    for path in files:
        if path.resolve() == Path(__file__).resolve():
            continue  # its own examples of bad citations, below
        text = path.read_text(encoding="utf-8")
        cited += len(CITATION.findall(text))
        problems += citation_problems(text, str(path.relative_to(REPO)))
    assert problems == []
    assert cited >= 50  # the code cites the docs throughout, not once


def test_readme_is_short_and_links_resolve():
    """The README stays a short tour: at most README_MAX_LINES lines, every relative link names a file that
    exists, and every docs page is listed in docs/README.md's index."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    links = re.findall(r"\]\(([^)#:]+)\)", readme)
    assert [link for link in links if not (REPO / link).exists()] == []
    assert {"docs/config.md", "docs/sizing.md", "docs/benchmarks.md"} <= set(links)
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in DOCS.glob("*.md") if f"]({p.name})" not in index) == ["README.md"]


def test_readme_keeps_the_test_command_ci_runs_and_a_config_that_loads():
    """.ci/run greps the README for its test command (one line), and the README's config example is a valid config."""
    from pipeline.config.load import load_config_text

    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    pattern = re.search(r'grep -m1 -E "([^"]+)" README\.md', ci)
    assert pattern is not None
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = [line for line in readme.splitlines() if re.search(pattern.group(1), line)]
    assert len(found) == 1 and "-m pytest" in found[0]
    example = re.search(r"```yaml\n(.*?)```", readme, re.DOTALL)
    assert example is not None
    config = load_config_text(example.group(1))
    assert [s.name for s in config.sources] == ["web", "code"] and config.sources[1].filter == []


def test_links_between_docs_pages_resolve():
    broken = []
    for page in sorted(DOCS.glob("*.md")):
        for target in re.findall(r"\]\(([^)#:]+\.md)\)", page.read_text(encoding="utf-8")):
            if not (page.parent / target).is_file():
                broken.append(f"{page.name} -> {target}")
    assert broken == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("see docs/dedup.md, Verification.", []),
        ("see docs/dedup.md.", []),
        ("see docs/dedup.md, Verificaton.", ["x: cites docs/dedup.md, 'Verificaton.': no such heading in that page"]),
        ("see docs/nothing.md, Verification.", ["x: cites docs/nothing.md, which does not exist"]),
    ],
)
def test_the_checker_itself_flags_bad_citations(text, expected):
    assert citation_problems(text, "x") == expected
