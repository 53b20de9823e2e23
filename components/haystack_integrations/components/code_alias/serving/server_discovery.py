"""Let `code-alias ask` find a code-alias server of the same index and check it is real (`client.call_peer` asks it).

A new process pays Haystack's imports and the index load (seconds) before it can answer; a running server has
both done and answers in milliseconds. A server announces itself in a private per-user folder (never in the index
folder: serving writes nothing there), keyed by the index folder it serves, and only once it listens: a hand-started
`code-alias serve` on its loopback TCP port, the warm server that `ask` starts (`warm.py`) on a Unix socket in
that folder.

The link is trusted only when it cannot be faked by another local user (the attacks: a listener squatting the
announced port, a planted announcement, a live unrelated process named in one). Before anything is sent:

- the folder is this user's, mode 0700 (a folder of ours with wider bits is narrowed; one of another user, refused);
- the announcement is a regular file of this user with mode 0600, names this index, and a live process of this
  user whose command line is a code-alias server;
- on a Unix socket the kernel says who the peer is (`SO_PEERCRED`): this user, the announced process;
- the peer answers a challenge: an HMAC, with the announcement's random `proof_key`, of a fresh nonce and the
  address the client dialled, so only a process that could read the 0600 file answers it, and a relay to a real
  server on another address does not pass.

Only then does the client (`client.call_peer`) send the question, and the token only when the announcement says one
is needed. This module imports nothing beyond the standard library: it runs on the fast path of every `ask`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core.processes import process_alive
from ..errors import CodeAliasError
from ..paths import user_cache_dir

#: The names of this machine's loopback, as a `Host` header or a URL may write them.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
TOKEN_ENV = "CODE_ALIAS_API_TOKEN"
HELLO_PATH = "/code_alias_hello"
#: Unix socket paths are limited to 108 bytes (Linux); longer private folders put the socket in /tmp's.
MAX_SOCKET_PATH = 100
PROOF_CONTEXT = "code-alias-hello-1"


class UnsafeLinkError(RuntimeError, CodeAliasError):
    """The private folder, an announcement or a peer failed a check: nothing is sent to it."""


def my_uid() -> int:
    """This process's effective user (the owner every file and peer must have); a function so tests can vary it."""
    return os.geteuid()


def _private(folder: Path) -> Path:
    """`folder`, created 0700 if missing; refused unless it is a real folder of this user (narrowed to 0700)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeLinkError(f"{folder} is not a folder (a link?): no local server link")
    if info.st_uid != my_uid():
        raise UnsafeLinkError(f"{folder} belongs to uid {info.st_uid}, not to you: no local server link")
    if info.st_mode & 0o077:  # our own folder from before it had to be private
        os.chmod(folder, 0o700)
    return folder


def link_dir() -> Path:
    """The private folder of announcements, locks and sockets: `<user cache>/servers`, this user's, mode 0700."""
    return _private(user_cache_dir() / "servers")


def index_key(index_dir: str | os.PathLike[str]) -> str:
    """The name of an index folder's files in the link folder: a hash of its resolved path."""
    return hashlib.sha256(str(Path(index_dir).expanduser().resolve()).encode("utf-8")).hexdigest()[:32]


def announcement_path(index_dir: str | os.PathLike[str]) -> Path:
    """Where a server of `index_dir` announces itself: `<user cache>/servers/<hash of the resolved folder>.json`."""
    return user_cache_dir() / "servers" / f"{index_key(index_dir)}.json"


def socket_path(index_dir: str | os.PathLike[str]) -> Path:
    """The warm server's Unix socket: in the link folder, or in a private `/tmp` folder when that path is too long."""
    path = link_dir() / f"{index_key(index_dir)[:16]}.sock"
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    return _private(Path(tempfile.gettempdir()) / f"code-alias-{my_uid()}") / path.name


def local_url(host: str, port: int) -> str:
    """The URL a client on this machine uses for a server bound to `host` (a wildcard address means loopback)."""
    if host in ("0.0.0.0", "", "::", "[::]"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def new_proof_key() -> str:
    """A fresh random key for one server run's challenge answers (stored only in the 0600 announcement)."""
    return secrets.token_hex(32)


def proof(proof_key: str, nonce: str, address: str, index_dir: str) -> str:
    """The answer to a challenge: HMAC-SHA256 of the nonce, the dialled address and the index, with the run's key."""
    message = "|".join((PROOF_CONTEXT, nonce, address, index_dir)).encode("utf-8")
    return hmac.new(proof_key.encode("utf-8"), message, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Peer:
    """
    An announced server that passed the file checks; `client.call_peer` still makes it answer the challenge.

    :param index_dir: The resolved index folder it serves.
    :param pid: Its process.
    :param transport: "unix" (the warm server) or "tcp" (a hand-started `code-alias serve`).
    :param address: The socket path, or the loopback URL.
    :param token: The bearer token to send (only after the proof), or None when none is needed.
    :param proof_key: The key its challenge answers are checked with.
    :param kind: "warm" or "serve".
    """

    index_dir: str
    pid: int
    transport: str
    address: str
    token: str | None
    proof_key: str
    kind: str


@contextlib.contextmanager
def announce(index_dir: str | os.PathLike[str], record: dict[str, Any]) -> Iterator[Path | None]:
    """
    Announce a server of `index_dir` for as long as the block runs: call it only once the server listens.

    The file is written 0600 in the private folder and swapped in atomically; it is removed after the block unless a
    newer server of the same index replaced it. A folder that cannot be used only means no announcement: the server
    serves all the same.

    :param record: `transport`, `address`, `proof_key`, `token_required`, `kind` (and `token` for the warm server).
    """
    resolved = str(Path(index_dir).expanduser().resolve())
    full = {**record, "index_dir": resolved, "pid": os.getpid()}
    written: Path | None = None
    try:
        path = link_dir() / f"{index_key(index_dir)}.json"
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".server-", suffix=".json")  # mode 0600
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(full, stream)
        os.replace(temporary, path)
        written = path
    except (OSError, UnsafeLinkError):
        written = None
    try:
        yield written
    finally:
        if written is not None:
            with contextlib.suppress(OSError, ValueError):
                current = json.loads(written.read_text(encoding="utf-8"))
                if current.get("pid") == os.getpid():  # a newer server of the same index keeps its own
                    written.unlink()


def _process_owner(pid: int) -> int | None:
    """The real uid of a process (Linux `/proc`), or None where that cannot be read."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _command_line(pid: int) -> list[str] | None:
    """A process's command line (Linux `/proc`), or None where that cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode("utf-8", errors="replace") for part in raw.split(b"\0") if part]


def is_server_command(arguments: list[str], kind: str) -> bool:
    """Whether a command line is a code-alias server of that kind: `code-alias ... serve`, or the warm module."""
    if kind == "warm":
        return "haystack_integrations.components.code_alias.serving.warm" in arguments
    named = any(Path(part).name == "code-alias" or "code_alias.cli" in part for part in arguments)
    return named and "serve" in arguments


def inspect_announcement(index_dir: str | os.PathLike[str], environ: dict[str, str] | None = None) -> Peer:
    """
    The announced server of `index_dir`, checked as the module docstring says.

    :raises LookupError: No usable announcement and nothing suspicious (none, a stopped server's leftover, a token
        needed that the environment lacks).
    :raises UnsafeLinkError: An announcement or folder that fails a check (another owner, open mode, not a
        code-alias server, an address off this machine): the caller says so and answers by itself.
    """
    env = os.environ if environ is None else environ
    resolved = str(Path(index_dir).expanduser().resolve())
    path = link_dir() / f"{index_key(index_dir)}.json"
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise LookupError("no server announced") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeLinkError(f"{path} is not a regular file")
    if info.st_uid != my_uid():
        raise UnsafeLinkError(f"{path} belongs to uid {info.st_uid}, not to you")
    if info.st_mode & 0o077:
        raise UnsafeLinkError(f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):04o}, not 0600)")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        pid, transport, address = int(record["pid"]), str(record["transport"]), str(record["address"])
        proof_key, kind = str(record["proof_key"]), str(record.get("kind", "serve"))
        token_required = bool(record.get("token_required"))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UnsafeLinkError(f"{path} is not a server announcement ({type(error).__name__})") from None
    if record.get("index_dir") != resolved:
        raise UnsafeLinkError(f"{path} announces another index ({record.get('index_dir')!r})")
    if not process_alive(pid):
        with contextlib.suppress(OSError):
            path.unlink()  # a stopped server's leftover, in our own folder
        raise LookupError("the announced server has stopped")
    owner = _process_owner(pid)
    if owner is not None and owner != my_uid():
        raise UnsafeLinkError(f"the announced pid {pid} belongs to uid {owner}, not to you")
    arguments = _command_line(pid)
    if arguments is not None and not is_server_command(arguments, kind):
        raise UnsafeLinkError(f"the announced pid {pid} is not a code-alias server ({' '.join(arguments)[:80]!r})")
    if transport == "tcp":
        parts = urlsplit(address)
        if parts.scheme != "http" or (parts.hostname or "") not in LOOPBACK_NAMES:
            raise UnsafeLinkError(f"{path} announces {address!r}, not this machine's loopback")
    elif transport == "unix":
        _check_socket(Path(address))
    else:
        raise UnsafeLinkError(f"{path} announces an unknown transport {transport!r}")
    token: str | None = None
    if token_required:
        token = str(record.get("token") or "") or env.get(TOKEN_ENV) or None
        if token is None:
            raise LookupError("the announced server needs a token the environment lacks")
    return Peer(resolved, pid, transport, address, token, proof_key, kind)


def _check_socket(path: Path) -> None:
    """A warm server's socket must be a socket of this user in a private folder of this user."""
    try:
        folder, info = os.lstat(path.parent), os.lstat(path)
    except OSError as error:
        raise UnsafeLinkError(f"the announced socket {path} is missing ({error.strerror})") from None
    if folder.st_uid != my_uid() or folder.st_mode & 0o077 or not stat.S_ISDIR(folder.st_mode):
        raise UnsafeLinkError(f"the announced socket {path} is not in a private folder of yours")
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != my_uid():
        raise UnsafeLinkError(f"the announced socket {path} is not a socket of yours")


def discover(
    index_dir: str | os.PathLike[str], *, warn: bool = True, said: set[str] | None = None
) -> Peer | None:
    """
    The announced server of `index_dir` that passed the file checks, or None (a refused one said on stderr).

    :param warn: Say why an announced server is not used.
    :param said: What was said already (a caller that looks several times, e.g. while a server starts): each
        reason is said once, and added here.
    """
    try:
        return inspect_announcement(index_dir)
    except LookupError:
        return None
    except (UnsafeLinkError, OSError) as refused:
        message = f"code-alias: warning: not using the announced server: {refused}; answering here"
        if warn and (said is None or message not in said):
            print(message, file=sys.stderr)
        if said is not None:
            said.add(message)
        return None
