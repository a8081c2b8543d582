"""A private PostgreSQL cluster to stop, restart and cut under a real server.

PostgreSQL's own binaries (`initdb`, `pg_ctl`: `pg_config --bindir`, else
/usr/lib/postgresql/<version>/bin) make a cluster in a directory of its own, on a free
127.0.0.1 port, trust authentication. PostgreSQL refuses to run as root: as root, the
cluster runs as `nobody`, in a directory that user owns.

    with private_cluster() as cluster:
        url = cluster.url            # postgresql+asyncpg://postgres@127.0.0.1:<port>/prickle
        cluster.stop("fast"); cluster.start()
        with private_standby(cluster) as standby:   # a hot standby streaming from it
            read_url = standby.url
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from server import free_port

DATABASE = "prickle"


def bindir() -> Path | None:
    """Where initdb and pg_ctl are, or None when this machine has no PostgreSQL binaries."""
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=False)
        candidate = Path(out.stdout.strip())
        if (candidate / "initdb").exists():
            return candidate
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    return None


@dataclass
class Cluster:
    bin: Path
    directory: Path
    port: int
    user: str | None  # run as this user (we are root), else as ourselves

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{DATABASE}"

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def run(self, program: str, *args: str) -> None:
        command = [str(self.bin / program), *args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{program} {' '.join(args)}: {done.stdout}{done.stderr}")

    def init(self) -> None:
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        settings = (
            f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
            f"unix_socket_directories = '{self.directory}'\nfsync = off\n"
            "max_connections = 200\n"
        )
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(settings)

    def start(self) -> float:
        """Start it and wait until it accepts connections; when that was (monotonic)."""
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.directory / "log"), "-w", "start")
        return time.monotonic()

    def stop(self, mode: str = "fast") -> None:
        """`fast` (clients disconnected, a clean shutdown) or `immediate` (as a crash)."""
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def psql(self, sql: str, database: str = DATABASE) -> str:
        """One statement through psql, its answer unaligned (as the cluster's user)."""
        command = [str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port)]
        command += ["-U", "postgres", "-d", database, "-XAtc", sql]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"psql {sql}: {done.stdout}{done.stderr}")
        return done.stdout.strip()

    def create_database(self) -> None:
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", DATABASE)


@contextmanager
def private_cluster() -> Iterator[Cluster]:
    found = bindir()
    if found is None:
        raise FileNotFoundError("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    user = "nobody" if os.geteuid() == 0 else None
    directory = Path(tempfile.mkdtemp(prefix="prickle-pg-"))
    if user is not None:
        record = pwd.getpwnam(user)
        os.chown(directory, record.pw_uid, record.pw_gid)
    cluster = Cluster(found, directory, free_port(), user)
    try:
        cluster.init()
        cluster.start()
        cluster.create_database()
        yield cluster
    finally:
        with suppress(RuntimeError, subprocess.TimeoutExpired):
            cluster.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def private_standby(primary: Cluster) -> Iterator[Cluster]:
    """A hot standby of `primary`, streaming from it (`pg_basebackup -R`), on a port of its
    own; stopped and removed after."""
    directory = Path(tempfile.mkdtemp(prefix="prickle-pg-standby-"))
    if primary.user is not None:
        record = pwd.getpwnam(primary.user)
        os.chown(directory, record.pw_uid, record.pw_gid)
    standby = Cluster(primary.bin, directory, free_port(), primary.user)
    try:
        standby.run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
            "-D", str(standby.data), "-R", "-X", "stream", "--no-sync", "-c", "fast",
        )  # fmt: skip
        with open(standby.data / "postgresql.conf", "a") as conf:  # (the last setting wins)
            conf.write(
                f"port = {standby.port}\nunix_socket_directories = '{directory}'\n"
                "hot_standby_feedback = on\n"
            )
        standby.start()
        yield standby
    finally:
        with suppress(RuntimeError, subprocess.TimeoutExpired):
            standby.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)
