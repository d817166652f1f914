"""conf/dataproc.yaml shows the classifier (issue 44) commented: uncommented, the filter entry and the classifier
section make a valid config that trains the classifier and ranks the run by it."""

from __future__ import annotations

from pathlib import Path

import yaml

from pipeline.cli.schedule import dated_overrides
from pipeline.config import load_config_text
from pipeline.filter.rules import fasttext_classifier as fc

REPO = Path(__file__).resolve().parents[3]


def _uncommented(text: str) -> str:
    """The text with the fasttext_classifier entry and the ``# classifier:`` block uncommented."""
    out, block = [], False
    for line in text.splitlines():
        if line.startswith("  # - {name: fasttext_classifier"):
            line = line.replace("  # - ", "  - ", 1)
        elif line == "# classifier:":
            line, block = "classifier:", True
        elif block and line.startswith("#   "):
            line = line[2:]
        else:
            block = False
        out.append(line)
    return "\n".join(out) + "\n"


def test_the_commented_classifier_section_of_dataproc_yaml_validates() -> None:
    text = (REPO / "conf" / "dataproc.yaml").read_text()
    assert "classifier:" not in yaml.safe_load(text)  # shown, not on
    uncommented = _uncommented(text)
    config = load_config_text(uncommented, dated_overrides(yaml.safe_load(uncommented), "2026-11-22"))
    assert config.classifier is not None and config.classifier.label == "hq"
    assert config.classifier.fasttext == {"wordNgrams": 2, "epoch": 5}
    entry = config.filter[-1]
    assert entry["name"] == fc.NAME and entry["model"] == fc.RUN_MODEL and entry["keep_top"] == 0.1
    fc.check_config(config)  # model: run has its section, and ranks with one of its labels
