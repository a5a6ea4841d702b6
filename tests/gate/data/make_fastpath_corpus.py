"""Write ``fastpath_corpus.jsonl``: the adversarial corpus of the fast-path sandbox test.

Run ``python tests/gate/data/make_fastpath_corpus.py`` after changing it; the output is
deterministic (a test checks the committed file matches). Each line is a JSON object:
``cmd`` (the shell command), ``kind`` (its class) and ``must_refuse`` (the fast path must not
allow it: the issue's known-bad examples and every generated abbreviation and cluster of a
dangerous option). Everything else may be allowed or refused; what is allowed is executed
in a sandbox copy of the fixture tree built by ``tests/gate/test_fastpath_sandbox.py``
(files ``2``, ``-delete``, ``--output=f``, ``-out``, ``-o``, ``d/-delete``, ``tools/ls``,
``evil``, repositories ``evilrepo`` (``core.fsmonitor``), ``hookrepo``
(``post-index-change`` hook) and ``linkrepo`` (a gitlink to a repository with
``core.fsmonitor``)) and must change nothing.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

OUT = Path(__file__).with_name("fastpath_corpus.jsonl")

# The examples issue 13 reports as allowed by the old fast path: all must be refused.
KNOWN_BAD = [
    "test -v 'a[$'\"(rm -f x)]\"",
    "[ -v 'a[$'\"(rm -f x)]\" ]",
    "printf -v 'a[$'\"(rm -f x)]\" y",
    "cat <<'EOF'\nhello\nEOF\nrm -f x\n'EOF'",
    "cat <<'EOF'\nrm -f x\n'EOF'\nEOF",
    "sort --out=f in",
    "sort --compress-prog=./evil -S 1 in",
    "git grep --open-files-in=rm -l x",
    "date --se='2020-01-01'",
    "hostname --fil=x",
    "file --comp",
    "date -us '2020-01-01'",
    "hostname -bF x",
    "find . {-delete,} -name '{-delete,}'",
    "cd d && find . *",
    "git log *",
    "echo > 2",
    "time -o f ls",
    "uniq -- in -out",
    "xxd -- in -out",
    "/usr/bin/../../proc/self/cwd/tools/ls",
    "git -C evilrepo status",
    "cd evilrepo && git status",
    "cd hookrepo && git status",
    "cd linkrepo && git status",
    # named only: proved for the exact forms of fastpath/named.py, nothing else
    "rm -rf in --help", "rm in --help", "rm -h", "./evil --help", "tools/ls --help",
    "rm --help in", "xargs rm --help", "man -P ./evil ls", "man ./evil", "man in a.txt",
    "git help -w log", "cd evilrepo && git help log", "cd evilrepo && git log --help",
]

# (program prefix, dangerous long option, value) — every abbreviation must be refused.
DANGEROUS_LONG = [
    ("sort", "--output", "f", " in"),
    ("sort", "--compress-program", "./evil", " -S 1 in"),
    ("sort", "--temporary-directory", "d", " in"),
    ("git log", "--output", "f", ""),
    ("git diff", "--output", "f", ""),
    ("git grep", "--open-files-in-pager", "rm", " -l x"),
    ("git diff", "--ext-diff", None, ""),
    ("git log -p", "--textconv", None, ""),
    ("git", "--exec-path", ".", " status"),
    ("git", "--git-dir", "evilrepo/.git", " status"),
    ("git", "--work-tree", "evilrepo", " status"),
    ("date", "--set", "2020-01-01", ""),
    ("date", "--file", "in", ""),
    ("hostname", "--file", "in", ""),
    ("hostname", "--boot", None, ""),
    ("file", "--compile", None, " -m in"),
    ("sed", "--in-place", None, " -n 1p a.txt"),
    ("sed", "--file", "in", " a.txt"),
    ("rg", "--pre", "./evil", " x"),
    ("rg", "--pre-glob", "*", " --pre ./evil x"),
    ("rg", "--hostname-bin", "./evil", " x"),
    ("diff", "--paginate", None, " a.txt b.txt"),
    ("tree", "--output", "f", ""),
    ("xargs", "--arg-file", "in", " cat"),
]

# (program, dangerous short option (letter, value), harmless letters) — clusters permuted.
DANGEROUS_SHORT = [
    ("date", "s", "2020-01-01", "uR", ""),
    ("hostname", "F", "in", "sf", ""),
    ("hostname", "b", None, "sf", ""),
    ("sort", "o", "f", "rnu", " in"),
    ("sed", "i", None, "nE", " 1p a.txt"),
    ("tail", "f", None, "qv", " a.txt"),
    ("tree", "o", "f", "ad", ""),
    ("tree", "R", None, "ad", " -H ."),
    ("file", "C", None, "bi", " -m in"),
    ("xargs", "I", "{}", "0r", " rm {}"),
    ("git grep", "O", "rm", "nl", " x"),
]

REDIRECTIONS = [
    "echo x > 2", "echo x >2", "echo x 1>2", "echo x 2>2", "echo x >> 2", "echo x &> 2",
    "echo x &>> 2", "echo x >& 2", "echo x 1>&2", "echo x 2>&1", "echo x >&2", "echo x >| f",
    "echo x 2>f", "echo x >/dev/null", "echo x 2>/dev/null", "echo x &>/dev/null",
    "echo x >>/dev/null", "echo x 3>&1", "echo x >&-", "echo x 2>&-", "cat < in",
    "cat <in", "cat 0<in", "cat <> in", "cat << EOF\nx\nEOF", "cat <<< x",
    "echo x > /dev/null2", "echo x >'/dev/null'", 'echo x > "/dev/null"', "echo x>/dev/null",
    "echo x>f", "echo a2>f", "echo 2>f", "echo x > -out", "echo x > --output=f",
    "echo x>>-delete", "echo x 1> 2", "echo x 2>>2", "echo x 5>/dev/null", "echo x >&5",
    "echo x 0>f", "ls >/dev/null 2>&1", "ls 2>&1 | head -3", "ls 2>/dev/null | wc -l",
    "cat in > /dev/stdout", "cat < /etc/passwd", "echo x >/dev/../tmp/f",
    "echo x > /dev/null/../f", "echo x >& f", "echo x >&f", "echo x 2>&1>f",
]

GLOBS = [
    "find . {-delete,}", "find . -{delete,print}", "ls {a,b}", "ls {a..c}", "ls a{b,c}",
    "find * -name x", "ls *", "ls -- *", "cat -- *", "git log -- *", "wc -l src/*.py",
    "ls ./*", "cat [-]*", "ls ?delete", "grep -r x --include=*.py .",
    "grep -r x --exclude=* .", "sort *", "sort -- *", "uniq *", "uniq in*", "xxd in*",
    "cd d && ls *", "cd d && ls ./*", "cd d && ls -- *", "echo *", "echo ./*",
    "find . -name *.py", "find src/* -name x", "cat 'x'*", "cat \"-\"*", "cat \\-*",
    "grep -e *x in", "sort -k * in", "head -n * in", "ls src/[ab].py", "ls src/?.py",
    "grep --include=*.py -rn x .", "grep --inc=*.py -rn x .", "grep --regexp=* in",
    "find . -path ./d/* -prune", "ls {}", "ls '{a,b}'", "ls \\{a,b\\}", "git log *.txt",
    "git show *", "cat *.txt", "ls ~", "ls ~/", "ls ~root", "ls ~+", "echo a=~/x",
    "git diff HEAD~1 -- src/", "ls -- -delete", "cat -- -out", "cat ./-out",
    "tail -n 3 -- --output=f", "rm -- *", "find . -name '*.py' | xargs grep -n def",
]

QUOTING = [
    "echo 'a'\"b\"", 'echo "a\\"b"', 'echo "a\\$b"', 'echo "a\\\\b"', 'echo "a\\nb"',
    "echo a\\ b", "echo 'a'\\''b'", "ls \\-delete", "find . \\-delete", 'find . "-delete"',
    "find . '-del'\"ete\"", "find . -de''lete", 'find . -"delete"', "echo \"x`rm -f x`\"",
    'echo "$(rm -f x)"', "echo '$(rm -f x)'", "echo \"a'b\"", "echo 'unterminated",
    'echo "unterminated', "echo a\\", "ls \\\n-la", "echo '#not a comment'",
    "ls # comment", "ls #; rm -f x", "ls;#x", "ls;# rm -f x", "echo a#b", "echo #a; rm -f x",
    "ls\nrm -f x", "ls\n\nwc -l in", "ls &&\nwc -l in", "echo \"a\nb\"", "echo 'a\nb'",
    'echo "!x"', "echo !x", "find . ! -name x", "! ls", "echo \"a\\", "echo \\$HOME",
    "echo \"\\$(rm -f x)\"", "printf '%s\\n' \"a b\" 'c d'", "echo ''", 'echo ""',
    "echo é", "echo a\u00a0b", "echo a\tb", "echo a\rb",
]

SUBSCRIPTS = [
    "test -v 'a[$(rm -f x)]'", "[ -v 'a[$(rm -f x)]' ]", "printf -v 'a[$(rm -f x)]' x",
    "test -R x", "[ -R x ]", "read a", "declare a", "let x", "(( x ))", "[[ -v a ]]",
    "echo $((1+1))", "echo $[1]", "test 'a[$(touch m)]' -eq 1",
    "[ 'a[$(touch m)]' -gt 0 ]", "printf '%d' 'a[$(touch m)]'", "printf -- '%s' x",
    "printf -vx y", "printf '%s' -v", "test x = -v", "test -n x", "test -f a.txt",
    "[ -f a.txt ]", "[ -d src ] && ls src", "test -e in && echo yes", "mapfile a",
    "readarray a", "unset 'a[$(rm -f x)]'", "export a", "local a", "typeset a",
    "printf '%s' 'a[$(touch m)]'", "test -o errexit", "[ -z '' ]",
]

PATHS = [
    "/usr/bin/ls", "/usr/bin/../bin/ls", "/usr/bin//ls", "//usr/bin/ls",
    "/proc/self/cwd/tools/ls", "./tools/ls", "tools/ls", "/bin/cat in",
    "/usr/local/bin/cat in", "/usr/bin/./ls", "~/bin/ls", "/usr/bin/python3 -c 1",
    "/bin/ls -la", "/usr/bin/env ls", "/tmp/ls", "../tree/tools/ls", "/usr/bin/git status",
    "/usr/bin/find . -delete", "/usr/bin/sort -o f in", "/usr/bin/test -v x",
    "/usr/bin/printf '%s' x", "/usr/bin/[ -f in ]", "/usr/bin/cd d",
]

GIT = [
    "git status", "git -C evilrepo status", "cd evilrepo && git status",
    "cd evilrepo; git status", "cd evilrepo || git status", "cd ./evilrepo && git log",
    "cd evilrepo/ && git status", "cd evilrepo/../evilrepo && git status",
    "cd evilrepo | git status", "cd hookrepo && git status", "cd hookrepo && git diff",
    "cd linkrepo && git diff", "cd linkrepo/inner && git status", "cd linkrepo && git log -1",
    "cd src && git status", "cd d && git log --oneline -1",
    "git --git-dir=evilrepo/.git status", "git --work-tree=. status",
    "git -c core.fsmonitor=./evil status", "git log --output=f", "git log --out=f",
    "git log -p --ext-diff", "git diff --textconv", "git grep -O x", "git grep -Ocat x",
    "git grep --open-files-in-pager=rm -l x", "git log *", "git log -- *",
    "git show HEAD:a.txt", "git log --oneline -3", "git diff HEAD", "git branch",
    "git branch evil", "git branch -D x", "git branch --list", "git branch -a",
    "git tag x", "git tag -l", "git stash", "git stash list", "git checkout -- .",
    "git config core.x y", "git --no-pager log -1", "git -P log -1",
    "git --no-optional-locks status", "git --exec-path=. status",
    "git --config-env=core.pager=X log", "git rev-parse HEAD", "git ls-files",
    "git blame a.txt", "git log --format=%H -1", "git reflog expire --all",
    "git remote add x y", "git remote -v", "git diff --stat", "git log -p -1",
    "git show --stat HEAD", "git status --porcelain", "git status -s", "git diff --cached",
    "git grep -n hello", "git grep -n hello -- '*.txt'", "git log --grep=x --oneline",
    "git log -n 2 --pretty=oneline", "git diff HEAD -- a.txt", "git rev-parse --show-toplevel",
    "git ls-files -m", "git log --follow -- a.txt", "git describe --always",
    "git log --since=yesterday", "git shortlog -sn", "git cat-file -p HEAD",
    "git cat-file --filters HEAD:a.txt", "git diff --no-index a.txt b.txt",
    "git log --show-signature -1", "git status --recurse-submodules",
    "git grep --recurse-submodules x", "git help log", "git apply x.patch", "git am x",
    "git clean -fd", "git reset --hard", "git commit -m x", "git gc", "git fsck",
    "git log --all --oneline --graph", "git log --out", "git log --outp=f",
    "git diff --output-indicator-new=+", "git -P status -sb", "git log -L 1,2:a.txt",
    # optional-argument options take no separate value: the next word is parsed on its own
    "git diff -U --output=f", "git diff --unified --output=f", "git log -U --output=f",
    "git log --format --output=f", "git log --grep --output=f", "git log --author --output=f",
    "git diff -U3", "git log --author=t -1", "git diff --unified=1", "git log -n 1 -U1 -p",
    "od -w --output=f in", "od -w8 in", "ls --color --output=f", "ls --hyperlink --output=f",
    "git grep -n -e hello", "git blame -L 1,2 a.txt", "git log --color --ext-diff -p",
]

SED = [
    "sed -n '1w out' a.txt", "sed 's/a/b/w out' a.txt", "sed -n '1e touch m' a.txt",
    "sed 's/x/touch m/e' a.txt", "sed -i s/a/b/ a.txt", "sed --in-place=.bak 1d a.txt",
    "sed --in=.bak 1d a.txt", "sed -n '1r in' a.txt", "sed -n 'R in' a.txt",
    "sed -n 'W out' a.txt", "sed -f in a.txt", "sed -n '/a/,/b/p' a.txt",
    "sed -n '$p' a.txt", "sed -n '1~2p' a.txt", "sed '1!d' a.txt",
    "sed -n -e 1p -e 2p a.txt", "sed --expression=1p -n a.txt", "sed -n '1{p;p}' a.txt",
    "sed -E 's/(a)/\\1/g' a.txt", "sed -n '1p;w out' a.txt", "sed -n 's/a/b/gw out' a.txt",
    "sed -n 's|a|b|pw out' a.txt", "sed 'y/abc/xyz/' a.txt", "sed -n 'l' a.txt",
    "sed -s -n '1p' a.txt b.txt", "sed -ni 1p a.txt", "sed -n -i 1p a.txt",
    "sed -z -n 1p a.txt", "sed 1d a.txt", "sed -n 1p --in-place a.txt",
    "sed -n '1 w out' a.txt", "sed -n '1p\nw out' a.txt", "sed -n '1,3p' a.txt",
    "sed -n '2,+1p' a.txt", "sed -n '0,/a/p' a.txt", "sed 's/a/b/;s/c/d/g' a.txt",
    "sed -n '/x/{=;p}' a.txt", "sed -n 's/a/b/w /dev/stdout' a.txt", "sed -n '1e' a.txt",
    "sed 's/a/b/ w out' a.txt", "sed -n '\\,a,p' a.txt", "sed -n '/a\\/w out/p' a.txt",
    "sed -n 's/[/]/x/w out' a.txt", "sed 'a\\x' a.txt", "sed '1i x' a.txt",
    "sed -n 'x;G;p' a.txt", "sed q a.txt", "sed '2q' a.txt", "sed -n 'F' a.txt",
    "sed --sandbox -n 1p a.txt", "sed --posix -n 1p a.txt", "sed -n 1,3p src/*.py",
    "sed -n '1p' -- a.txt", "sed -n 1p -s a.txt", "sed -l 5 -n l a.txt", "sed --debug 1d a.txt",
    "sed -n 's/a/b/e' a.txt", "sed -n 's/a/b/3p' a.txt", "sed -n 's/a/b/Mw out' a.txt",
    # GNU sed 4.9 skips a delimiter inside a regex bracket expression: [/] is one bracket
    "sed -n 's/[/]/g;/w d/p' a.txt", "sed 's/[/]/x/' a.txt", "sed -n '/[/]/p;/w d/p' a.txt",
    "sed -n 's/[a-z]/x/p' a.txt", "sed -n '/[[:alpha:]]/p' a.txt", "sed 'y/[/x/' a.txt",
    "sed -n 's|[|]|g;|w d|p' a.txt", "sed -n '\\,[,],p;\\,w d,p' a.txt",
]

FIND = [
    "find . -delete", "find . -name x -delete", "find . -exec rm {} \\;",
    "find . -exec grep -l a {} \\;", "find . -exec grep -l a {} +",
    "find . -exec sort -o out {} \\;", "find . -exec uniq {} +", "find . -exec uniq {} \\;",
    "find . -execdir ls \\;", "find . -ok rm {} \\;", "find . -okdir rm {} \\;",
    "find . -fprint out", "find . -fls out", "find . -fprintf out %p", "find . -fprint0 out",
    "find . -newer a.txt", "find . -type f -print0 | xargs -0 wc -l", "find . | xargs rm",
    "find . | xargs -I{} rm {}", "find . -name '*.py' | xargs grep -n def",
    "find -L . -name x", "find . -maxdepth 1 -type f", "find . ! -name x -maxdepth 1",
    "find . -regex '.*a.*'", "find . -printf '%p\\n'", "find . -exec sh -c 'rm x' \\;",
    "find . -exec /bin/rm {} \\;", "find . -exec tools/ls \\;", "find . -exec xargs rm \\;",
    "find . -exec find {} -delete \\;", "find . -exec cat {} ';'", "find . -exec cat {} +",
    "find . -exec cat {} x +", "find . -name x -o -name y", "find . \\( -name a -o -name b \\)",
    "find . -type f -name '*.py' -not -path './d/*'", "find src -name '*.py' | head -5",
    "find . -D exec -name x", "find . -O3 -name x", "find . -size +1k", "find . -empty",
    "find . -mmin -5", "find . -exec sed -i 1d {} \\;", "find . -exec sed -n 1p {} \\;",
    "find . -exec git log {} \\;", "find . -exec -delete \\;", "find -delete",
    "find . -name x -ls", "find d -name '-delete'", "find . -files0-from in",
    "find . -exec echo {} \\; -delete", "find . -exec test -v x \\;",
]

PROGRAMS = [
    "sort -o out in", "sort --output=out in", "sort -T . in", "sort -S 1M in",
    "sort --compress-program=./evil -S 1 in", "sort -k2 -t, in", "sort -rn in",
    "uniq in out", "uniq -c in", "xxd in", "xxd in out", "xxd -r in", "xxd -revert in",
    "xxd -p in", "xxd -l 16 in", "xxd -rp in", "time ls", "time -p ls", "timeout 5 ls",
    "timeout -s KILL 5 ls", "timeout 5 rm -f in", "timeout 5s cat in", "nice ls", "env ls",
    "command ls", "command -v ls", "command -V ls", "type ls", "type -a ls", "which ls",
    "date", "date +%s", "date -s 2020-01-01", "date --set=x", "date 0101", "date -u",
    "date -d yesterday", "date -f in", "date -r in", "date --date=@0 +%F", "hostname",
    "hostname -s", "hostname x", "hostname -F in", "file a.txt", "file -C -m in",
    "file --compile -m in", "file -b a.txt", "tree", "tree -L 2", "tree -o out",
    "tree -R -H . -L 1", "tail -n 5 a.txt", "tail -f a.txt", "tail -20 a.txt",
    "tail -F a.txt", "tail --follow a.txt", "head -c 10 a.txt", "head -5 a.txt",
    "jq . j.json", "jq -n env", "jq -n '$ENV'", "jq -n '$ENV.HOME'", "jq -r .a j.json",
    "jq --arg x y '.a' j.json", "jq -f in j.json", "jq -L . 'include \"x\"; .' j.json",
    "jq -rc '.a' j.json", "rg x", "rg --pre ./evil x", "rg --pre=./evil x", "rg -z x",
    "rg -n hello src", "rg --files", "diff a.txt b.txt", "diff -u a.txt b.txt",
    "diff -l a.txt b.txt", "cat a.txt | tee out", "stat a.txt", "du -sh .", "df -h .",
    "ls -la /etc", "cat ~/.ssh/id_rsa", "cat .env", "grep -r password .env",
    "cat home/.netrc", "realpath a.txt", "basename /a/b", "dirname /a/b",
    "cut -d, -f1 a.txt", "tr a-z A-Z < a.txt", "cat a.txt | tr -d x", "echo hi",
    "printf '%s\\n' a b", "printf -v x y", "pwd", "true", "false",
    "test -f a.txt && echo yes", "wc -l in a.txt", "nl -ba a.txt | sed -n '1,2p'",
    "cat -n a.txt", "ls -la", "ls -R", "ls --color=never", "ls --col=never",
    "grep -rn hello .", "grep -c x in", "grep -P x in", "egrep x in", "fgrep x in",
    "grep --color=auto -n x in", "grep -rl hello --exclude-dir=.git .", "cmp a.txt b.txt",
    "comm a.txt b.txt", "md5sum a.txt", "sha256sum in a.txt", "sha256sum -c in",
    "od -c in", "hexdump -C in", "strings in", "seq 1 3", "seq -f %g 3", "id -u", "uname -a",
    "nproc", "whoami", "rev in", "paste -sd, in", "fold -w 5 in", "column -t in",
    "expand in", "tac in", "du --max-depth=1 .", "stat -c %s in", "readlink -f in",
    "awk '{print}' in", "less in", "more in", "vim in", "python3 -c 'print(1)'",
    "pip list", "npm ls", "make -n", "cp in out", "mv in out", "rm -f in", "touch new",
    "mkdir nd", "chmod +x in", "ln -s in lnk", "tee out < in", "dd if=in of=out",
    "curl http://127.0.0.1:1", "wget http://127.0.0.1:1", "ssh localhost", "sudo ls",
    "bash -c ls", "sh -c ls", "eval ls", "exec ls", "source ./evil", ". ./evil",
    "xargs", "echo in | xargs cat", "echo in | xargs -0 cat", "echo in | xargs sort -o f",
    "echo in | xargs -n1 wc -l", "echo x | xargs -I{} touch {}", "echo x | xargs rm",
    "cat in | sh", "cat in | bash", "cat in | python3", "ls | xargs file -C",
    "ls | xargs -r grep -l x", "ls | xargs --null cat", "wc -l < in",
]

SHELL = [
    "ls; rm -f in", "ls && rm -f in", "ls || rm -f in", "ls | sh", "ls & rm -f in",
    "(rm -f in)", "{ rm -f in; }", "$(rm -f in)", "`rm -f in`", "echo $(rm -f in)",
    "x=1 ls", "PAGER=./evil git log", "GIT_EXTERNAL_DIFF=./evil git diff",
    "f() { rm -f in; }", "if true; then rm -f in; fi", "for f in a; do rm -f in; done",
    "while false; do :; done", "alias ls=rm", "ls |& cat", "coproc ls", "time ls | wc -l",
    "ls;; rm -f in", "ls ;", "; ls", "ls |", "ls &&", "| ls", "ls && && ls", "ls | | wc",
    "a=b", "'ls' -la", "\"ls\" -la", "l\\s -la", "ls'' -la", "'x=1' ls", "x=1",
    "case x in x) rm -f in;; esac", "select x in a; do :; done", "function f { :; }",
    "ls <(rm -f in)", "cat >(rm -f in)", "echo ${x:-$(rm -f in)}", "echo ${#x}",
    "echo $'\\x41'", "echo $\"x\"", "ls -la\nrm -f in", "true && ls -la src",
    "cd src && ls -la && cd .. && wc -l in", "cd / && ls", "cd .. && ls", "cd && ls",
    "cd - && ls", "cd -P src && ls", "cd src d", "cd ~ && ls", "pushd src", "popd",
    "exit 0", "set -e", "shopt -s extglob", "trap 'rm -f in' EXIT", "wait", "jobs",
    "kill 1", "history", "fc -l", "hash -r", "umask 0", "ulimit -a", "builtin echo x",
    "enable -n echo", "getopts x y", "caller", "disown", "suspend", "logout", "bind -l",
    "complete", "compgen -c", "dirs", "help", "shift", "return", "break", ":",
]

NAMED = [
    "rm --help", "rm --version", "shred --help", "mv --help", "cp --version", "dd --help",
    "truncate --help", "chmod --version", "find --help", "sed --version", "kill --help",
    "man ls", "man 1 ls", "git help log", "git reset --help", "git clean --help", "git --help",
    "git help", "ls && rm --help", "rm --help | head -3", "rm --help > /dev/null",
]

AGENT_LIKE = [
    "ls -la", "cat a.txt", "head -n 5 a.txt", "sed -n '1,3p' a.txt", "grep -rn hello src",
    "find . -name '*.py'", "wc -l src/*.py", "nl -ba src/a.py | sed -n '1,5p'",
    "grep -n 'def ' src/a.py", "cat src/a.py | head -20", "ls src/", "git diff",
    "git status && git diff --stat", "grep -rn 'import' --include='*.py' . | head -5",
    "find . -type f -name '*.txt' | head", "cat a.txt | grep -v x | sort | uniq -c",
    "tail -n 2 in", "head -1 in && tail -1 in", "ls -1 src | wc -l", "echo done",
    "cd src && grep -n print a.py", "cd src && cat a.py", "grep -A 2 -B 2 hello src/a.py",
    "grep -E 'a|b' in", "grep -w hello src/*.py", "ls -la src/ 2>/dev/null",
    "cat in 2>&1 | head -3", "find src -type f | sort", "git log --oneline | head -5",
    "git diff HEAD --stat", "git show HEAD --stat", "sed -n '2p' in", "sort -u in",
    "du -sh src", "stat -c '%n %s' in a.txt", "file src/a.py", "diff -u in a.txt",
    "jq '.a' j.json", "jq -r '.b[]' j.json", "rg -n hello", "rg hello src -l",
    "test -d src && ls src", "[ -f in ] && cat in", "pwd && ls", "which python3",
    "command -v git", "type git", "realpath src", "basename src/a.py", "dirname src/a.py",
    "cut -c1-3 in", "tr -s ' ' < in", "xxd -l 8 in", "od -An -c in | head -2",
    "timeout 10 grep -rn hello .", "time wc -l in", "ls -t | head -3",
    "find . -maxdepth 2 -type d | sort", "grep -c '' in", "cat -A in | head -3",
]


# Prefixes that are options of their own (git's exact match wins over an abbreviation).
NOT_ABBREVIATIONS = {("git log -p", "--text")}


def _abbreviations() -> list[tuple[str, str]]:
    out = []
    for prog, opt, value, tail in DANGEROUS_LONG:
        for k in range(3, len(opt) + 1):
            ab = opt[:k]
            if (prog, ab) in NOT_ABBREVIATIONS:
                continue
            if value is None:
                out.append((f"{prog} {ab}{tail}", "abbreviation"))
            else:
                out.append((f"{prog} {ab}={value}{tail}", "abbreviation"))
                out.append((f"{prog} {ab} {value}{tail}", "abbreviation"))
    return out


def _clusters() -> list[tuple[str, str]]:
    out = []
    for prog, letter, value, harmless, tail in DANGEROUS_SHORT:
        for r in range(0, len(harmless) + 1):
            for extra in itertools.permutations(harmless, r):
                for pos in range(len(extra) + 1):
                    letters = "".join(extra[:pos]) + letter + "".join(extra[pos:])
                    if value is None:
                        out.append((f"{prog} -{letters}{tail}", "cluster"))
                    elif letters.endswith(letter):
                        out.append((f"{prog} -{letters}{value}{tail}", "cluster"))
                        out.append((f"{prog} -{letters} {value}{tail}", "cluster"))
                    else:  # the value letter first: the rest of the cluster is its value
                        out.append((f"{prog} -{letters} {value}{tail}", "cluster"))
    return out


def build() -> list[dict]:
    rows: list[dict] = []
    seen: set[str] = set()

    def add(cmd: str, kind: str, must_refuse: bool) -> None:
        if cmd in seen:
            for r in rows:
                if r["cmd"] == cmd:
                    r["must_refuse"] = r["must_refuse"] or must_refuse
            return
        seen.add(cmd)
        rows.append({"cmd": cmd, "kind": kind, "must_refuse": must_refuse})

    for c in KNOWN_BAD:
        add(c, "known-bad", True)
    for c, kind in _abbreviations() + _clusters():
        add(c, kind, True)
    for kind, group in (("redirection", REDIRECTIONS), ("glob", GLOBS), ("quoting", QUOTING),
                        ("subscript", SUBSCRIPTS), ("path", PATHS), ("git", GIT),
                        ("sed", SED), ("find", FIND), ("program", PROGRAMS),
                        ("shell", SHELL), ("named", NAMED), ("agent-like", AGENT_LIKE)):
        for c in group:
            add(c, kind, False)
    return rows


def render() -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in build())


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT} ({len(build())} commands)")
