"""`kforge optimize --strategy agent` end to end on the CPU: the fake server plays a
tool-using model (write the file, compile, verify, submit), the real evaluator answers
the tools' checks, the submitted file is evaluated in full, the trajectory is recorded as
an `agent_episode` event, and `kforge export --format rft` keeps the clean episode with
the whole conversation as its prompt.
"""
import json

import pytest

from test_optimize_cpu import CAND_FUSED, FUSED_SHA, LLM_FLAGS, TASK, FakeLlm
from conftest import FAST


def turn(text, *calls):
    return {"text": text,
            "tool_calls": [{"id": f"call_{name}", "name": name, "arguments": json.dumps(args)}
                           for name, args in calls]}


EPISODE = [
    turn("Plan: one fused C++ pass over the tensor.",
         ("write_file", {"path": "model_new.py", "content": CAND_FUSED}), ("compile", {})),
    turn("", ("verify", {})),
    turn("It compiled and verified; submitting.", ("submit", {})),
]


@pytest.fixture(scope="module")
def agent_run(kforge, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agent")
    replies = tmp / "replies.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in EPISODE))
    llm = FakeLlm(replies)
    try:
        db = tmp / "kforge.db"
        proc = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", db, "--iterations", 1,
                      "--llm", llm.spec, "--strategy", "agent", *FAST, *LLM_FLAGS, "--json")
        assert proc.returncode == 0, proc.stderr
        yield {"db": db, "result": json.loads(proc.stdout), "requests": llm.requests()}
    finally:
        llm.close()


def test_the_submitted_file_is_the_evaluated_candidate(kforge, agent_run):
    r = agent_run["result"]
    assert r["status"] == "completed" and r["evaluations"] == 1
    assert r["best"]["sha256"] == FUSED_SHA and r["best"]["speedup"]["eager"] > 0
    assert r["llm"]["calls"] == len(EPISODE)  # one recorded call per turn
    show = json.loads(kforge("show", r["run_id"], "--db", agent_run["db"], "--json").stdout)
    assert show["strategy"] == "agent"
    assert [e["sha256"] for e in show["evaluations"]] == [FUSED_SHA]  # checks are not evaluations
    [episode] = [e["detail"] for e in show["events"] if e["type"] == "agent_episode"]
    assert episode["end"] == "submitted"
    assert episode["candidate_id"] == show["evaluations"][0]["candidate_id"]
    assert episode["tool_counts"] == {"write_file": 1, "compile": 1, "verify": 1, "submit": 1}
    assert episode["invalid_tool_calls"] == 0 and episode["repeated_tool_calls"] == 0


def test_the_tools_are_answered_by_the_evaluator(agent_run):
    bodies = [q["body"] for q in agent_run["requests"]]
    assert len(bodies) == len(EPISODE)
    first = bodies[0]
    assert {t["function"]["name"] for t in first["tools"]} == {
        "list_files", "read_file", "write_file", "edit_file", "compile", "verify", "profile",
        "submit"}
    assert first["messages"][0]["role"] == "system"
    assert "Skill: writing a faster kernel" in first["messages"][0]["content"]
    assert "model_new.py" in first["messages"][1]["content"]
    tool_results = {m["tool_call_id"]: m["content"] for m in bodies[2]["messages"]
                    if m["role"] == "tool"}
    assert tool_results["call_write_file"].startswith("wrote model_new.py")
    assert tool_results["call_compile"].startswith("compile: ok\nbuilt and loaded"), tool_results
    assert tool_results["call_verify"].startswith(
        "verify: ok\noutputs match the reference (5 trials"), tool_results


def test_rft_export_keeps_the_clean_episode_with_its_conversation(kforge, agent_run):
    proc = kforge("export", agent_run["result"]["run_id"], "--format", "rft",
                  "--db", agent_run["db"])
    assert proc.returncode == 0, proc.stderr
    [record] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert record["metadata"]["agent"] == {"end": "submitted", "turns": 3,
                                           "tokens": record["metadata"]["agent"]["tokens"],
                                           "invalid_tool_calls": 0, "repeated_tool_calls": 0}
    assert record["metadata"]["stage"] == "agent"
    roles = [m["role"] for m in record["prompt"]]
    assert roles[:2] == ["system", "user"] and roles.count("tool") == 3
    assert record["reward"] >= 1


def test_replay_reproduces_the_episode(kforge, agent_run, tmp_path):
    """Every turn is a recorded call, so `--llm replay:RUN` plays the episode again."""
    run_id = agent_run["result"]["run_id"]
    proc = kforge("optimize", "--task", TASK, "--device", "cpu", "--db", agent_run["db"],
                  "--iterations", 1, "--llm", f"replay:{run_id}", "--strategy", "agent", *FAST,
                  "--json")
    assert proc.returncode == 0, proc.stderr
    replayed = json.loads(proc.stdout)
    assert replayed["status"] == "completed" and replayed["llm"]["calls"] == len(EPISODE)
    assert replayed["best"]["sha256"] == FUSED_SHA
