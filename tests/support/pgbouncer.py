"""A private PgBouncer in front of a PostgreSQL server: its own ini and auth file in a
directory of its own, on a free 127.0.0.1 port, `pool_mode = transaction` (or another).

Two versions: Debian 12's (1.18: no prepared statements in transaction mode) and 1.24.1,
built from its release's source (`built()`: downloaded, its sha256 checked, configured
without TLS, compiled once per clone into `.cache/pgbouncer-1.24.1/` under a file lock, so
that pytest-xdist workers asking at once build it once), started with
`max_prepared_statements = 100`.

PgBouncer refuses to run as root: as root, it runs as `nobody`, in a directory that user
owns (as tests/support/pg_cluster.py runs PostgreSQL).

    with private_pgbouncer(5432) as bouncer:
        url = bouncer.url_of(server_url)   # the same database, through PgBouncer
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from server import free_port
from sqlalchemy.engine import make_url

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
DEBIAN = "1.18"  # Debian 12's, from apt
BUILT = "1.24"  # built from source: named prepared statements in transaction mode
BUILT_RELEASE = "1.24.1"
SOURCE = f"http://deb.debian.org/debian/pool/main/p/pgbouncer/pgbouncer_{BUILT_RELEASE}.orig.tar.gz"
SOURCE_SHA256 = "da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0"
CACHE = Path(__file__).resolve().parent.parent / ".cache"
BUILD_SECONDS = 600


def available() -> bool:
    return Path(PGBOUNCER).exists()


def built() -> str:
    """PgBouncer 1.24.1's executable, built first if this clone has none: needs a C compiler,
    make, pkg-config and libevent's headers (Debian: gcc make pkg-config libevent-dev).
    Raises RuntimeError saying what failed."""
    prefix = CACHE / f"pgbouncer-{BUILT_RELEASE}"
    executable = prefix / "bin" / "pgbouncer"
    done = prefix / "built"
    if done.exists():
        return str(executable)
    CACHE.mkdir(exist_ok=True)
    with open(CACHE / f"pgbouncer-{BUILT_RELEASE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it: wait for it
        if not done.exists():
            _build(prefix)
            done.write_text(f"{BUILT_RELEASE}\n")
    return str(executable)


def _build(prefix: Path) -> None:
    archive = CACHE / f"pgbouncer_{BUILT_RELEASE}.orig.tar.gz"
    if not archive.exists() or _sha256(archive) != SOURCE_SHA256:
        partial = archive.with_suffix(".part")
        with urllib.request.urlopen(SOURCE, timeout=60) as answer:
            partial.write_bytes(answer.read())
        if _sha256(partial) != SOURCE_SHA256:
            raise RuntimeError(f"{SOURCE} is not the release pinned (sha256 differs)")
        partial.rename(archive)
    work = Path(tempfile.mkdtemp(prefix="pgbouncer-build-", dir=CACHE))
    try:
        subprocess.run(["tar", "xzf", str(archive), "-C", str(work)], check=True)
        source = work / f"pgbouncer-{BUILT_RELEASE}"
        configure = [
            "./configure",
            f"--prefix={prefix}",
            "--without-openssl",
            "--without-cares",
            "--without-systemd",
            "--without-pam",
        ]
        for step in (configure, ["make", f"-j{os.cpu_count() or 1}"], ["make", "install"]):
            done = subprocess.run(
                step, cwd=source, capture_output=True, text=True, timeout=BUILD_SECONDS
            )
            if done.returncode != 0:
                tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
                raise RuntimeError(f"building PgBouncer: {' '.join(step)} failed: {tail}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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

    def stats(self, database: str) -> dict[str, int]:
        """The admin console's `SHOW STATS` for one database: its totals since start (through
        psql: the console answers the simple query protocol only)."""
        from pg_cluster import bindir

        where = bindir()
        psql = shutil.which("psql") or str(where / "psql" if where else "psql")
        console = ["-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "pgbouncer"]
        answer = subprocess.run(
            [psql, *console, "-A", "-F", "\t", "-c", "SHOW STATS"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        header, *rows = answer.stdout.strip().splitlines()
        names = header.split("\t")
        for row in rows:
            values = dict(zip(names, row.split("\t"), strict=False))
            if values.get("database") == database:
                return {k: int(v) for k, v in values.items() if v.isdigit()}
        raise LookupError(f"no stats for {database}: {answer.stdout}")

    def log(self) -> str:
        path = self.directory / "pgbouncer.log"
        return path.read_text() if path.exists() else ""


@contextmanager
def private_pgbouncer(
    pg_port: int,
    pool_mode: str = "transaction",
    pool_size: int = 20,
    pg_host: str = "127.0.0.1",
    version: str = DEBIAN,
) -> Iterator[Bouncer]:
    """`version`: DEBIAN (Debian's, installed) or BUILT (1.24.1, built first if need be, with
    `max_prepared_statements = 100`)."""
    executable = built() if version == BUILT else PGBOUNCER
    prepared = "max_prepared_statements = 100\n" if version == BUILT else ""
    user = "nobody" if os.geteuid() == 0 else None
    directory = Path(tempfile.mkdtemp(prefix="prickle-pgbouncer-"))
    port = free_port()
    (directory / "users.txt").write_text('"postgres" ""\n')
    (directory / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = host={pg_host} port={pg_port}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {directory}/users.txt\nadmin_users = postgres\n"
        f"pool_mode = {pool_mode}\ndefault_pool_size = {pool_size}\n"
        "max_client_conn = 1000\nmax_db_connections = 0\n"
        # a test's database is dropped after it: its idle server connections go soon
        "server_idle_timeout = 5\n"
        f"logfile = {directory}/pgbouncer.log\n{prepared}"
    )
    command = [executable, str(directory / "pgbouncer.ini")]
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
