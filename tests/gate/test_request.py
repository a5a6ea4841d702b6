"""User-request extraction: compaction, loop-injected messages, short replies, run prompts."""

from __future__ import annotations

import pytest

from ctxgate.gate.request import ends_with_question, extract_user_request


def user(text):
    return {"role": "user", "content": text}


def asst(text):
    return {"role": "assistant", "content": text}


def test_latest_real_user_message_openai():
    msgs = [{"role": "system", "content": "be nice"}, user("list the files"), asst("Done."),
            user("now delete build/")]
    req = extract_user_request(msgs)
    assert req.text == "now delete build/" and req.source == "conversation"


def test_anthropic_blocks_and_tool_results_are_skipped():
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "clean the tmp dir"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Cleaning."},
                                          {"type": "tool_use", "id": "t1", "name": "bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "a b c"}]},
    ]
    assert extract_user_request(msgs).text == "clean the tmp dir"


@pytest.mark.parametrize("marker", [
    "[Context compacted: earlier messages removed to fit the context window]",
    "[Context compacted — summary of earlier conversation] the user wanted X",
    "[Summary] earlier the user asked to wipe /srv",
])
def test_a_compaction_boundary_is_never_crossed(marker):
    msgs = [user("delete every file in /srv/prod"), asst("ok"), user(marker)]
    assert extract_user_request(msgs) is None
    assert extract_user_request(msgs, run_prompts=["look around"]).text == "look around"


def test_compaction_markers_are_configurable():
    msgs = [user("delete everything"), user("<<compacted>>")]
    assert extract_user_request(msgs, compaction_markers=["<<compacted>>"]) is None
    assert extract_user_request(msgs).text == "<<compacted>>"


def test_loop_injected_messages_are_not_the_user_request():
    msgs = [user("fix the tests"), asst("working"),
            user("[You have called the same tool 5 times with the same arguments]")]
    assert extract_user_request(msgs).text == "fix the tests"
    # only the prefix counts: a real request may mention the marker later
    assert extract_user_request([user("please [Summary] this")]).text == "please [Summary] this"


def test_an_image_only_latest_message_stops_the_search():
    image = {"role": "user", "content": [{"type": "image", "source": {"type": "base64",
                                                                     "data": "..."}}]}
    msgs = [user("delete the old backups"), asst("Which ones?"), image]
    assert extract_user_request(msgs) is None  # never promotes the earlier request
    req = extract_user_request(msgs, run_prompts=["describe this picture"])
    assert req.text == "describe this picture" and req.source == "run_prompts"
    openai_image = {"role": "user", "content": [{"type": "image_url",
                                                 "image_url": {"url": "data:..."}}]}
    assert extract_user_request([user("rm -rf it"), openai_image]) is None


def test_a_short_reply_carries_the_exchange_it_answers():
    msgs = [user("clean up the build artefacts"),
            asst("I found 3 GB in build/. **Shall I delete build/?**  \n"), user("yes, go ahead")]
    req = extract_user_request(msgs)
    assert req.text == ("Earlier user request: clean up the build artefacts\n\n"
                        "Assistant: I found 3 GB in build/. **Shall I delete build/?**  \n\n\n"
                        "Latest user message: yes, go ahead")
    assert req.question and req.earlier_request == "clean up the build artefacts"


def test_a_short_new_command_stands_alone():
    msgs = [user("build it"), asst("Done."), user("cut the release")]
    assert extract_user_request(msgs).text == "cut the release"
    long_reply = "yes, and also please refactor the parser module afterwards"
    msgs = [user("x"), asst("Shall I?"), user(long_reply)]
    assert extract_user_request(msgs).text == long_reply


def test_several_run_prompts_are_labelled():
    req = extract_user_request([], run_prompts=["look around /srv/prod",
                                                "delete every file in /srv/prod"])
    assert req.text == "User: look around /srv/prod\n\nUser: delete every file in /srv/prod"


@pytest.mark.parametrize("text", [
    "Run this:\n```rust\nlet n = s.parse::<u32>()?\n```",
    "Results are at https://example.com/search?q=rust",
    "Fetched https://api.example.com/v1/items?page=2&sort=asc",
    "Use the regex `^a?$`",
    "Should I also update the tests? I went ahead and did it.",
])
def test_a_question_mark_inside_code_or_urls_is_not_a_question(text):
    assert not ends_with_question(text)


@pytest.mark.parametrize("text", [
    "**Shall I apply the patch?**  \n",
    "Here it is:\n```\nrm -rf build?\n```\nDo you want me to commit it?",
    "Is https://example.com the right host?",
    "Delete it (y/n?)",
])
def test_real_questions_end_with_a_question_mark(text):
    assert ends_with_question(text)


def test_the_reply_rule_needs_a_real_question():
    msgs = [user("deploy"), asst("Logs: see `grep -c err?`"), user("yes")]
    assert extract_user_request(msgs).text == "yes"


def test_no_messages_and_no_prompts_is_none():
    assert extract_user_request([]) is None
    assert extract_user_request([asst("hello")]) is None
