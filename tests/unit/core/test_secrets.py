"""The secret filter (issue 14, item 9): what reaches manifest.json and error messages."""

from __future__ import annotations

import json

import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.run import preflight
from pipeline.run.manifest import Manifest
from pipeline.secrets import is_secret_setting, redact_text

CLASS = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"


@pytest.mark.parametrize(
    "key, value",
    [
        ("spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net", "bXlrZXk="),
        ("spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net", "bXlrZXk="),
        ("spark.hadoop.fs.azure.sas.container.acct.blob.core.windows.net", "sv=2020&sig=abc"),
        ("spark.hadoop.fs.azure.sas.fixed.token.acct.dfs.core.windows.net", "sv=2020&sig=abc"),
        ("spark.hadoop.fs.azure.account.oauth2.client.secret.acct.dfs.core.windows.net", "s3cr3t"),
        ("spark.hadoop.fs.s3a.secret.key", "SHH"),
        ("spark.hadoop.fs.s3a.access.key", "AKIA0000"),
        ("spark.hadoop.fs.s3a.session.token", "tok"),
        ("spark.hadoop.google.cloud.auth.service.account.json.keyfile", "/keys/sa.json"),
        ("spark.ssl.keyStorePassword", "pw"),
        ("spark.authenticate.secret", "x"),
        ("spark.hadoop.fs.s3a.aws.credentials.provider", "AKIA0000:notaclassname/+="),
    ],
)
def test_secret_settings(key, value):
    assert is_secret_setting(key, value)


@pytest.mark.parametrize(
    "key, value",
    [
        ("spark.hadoop.fs.s3a.aws.credentials.provider", CLASS),
        (
            "spark.hadoop.fs.s3a.aws.credentials.provider",
            f"{CLASS}, com.amazonaws.auth.InstanceProfileCredentialsProvider",
        ),
        (
            "spark.hadoop.fs.azure.account.oauth.provider.type.acct.dfs.core.windows.net",
            "org.apache.hadoop.fs.azurebfs.oauth2.ClientCredsTokenProvider",
        ),
        ("spark.sql.shuffle.partitions", "4"),
        ("spark.driver.memory", "2g"),
    ],
)
def test_harmless_settings(key, value):
    assert not is_secret_setting(key, value)


def _config(tmp_path, settings: dict[str, str], output: str | None = None):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    config = load_config_text(
        f'output: "{output or tmp_path / "run"}"\ntokenizer: {{train: true}}\n'
        f'sources: [{{name: web, paths: ["{data}"]}}]\n'
    )
    config.spark.settings.update(settings)
    return config


def test_preflight_refuses_secrets_but_not_the_provider_class(tmp_path):
    azure = "spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net"
    with pytest.raises(ConfigError) as err:
        preflight.check_no_secrets(_config(tmp_path, {azure: "bXlrZXk="}))
    assert azure in str(err.value) and "bXlrZXk=" not in str(err.value)
    preflight.check_no_secrets(_config(tmp_path, {"spark.hadoop.fs.s3a.aws.credentials.provider": CLASS}))


def test_manifest_never_holds_a_secret_or_a_url_password(tmp_path):
    azure = "spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net"
    config = _config(tmp_path, {azure: "bXlrZXk=", "spark.hadoop.fs.s3a.aws.credentials.provider": CLASS})
    config.sources[0].paths.append("https://alice:hunter2@example.com/data/*.jsonl")
    manifest = Manifest(str(tmp_path / "run"))
    manifest.start(config)
    text = (tmp_path / "run" / "manifest.json").read_text()
    assert "bXlrZXk=" not in text and "hunter2" not in text
    settings = json.loads(text)["config"]["spark"]["settings"]
    assert settings["spark.hadoop.fs.s3a.aws.credentials.provider"] == CLASS
    assert azure in settings  # the key stays visible, its value does not
    assert "https://alice:<redacted>@example.com/data/*.jsonl" in text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("cannot list 'ftp://bob:pa55word@host/x/*.jsonl': refused", "pa55word"),
        ("https://u:p%40ss@h.example/a and s3://k:v@bucket/b", "p%40ss"),
        ("GET https://acct.blob.core.windows.net/c/x?sv=2020-01-01&sig=AbC%2Bdef&se=2030 failed", "AbC%2Bdef"),
    ],
)
def test_url_passwords_and_signatures_are_redacted(text, secret):
    assert secret not in redact_text(text)
    assert "://" in redact_text(text)


def test_config_errors_never_echo_a_url_password():
    err = ConfigError("sources.0.paths.0", "no input files match 'ftp://bob:pa55word@host/x/*.jsonl'")
    assert "pa55word" not in str(err) and "ftp://bob:<redacted>@host/x/*.jsonl" in str(err)


def test_stage_markers_and_error_lines_never_hold_a_url_password(tmp_path):
    from pipeline.errors import PipelineError, one_line
    from pipeline.run.registry import STAGES
    from pipeline.run.runner import stage_inputs

    config = _config(tmp_path, {})
    config.sources[0].paths.append("https://alice:hunter2@example.com/data/*.jsonl")
    recorded = json.dumps([stage_inputs(stage, config) for stage in STAGES])
    assert "hunter2" not in recorded and "alice:<redacted>@example.com" in recorded
    line = one_line(PipelineError("cannot write 's3://k:hunter2@bucket/run': denied"))
    assert "hunter2" not in line and "s3://k:<redacted>@bucket/run" in line
