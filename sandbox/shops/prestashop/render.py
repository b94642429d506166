"""What the webservice writes: JSON or XML (the default), each version's value typing, the
multilingual field forms, and the headers every answer carries.

1.7 renders every value as a string except a record's top-level ``id``; 8 keeps integers as
integers and leaves null fields out. Both render booleans ``"1"``/``"0"`` and decimals with
six places. A multilingual field is ``[{"id": …, "value": …}, …]`` over the languages of
the request, or a plain string when there is exactly one.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping
from typing import Any
from xml.sax.saxutils import escape

import orjson
from starlette.responses import Response

from sandbox.shops.prestashop.errors import PSError
from sandbox.shops.prestashop.fields import ASSOCIATIONS, singular
from sandbox.shops.prestashop.records import I18n

XMLNS = 'xmlns:xlink="http://www.w3.org/1999/xlink"'


def wants_json(headers: Mapping[str, str], query: Mapping[str, str]) -> bool:
    """WebserviceRequest::getOutputObject: Io-Format, then Output-Format headers, then the
    output_format, then io_format parameters; only exactly ``JSON`` selects JSON."""
    for value in (headers.get("io-format"), headers.get("output-format"),
                  query.get("output_format"), query.get("io_format")):
        if value is not None:
            return value == "JSON"
    return False


def scalar(value: Any, version: str) -> Any:
    """One value in the version's typing (None stays None for the caller to decide)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return value if version == "8" else str(value)
    if isinstance(value, float):
        return f"{value:.6f}"
    return value


def i18n(value: I18n, languages: list[int], version: str) -> Any:
    entries = [{"id": scalar(lang, version), "value": value.get(lang, "")} for lang in languages]
    return entries[0]["value"] if len(entries) == 1 else entries


def record(resource: str, built: Mapping[str, Any], fields: Iterable[str], languages: list[int],
           version: str, associations: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in fields:
        value = built.get(field)
        if field == "id":
            out["id"] = int(str(value))
        elif isinstance(value, I18n):
            out[field] = i18n(value, languages, version)
        else:
            rendered = scalar(value, version)
            if rendered is None:
                if version == "8":
                    continue  # 8.x leaves null fields out of JSON
                rendered = ""
            out[field] = rendered
    if associations:
        known = ASSOCIATIONS.get(resource, {})
        linked = {name: [{k: scalar(e.get(k), version) for k in known[name][1] if k in e}
                         for e in elements]
                  for name, elements in (built.get("associations") or {}).items()
                  if elements and name in known}
        if linked:  # an empty association is not shown at all
            out["associations"] = linked
    return out


# XML --------------------------------------------------------------------------------------

def _cdata(value: Any) -> str:
    return "<![CDATA[" + str(value).replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _xml_fields(resource: str, data: Mapping[str, Any], base: str) -> str:
    parts = []
    for key, value in data.items():
        if key == "associations":
            inner = "".join(
                f'<{name} nodeType="{ASSOCIATIONS[resource][name][0]}" api="{name}">'
                + "".join(f"<{ASSOCIATIONS[resource][name][0]}>"
                          + "".join(f"<{k}>{_cdata(v)}</{k}>" for k, v in element.items())
                          + f"</{ASSOCIATIONS[resource][name][0]}>" for element in elements)
                + f"</{name}>" for name, elements in value.items())
            parts.append(f"<associations>{inner}</associations>")
        elif isinstance(value, list):
            langs = "".join(f'<language id="{e["id"]}" xlink:href="{base}/languages/{e["id"]}">'
                            f'{_cdata(e["value"])}</language>' for e in value)
            parts.append(f"<{key}>{langs}</{key}>")
        else:
            parts.append(f"<{key}>{_cdata(value)}</{key}>")
    return "".join(parts)


def xml_document(resource: str, items: list[dict[str, Any]], base: str, *, minimal: bool,
                 details: bool) -> str:
    node = singular(resource)
    if minimal:
        body = "".join(f'<{node} id="{i["id"]}" xlink:href="{base}/{resource}/{i["id"]}"/>'
                       for i in items)
    else:
        body = "".join(f"<{node}>{_xml_fields(resource, i, base)}</{node}>" for i in items)
    inner = body if details else f"<{resource}>{body}</{resource}>"
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<prestashop {XMLNS}>{inner}</prestashop>\n'


def xml_errors(errors: list[PSError]) -> str:
    inner = "".join(f"<error><code>{_cdata(e.code)}</code><message>{_cdata(e.message)}</message>"
                    "</error>" for e in errors)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<prestashop {XMLNS}><errors>{inner}</errors></prestashop>\n'


def xml_resources(allowed: Iterable[str], base: str) -> str:
    inner = "".join(f'<{r} xlink:href="{base}/{r}" get="true" put="false" post="false"'
                    f' patch="false" delete="false" head="true"><description>{escape(r)}'
                    f"</description></{r}>" for r in allowed)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<prestashop {XMLNS}><api shopName="shopsync'
            f' fake shop">{inner}</api></prestashop>\n')


# answers ----------------------------------------------------------------------------------

def answer(content: bytes | None, status: int, *, json: bool, ps_version: str,
           started: float, headers: Mapping[str, str] | None = None) -> Response:
    """A webservice answer with the headers WebserviceRequest::returnOutput sets."""
    extra = {"Access-Time": str(int(time.time())), "X-Powered-By": "PrestaShop Webservice",
             "PSWS-Version": ps_version,
             "Execution-Time": f"{round(time.perf_counter() - started, 3)}"}
    if content:
        extra["Content-Sha1"] = hashlib.sha1(content).hexdigest()
    media = ("application/json" if json else "text/xml;charset=utf-8") if content else None
    response = Response(content or b"", status_code=status, media_type=media)
    for name, value in {**extra, **(headers or {})}.items():
        response.headers[name] = value
    return response


def error_content(errors: list[PSError], json: bool) -> bytes:
    if json:
        return orjson.dumps({"errors": [{"code": e.code, "message": e.message} for e in errors]})
    return xml_errors(errors).encode()
