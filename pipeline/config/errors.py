"""The one error type for bad configuration: always names the offending key."""

from pipeline.errors import UsageError
from pipeline.secrets import redact_text


class ConfigError(UsageError, ValueError):
    """A config value is unknown, of the wrong type or impossible; ``key`` is its dotted path."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(redact_text(f"config key '{key}': {message}"))  # a URL's password never reaches a message
