"""Custom KPIs: their own key (``kpi_api_key``) and bare answers, not envelopes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from connectors.marketing.models import CustomKpi
from connectors.marketing.operations.base import Operations, seg

KPIS = "custom-stats/kpis"
KpiDefinition = Mapping[str, Any] | BaseModel


def _body(definition: KpiDefinition) -> dict[str, Any]:
    if isinstance(definition, BaseModel):
        return definition.model_dump(mode="json", exclude_none=True)
    return dict(definition)


class KpiOperations(Operations):
    async def _kpi(
        self, method: str, path: str, *, params: Any = None, json: Any = None,
        idempotent: bool = True,
    ) -> Any:
        return await self.transport.request(
            method, path, params=params, json=json, kpi=True, idempotent=idempotent
        )

    async def create_custom_kpi(self, definition: KpiDefinition) -> CustomKpi:
        """``POST custom-stats/kpis`` (CustomKpiController_create): the KPI starts in status
        ``backfilling``. Not retried on a server error: a retry could create a second KPI."""
        answer = await self._kpi("POST", KPIS, json=_body(definition), idempotent=False)
        return CustomKpi.model_validate(answer)

    async def list_custom_kpis(self) -> list[CustomKpi]:
        """``GET custom-stats/kpis`` (CustomKpiController_list): a plain array, not paginated."""
        answer = await self._kpi("GET", KPIS)
        return [CustomKpi.model_validate(kpi) for kpi in answer]

    async def get_custom_kpi(self, id_custom_kpi: str) -> CustomKpi:
        """``GET custom-stats/kpis/{id}``."""
        return CustomKpi.model_validate(await self._kpi("GET", f"{KPIS}/{seg(id_custom_kpi)}"))

    async def update_custom_kpi(
        self, id_custom_kpi: str, changes: KpiDefinition
    ) -> CustomKpi:
        """``PATCH custom-stats/kpis/{id}``: the KPI is recomputed (back to backfilling)."""
        answer = await self._kpi("PATCH", f"{KPIS}/{seg(id_custom_kpi)}", json=_body(changes))
        return CustomKpi.model_validate(answer)

    async def delete_custom_kpi(self, id_custom_kpi: str) -> None:
        """``DELETE custom-stats/kpis/{id}`` with ``{"confirmation": true}``: the API wants the
        caller to confirm, since the KPI's history goes too. Idempotent."""
        await self._kpi("DELETE", f"{KPIS}/{seg(id_custom_kpi)}", json={"confirmation": True})

    async def list_custom_kpi_sources(self) -> list[dict[str, Any]]:
        """``GET custom-stats/kpis/sources``: system schemas and custom data definitions."""
        return await self._kpi("GET", f"{KPIS}/sources")

    async def list_custom_kpi_fields(
        self,
        source_type: Literal["system", "custom"],
        source_schema: str,
        relations_chain: Sequence[str] | Sequence[Sequence[str]] = (),
    ) -> list[dict[str, Any]]:
        """``GET custom-stats/kpis/fields``: fields a KPI on this source may use, including
        ``<schema>.<field>`` of related schemas (``relationsChain``, sent as a JSON array)."""
        params = {"sourceType": source_type, "sourceSchema": source_schema}
        if relations_chain:
            chain = [c if isinstance(c, str) else list(c) for c in relations_chain]
            params["relationsChain"] = json.dumps(chain, separators=(",", ":"))
        return await self._kpi("GET", f"{KPIS}/fields", params=params)

    async def preview_custom_kpi(self, definition: KpiDefinition) -> dict[str, Any]:
        """``POST custom-stats/kpis/preview``: compute a KPI definition now without saving it
        (read-only, so safe to retry). Returns the answer's ``data`` (``{"rows": [...]}``)."""
        answer = await self._kpi("POST", f"{KPIS}/preview", json=_body(definition))
        return answer["data"] if isinstance(answer, dict) and "data" in answer else answer
