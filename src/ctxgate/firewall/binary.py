"""Binary output: detected type, a short hex view and printable strings, for the digest."""

from __future__ import annotations

import re

__all__ = ["detect_type", "hex_view", "printable_strings"]

_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"GIF87a", "GIF image"),
    (0, b"GIF89a", "GIF image"),
    (0, b"%PDF-", "PDF document"),
    (0, b"PK\x03\x04", "ZIP archive (also jar, docx, xlsx, wheel)"),
    (0, b"\x1f\x8b", "gzip compressed data"),
    (0, b"\x28\xb5\x2f\xfd", "zstd compressed data"),
    (0, b"BZh", "bzip2 compressed data"),
    (0, b"\xfd7zXZ\x00", "xz compressed data"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-zip archive"),
    (0, b"\x7fELF", "ELF executable or object"),
    (0, b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (0, b"\xca\xfe\xba\xbe", "Java class file or Mach-O universal binary"),
    (0, b"MZ", "DOS/Windows executable"),
    (0, b"\x00asm", "WebAssembly module"),
    (0, b"SQLite format 3\x00", "SQLite database"),
    (0, b"RIFF", "RIFF container (WAV, AVI, WebP)"),
    (0, b"OggS", "Ogg media"),
    (0, b"fLaC", "FLAC audio"),
    (0, b"ID3", "MP3 audio"),
    (0, b"\x00\x00\x01\x00", "ICO image"),
    (0, b"PAR1", "Parquet file"),
    (0, b"ARROW1", "Arrow IPC file"),
    (4, b"ftyp", "ISO media (MP4, MOV, HEIC)"),
    (257, b"ustar", "tar archive"),
)
_STRINGS = re.compile(rb"[\x20-\x7e]{6,}")


def detect_type(head: bytes) -> str:
    """A name for the content type from its first bytes (``"unknown binary data"`` if none)."""
    for offset, magic, name in _MAGIC:
        if head[offset:offset + len(magic)] == magic:
            return name
    return "unknown binary data"


def hex_view(data: bytes, *, max_bytes: int = 64) -> list[str]:
    """``hexdump -C`` style lines for the first ``max_bytes`` bytes."""
    out = []
    for off in range(0, min(len(data), max_bytes), 16):
        row = data[off:off + 16]
        hexes = " ".join(f"{b:02x}" for b in row)
        text = "".join(chr(b) if 0x20 <= b < 0x7f else "." for b in row)
        out.append(f"{off:08x}  {hexes:<47}  |{text}|")
    return out


def printable_strings(data: bytes, *, limit: int, max_chars: int = 80) -> tuple[list[str], int]:
    """Runs of at least 6 printable ASCII characters: the first ``limit`` (each cut to
    ``max_chars``) and how many there are in ``data``."""
    found = _STRINGS.findall(data)
    shown = [s[:max_chars].decode("ascii") + ("…" if len(s) > max_chars else "")
             for s in found[:limit]]
    return shown, len(found)
