"""The sandbox's one error type and the JSON body every failed request carries."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError


class ApiError(Exception):
    """An HTTP error answered as ``{statusCode, success: false, message, errors}``.

    ``errors`` lists every problem found (validation collects them all); ``message`` joins
    them so a person reading a log line sees the whole story.
    """

    def __init__(
        self,
        status_code: int,
        errors: str | list[str],
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.status_code = status_code
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        self.headers = headers or {}
        super().__init__("; ".join(self.errors))

    @property
    def message(self) -> str:
        return "; ".join(self.errors)

    def body(self) -> dict[str, Any]:
        return {
            "statusCode": self.status_code,
            "success": False,
            "message": self.message,
            "errors": self.errors,
        }


def bad_request(errors: str | list[str]) -> ApiError:
    return ApiError(400, errors)


def not_found(what: str) -> ApiError:
    return ApiError(404, f"{what} not found")


def describe_validation_error(exc: ValidationError) -> list[str]:
    """One line per problem, ``where: why`` (``products[0].price: Input should be ...``),
    as ``rejected_items`` and 400 answers carry them: a missing field "is required", and
    the ``Value error, `` pydantic puts before a validator's own words is dropped."""
    lines = []
    for err in exc.errors(include_url=False):
        where = ""
        for part in err["loc"]:
            if isinstance(part, int):
                where += f"[{part}]"
            else:
                where += f".{part}" if where else str(part)
        why = "is required" if err["type"] == "missing" else str(err["msg"]).removeprefix(
            "Value error, ")
        lines.append(f"{where}: {why}" if where else why)
    return lines


def json_type(value: Any) -> str:
    """A value's JSON type name, for messages that say what was sent instead."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], body: Any) -> M:
    """``body`` as ``model``, or a 400 naming every problem."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise ApiError(400, describe_validation_error(exc)) from None
