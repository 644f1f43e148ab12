"""kforge report over a fixture database written through the real store code.

The database comes from `report_fixture_db` (src/report/report_fixture.cc, a
test-only tool built beside the tests): a 12-candidate CPU run on two islands
and a six-task bench. The bench metrics below are computed by hand from the
fixture's table (src/report/report_fixture.h):

    task        result (default)           with --include-suspect
    1_Good      ok 2.0x eager / 1.2x comp   suspect 3.0x / 2.5x
    2_Slow      ok 0.5x / 0.4x              same
    3_Broken    nothing accepted            same
    4_Constant  degenerate (bench record)   excluded either way (its 10x too)
    5_Suspect   suspect 4.0x / 3.0x: fails  counts 4.0x / 3.0x
    6_Zeros     degenerate (evaluation)     excluded either way

n = 4 non-degenerate tasks.
"""
import csv
import html.parser
import io
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import ROOT

FIXTURE_BENCH = "bench-fixture"
FIXTURE_RUN = "run-fixture-cpu"
THRESHOLDS = ["0", "0.5", "0.8", "1", "1.5", "2"]


def fixture_tool():
    explicit = os.environ.get("KFORGE_REPORT_FIXTURE")
    if explicit:
        return pathlib.Path(explicit)
    binary = pathlib.Path(os.environ.get("KFORGE_BIN", str(ROOT / "build" / "kforge")))
    return binary.parent / "src" / "report" / "report_fixture_db"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    tool = fixture_tool()
    assert tool.exists(), f"{tool} is missing: build the tests (ninja report_fixture_db)"
    path = tmp_path_factory.mktemp("report") / "fixture.db"
    proc = subprocess.run([str(tool), str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return path


def report(kforge, db, *args):
    return kforge("report", *args, "--db", db)


def report_json(kforge, db, *args):
    proc = report(kforge, db, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_bench_metrics_match_the_hand_computation(kforge, db):
    j = report_json(kforge, db, FIXTURE_BENCH)
    assert j["kind"] == "bench" and j["bench_id"] == FIXTURE_BENCH
    m = j["metrics"]
    assert (m["tasks"], m["tasks_total"], m["degenerate_tasks"]) == (4, 6, 2)
    assert sorted(m["degenerate"]) == ["4_Constant", "6_Zeros"]
    assert m["accepted_tasks"] == 2 and m["suspect_tasks"] == 1
    assert m["pass_rate"] == pytest.approx(2 / 4)
    # eager speedups of headline successes: 2.0, 0.5; compile: 1.2, 0.4; over n = 4
    assert [m["fast_p"]["eager"][p] for p in THRESHOLDS] == pytest.approx(
        [0.5, 0.25, 0.25, 0.25, 0.25, 0.0])
    assert [m["fast_p"]["compile"][p] for p in THRESHOLDS] == pytest.approx(
        [0.5, 0.25, 0.25, 0.25, 0.0, 0.0])
    assert m["faster_rate"] == pytest.approx({"eager": 0.25, "compile": 0.25})
    assert m["geomean_speedup"]["eager"] == pytest.approx(1.0)
    assert m["geomean_speedup"]["compile"] == pytest.approx((1.2 * 0.4) ** 0.5)
    eager = m["speedup"]["eager"]
    assert (eager["count"], eager["max"], eager["median"]) == (2, pytest.approx(2.0),
                                                               pytest.approx(1.25))
    # one LLM call per candidate: 2450 tokens, $0.0125 x (iteration + 1); 10 candidates
    assert m["tokens"] == 24500
    assert m["cost_usd"] == pytest.approx(0.2125)
    assert m["cost_usd_per_task"] == pytest.approx(0.2125 / 6)

    tasks = {t["task"]: t for t in j["tasks"]}
    assert list(tasks) == ["1_Good", "2_Slow", "3_Broken", "4_Constant", "5_Suspect", "6_Zeros"]
    for t in j["tasks"]:
        assert {"task", "run_id", "status", "best", "degenerate"} <= set(t)
    assert tasks["1_Good"]["best"]["candidate_id"] == "b1c2"
    assert tasks["1_Good"]["best"]["speedup"] == pytest.approx({"eager": 2.0, "compile": 1.2})
    assert tasks["3_Broken"]["best"] is None
    assert tasks["4_Constant"]["degenerate"] and not tasks["4_Constant"]["headline"]
    assert tasks["6_Zeros"]["degenerate"]
    assert tasks["5_Suspect"]["verdict"] == "suspect" and not tasks["5_Suspect"]["headline"]


def test_include_suspect_changes_only_what_it_should(kforge, db):
    m = report_json(kforge, db, FIXTURE_BENCH, "--include-suspect")["metrics"]
    assert m["include_suspect"] is True
    assert m["tasks"] == 4  # degenerate tasks stay out
    assert m["pass_rate"] == pytest.approx(3 / 4)
    # eager: 3.0 (1_Good's suspect best), 0.5, 4.0
    assert [m["fast_p"]["eager"][p] for p in THRESHOLDS] == pytest.approx(
        [0.75, 0.5, 0.5, 0.5, 0.5, 0.5])
    assert m["geomean_speedup"]["eager"] == pytest.approx((3.0 * 0.5 * 4.0) ** (1 / 3))


def test_run_report_json(kforge, db):
    j = report_json(kforge, db, FIXTURE_RUN)
    assert j["kind"] == "run" and j["task"] == "23_Softmax" and j["status"] == "completed"
    assert len(j["candidates"]) == 12
    assert j["best"]["candidate_id"] == "c09"
    s = j["summary"]
    assert (s["evaluations"], s["compiled"], s["correct"], s["accepted"], s["headline"]) == (
        11, 10, 9, 8, 7)
    progress = {p["island"]: p["best"] for p in j["island_progress"]}
    assert [p["speedup"] for p in progress[0]] == pytest.approx([1.10, 1.40, 1.85, 1.85, 2.05])
    assert [p["iteration"] for p in progress[1]] == [4, 6, 8, 10]
    types = [e["type"] for e in j["events"]]
    assert types.count("backtrack") == 1 and types.count("crossover") == 1
    c09 = next(c for c in j["candidates"] if c["candidate_id"] == "c09")
    assert c09["parents"] == ["c05", "c08"]
    c06 = next(c for c in j["candidates"] if c["candidate_id"] == "c06")
    assert c06["verdict"] == "rejected" and c06["flags"][0]["check"] == "side_stream"
    assert j["cost"][-1]["cumulative_cost_usd"] == pytest.approx(0.0125 * 78 + 0.004)


def test_csv_files_and_stdout(kforge, db, tmp_path):
    out = tmp_path / "run.csv"
    proc = report(kforge, db, FIXTURE_RUN, "--csv", out)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(), newline="")))
    assert len(rows) == 12
    c09 = next(r for r in rows if r["candidate_id"] == "c09")
    assert c09["parents"] == "c05;c08" and float(c09["speedup_eager"]) == 2.05
    assert next(r for r in rows if r["candidate_id"] == "c11")["evaluated"] == "false"

    proc = report(kforge, db, FIXTURE_BENCH, "--csv", "-")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout, newline="")))
    assert [r["task"] for r in rows] == ["1_Good", "2_Slow", "3_Broken", "4_Constant",
                                         "5_Suspect", "6_Zeros"]
    assert rows[3]["degenerate"] == "true"
    assert rows[3]["degenerate_reason"] == "reference output is constant (baseline check)"


class TagBalance(html.parser.HTMLParser):
    """Checks that every non-void element is closed in order."""
    VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "source", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.ids, self.hrefs = [], [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if "href" in attrs:
            self.hrefs.append(attrs["href"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        attrs = dict(attrs)
        if "href" in attrs:
            self.hrefs.append(attrs["href"])

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


def parse_page(text):
    p = TagBalance()
    p.feed(text)
    p.close()
    assert not p.errors, p.errors[:5]
    assert not p.stack, f"unclosed: {p.stack}"
    return p


def check_self_contained(text):
    lower = text.lower()
    assert "<script" not in lower
    assert "content-security-policy" in lower
    without_ns = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "http://" not in without_ns and "https://" not in without_ns


def test_run_html_is_self_contained_escaped_and_linked(kforge, db, tmp_path):
    out = tmp_path / "run.html"
    proc = report(kforge, db, FIXTURE_RUN, "--html", out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")  # valid UTF-8, or this raises
    check_self_contained(text)
    page = parse_page(text)
    assert "&lt;/pre&gt;&lt;script&gt;alert(&#39;not escaped&#39;)&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    for cid in ["c00seed0", "c05", "c09", "c11"]:
        assert f"c-{cid}" in page.ids
    # every in-page link lands on an anchor (the favicon is an empty data: URL)
    for href in page.hrefs:
        if href == "data:,":
            continue
        assert href.startswith("#") and href[1:] in page.ids, href
    assert text.count("<svg") >= 3
    assert "backtrack on island 1 at iteration 6" in text


def test_bench_html_writes_linked_run_pages(kforge, db, tmp_path):
    out = tmp_path / "suite.html"
    proc = report(kforge, db, FIXTURE_BENCH, "--html", out)
    assert proc.returncode == 0, proc.stderr
    assert "6 run pages" in proc.stdout
    text = out.read_text(encoding="utf-8")
    check_self_contained(text)
    page = parse_page(text)
    run_links = [h for h in page.hrefs if h.startswith("suite_runs/")]
    assert len(set(run_links)) == 6
    for href in set(run_links):
        run_page = (tmp_path / href).read_text(encoding="utf-8")
        check_self_contained(run_page)
        assert 'href="../suite.html"' in run_page
        parse_page(run_page)


def test_terminal_tables(kforge, db):
    proc = report(kforge, db, FIXTURE_BENCH)
    assert proc.returncode == 0, proc.stderr
    assert "pass rate 50.0%" in proc.stdout
    assert "fast_1.5" in proc.stdout
    assert "6_Zeros:" in proc.stdout  # listed with the degenerate tasks
    proc = report(kforge, db, FIXTURE_RUN)
    assert proc.returncode == 0, proc.stderr
    assert "best c09: 2.05x vs eager" in proc.stdout


@pytest.mark.parametrize("args, needle", [
    (["no-such-id"], "no run or bench 'no-such-id'"),
    ([FIXTURE_RUN, "--json", "--csv", "-"], "excludes"),
    ([FIXTURE_RUN, "--html", "/nonexistent-dir/x.html"], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(kforge, db, args, needle):
    proc = report(kforge, db, *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_database_is_exit_2(kforge, tmp_path):
    proc = kforge("report", FIXTURE_RUN, "--db", tmp_path / "absent.db")
    assert proc.returncode == 2
    assert "absent.db" in proc.stderr


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium not installed (apt-get install -y chromium)")
def test_reports_render_in_headless_chromium(kforge, db, tmp_path):
    for target in [FIXTURE_RUN, FIXTURE_BENCH]:
        out = tmp_path / f"{target}.html"
        assert report(kforge, db, target, "--html", out).returncode == 0
        proc = subprocess.run(["bash", str(ROOT / "bench/report/render_check.sh"), str(out),
                               str(tmp_path / f"{target}.png")],
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
