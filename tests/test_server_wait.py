"""The browser tests' wait for ComfyUI's start (tests/headless/server.py): DYPE_SEGA_SERVER_WAIT when set (a bad
value is refused naming the setting), else a default that follows the machine's load per CPU, never below 90 s; a
wait that runs out says it was the wait, how long and where that number came from, and stops the server. No
browser here: the last test starts the real server and gives it no time."""

from __future__ import annotations

import os

import pytest
from headless import registry, server


@pytest.mark.parametrize("given", ["300", " 45.5 "])
def test_the_setting_is_the_wait(monkeypatch, given):
    monkeypatch.setenv(server.WAIT_SETTING, given)
    seconds, source = server.start_wait()
    assert seconds == float(given) and source == f"{server.WAIT_SETTING}={given.strip()}"


@pytest.mark.parametrize("given", ["soon", "0", "-5", "inf", "nan"])
def test_a_bad_setting_is_refused_naming_it(monkeypatch, given):
    monkeypatch.setenv(server.WAIT_SETTING, given)
    with pytest.raises(ValueError, match=rf"{server.WAIT_SETTING}=.*the seconds to wait"):
        server.start_wait()


@pytest.mark.parametrize(("load", "cores", "seconds"), [(0.5, 2, 90.0), (12.0, 2, 360.0), (12.0, 16, 90.0),
                                                         (40.0, 16, 150.0)])
def test_the_default_follows_the_load_per_cpu(monkeypatch, load, cores, seconds):
    monkeypatch.delenv(server.WAIT_SETTING, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    waited, source = server.start_wait()
    assert waited == seconds
    assert f"load {load:.1f} on {cores} CPUs" in source and f"set {server.WAIT_SETTING}=SECONDS" in source


def test_a_wait_that_runs_out_says_it_was_the_wait_and_stops_the_server(monkeypatch, tmp_path):
    monkeypatch.setenv(server.WAIT_SETTING, "0.001")
    srv = server.ComfyServer(tmp_path, registry.MODEL_FILES)
    with pytest.raises(RuntimeError) as raised:
        srv.start().wait()
    first_line = str(raised.value).splitlines()[0]
    assert first_line.startswith("the wait for ComfyUI's start ran out: no answer on http://127.0.0.1:")
    assert f"within 0 s ({server.WAIT_SETTING}=0.001); log:" in first_line
    assert srv._proc is not None and srv._proc.poll() is not None  # stopped, not left running
