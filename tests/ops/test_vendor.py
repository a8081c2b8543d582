"""scripts/vendor.py: a tarball is taken only when it matches its pinned integrity, and only
the files the manifest names come out of it. (No network: tarballs made here.)"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import tarfile
from pathlib import Path
from types import ModuleType

import pytest
from server import ROOT

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vendor_script", ROOT / "scripts" / "vendor.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tarball(path: Path, files: dict[str, bytes]) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())
    return "sha512-" + base64.b64encode(hashlib.sha512(buffer.getvalue()).digest()).decode()


def test_a_tarball_that_does_not_match_its_integrity_is_refused(tmp_path: Path) -> None:
    vendor = _script()
    tarball = tmp_path / "lib-1.0.0.tgz"
    integrity = _tarball(tarball, {"dist/lib.js": b"ok"})
    vendor.verify(tarball, integrity)
    _tarball(tarball, {"dist/lib.js": b"tampered"})
    with pytest.raises(SystemExit, match="does not match"):
        vendor.verify(tarball, integrity)
    with pytest.raises(SystemExit, match="sha512"):
        vendor.verify(tarball, "sha1-" + integrity.split("-", 1)[1])


def test_only_the_named_files_are_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vendor = _script()
    monkeypatch.setattr(vendor, "TARGET", tmp_path / "out")
    (tmp_path / "out").mkdir()
    tarball = tmp_path / "lib-1.0.0.tgz"
    _tarball(tarball, {"dist/lib.min.js": b"lib", "dist/other.js": b"no", "package.json": b"{}"})
    vendor.extract(tarball, {"dist/lib.min.js": "lib.js"})
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["lib.js"]
    assert (tmp_path / "out" / "lib.js").read_bytes() == b"lib"
    with pytest.raises(SystemExit, match="has no"):
        vendor.extract(tarball, {"dist/missing.js": "missing.js"})


def test_the_manifest_pins_every_package_by_version_and_sha512() -> None:
    manifest = json.loads((ROOT / "app" / "static" / "vendor.json").read_text())
    names = [p["name"] for p in manifest["packages"]]
    assert {"react", "react-dom", "graphiql", "@graphiql/plugin-explorer", "dagre"} <= set(names)
    for package in manifest["packages"]:
        assert package["version"][0].isdigit() and package["integrity"].startswith("sha512-")
        assert package["files"]
