"""`prickle` commands, each run as a process of its own, at a fraction of a start's cost.

A command line `prickle ...` spends about a second starting the interpreter and importing
the server; a test that runs one command fifty times against a running server (the
revocation trials of tests/ops/test_credentials_window.py) would spend most of its time there.
`Commands` starts this file once as a parent process that imports the command and runs it
once (`warm`, against the database the test gives, an id that exists nowhere: nothing
changes); then for each command the parent forks a child that runs `app.cli.main(argv)` on
its own event loop, its own store and its own connections, as `prickle` does, and exits.
The command has returned when its child has exited: `run` answers after that.

    with Commands(warm=["token", "revoke", NOBODY, "--database-url", url]) as commands:
        done = commands.run("token", "revoke", token_id, "--database-url", url)
        assert done.code == 0, done.err
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


class Commands:
    """The forking parent, started on entering the block and stopped on leaving it."""

    def __init__(self, warm: list[str]) -> None:
        self.warm = warm
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> Commands:
        self.process = subprocess.Popen(
            [sys.executable, __file__, json.dumps(self.warm)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._answer()  # the warm-up's
        assert ready.code in (0, 2), ready.err  # 2: the command's refusal (not_found)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process is not None:
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)
            self.process.stdout.close()

    def run(self, *argv: str) -> Done:
        """Run `prickle *argv` in a child process; its status and output once it exited."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps(list(argv)) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def _answer(self) -> Done:
        assert self.process is not None and self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the forking parent exited"
        return Done(**json.loads(line))


def _run(argv: list[str]) -> dict[str, object]:
    """`prickle argv` in this process: its exit status and what it printed."""
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    return {"code": code, "out": out.getvalue(), "err": err.getvalue()}


def _child(argv: list[str], answer: int) -> None:
    try:
        done = _run(argv)
        os.write(answer, json.dumps(done).encode())
    finally:
        os._exit(0)


def _serve(warm: list[str]) -> None:
    """The parent: warm up, then fork a child per line of stdin (a JSON argv)."""
    print(json.dumps(_run(warm)), flush=True)
    for line in sys.stdin:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(json.loads(line), write)
        os.close(write)
        chunks = []
        while chunk := os.read(read, 65536):
            chunks.append(chunk)
        os.close(read)
        os.waitpid(pid, 0)
        print(b"".join(chunks).decode(), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _serve(json.loads(sys.argv[1]))
