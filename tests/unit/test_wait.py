# -*- coding: utf-8 -*-
"""client/wait.py: a bounded wait, driven by a fake clock (no real sleeping)."""

from __future__ import annotations

import pytest

from ansible_collections.gsb.kai_lab.plugins.module_utils.client.wait import WaitTimeout, wait_until


class FakeClock(object):
    """monotonic() and sleep() that only move when sleep is called."""

    def __init__(self, start=1000.0):
        self.now = start
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds > 0, "never sleeps a non-positive time"
        self.sleeps.append(seconds)
        self.now += seconds


def sequence(values):
    """A probe returning values in turn, then the last one forever; counts calls."""
    state = {"calls": 0}

    def probe():
        index = min(state["calls"], len(values) - 1)
        state["calls"] += 1
        return values[index]

    probe.state = state
    return probe


def test_returns_the_value_once_the_predicate_holds():
    fake = FakeClock()
    probe = sequence(["Pending", "Pending", "Running"])
    value = wait_until("p1 to run", probe, lambda v: v == "Running", timeout=10, interval=0.5,
                       clock=fake.clock, sleep=fake.sleep)
    assert value == "Running"
    assert probe.state["calls"] == 3
    assert fake.sleeps == [0.5, 0.5]


def test_returns_immediately_without_sleeping_when_already_done():
    fake = FakeClock()
    assert wait_until("x", lambda: 7, lambda v: v == 7, timeout=10, clock=fake.clock, sleep=fake.sleep) == 7
    assert fake.sleeps == []


def test_times_out_naming_what_and_the_last_seen_description():
    fake = FakeClock()
    probe = sequence([{"phase": "Pending"}, {"phase": "ContainerCreating"}])
    with pytest.raises(WaitTimeout) as info:
        wait_until("nl-1 to run", probe, lambda v: v["phase"] == "Running", timeout=3, interval=1,
                   describe=lambda v: "phase %s" % v["phase"], clock=fake.clock, sleep=fake.sleep)
    exc = info.value
    assert exc.what == "nl-1 to run"
    assert exc.last_seen == "phase ContainerCreating"
    assert exc.timeout == 3
    assert str(exc) == "timed out after 3s waiting for nl-1 to run; last seen: phase ContainerCreating"
    # Bounded: it never waited past the deadline.
    assert sum(fake.sleeps) == pytest.approx(3)
    assert fake.now - 1000.0 == pytest.approx(3)


def test_last_sleep_is_cut_to_the_remaining_time():
    fake = FakeClock()
    with pytest.raises(WaitTimeout):
        wait_until("x", lambda: 0, lambda v: False, timeout=2.5, interval=1, clock=fake.clock, sleep=fake.sleep)
    assert fake.sleeps == [1, 1, pytest.approx(0.5)]


def test_zero_timeout_probes_once_and_gives_up_without_sleeping():
    fake = FakeClock()
    probe = sequence([1])
    with pytest.raises(WaitTimeout) as info:
        wait_until("x", probe, lambda v: False, timeout=0, clock=fake.clock, sleep=fake.sleep)
    assert probe.state["calls"] == 1
    assert fake.sleeps == []
    assert info.value.last_seen == "1"  # default describe is repr


def test_progress_is_called_only_when_what_is_seen_changes():
    fake = FakeClock()
    lines = []
    probe = sequence(["a", "a", "a", "b", "b", "a", "done"])
    wait_until("gang", probe, lambda v: v == "done", timeout=100, interval=1, describe=str,
               progress=lines.append, clock=fake.clock, sleep=fake.sleep)
    assert lines == ["gang: a", "gang: b", "gang: a"]


def test_progress_not_called_for_the_final_successful_value():
    fake = FakeClock()
    lines = []
    wait_until("x", sequence(["ok"]), lambda v: v == "ok", timeout=5, progress=lines.append,
               clock=fake.clock, sleep=fake.sleep)
    assert lines == []
