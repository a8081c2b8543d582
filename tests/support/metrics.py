"""`GET /metrics` of a running server, read with the parser of prometheus_client."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from server import Server


def scrape(server: Server) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = server.client.get(f"{server.base_url}/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(figures: dict[Any, float], name: str, **labels: str) -> float:
    return figures.get((name, frozenset(labels.items())), 0.0)
