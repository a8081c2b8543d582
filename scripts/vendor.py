"""Fetch the browser libraries the pages use into app/static/vendor/ (not committed).

app/static/vendor.json pins each npm package by version and by the sha512 integrity the
registry publishes for its tarball. The tarball comes through `npm pack` (or, without npm,
straight from the registry over HTTPS); its digest is checked before any file is taken, and
only the files the manifest names are extracted. Run again, it does nothing while
app/static/vendor/VERSIONS matches the manifest (`--force` fetches anyway).

    python3 scripts/vendor.py [--force]
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "app" / "static" / "vendor.json"
TARGET = ROOT / "app" / "static" / "vendor"
STAMP = TARGET / "VERSIONS"
REGISTRY = "https://registry.npmjs.org"


def main(argv: list[str]) -> int:
    packages = json.loads(MANIFEST.read_text())["packages"]
    wanted = "".join(f"{p['name']}@{p['version']} {p['integrity']}\n" for p in packages)
    if "--force" not in argv and STAMP.exists() and STAMP.read_text() == wanted:
        print(f"vendor: {len(packages)} packages already in {TARGET.relative_to(ROOT)}")
        return 0
    TARGET.mkdir(parents=True, exist_ok=True)
    STAMP.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for package in packages:
            tarball = fetch(package, Path(scratch))
            verify(tarball, package["integrity"])
            extract(tarball, package["files"])
            print(f"vendor: {package['name']}@{package['version']} checked and taken")
    STAMP.write_text(wanted)
    return 0


def fetch(package: dict[str, str], scratch: Path) -> Path:
    spec = f"{package['name']}@{package['version']}"
    npm = shutil.which("npm")
    if npm:
        out = subprocess.run(
            [npm, "pack", "--silent", "--pack-destination", str(scratch), spec],
            check=True,
            capture_output=True,
            text=True,
        )
        return scratch / out.stdout.strip().splitlines()[-1]
    bare = package["name"].rsplit("/", 1)[-1]
    url = f"{REGISTRY}/{package['name']}/-/{bare}-{package['version']}.tgz"
    path = scratch / f"{bare}-{package['version']}.tgz"
    with urllib.request.urlopen(url, timeout=120) as response:
        path.write_bytes(response.read())
    return path


def verify(tarball: Path, integrity: str) -> None:
    algorithm, _, expected = integrity.partition("-")
    if algorithm != "sha512":
        raise SystemExit(f"vendor: {tarball.name}: only sha512 integrity is accepted")
    actual = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if actual != expected:
        raise SystemExit(f"vendor: {tarball.name} does not match its pinned integrity")


def extract(tarball: Path, files: dict[str, str]) -> None:
    with tarfile.open(tarball, "r:gz") as archive:
        for source, name in files.items():
            try:
                member = archive.extractfile(f"package/{source}")
            except KeyError:
                member = None
            if member is None:
                raise SystemExit(f"vendor: {tarball.name} has no {source}")
            (TARGET / name).write_bytes(member.read())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
