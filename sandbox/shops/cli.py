"""What every fake shop's ``shopsync fake-shop <platform>`` command shares: its options made
from the fake's settings model (the one place of each default, type and bound), where it
listens, its seed, serving it, and turning a bad option into one line per problem and exit
code 2."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from types import NoneType
from typing import Any, Literal, TypeVar, get_args, get_origin

import click
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from sandbox.shops.settings import MOST, FakeShopSettings, HostedShopSettings

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)
#: what the help calls an option's value where its type's name would say too little
METAVARS = {"rate_limit": "N", "max_page_size": "N", "retry_after": "SECONDS"}


def _options(*options: Callable[[F], F]) -> Callable[[F], F]:
    """The ``click.option`` decorators as one, in the order their help lists them."""
    return lambda fn: functools.reduce(lambda wrapped, option: option(wrapped),
                                       reversed(options), fn)


def _click_type(field: FieldInfo) -> Any:
    """A settings field's type on the command line: a ``Literal``'s choices, a number's
    bounds as a range (a count's cap ``MOST`` is left to the model), else the plain type."""
    if get_origin(field.annotation) is Literal:
        return click.Choice(get_args(field.annotation))
    kind = next((t for t in get_args(field.annotation) if t is not NoneType), field.annotation)
    bound = {key: getattr(b, key) for b in field.metadata for key in ("ge", "gt", "le")
             if getattr(b, key, MOST) != MOST}
    if not bound:
        return kind
    return (click.IntRange if kind is int else click.FloatRange)(
        bound.get("ge", bound.get("gt")), bound.get("le"), min_open="gt" in bound)


def options(model: type[BaseModel], **helps: str | None) -> Callable[[F], F]:
    """An option for each of ``model``'s fields named, in that order, with the help given:
    the field's default (shown unless None) and type; a switch that is on is turned off by
    ``--no-<name>``."""

    def option(name: str, help: str | None) -> Callable[[F], F]:
        field, dashed = model.model_fields[name], name.replace("_", "-")
        if field.annotation is bool:
            return click.option(f"--no-{dashed}", name, flag_value=False, default=True,
                                help=help)
        return click.option(f"--{dashed}", default=field.default,
                            show_default=field.default is not None, type=_click_type(field),
                            metavar=METAVARS.get(name), help=help)

    return _options(*(option(name, help) for name, help in helps.items()))


def serving(platform: str, model: type[FakeShopSettings], help: str,
            *decorators: Callable[[Callable[..., None]], Callable[..., None]]) -> click.Command:
    """``shopsync fake-shop <platform>`` of an HTTP fake: ``--host``, ``--port`` (a bad one
    is the model's to refuse) and ``--seed``, then its own options (``decorators``, in help
    order), made ``model`` settings and served by the platform's ``Launcher`` (imported when
    the command runs, so that the command's module stays light)."""

    def command(**given: Any) -> None:
        importlib.import_module(f"sandbox.shops.{platform}.launch").LAUNCHER.run(given)

    port = click.option("--port", default=model.model_fields["port"].default, show_default=True,
                        type=int, help="Port to listen on (0: a free port, printed in the banner).")
    return click.command(platform, help=help)(_options(
        options(model, host="Address to listen on."), port,
        options(model, seed="Seed of the generated data (and of the injected faults)."),
        *decorators)(command))


def settings_or_exit(model: type[M], given: dict[str, Any]) -> M:
    """The fake's settings from the command's options; a bad one ends the command with a
    message naming the option, never a traceback."""
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            where = "--" + str(err["loc"][0]).replace("_", "-") if err["loc"] else "options"
            click.echo(f"error: {where}: {str(err['msg']).removeprefix('Value error, ')}", err=True)
        sys.exit(2)


def hosting_options(answered: str, *, retried: str = "429 and 503",
                    rate_limit: str | None = None) -> Callable[[F], F]:
    """The hosting layer's options (``sandbox.shops.hosting``): ``--rate-limit`` when the
    fake has one (``rate_limit`` ends its help), ``--fault-rate`` (the faults ``answered``)
    and ``--retry-after`` (of the injected ``retried`` answers)."""
    limit = {} if rate_limit is None else {"rate_limit": "Requests per second before"
                                           f" answering 429 with Retry-After ({rate_limit})."}
    return options(HostedShopSettings, **limit,
                   fault_rate=f"Share of API requests answered {answered}.",
                   retry_after=f"Retry-After of injected {retried} answers.")


def generated_options(timezone: str) -> Callable[[F], F]:
    """``--seed``, the sizes and ``--timezone`` (its help: ``timezone``) of the fakes that
    write a generated shop out (``sql`` and ``files``, from ``sandbox.shops.sql.data``), with
    the HTTP fakes' defaults, and the ``--port`` they ignore (``shopsync demo`` passes one)."""
    return _options(
        options(FakeShopSettings, seed="Seed of the generated data.",
                customers="Customers to generate.",
                orders="Orders to generate (a cart for every fourth one).",
                products="Products to generate (every third one with variants).",
                timezone=timezone),
        click.option("--port", default=0, type=int, hidden=True,
                     help="Ignored: a database file or a folder has no port."))
