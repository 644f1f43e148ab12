"""`kforge export` through the binary: ids, formats, output, exit codes.

The formats' contents are tested in src/rl/training_export_test.cc over a store
with recorded prompts; here the database is report_fixture_db's (its LLM calls
carry no messages, so it exports no samples and says why).
"""
import json

import pytest

from test_report import FIXTURE_BENCH, FIXTURE_RUN, db  # noqa: F401 (the fixture)


def one_error_line(proc):
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_unknown_id_or_format_exit_2_with_one_line(kforge, db):  # noqa: F811
    one_error_line(kforge("export", "no-such-run", "--format", "sft", "--db", db))
    one_error_line(kforge("export", FIXTURE_RUN, "--format", "ppo", "--db", db))
    one_error_line(kforge("export", FIXTURE_RUN, "--db", db))
    one_error_line(kforge("export", FIXTURE_RUN, "--format", "sft", "--db", db, "--out",
                          "/no/such/dir/out.jsonl"))


def test_missing_database_exits_2(kforge, tmp_path):
    one_error_line(kforge("export", FIXTURE_RUN, "--format", "sft", "--db", tmp_path / "x.db"))


@pytest.mark.parametrize("fmt", ["sft", "rft", "grpo", "dpo"])
def test_run_and_bench_ids_export_json_lines(kforge, db, fmt, tmp_path):  # noqa: F811
    for ident in (FIXTURE_RUN, FIXTURE_BENCH):
        proc = kforge("export", ident, "--format", fmt, "--db", db)
        assert proc.returncode == 0, proc.stderr
        for line in proc.stdout.splitlines():
            assert isinstance(json.loads(line), dict)
        summary = proc.stderr.strip().splitlines()
        assert len(summary) == 1 and summary[0].startswith("kforge export: "), proc.stderr
        assert "without a recorded prompt" in summary[0]
    out = tmp_path / f"{fmt}.jsonl"
    proc = kforge("export", FIXTURE_RUN, "--format", fmt, "--db", db, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert out.exists() and proc.stdout == ""
