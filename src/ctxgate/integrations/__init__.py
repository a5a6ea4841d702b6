"""Adapters that put the gate and the firewall around a host's tool execution.

Each adapter composes the same two core calls around the host's handler: the gate on the call
(last, on the arguments that will really run), then the firewall on the output. They hold no
logic of their own beyond translating the host's wire format.
"""
