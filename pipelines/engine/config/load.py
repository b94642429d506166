"""Reading ``shops.yaml``: the file found (``--config``, ``$SHOPSYNC_CONFIG`` or
``./shops.yaml``), its YAML read as a person types it, validated into ``Config``, then each
source checked by its platform."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pipelines.engine.config.errors import ConfigError, describe
from pipelines.engine.config.models import Config

CONFIG_ENV = "SHOPSYNC_CONFIG"
DEFAULT_CONFIG = Path("shops.yaml")


def config_path(given: str | Path | None = None) -> Path:
    return Path(given or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG)


class _Loader(yaml.SafeLoader):
    """YAML as a person types it: a scalar that looks like a date or a number but is none
    (``2024-13-01``, ``!!int x``, 5 000 digits) stays text, for its field to name."""


def _scalar_or_text(construct: Any) -> Any:
    def build(loader: _Loader, node: yaml.ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, TypeError, AttributeError, OverflowError):
            return loader.construct_scalar(node)

    return build


for _tag, _construct in (("timestamp", yaml.SafeLoader.construct_yaml_timestamp),
                         ("int", yaml.SafeLoader.construct_yaml_int),
                         ("float", yaml.SafeLoader.construct_yaml_float)):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _scalar_or_text(_construct))


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """Where and what, without the snippet of the line (which may hold a secret)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        context = f" ({exc.context})" if exc.context else ""
        return (f"file: not valid YAML at line {mark.line + 1}, column {mark.column + 1}:"
                f" {exc.problem}{context}")
    return f"file: not valid YAML: {exc}"


def read_config(file: Path) -> Any:
    """The YAML document of ``file``; ConfigError naming the file when it cannot be read."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"no configuration file at {file}: pass --config PATH or set"
                           f" {CONFIG_ENV}"]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"file: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset"
                           f" {exc.start}) — save it as UTF-8"], file) from None
    except OSError as exc:
        raise ConfigError([f"file: cannot read {file}: {exc.strerror or exc}"], file) from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except yaml.YAMLError as exc:
        raise ConfigError([_yaml_problem(exc)], file) from None
    except RecursionError:
        raise ConfigError(["file: nested too deeply to read"], file) from None


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate the configuration; raise ConfigError listing every problem."""
    file = config_path(path)
    return parse_config(read_config(file), file)


def parse_config(raw: Any, path: Path | None = None) -> Config:
    if not isinstance(raw, dict):
        raise ConfigError(["file: must be a mapping with `sources:` (and `destination:`)"],
                          path)
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(describe(exc), path) from None
    from pipelines.engine.platforms import platform

    problems = []
    for index, source in enumerate(config.sources):
        try:
            found = platform(source.platform).check(source)
        # a platform's check that trips on a value it did not foresee still names the field
        except Exception as exc:  # noqa: BLE001
            found = [f"connection: cannot be checked ({type(exc).__name__}: {exc}) — see the"
                     f" {source.platform} README for what it takes"]
        problems += [f"sources[{index}].{problem}" for problem in found]
    if problems:
        raise ConfigError(problems, path)
    return config
