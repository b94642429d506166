"""The packages keep their type hints true: mypy, configured in pyproject.toml, finds no
error in connectors, pipelines and assets."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_no_error_in_the_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the configuration names the packages relative to the root
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", str(tmp_path / "mypy-cache")])
    assert status == 0, out + err
    assert out.startswith("Success")
