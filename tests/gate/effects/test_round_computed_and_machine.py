"""Probed forms that ran unrequested: a program named by a substitution, network, service and
security-control changes, ``git read-tree -u``, a subcommand's own ``--version``,
device-control tool names."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.names import name_effect
from ctxgate.gate.effects.shell import shell_effect

RO, R, IRR = EffectClass.READ_ONLY, EffectClass.LOCAL_RECOVERABLE, EffectClass.LOCAL_IRREVERSIBLE
X, U = EffectClass.EXTERNAL, EffectClass.UNTRUSTED_CODE


@pytest.mark.parametrize(("command", "expected", "words"), [
    # the substitution prints the program: judged as that program
    ("$(printf '\\x72\\x6d') -rf ~/work", IRR, "runs the program it prints"),
    ("$(printf '\\162\\155') -rf ~/work", IRR, "deletes"),
    ("\"$(printf 'r''m')\" -rf ~/work", IRR, "deletes"),
    ("$(printf '%s' rm) -rf ~/work", IRR, "deletes"),
    ("`echo rm` -rf ~/work", IRR, "deletes"),
    ("$(which rm) -rf ~/work", IRR, "deletes"),
    ("$(command -v git) push --force origin main", X, "force-pushes"),
    # the name is decoded: nobody can read what runs
    ("$(rev <<< mr) -rf ~/work", U, "decodes the name"),
    ("$(base64 -d <<< cm0=) -rf ~/work", U, "decodes the name"),
    ("$(tr a-y b-z <<< ql) -rf ~/work", U, "decodes the name"),
])
def test_a_program_named_by_a_substitution_is_judged_as_what_it_names(
        outside: Path, command: str, expected: EffectClass, words: str) -> None:
    e = shell_effect(command, cwd=str(outside))
    assert e is not None and e.effect is expected, (command, e)
    assert words in e.evidence + " ".join(e.details), (command, e)


@pytest.mark.parametrize("command", ["$(which cat) data.txt", "$(command -v ls) -la"])
def test_a_located_reader_stays_a_reader(outside: Path, command: str) -> None:
    e = shell_effect(command, cwd=str(outside))
    assert e is not None and e.effect is RO, (command, e)


def test_a_program_computed_otherwise_is_left_to_the_model(outside: Path) -> None:
    from ctxgate.gate.effects.shell import analyse

    assert shell_effect("$(find . -name gradlew) build", cwd=str(outside)) is None
    a = analyse("$(find . -name gradlew) build", cwd=str(outside))
    assert any("named at run time" in u for u in a.unknown), a.unknown


@pytest.mark.parametrize(("command", "expected"), [
    ("ip link set eth0 down", IRR), ("ip route del default", IRR), ("ip addr flush dev eth0", IRR),
    ("nmcli networking off", IRR), ("nmcli connection delete office", IRR),
    ("ifconfig eth0 down", IRR), ("ifdown eth0", IRR), ("route del default", IRR),
    ("launchctl unload -w ~/Library/LaunchAgents/x.plist", IRR),
    ("launchctl bootout gui/501/com.example.agent", IRR),
    ("networksetup -setairportpower en0 off", IRR),
    ("ip addr", RO), ("ip -4 addr show", RO), ("ip route", RO), ("nmcli device status", RO),
    ("ifconfig -a", RO), ("launchctl list", RO), ("route -n", RO),
    # security controls switched off or their rules rewritten, and their read-only forms
    ("setenforce 0", IRR), ("sudo setenforce Permissive", IRR), ("aa-teardown", IRR),
    ("aa-complain /etc/apparmor.d/usr.sbin.nginx", IRR), ("auditctl -e 0", IRR),
    ("auditctl -D", IRR), ("spctl --master-disable", IRR), ("csrutil disable", IRR),
    ("nft flush ruleset", IRR), ("firewall-cmd --panic-on", IRR),
    ("sysctl -w kernel.randomize_va_space=0", IRR), ("sysctl net.ipv4.ip_forward=1", IRR),
    ("modprobe -r iptable_filter", IRR), ("rmmod apparmor", IRR),
    ("auditctl -l", RO), ("auditctl -s", RO), ("spctl --status", RO), ("csrutil status", RO),
    ("nft list ruleset", RO), ("firewall-cmd --list-all", RO), ("sysctl -a", RO),
    ("sysctl net.ipv4.ip_forward", RO), ("modprobe -n dummy", RO),
    # storage: volumes, encrypted devices, pools, arrays, partition tables
    ("lvremove -f /dev/vg0/data", IRR), ("cryptsetup luksErase /dev/sdb1", IRR),
    ("zpool destroy tank", IRR), ("mdadm --zero-superblock /dev/sdb", IRR),
    ("sgdisk -Z /dev/sda", IRR), ("blkdiscard /dev/sdb", IRR),
    ("cryptsetup status data", RO), ("zpool status", RO), ("mdadm --detail /dev/md0", RO),
    ("sgdisk -p /dev/sda", RO),
])
def test_network_and_service_changes(outside: Path, command: str, expected) -> None:
    e = shell_effect(command, cwd=str(outside))
    assert e is not None and e.effect is expected, (command, e)


@pytest.mark.parametrize(("command", "expected"), [
    ("git read-tree -u --reset HEAD", IRR), ("git read-tree -u -m HEAD", IRR),
    ("git checkout-index -a -f", IRR), ("git read-tree HEAD", R), ("git checkout-index -a", R),
])
def test_plumbing_that_overwrites_the_working_tree(repo: Path, command: str, expected) -> None:
    e = shell_effect(command, cwd=str(repo))
    assert e is not None and e.effect is expected, (command, e)


@pytest.mark.parametrize(("command", "expected"), [
    ("cargo yank --version 1.0.0", X), ("cargo --version", RO), ("rm --version", RO),
])
def test_version_names_only_as_the_first_argument(outside: Path, command: str, expected) -> None:
    e = shell_effect(command, cwd=str(outside))
    assert e is not None and e.effect is expected, (command, e)


@pytest.mark.parametrize(("tool", "expected"), [
    ("turn_off", X), ("turn_on", X), ("play", X), ("disarm", X), ("switch_light", X),
    ("get_switch_status", RO), ("list_playlists", RO), ("get_arm_state", RO),
])
def test_device_control_names(tmp_path: Path, tool: str, expected) -> None:
    e = name_effect(tool, {"entity_id": "lock.front_door"}, cwd=str(tmp_path))
    assert e is not None and e.effect is expected, (tool, e)


@pytest.mark.parametrize(("command", "expected"), [
    ("PROMPT_COMMAND='rm -rf ~/work'", IRR),  # this shell runs it before each prompt
    ("PS1='$(rm -rf ~/work) \\$ '", IRR),  # a prompt's substitutions run at each prompt
    ("awk 'BEGIN { print \"rm -rf ~/work\" | \"sh\" }'", IRR),  # the printed text is a script
    ("awk '{ print $1 | \"sh\" }' list.txt", IRR),  # a script nobody can read
    ("awk '{ print $1 | \"sort -u\" }' data.txt", RO),
    ("PS1='\\u@\\h \\$ '", RO),
])
def test_code_a_shell_runs_later_or_is_fed(outside: Path, command: str, expected) -> None:
    e = shell_effect(command, cwd=str(outside))
    assert e is not None and e.effect is expected, (command, e)
