"""What a test server over TLS (HTTPS, HTTP/2 over TLS, HTTP/3) needs: the extra that brings its modules, a
certificate authority of this process's own that only its clients trust, and the server's key passed to its
process in memory, never on a disk.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import ssl
from pathlib import Path
from typing import Any

from ..core.scratch import owned_folder

ALPN = {"https": "http/1.1", "h2": "h2", "h3": "h2"}
"""What the TLS listener offers: one protocol only, so a client cannot silently fall back
(an h3 server's TCP listener serves HTTP/2 beside QUIC, for clients that cannot speak HTTP/3)."""


EXTRAS = {"https": ("tls", ("trustme",)), "h2": ("tls", ("trustme",)), "h3": ("h3", ("trustme", "aioquic"))}
"""The extra a protocol needs, and the modules it brings: the default install serves http1 and h2c
only, so that in-process pairs do not install a certificate authority and a QUIC stack."""


@functools.cache
def authority() -> Any:
    """This process's certificate authority for test servers (trustme: made on the fly, trusted
    only by this process's clients)."""
    import trustme

    return trustme.CA()


@functools.cache
def client_tls_context() -> ssl.SSLContext:
    """A client context that trusts :func:`authority` and nothing else."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.load_verify_locations(cadata=authority().cert_pem.bytes().decode())
    return context


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def tls_files(pems: dict[str, bytes]) -> tuple[list[str], list[int], Path | None]:
    """The server's certificate and private key as paths its process can open: the paths, the
    descriptors to pass it, and the folder to remove once it has started (None: nothing to remove).

    Why in memory: a key written to a temporary folder, however briefly, outlived a session
    killed by ``SIGKILL`` while servers started (68 keys after 10 kills). On Linux each file is
    an anonymous in-memory file (``memfd_create``) passed to the server process and opened
    there as ``/proc/self/fd/N``: it is never on a disk, and it is gone with the last process
    holding it, however that process ends. Elsewhere they are written to a folder of this
    process's own (:func:`~overheadbench.core.scratch.owned_folder`), removed once the server
    has read them; a session killed meanwhile leaves it to the next one to remove.
    """
    if hasattr(os, "memfd_create"):
        fds = [_in_memory(name, data) for name, data in pems.items()]
        return [f"/proc/self/fd/{fd}" for fd in fds], fds, None
    folder = owned_folder("tls")
    for name, data in pems.items():
        (folder / name).write_bytes(data)
    return [str(folder / name) for name in pems], [], folder


def _in_memory(name: str, data: bytes) -> int:
    """A descriptor of an anonymous in-memory file holding ``data``."""
    fd = os.memfd_create(f"overheadbench-{name}", os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return fd
