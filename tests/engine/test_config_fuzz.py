"""shops.yaml under fuzz: whatever the file holds — random structures, a wrong type at every
known field, odd strings, huge numbers, bad dates and crons, deep nesting, bytes that are not
UTF-8 — the loader raises ConfigError and ``shopsync check-config`` exits cleanly, every
message naming a field or the file, never a traceback.

A file that is valid still has its connections tried: they point at a closed port of this
machine, so that check-config must also fail cleanly on an address that does not answer.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.cli import main
from pipelines.engine.config import ConfigError, load_config


def _closed_port() -> int:
    """A port of this machine that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CLOSED = f"http://127.0.0.1:{_closed_port()}"
ENV = {"FUZZ_API_KEY": "sandbox1.shopsync-local-key", "FUZZ_WC_KEY": "ck_fuzz",
       "FUZZ_WC_SECRET": "cs_fuzz"}


def base(workdir: Path) -> dict[str, Any]:
    """A valid file with every section: a shop platform, a database and a file drop."""
    return {
        "destination": {"base_url": f"{CLOSED}/v1", "api_key_env": "FUZZ_API_KEY",
                        "write_carts": True},
        "state_url": f"sqlite:///{workdir / 'state.db'}",
        "reconciliation": {"schedule": "*/5 * * * *", "deadline_seconds": 600,
                           "max_resends": 3, "completeness_hours": 24},
        "alerts": {"webhook_url": "https://hooks.example.com/x", "max_rejection_rate": 0.05},
        "sources": [
            {"name": "woo", "platform": "woocommerce",
             "connection": {"url": CLOSED, "key_env": "FUZZ_WC_KEY",
                            "secret_env": "FUZZ_WC_SECRET", "options": {"timeout": 5}},
             "data_source": {"label": "Woo"}, "resources": ["orders", "customers"],
             "schedule": "*/15 * * * *", "history_start": "2024-01-01", "lookback_seconds": 300,
             "lang": "en", "currency": "EUR",
             "mapping": {"customers": {"set": {"is_opt_in": True},
                                       "rename": {"phone_number": "billing.phone"}}},
             "tuning": {"concurrency": 8, "page_size": 100, "chunk_items": 2000,
                        "max_rejected_attempts": 3}},
            {"name": "db", "platform": "sql",
             "connection": {"url": f"sqlite:///{workdir / 'shop.db'}",
                            "streams": {"customers": {"table": "t", "key": "id",
                                                      "columns": {"customer_id": "id"}}}},
             "data_source": {"id": 1}},
            {"name": "drop", "platform": "files",
             "connection": {"path": str(workdir / "drop"),
                            "streams": {"orders": {"key": "id", "columns": {"order_id": "id"}}}}},
        ],
    }


#: every field the file knows, as a path into ``base``
FIELDS: list[tuple[str | int, ...]] = [
    (), ("destination",), ("destination", "base_url"), ("destination", "api_key_env"),
    ("destination", "kpi_api_key_env"), ("destination", "write_carts"), ("state_url",),
    ("reconciliation",), ("reconciliation", "schedule"), ("reconciliation", "deadline_seconds"),
    ("reconciliation", "max_resends"), ("reconciliation", "completeness_hours"), ("alerts",),
    ("alerts", "webhook_url"), ("alerts", "max_rejection_rate"), ("layout",), ("sources",),
    ("sources", 0),
    *[("sources", 0, name) for name in (
        "name", "platform", "connection", "data_source", "resources", "schedule",
        "history_start", "lookback_seconds", "lang", "currency", "mapping", "tuning")],
    *[("sources", 0, "connection", name) for name in (
        "url", "url_env", "path", "key_env", "secret_env", "token_env", "options", "streams")],
    ("sources", 0, "connection", "options", "timeout"),
    ("sources", 0, "data_source", "id"), ("sources", 0, "data_source", "label"),
    ("sources", 0, "data_source", "type"), ("sources", 0, "resources", 0),
    ("sources", 0, "mapping", "customers"), ("sources", 0, "mapping", "customers", "set"),
    ("sources", 0, "mapping", "customers", "rename"),
    ("sources", 0, "mapping", "customers", "callable"),
    *[("sources", 0, "tuning", name) for name in (
        "concurrency", "min_concurrency", "max_concurrency", "page_size", "chunk_items",
        "max_rejected_attempts")],
    ("sources", 1, "connection", "url"), ("sources", 1, "connection", "streams"),
    ("sources", 1, "connection", "streams", "customers"),
    ("sources", 1, "connection", "streams", "customers", "columns"),
    ("sources", 1, "data_source", "id"), ("sources", 2, "connection", "path"),
    ("sources", 2, "connection", "streams", "orders", "key"),
]

ODD_STRINGS = [
    "", " ", "\x00", "\t\n", "\u202eevil", "é", "🛒" * 30, "a" * 5000, "%s%n{0}",
    "../../etc/passwd",
    "every 15 minutes", "* * * * * *", "61 * * * *", "0 0 30 2 *", "@daily", "0 9 * * mon-fri",
    "*/0 * * * *", "99999999999 * * * *", "2024-13-01", "2024-02-30", "0000-01-01", "9999-12-31",
    "-1", "1e309", "NaN", "http://localhost.evil.example/hook", "http://127.0.0.1:1/v1",
    "https://", "ftp://example.com/v1", "http://[::1/v1", "https://ex\u202e.com/v1",
    "http://a:b:c/", "sqlite:///", "nonsense://", "postgresql+nodriver://h/db",
    "postgresql+psycopg://u:secret@127.0.0.1:1/db", "mysql://h/db", "os:system",
    "builtins:print", "json:loads", "no_such_module_xyz:f", "json:no_such_function",
    "sandbox1.pasted-key-value", "shpat_0123456789abcdef0123456789abcdef", "all", "orders",
]

#: scalars as YAML text (unquoted: what a person types), each a trap for the parser
RAW = [
    "2024-13-01", "2024-02-30", "2024-06-01 25:61:00", "1e99999", "-.inf", ".nan", "0x", "0o9",
    "9" * 5000, "-" + "9" * 5000, "!!binary '@@@'", "!!binary aGVsbG8=", "*nope", "&a [*a]",
    "!!python/name:os.system", "!!python/object/apply:os.system ['true']", "!!timestamp x",
    "!!int abc", "!!float abc", "!!set {a, b}", "!!omap [a: 1]", "{[a]: b}", "{a: [}",
    "'unterminated", '"\\ud800"', '"\\x00"', '"\\U0010ffff"', "!!str", "? [a]\n: b",
    "[" * 3000 + "]" * 3000, "{a: " * 1500 + "b" + "}" * 1500, "- " * 400 + "x",
]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=10**40),
    st.integers(min_value=-(10**40), max_value=-(2**63)), st.floats(), st.text(max_size=40),
    st.sampled_from(ODD_STRINGS),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.one_of(st.text(max_size=12), st.sampled_from(["name", "url", "id", "schedule"])),
        inner, max_size=4),
    max_leaves=12,
)


def _replace(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """``document`` with the value at ``path`` replaced (the whole document when empty)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(document, dict) or isinstance(head, str):
        holder = dict(document) if isinstance(document, dict) else {}
    else:
        holder = list(document) if isinstance(document, list) else []
        while len(holder) <= head:
            holder.append({})
        holder[head] = _replace(holder[head], rest, value)
        return holder
    holder[head] = _replace(holder.get(head, {}), rest, value)
    return holder


SENTINEL = "FUZZ_RAW_SCALAR"


def _dump(document: Any) -> str:
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False)


#: the ways a file goes wrong, each fuzzed on its own (a test each, run in parallel)
KINDS = ("typed", "raw", "extra", "random", "bytes", "encoding")


@st.composite
def documents(draw: st.DrawFn, workdir: Path, kind: str) -> bytes:
    """The bytes of one shops.yaml that goes wrong in the way ``kind`` names."""
    good = base(workdir)
    if kind == "typed":  # a wrong (or odd) value at a known field
        return _dump(_replace(good, draw(st.sampled_from(FIELDS)), draw(values))).encode()
    if kind == "raw":  # a scalar as typed, unquoted, where YAML itself may trip
        text = _dump(_replace(good, draw(st.sampled_from(FIELDS[1:])), SENTINEL))
        return text.replace(SENTINEL, draw(st.sampled_from(RAW)), 1).encode()
    if kind == "extra":  # an unknown key anywhere
        path = draw(st.sampled_from([f for f in FIELDS if f and isinstance(f[-1], str)]))
        return _dump(_replace(good, (*path[:-1], draw(st.text(min_size=1, max_size=15))),
                              draw(values))).encode()
    if kind == "random":  # any structure at all
        return _dump(draw(values)).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    text = _dump(_replace(good, ("sources", 0, "lang"), "é"))
    # "encoding": a file in another encoding than UTF-8
    return text.encode(draw(st.sampled_from(["latin-1", "utf-16", "utf-32", "cp1252"])))


#: the fields of the file's top level; every problem starts with one of them (or ``file``)
TOP = ("file", "destination", "state_url", "reconciliation", "alerts", "sources")


def _top_keys(content: bytes | None) -> tuple[str, ...]:
    """The keys of the document's top level, as the messages spell them (a misspelt key is
    named as written)."""
    try:
        document = yaml.safe_load(content or b"")
    except Exception:  # noqa: BLE001 - any YAML the loader itself must refuse
        return ()
    return tuple(str(key) for key in document) if isinstance(document, dict) else ()


def names_a_field_or_the_file(problem: str, path: Path, content: bytes | None) -> bool:
    return (problem.startswith(TOP) or str(path) in problem
            or problem.startswith(_top_keys(content)))


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="shopsync-fuzz-") as folder:
        yield Path(folder)


def check(workdir: Path, content: bytes | None) -> None:
    """The loader and check-config on one file (None: no file at all): clean answers only."""
    path = workdir / "shops.yaml"
    path.unlink(missing_ok=True)
    if content is not None:
        path.write_bytes(content)
    try:
        load_config(path)
    except ConfigError as exc:
        assert exc.problems
        unnamed = [p for p in exc.problems if not names_a_field_or_the_file(p, path, content)]
        assert not unnamed, unnamed
    result = CliRunner().invoke(
        main, ["check-config", "--config", str(path), "--timeout", "0.05"],
        env={**ENV, "SHOPSYNC_HOME": str(workdir / "home"), "SHOPSYNC_CONFIG": None},
    )
    assert isinstance(result.exception, SystemExit | None), result.output
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code == 2:
        assert str(path) in result.output
    for line in result.output.splitlines():
        if line.startswith("FAIL  "):  # FAIL  <what>: <field>: <why>
            _what, _, problem = line.removeprefix("FAIL  ").partition(": ")
            assert names_a_field_or_the_file(problem, path, content), line


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40)  # 240 files in all
@given(data=st.data())
def test_no_file_makes_check_config_or_the_loader_fail_with_a_traceback(workdir, kind, data):
    check(workdir, data.draw(documents(workdir, kind)))


@pytest.mark.parametrize("content", [None, b"", b"\xef\xbb\xbf", b"\xff\xfe\x00\x00"],
                         ids=["missing", "empty", "bom-only", "utf-32-bom"])
def test_a_missing_or_empty_file_is_named(workdir, content):
    check(workdir, content)
