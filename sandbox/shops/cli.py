"""What every fake shop's ``shopsync fake-shop <platform>`` command shares: where it listens,
its seed, and turning a bad option into one line per problem and exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
from pydantic import BaseModel, ValidationError

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)


def _options(*options: Callable[[F], F]) -> Callable[[F], F]:
    """The ``click.option`` decorators as one, in the order their help lists them."""
    return lambda fn: functools.reduce(lambda wrapped, option: option(wrapped),
                                       reversed(options), fn)


def listen_options(default_port: int) -> Callable[[F], F]:
    """``--host``, ``--port`` and ``--seed``, the same on every fake."""
    return _options(
        click.option("--host", default="127.0.0.1", show_default=True,
                     help="Address to listen on."),
        click.option("--port", default=default_port, show_default=True, type=int,
                     help="Port to listen on (0: a free port, printed in the banner)."),
        click.option("--seed", default=0, show_default=True, type=int,
                     help="Seed of the generated data (and of the injected faults)."))


def settings_or_exit(model: type[M], options: dict[str, Any]) -> M:
    """The fake's settings from the command's options; a bad one ends the command with a
    message naming the option, never a traceback."""
    try:
        return model.model_validate(options)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            where = "--" + str(err["loc"][0]).replace("_", "-") if err["loc"] else "options"
            click.echo(f"error: {where}: {str(err['msg']).removeprefix('Value error, ')}", err=True)
        sys.exit(2)


def size_options(customers: str | None = None, orders: str | None = None,
                 products: str | None = None) -> Callable[[F], F]:
    """``--customers``, ``--orders`` and ``--products``: the generated shop's size, the same
    defaults on every fake; the help says what the platform generates of each."""
    return _options(
        click.option("--customers", default=50, show_default=True,
                     type=click.IntRange(min=0), help=customers),
        click.option("--orders", default=200, show_default=True,
                     type=click.IntRange(min=0), help=orders),
        click.option("--products", default=30, show_default=True,
                     type=click.IntRange(min=0), help=products))


def hosting_options(answered: str, *, retried: str = "429 and 503",
                    rate_limit: str | None = None) -> Callable[[F], F]:
    """The hosting layer's options (``sandbox.shops.hosting``): ``--rate-limit`` when the
    fake has one (``rate_limit`` ends its help), ``--fault-rate`` (the faults ``answered``)
    and ``--retry-after`` (of the injected ``retried`` answers)."""
    limit = [] if rate_limit is None else [click.option(
        "--rate-limit", default=None, type=click.FloatRange(min=0, min_open=True), metavar="N",
        help=f"Requests per second before answering 429 with Retry-After ({rate_limit}).")]
    return _options(
        *limit,
        click.option("--fault-rate", default=0.0, show_default=True,
                     type=click.FloatRange(0, 1),
                     help=f"Share of API requests answered {answered}."),
        click.option("--retry-after", default=1, show_default=True,
                     type=click.IntRange(min=0), metavar="SECONDS",
                     help=f"Retry-After of injected {retried} answers."))


def generated_options() -> Callable[[F], F]:
    """``--seed`` and the sizes (``size_options``) of the fakes that write a generated shop
    out (``sql`` and ``files``, from ``sandbox.shops.sql.data``)."""
    return _options(
        click.option("--seed", default=0, show_default=True, type=int,
                     help="Seed of the generated data."),
        size_options(customers="Customers to generate.",
                     orders="Orders to generate (a cart for every fourth one).",
                     products="Products to generate (every third one with variants)."))
