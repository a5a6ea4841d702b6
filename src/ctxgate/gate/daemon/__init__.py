"""A warm local decision daemon: one per user and configuration, on a 0600 Unix socket.

Hooks start once per tool call; importing the gate and loading the decision model costs far
more than a decision. The daemon keeps both warm and serves short-lived hook processes:

- :mod:`~ctxgate.gate.daemon.protocol`: the socket's directory (0700, ours) and name, the
  identity handshake (protocol version, interpreter, import path, ``CTXGATE_*`` environment,
  config file), and length-prefixed JSON frames. Standard library only.
- :mod:`~ctxgate.gate.daemon.client`: connect, start the daemon on demand, and say whether
  the caller must decide in-process (daemon unavailable) or block (daemon failed).
- :mod:`~ctxgate.gate.daemon.server`: the accept loop, a lock that makes one daemon per
  socket, peer-uid checks, the idle exit and a clean hand-over to a successor.
- :mod:`~ctxgate.gate.daemon.policy`: the ``[daemon]`` settings.

The daemon runs the same functions an in-process hook runs; what it serves is given by a
handlers module named when it is started (the hooks use
:mod:`ctxgate.integrations.hooks.served`), so this package imports no integration.
"""

from __future__ import annotations

__all__: list[str] = []
