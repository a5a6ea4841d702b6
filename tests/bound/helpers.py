"""Record builders and an archive double shared by the record-bound tests."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

MIB = 1_048_576


@dataclass(frozen=True)
class FakeEntry:
    id: str
    short_id: str


@dataclass
class RecordingArchive:
    """Anything with ``put(data, meta)``: stores bytes by sha256, like the real archive."""

    stored: dict[str, bytes] = field(default_factory=dict)
    metas: list[object] = field(default_factory=list)

    def put(self, data: bytes, meta: object) -> FakeEntry:
        digest = hashlib.sha256(data).hexdigest()
        self.stored[digest] = data
        self.metas.append(meta)
        return FakeEntry(id=digest, short_id=digest[:12])



def turn(*results: object, response: str = "done", tool: str = "webfetch") -> dict:
    """A terminal turn record shaped like the reference's, one invocation per result."""
    return {
        "executionId": "exec-1",
        "status": "success",
        "success": True,
        "response": response,
        "usage": {"inputTokens": 1200, "outputTokens": 80},
        "toolInvocations": [
            {"toolCallId": f"call-{i}", "toolName": f"{tool}{i if i else ''}", "args": {"n": i},
             "result": result}
            for i, result in enumerate(results)
        ],
    }
