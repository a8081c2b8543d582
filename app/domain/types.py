"""Type aliases the domain's modules share."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
