"""The viewer's background jobs: a page gets the result when it is ready, else the job's
progress line; jobs of one lane run one at a time; a kept result answers while it is
worked out again."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from planning_memory.viewer.jobs import KEPT, Job, Jobs, Pending, line

LONG_WAIT = 30.0  # a bound for a test that hangs; never reached when the code works


def blocked(gate: threading.Event, result: Any = "done") -> Any:
    def work(job: Job) -> Any:
        job.step("reading", 3, 10)
        assert gate.wait(LONG_WAIT)
        return result

    return work


def test_a_quick_job_answers_at_once() -> None:
    assert Jobs().run("k", "Quick", lambda job: 42, wait=LONG_WAIT) == 42


def test_a_long_job_shows_its_progress_then_its_result() -> None:
    jobs, gate = Jobs(), threading.Event()
    with pytest.raises(Pending) as waiting:
        jobs.run("k", "Reading the records", blocked(gate), wait=0)
    job = waiting.value.job
    assert jobs.running() == {job.id: job.text()}
    assert job.text().startswith("Reading the records: reading, 3 of 10 (")
    html = line(job)
    assert f'data-job="{job.id}"' in html and 'role="status"' in html
    gate.set()
    assert job.wait(LONG_WAIT)
    assert jobs.run("k", "Reading the records", blocked(gate), wait=0) == "done"
    assert jobs.running() == {}


def test_an_error_reaches_the_page_that_asks() -> None:
    def failing(job: Job) -> None:
        raise ValueError("broken record")

    jobs = Jobs()
    with pytest.raises(ValueError, match="broken record"):
        jobs.run("k", "Failing", failing, wait=LONG_WAIT)


def test_jobs_of_one_lane_run_one_at_a_time() -> None:
    jobs, gate = Jobs(), threading.Event()
    first = jobs.start("a", "First", blocked(gate, 1), lane="index")
    second = jobs.start("b", "Second", lambda job: 2, lane="index")
    other = jobs.start("c", "Elsewhere", lambda job: 3, lane="other")
    assert other.wait(LONG_WAIT) and other.value() == 3
    while second.stage == "waiting to start":  # its thread has not looked at the lane yet
        second.wait(0.01)
    assert not second.finished and "waiting for the work before it" in second.text()
    gate.set()
    assert second.wait(LONG_WAIT) and first.value() == 1 and second.value() == 2


def test_a_kept_result_answers_while_it_is_worked_out_again() -> None:
    jobs, gate = Jobs(), threading.Event()
    assert jobs.kept("folders", "Listing", lambda job: ["a"], every=LONG_WAIT, version="1") == ["a"]
    # the same version, within ``every``: the result kept, nothing run again
    assert jobs.kept("folders", "Listing", blocked(gate, ["b"]), every=LONG_WAIT, version="1") == [
        "a"
    ]
    # another version: worked out again; the old result answers meanwhile
    assert jobs.kept("folders", "Listing", blocked(gate, ["b"]), every=0, version="2") == ["a"]
    gate.set()
    assert jobs._jobs["folders:2"].wait(LONG_WAIT)
    assert jobs.kept("folders", "Listing", blocked(gate), every=LONG_WAIT, version="2") == ["b"]


def test_the_first_kept_result_is_pending_until_ready() -> None:
    jobs, gate = Jobs(), threading.Event()
    with pytest.raises(Pending):
        jobs.kept("index", "Reading the code map", blocked(gate), every=LONG_WAIT, version="1")
    gate.set()


def test_old_jobs_are_forgotten_but_the_newest_of_each_kind_stays() -> None:
    jobs = Jobs()
    assert jobs.run("index:1", "Index", lambda job: "map", wait=LONG_WAIT) == "map"
    for i in range(KEPT + 10):
        jobs.run(f"search:{i}", "Search", lambda job, i=i: i, wait=LONG_WAIT)
    assert len(jobs._jobs) <= KEPT + 1
    kept = jobs.latest("index:")
    assert kept is not None and kept.value() == "map"
    newest = jobs.latest("search:")
    assert newest is not None and newest.key == f"search:{KEPT + 9}"
