"""A private PgBouncer in front of a PostgreSQL server: its own ini and auth file in a
directory of its own, on a free 127.0.0.1 port, `pool_mode = transaction` (or another).

PgBouncer refuses to run as root: as root, it runs as `nobody`, in a directory that user
owns (as tests/support/pg_cluster.py runs PostgreSQL).

    with private_pgbouncer(5432) as bouncer:
        url = bouncer.url_of(server_url)   # the same database, through PgBouncer
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from server import free_port
from sqlalchemy.engine import make_url

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def available() -> bool:
    return Path(PGBOUNCER).exists()


@dataclass
class Bouncer:
    port: int
    directory: Path
    process: subprocess.Popen[bytes]
    command: list[str]
    user: str | None

    def stop(self) -> None:
        """Stop it as a crash would end it: every client connection cut."""
        self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()

    def start(self) -> None:
        """Start it again on the same port."""
        self.process = _spawn(self.command, self.user)
        _wait_for_port(self.port, self.process)

    def url_of(self, url: str) -> str:
        """`url` (a database on the PostgreSQL behind) through PgBouncer."""
        return (
            make_url(url)
            .set(host="127.0.0.1", port=self.port)
            .render_as_string(hide_password=False)
        )

    def log(self) -> str:
        path = self.directory / "pgbouncer.log"
        return path.read_text() if path.exists() else ""


@contextmanager
def private_pgbouncer(
    pg_port: int, pool_mode: str = "transaction", pool_size: int = 20, pg_host: str = "127.0.0.1"
) -> Iterator[Bouncer]:
    user = "nobody" if os.geteuid() == 0 else None
    directory = Path(tempfile.mkdtemp(prefix="prickle-pgbouncer-"))
    port = free_port()
    (directory / "users.txt").write_text('"postgres" ""\n')
    (directory / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = host={pg_host} port={pg_port}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {directory}/users.txt\n"
        f"pool_mode = {pool_mode}\ndefault_pool_size = {pool_size}\n"
        "max_client_conn = 1000\nmax_db_connections = 0\n"
        # a test's database is dropped after it: its idle server connections go soon
        "server_idle_timeout = 5\n"
        f"logfile = {directory}/pgbouncer.log\n"
    )
    command = [PGBOUNCER, str(directory / "pgbouncer.ini")]
    if user is not None:
        record = pwd.getpwnam(user)
        for path in (directory, *directory.iterdir()):
            os.chown(path, record.pw_uid, record.pw_gid)
    bouncer = Bouncer(port, directory, _spawn(command, user), command, user)
    try:
        _wait_for_port(port, bouncer.process)
        yield bouncer
    finally:
        process = bouncer.process
        process.terminate()
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
        if process.stderr is not None:
            process.stderr.close()
        shutil.rmtree(directory, ignore_errors=True)


def _spawn(command: list[str], user: str | None) -> subprocess.Popen[bytes]:
    """PgBouncer itself as the child (as `user`, when root), so that a signal reaches it."""
    if user is None:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    record = pwd.getpwnam(user)
    return subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        user=record.pw_uid,
        group=record.pw_gid,
        extra_groups=[],
    )


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"pgbouncer exited with {process.returncode}: {error}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"pgbouncer did not listen on {port} within 20s")
