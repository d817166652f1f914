"""The one error base class of the package, and how the CLI turns an error into one line and an exit code.

Every error the pipeline raises on purpose derives from :class:`PipelineError`. Its message names the
cause and the config key or path concerned; ``exit_code`` is 2 for usage and config errors (fix the
command or the config) and 1 for everything else that stops a run.
"""

from __future__ import annotations

from pipeline.secrets import redact_text

# import name -> what to pip install, for the dependencies whose names differ or matter most
PIP_NAMES: dict[str, str] = {
    "yaml": "pyyaml",
    "pyspark": "pyspark",
    "graphframes": "graphframes-py",
    "zstandard": "zstandard",
    "gcsfs": "gcsfs",
    "s3fs": "s3fs",
    "megatron": "megatron-core",
}


class PipelineError(Exception):
    """An error that stops a run; the message is one line naming the cause and the key or path."""

    exit_code: int = 1


class UsageError(PipelineError):
    """A bad command line or config: exit code 2."""

    exit_code = 2


class MissingDependencyError(PipelineError):
    """A Python package the pipeline needs is not importable."""

    def __init__(self, module: str) -> None:
        self.module = module
        package = PIP_NAMES.get(module, module)
        super().__init__(
            f"{module} is not installed: pip install {package} (or install this project with pip, "
            "which pulls in its dependencies)"
        )


def missing_dependency(exc: ImportError) -> MissingDependencyError | None:
    """The :class:`MissingDependencyError` for an ImportError of a third-party package, else None.

    An ImportError inside ``pipeline`` itself is a broken install or a bug, not a missing dependency.
    """
    name = getattr(exc, "name", None)
    if not name:
        return None
    top = name.split(".", 1)[0]
    return None if top == "pipeline" else MissingDependencyError(top)


def one_line(exc: BaseException, limit: int = 600) -> str:
    """``exc``'s message on one line (newlines folded, URL passwords redacted), at most ``limit`` characters."""
    text = redact_text(" ".join(str(exc).split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."
