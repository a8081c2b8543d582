"""mkdocs hooks (mkdocs.yml): the site's home page is README.md, its links into docs/ made
relative to the site; the GraphQL reference is generated from schema.graphql at each build
(scripts/graphql_reference.py), so neither is a copy that can go stale."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from graphql_reference import markdown  # noqa: E402


def on_files(files: Files, config: Any) -> Files:
    readme = (ROOT / "README.md").read_text()
    home = re.sub(r"\]\(docs/", "](", readme)
    files.append(File.generated(config, "index.md", content=home))
    reference = markdown((ROOT / "schema.graphql").read_text())
    files.append(File.generated(config, "graphql-reference.md", content=reference))
    return files
