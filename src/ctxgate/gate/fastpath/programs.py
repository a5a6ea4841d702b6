"""The programs the fast path allows, each with the exact options it may get.

Each entry is a :class:`~ctxgate.gate.fastpath.options.Spec`; an option that is not listed
(including any abbreviation of a listed long option) sends the command to the model. Left out
on purpose: ``sort -o/--output/--compress-program/-T``, ``uniq``/``xxd`` output operands,
``tail -f`` (never ends), ``file -C`` (writes a magic file), ``tree -o/-R/-H``, ``date
-s/--set`` and date operands other than ``+FORMAT``, ``hostname`` operands and ``-F/-b``,
``sed -i/-f`` and scripts that write or run (see :mod:`~ctxgate.gate.fastpath.sed`), ``rg
--pre/--pre-glob/--hostname-bin/-z``, ``diff -l`` (runs ``pr``).

Programs whose handling is more than an option table (``git``, ``find``, ``jq``, ``xxd``,
``echo``, ``printf``, ``test``/``[``, ``cd``, ``command``, ``type``, ``xargs`` and the wrappers)
are checked in :mod:`ctxgate.gate.fastpath` itself; they are named in :data:`SPECIAL`.
"""

from __future__ import annotations

from ctxgate.gate.fastpath.options import Parsed, Spec, spec
from ctxgate.gate.fastpath.sed import sed_script_problem

__all__ = ["PROGRAMS", "SPECIAL"]


def _sed(p: Parsed) -> str | None:
    scripts = [v or "" for o, v in p.options if o in ("-e", "--expression")]
    operands = list(p.operands)
    if not scripts:
        if not operands:
            return "sed without a script"
        first = operands.pop(0)
        if first.glob:
            return f"sed script {first.raw!r} is a glob"
        scripts = [first.text]
    for s in scripts:
        why = sed_script_problem(s)
        if why:
            return why
    return None


def _date(p: Parsed) -> str | None:
    for w in p.operands:
        if not w.text.startswith("+") or w.glob:
            return f"date {w.text!r}: an operand other than +FORMAT sets the clock"
    return None


def _no_operands(name: str):
    def check(p: Parsed) -> str | None:
        return f"{name} with an operand changes the system" if p.operands else None
    return check


_CHECKSUM = spec("bctwz", long="binary check tag text zero quiet status strict warn "
                 "ignore-missing", xargs_ok=True)
_GREP = spec("EFGPiyvwxclLoqsbHhnTZzraIUR", "efmABCdD", numeric=True, xargs_ok=True,
             long="extended-regexp fixed-strings basic-regexp perl-regexp ignore-case "
             "no-ignore-case invert-match word-regexp line-regexp count files-with-matches "
             "files-without-match only-matching quiet silent no-messages byte-offset "
             "with-filename no-filename line-number initial-tab null null-data text "
             "recursive dereference-recursive line-buffered no-group-separator",
             long_arg="regexp file max-count after-context before-context context include "
             "exclude exclude-dir exclude-from label binary-files devices directories "
             "group-separator", long_opt="color colour")
_HEAD = spec("qvz", "nc", numeric=True, long="quiet silent verbose zero-terminated",
             long_arg="lines bytes", xargs_ok=True)

PROGRAMS: dict[str, Spec] = {
    "cat": spec("AbeEnstTuv", long="show-all number-nonblank show-ends number squeeze-blank "
                "show-tabs show-nonprinting", xargs_ok=True),
    "tac": spec("br", "s", long="before regex", long_arg="separator", xargs_ok=True),
    "head": _HEAD,
    "tail": _HEAD,
    "wc": spec("cmlLw", long="bytes chars lines words max-line-length",
               long_arg="files0-from total", xargs_ok=True),
    "ls": spec("aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1", "ITw", xargs_ok=True,
               long="all almost-all escape ignore-backups directory dired classify "
               "file-type group-directories-first no-group human-readable si inode "
               "dereference-command-line dereference-command-line-symlink-to-dir "
               "dereference numeric-uid-gid literal hide-control-chars show-control-chars "
               "quote-name recursive reverse size full-time context",
               long_arg="block-size format hide ignore quoting-style sort time time-style "
               "tabsize width", long_opt="color hyperlink indicator-style"),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": spec("iIsSvwxFnNlcuULaHhopq0", "egtTABCmMjrfE", numeric=False,
               long="files hidden no-hidden no-ignore no-ignore-vcs no-ignore-parent "
               "no-ignore-dot follow line-number no-line-number count files-with-matches "
               "files-without-match fixed-strings ignore-case smart-case case-sensitive "
               "word-regexp line-regexp invert-match only-matching no-heading heading json "
               "vimgrep column no-filename with-filename type-list multiline "
               "multiline-dotall pcre2 trim stats quiet null text unrestricted "
               "count-matches no-messages no-config byte-offset passthru sort-files "
               "no-unicode crlf null-data one-file-system pretty",
               long_arg="glob iglob type type-not max-count max-depth context after-context "
               "before-context regexp file max-columns sort sortr encoding replace "
               "type-add max-filesize color colors path-separator threads engine"),
    "sed": spec("nErszu", "el", long="quiet silent regexp-extended separate null-data "
                "zero-terminated unbuffered posix debug sandbox",
                long_arg="expression line-length", check=_sed),
    "sort": spec("bdfgiMhnRrVcCmsuz", "ktS", long="ignore-leading-blanks dictionary-order "
                 "ignore-case general-numeric-sort ignore-nonprinting month-sort "
                 "human-numeric-sort numeric-sort random-sort reverse version-sort merge "
                 "stable unique zero-terminated debug",
                 long_arg="key field-separator buffer-size parallel sort",
                 long_opt="check"),
    "uniq": spec("cdDuiz", "fsw", long="count repeated unique ignore-case zero-terminated",
                 long_arg="skip-fields skip-chars check-chars", long_opt="all-repeated group",
                 max_operands=1),
    "cut": spec("snz", "bcfd", long="complement only-delimited zero-terminated",
                long_arg="bytes characters fields delimiter output-delimiter", xargs_ok=True),
    "tr": spec("cdsCt", long="complement delete squeeze-repeats truncate-set1",
               max_operands=2),
    "nl": spec("p", "bdfhilnsvw", long="no-renumber", long_arg="body-numbering "
               "section-delimiter footer-numbering header-numbering line-increment "
               "join-blank-lines number-format number-separator starting-line-number "
               "number-width", xargs_ok=True),
    "diff": spec("abBcdeEiNpqrstTuwyZ", "CUWxXIFDS", long="brief report-identical-files "
                 "side-by-side recursive new-file unidirectional-new-file ignore-case "
                 "ignore-tab-expansion ignore-trailing-space ignore-space-change "
                 "ignore-all-space ignore-blank-lines text strip-trailing-cr expand-tabs "
                 "initial-tab minimal speed-large-files suppress-common-lines left-column "
                 "show-c-function no-dereference suppress-blank-empty normal",
                 long_arg="exclude exclude-from ignore-matching-lines label width "
                 "show-function-line from-file to-file starting-file tabsize",
                 long_opt="color unified context"),
    "cmp": spec("bls", "in", long="print-bytes verbose quiet silent",
                long_arg="ignore-initial bytes", max_operands=4),
    "comm": spec("123iz", long="check-order nocheck-order total zero-terminated",
                 long_arg="output-delimiter"),
    "paste": spec("sz", "d", long="serial zero-terminated", long_arg="delimiters"),
    "fold": spec("bs", "w", long="bytes spaces", long_arg="width"),
    "fmt": spec("cstu", "wpg", long="crown-margin split-only tagged-paragraph "
                "uniform-spacing", long_arg="width prefix goal"),
    "expand": spec("i", "t", long="initial", long_arg="tabs"),
    "unexpand": spec("a", "t", long="all first-only", long_arg="tabs"),
    "join": spec("iz", "12aejotv", long="ignore-case check-order nocheck-order header "
                 "zero-terminated"),
    "column": spec("tnxeJRLd", "scoNOlHWr", long="table json keep-empty-lines fillrows",
                   long_arg="separator output-separator table-columns output-width"),
    "rev": spec(),
    "strings": spec("afwd", "nteT", long="all data print-file-name include-all-whitespace",
                    long_arg="bytes radix encoding target output-separator"),
    "od": spec("bcdfiloxsv", "AjNtS", short_opt="w", xargs_ok=True),
    "hexdump": spec("bcCdovx", "nsef", long="canonical no-squeezing one-byte-octal "
                    "one-byte-char two-bytes-decimal two-bytes-octal two-bytes-hex",
                    long_arg="length skip format format-file"),
    "stat": spec("LftZ", "c", long="dereference file-system terse",
                 long_arg="format printf cached", xargs_ok=True),
    "file": spec("bciLhkNnrsz0E", "eFP", long="brief mime mime-type mime-encoding "
                 "dereference no-dereference keep-going no-buffer no-pad raw "
                 "special-files uncompress print0 extension apple",
                 long_arg="exclude exclude-quiet separator parameter"),
    "du": spec("abcDhHklLmsSxP0", "dBtX", long="all apparent-size bytes total "
               "human-readable summarize si one-file-system dereference separate-dirs null "
               "count-links inodes no-dereference dereference-args",
               long_arg="max-depth exclude threshold block-size exclude-from time-style",
               long_opt="time"),
    "df": spec("ahHiklPTx", "tB", long="all human-readable si inodes local portability "
               "print-type total no-sync sync", long_arg="type exclude-type block-size",
               long_opt="output"),
    "tree": spec("adlfixqNQpugshDFvtcUrCnASJ", "LIP", long="noreport dirsfirst gitignore "
                 "prune du si inodes device matchdirs ignore-case filesfirst",
                 long_arg="charset filelimit timefmt sort", long_arg_separate=False),
    "basename": spec("az", "s", long="multiple zero", long_arg="suffix", xargs_ok=True),
    "dirname": spec("z", long="zero", xargs_ok=True),
    "realpath": spec("emLPqsz", long="canonicalize-existing canonicalize-missing logical "
                     "physical quiet strip no-symlinks zero",
                     long_arg="relative-to relative-base", xargs_ok=True),
    "readlink": spec("femnqsvz", long="canonicalize canonicalize-existing "
                     "canonicalize-missing no-newline quiet silent verbose zero",
                     xargs_ok=True),
    "which": spec("as"),
    "pwd": spec("LP", max_operands=0),
    "true": spec(),
    "false": spec(),
    "whoami": spec(max_operands=0),
    "id": spec("gGnruz", long="group groups name real user zero"),
    "uname": spec("asnrvmpio", long="all kernel-name nodename kernel-release "
                  "kernel-version machine processor hardware-platform operating-system",
                  max_operands=0),
    "nproc": spec(long="all", long_arg="ignore", max_operands=0),
    "arch": spec(max_operands=0),
    "groups": spec(),
    "date": spec("uR", "dr", long="utc universal rfc-email", long_opt="iso-8601",
                 long_arg="date rfc-3339 reference", check=_date),
    "hostname": spec("fsdiIAay", long="fqdn long short domain ip-address all-ip-addresses "
                     "all-fqdns alias", check=_no_operands("hostname")),
    "md5sum": _CHECKSUM,
    "sha1sum": _CHECKSUM,
    "sha224sum": _CHECKSUM,
    "sha256sum": _CHECKSUM,
    "sha384sum": _CHECKSUM,
    "sha512sum": _CHECKSUM,
    "b2sum": _CHECKSUM,
    "cksum": spec("", "a", long="base64 raw tag untagged zero", long_arg="algorithm",
                  xargs_ok=True),
    "seq": spec("w", "sf", long="equal-width", long_arg="separator format"),
}
"""Programs allowed with an option table."""

SPECIAL = frozenset({"git", "find", "jq", "xxd", "echo", "printf", "test", "[", "cd",
                     "command", "type", "xargs", "time", "timeout", "man"})
"""Programs checked by dedicated code in :mod:`ctxgate.gate.fastpath`."""
