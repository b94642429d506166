"""What the connector learns about a shop before reading it: its languages (ids → ISO codes,
which languages to read), currencies, default language and currency, and its time zone
(PS_TIMEZONE, unless the configuration names one). Every record read carries this as
``_shop``, one shared dict, so the mapping can turn language ids, currency ids and
shop-local times into what the target wants without asking the shop again."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from connectors.sources.base import SourceAuthError, SourceError
from connectors.sources.prestashop.client import PrestaShopApiError
from connectors.sources.prestashop.config import PrestaShopConfig, check_timezone
from connectors.sources.prestashop.values import as_bool, listed

log = logging.getLogger("shopsync.sources.prestashop")
Get = Callable[[str, dict[str, Any]], Awaitable[Any]]
SETTINGS = ("PS_TIMEZONE", "PS_LANG_DEFAULT", "PS_CURRENCY_DEFAULT")


@dataclass(frozen=True)
class ShopContext:
    timezone: str
    #: language id -> ISO code, of the languages read (multilingual fields)
    languages: dict[str, str]
    #: language id -> ISO code, of every installed language (customers', orders' id_lang)
    all_languages: dict[str, str]
    currencies: dict[str, str]
    default_lang: str
    default_currency: str
    shop_url: str
    #: the ``language`` parameter when only some languages are read, else None
    language_param: str | None

    def as_record(self) -> dict[str, Any]:
        """The ``_shop`` dict attached to every record."""
        return {"timezone": self.timezone, "languages": self.languages,
                "all_languages": self.all_languages, "currencies": self.currencies,
                "default_lang": self.default_lang, "default_currency": self.default_currency,
                "url": self.shop_url}


async def _settings(get: Get) -> dict[str, str]:
    """PS_TIMEZONE and the defaults from ``configurations``; empty when the key may not
    read them."""
    try:
        body = await get("configurations", {"display": "[name,value]",
                                            "filter[name]": f"[{'|'.join(SETTINGS)}]"})
    except SourceAuthError:
        return {}
    return {str(r.get("name")): str(r.get("value") or "") for r in listed(body, "configurations")}


async def load(get: Get, config: PrestaShopConfig) -> ShopContext:
    languages = listed(await get("languages", {"display": "full"}), "languages")
    currencies = listed(await get("currencies", {"display": "full"}), "currencies")
    settings = await _settings(get)
    timezone = config.timezone
    found = settings.get("PS_TIMEZONE")
    if timezone is None:
        if not found:
            raise SourceError(
                "the shop's time zone is unknown: the key may not read `configurations`"
                " (PS_TIMEZONE); set connection.options.timezone (like Europe/Paris)")
        try:
            timezone = check_timezone(found)
        except ValueError as exc:
            raise SourceError(f"PS_TIMEZONE: {exc}") from None
    elif found and found != timezone:
        log.warning("connection.options.timezone is %s but the shop's PS_TIMEZONE is %s;"
                    " reading times as %s", timezone, found, timezone)
    every = {str(r["id"]): str(r.get("iso_code", "")).lower() for r in languages if "id" in r}
    active = {str(r["id"]): every[str(r["id"])] for r in languages
              if "id" in r and as_bool(r.get("active"))}
    read, param = active, None
    if config.languages is not None:
        by_code = {iso: lang_id for lang_id, iso in every.items()}
        unknown = [c for c in config.languages if c not in by_code]
        if unknown:
            raise SourceError(f"connection.options.languages: the shop has no language"
                              f" {', '.join(unknown)}; it has {', '.join(sorted(by_code))}")
        read = {by_code[c]: c for c in config.languages}
        if set(read) != set(active):
            param = f"[{'|'.join(read)}]"
    if not read:
        raise SourceError("the shop has no active language")
    money = {str(r["id"]): str(r.get("iso_code", "")).upper() for r in currencies if "id" in r}
    default_lang = every.get(settings.get("PS_LANG_DEFAULT", ""), next(iter(read.values())))
    default_currency = money.get(settings.get("PS_CURRENCY_DEFAULT", ""),
                                 next(iter(money.values()), "EUR"))
    return ShopContext(timezone, read, every, money, default_lang, default_currency,
                       config.shop_url, param)


async def table(get: Get, resource: str, display: str = "full") -> list[dict[str, Any]]:
    """A small reference table read whole (countries, attribute groups and values)."""
    try:
        return listed(await get(resource, {"display": display}), resource)
    except PrestaShopApiError as exc:
        raise SourceError(f"cannot read {resource}, which the connector needs: {exc}") from None
