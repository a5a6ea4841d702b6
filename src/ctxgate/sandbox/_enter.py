"""Enter a read-only sandbox, then exec the command: ``_enter.py MECHANISM -- ARGV...``.

Run as a standalone script (``python -I -S _enter.py``) between ``ctxgate run`` and the
command, so it imports only the standard library and never ctxgate itself. MECHANISM is:

``namespace``
    A private mount namespace (plus a user namespace when not root) and a new PID namespace.
    ``/dev`` is replaced by a small tmpfs holding only ``null zero full random urandom tty``
    and ``pts`` (so no block device or ``/dev/mem`` can be opened), ``/proc`` is a fresh
    instance that shows only the sandbox's processes (so ``/proc/PID/cwd`` of a process
    outside cannot be used to reach a writable mount), then every mount is made read-only
    recursively (``mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)``, else a remount of each
    line of ``/proc/self/mountinfo``). A root caller keeps its uid but loses every
    capability except ``CAP_DAC_READ_SEARCH`` (reads still bypass permissions as before),
    so it cannot remount anything writable; a non-root caller runs as itself inside a user
    namespace that maps only its own uid and gid.
``landlock``
    A Landlock ruleset that handles every write right the running kernel knows and grants
    none except writing ``/dev/null``, ``/dev/zero``, ``/dev/full``, ``/dev/tty`` and the
    terminals under ``/dev/pts``; reads and execution are not restricted. Landlock has no
    right for metadata, so a seccomp filter refuses chmod, chown, utimes and xattr changes
    (EROFS; x86_64 and aarch64). Root loses its capabilities as above.

In both, ``no_new_privs`` is set, so no set-uid program can regain privileges. The process
tree is: this script (outside, waits and passes the exit status on) -> a namespace init
(PID 1, forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT) -> the command. A setup failure prints one
line ``ctxgate sandbox: ...`` on stderr and exits :data:`SETUP_FAILED` without running the
command (never unsandboxed by surprise).
"""

from __future__ import annotations

import _signal as signal  # not `signal`: its enum wrappers cost more than the rest of start-up
import ctypes
import os
import struct
import sys

__all__ = ["SETUP_FAILED", "main"]

SETUP_FAILED = 125
"""Exit status when the sandbox could not be set up (the command did not run)."""

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
SYS_MOUNT_SETATTR = 442
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
CAP_DAC_READ_SEARCH = 2
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_CREATE_RULESET_VERSION = 1

# Landlock filesystem rights (uapi/linux/landlock.h); the write rights by ABI version.
LL_WRITE_FILE = 1 << 1
LL_WRITE_RIGHTS_V1 = (LL_WRITE_FILE | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8)
                      | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12))
"""write_file, remove_dir, remove_file, make_char, make_dir, make_reg, make_sock,
make_fifo, make_block, make_sym."""
LL_REFER = 1 << 13
LL_TRUNCATE = 1 << 14

SAFE_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""Device nodes a read-only command may open (writes to them change no stored state)."""
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
RESTORED = tuple(getattr(signal, n) for n in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, n))
"""Python ignores these; an exec keeps an ignored signal ignored, so the command gets them
back at their default (``yes | head -1`` then ends quietly, as outside the sandbox)."""

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_void_p)


class SetupError(Exception):
    """A sandbox step failed; the message names the step and the errno."""


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)} (errno {err})")
    return result


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    def enc(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None

    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags,
                       enc(data)), f"mount {target} ({source or fstype or 'remount'})")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def drop_privileges() -> None:
    """no_new_privs always; for root, empty the bounding set but ``CAP_DAC_READ_SEARCH`` (an
    exec'd root program then gets only that capability)."""
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    if os.geteuid() != 0:
        return
    cap = 0
    while True:
        if cap != CAP_DAC_READ_SEARCH and _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0:
            if ctypes.get_errno() == 22:  # EINVAL: past the last capability
                return
            _check(-1, f"prctl(CAPBSET_DROP, {cap})")
        cap += 1
        if cap > 63:
            return


# -- namespace ---------------------------------------------------------------------------------

def _unshare_namespaces() -> None:
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNS | CLONE_NEWPID | (0 if uid == 0 else CLONE_NEWUSER)
    _check(_libc.unshare(flags), "unshare(mount, pid" + ("" if uid == 0 else ", user") + ")")
    if uid != 0:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we do propagates outside


def _replace_dev() -> None:
    """Mount a tmpfs on /dev holding only the safe device nodes (bound from the old ones)."""
    keep = {}
    for name in (*SAFE_DEVICES, "pts"):
        try:
            keep[name] = os.open(f"/dev/{name}", os.O_PATH)
        except OSError:
            continue
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name, fd in keep.items():
        target = f"/dev/{name}"
        if name == "pts":
            os.mkdir(target, 0o755)
            _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
            _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND)
        os.close(fd)
    os.mkdir("/dev/shm", 0o755)
    for link, to in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                     ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"),
                     ("ptmx", "pts/ptmx")):
        os.symlink(to, f"/dev/{link}")


def _mount_flags(options: str) -> int:
    table = {"ro": MS_RDONLY, "nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
             "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME,
             "strictatime": MS_STRICTATIME}
    flags = 0
    for opt in options.split(","):
        flags |= table.get(opt, 0)
    return flags


def _all_read_only() -> None:
    """Every mount read-only: one recursive mount_setattr, else a remount per mount."""
    attr = struct.pack("QQQQ", MOUNT_ATTR_RDONLY, 0, 0, 0)
    buf = ctypes.create_string_buffer(attr, len(attr))
    if _libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE, buf, len(attr)) == 0:
        return
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        lines = fh.read().splitlines()
    for line in lines:  # parents first, as the kernel lists them
        fields = line.split()
        target = fields[4].encode().decode("unicode_escape")
        flags = _mount_flags(fields[5])
        try:
            _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        except SetupError:
            if os.path.exists(target):
                raise


def _init(argv: list[str], ready_w: int) -> int:
    """PID 1 of the new namespace: finish the mounts, run the command, pass its status on."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _all_read_only()
    drop_privileges()
    child = os.fork()
    if child == 0:
        _exec(argv, ready_w)
    os.close(ready_w)
    for sig in FORWARDED:
        signal.signal(sig, lambda s, _f: _forward(child, s))
    return _wait(child)


def run_namespace(argv: list[str]) -> int:
    cwd = os.getcwd()
    ready_r, ready_w = os.pipe()
    os.set_inheritable(ready_w, False)
    helper = os.fork()
    if helper == 0:
        os.close(ready_r)
        try:
            _unshare_namespaces()
            _replace_dev()
            init = os.fork()  # the first child after unshare(CLONE_NEWPID) is PID 1
            if init == 0:
                try:
                    os.chdir(cwd)
                    os._exit(_init(argv, ready_w))
                except (SetupError, OSError) as exc:
                    _fail(ready_w, exc)
            os.close(ready_w)
            for sig in FORWARDED:
                signal.signal(sig, lambda s, _f: _forward(init, s))
            os._exit(_wait(init))
        except (SetupError, OSError) as exc:
            _fail(ready_w, exc)
    os.close(ready_w)
    for sig in FORWARDED:
        signal.signal(sig, lambda s, _f: _forward(helper, s))
    return _finish(ready_r, helper)


# -- landlock ----------------------------------------------------------------------------------

def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when Landlock is absent or disabled)."""
    abi = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, int(abi))


def apply_landlock() -> None:
    abi = landlock_abi()
    if abi < 1:
        raise SetupError("Landlock is not enabled in this kernel")
    handled = LL_WRITE_RIGHTS_V1 | (LL_REFER if abi >= 2 else 0) | (LL_TRUNCATE if abi >= 3 else 0)
    attr = struct.pack("QQ", handled, 0)[: 8 if abi < 4 else 16]  # handled_access_net from v4
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _check(_libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, len(attr), 0),
                     "landlock_create_ruleset")
    allowed = LL_WRITE_FILE | (LL_TRUNCATE if abi >= 3 else 0)
    for path in (*(f"/dev/{d}" for d in SAFE_DEVICES if d != "random"), "/dev/pts"):
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        beneath = struct.pack("=Qi", allowed, fd)  # struct landlock_path_beneath_attr (packed)
        rule = ctypes.create_string_buffer(beneath, len(beneath))
        try:
            _check(_libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH,
                                 rule, 0), f"landlock_add_rule {path}")
        finally:
            os.close(fd)
    drop_privileges()  # no_new_privs is required before restrict_self
    _check(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    os.close(ruleset)


# Landlock has no right for changing metadata: chmod, chown, utimes and xattrs are refused
# with a seccomp filter instead (EROFS, as on a read-only mount).
_METADATA_SYSCALLS = {
    0xC000003E: ("x86_64", (90, 91, 268, 452, 92, 93, 94, 260, 132, 235, 280, 261, 188, 189,
                            190, 197, 198, 199, 463, 466)),
    0xC00000B7: ("aarch64", (52, 53, 452, 54, 55, 88, 5, 6, 7, 14, 15, 16, 463, 466)),
}
"""Per audit arch: chmod fchmod fchmodat fchmodat2 chown fchown lchown fchownat utime utimes
utimensat futimesat setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr
setxattrat removexattrat (the numbers each arch has)."""
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EROFS = 30


def apply_metadata_filter() -> None:
    """Refuse metadata-changing syscalls (needs no_new_privs, set by drop_privileges)."""
    arch = _AUDIT_ARCH.get(os.uname().machine)
    if arch is None:
        raise SetupError(f"no metadata filter for architecture {os.uname().machine}: "
                         "chmod/chown/utimes would not be blocked")
    deny = SECCOMP_RET_ERRNO | EROFS
    numbers = _METADATA_SYSCALLS[arch][1]
    prog: list[tuple[int, int, int, int]] = [
        (0x20, 0, 0, 4),  # ld arch
        (0x15, 1, 0, arch),  # jeq arch: skip the deny
        (0x06, 0, 0, deny),  # another ABI (ia32, x32 ...): refuse everything
        (0x20, 0, 0, 0),  # ld nr
        (0x35, len(numbers) + 1, 0, 0x40000000),  # jge x32 bit: deny
    ]
    for k, nr in enumerate(numbers):
        prog.append((0x15, len(numbers) - k, 0, nr))  # jeq nr: jump to the deny at the end
    prog += [(0x06, 0, 0, SECCOMP_RET_ALLOW), (0x06, 0, 0, deny)]
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    filters = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("HP", len(prog), ctypes.addressof(filters))
    fbuf = ctypes.create_string_buffer(fprog, len(fprog))
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fbuf, 0, 0), "seccomp filter")


def run_landlock(argv: list[str]) -> int:
    try:
        apply_landlock()
        apply_metadata_filter()
    except (SetupError, OSError) as exc:
        sys.stderr.write(f"ctxgate sandbox: landlock setup failed: {exc}; the command was not "
                         "run\n")
        return SETUP_FAILED
    _exec(argv, None)
    return SETUP_FAILED  # not reached


# -- shared ------------------------------------------------------------------------------------

def _exec(argv: list[str], ready_w: int | None) -> None:
    for sig in (*FORWARDED, *RESTORED):
        signal.signal(sig, signal.SIG_DFL)
    if ready_w is not None:
        os.write(ready_w, b"ok")
        os.close(ready_w)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"ctxgate sandbox: cannot run {argv[0]!r}: {exc.strerror}\n")
        os._exit(127 if isinstance(exc, FileNotFoundError) else 126)


def _fail(ready_w: int, exc: BaseException) -> None:
    try:
        os.write(ready_w, f"ctxgate sandbox: namespace setup failed: {exc}".encode())
    finally:
        os._exit(SETUP_FAILED)


def _forward(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait(pid: int) -> int:
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return SETUP_FAILED
        if os.WIFSIGNALED(status):
            return 128 + os.WTERMSIG(status)
        return os.WEXITSTATUS(status)


def _finish(ready_r: int, child: int) -> int:
    message = b""
    while True:
        part = os.read(ready_r, 4096)
        if not part:
            break
        message += part
    os.close(ready_r)
    code = _wait(child)
    if message and message != b"ok":
        sys.stderr.write(message.decode(errors="replace") + "; the command was not run\n")
        return SETUP_FAILED
    return code


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write("usage: _enter.py namespace|landlock -- CMD [ARGS]...\n")
        return 2
    mechanism, argv = args[0], args[2:]
    if mechanism == "namespace":
        return run_namespace(argv)
    if mechanism == "landlock":
        return run_landlock(argv)
    sys.stderr.write(f"ctxgate sandbox: unknown mechanism {mechanism!r}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
