"""Compile logging of ig.jit (irgrad/frontend/compile_log.py): the `irgrad.jit` logger says
when a compile took longer than the threshold, once per signature, and why a recompile happened.

A threshold of 0 makes every compile "slow", so the tests assert no duration."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import irgrad as ig
from irgrad.frontend import compile_log


def _records(caplog):
    return [r for r in caplog.records if r.name == "irgrad.jit"]


def scaled_sum(x, w):
    return ig.sum(x * w)


def test_slow_compile_warns_once(caplog, monkeypatch):
    monkeypatch.setenv("IRGRAD_LOG_COMPILES_THRESHOLD", "0")
    f = ig.jit(scaled_sum)
    x = np.ones((2, 3), np.float32)
    with caplog.at_level(logging.INFO, logger="irgrad.jit"):
        for _ in range(3):
            f(x, x)
    records = _records(caplog)
    assert len(records) == 1, [r.getMessage() for r in records]
    assert records[0].levelno == logging.WARNING
    message = records[0].getMessage()
    assert message.startswith("irgrad.jit: compiling scaled_sum (") and message.endswith(" s)")


def test_recompile_names_the_argument_that_changed(caplog, monkeypatch):
    monkeypatch.setenv("IRGRAD_LOG_COMPILES_THRESHOLD", "0")
    f = ig.jit(scaled_sum)
    with caplog.at_level(logging.INFO, logger="irgrad.jit"):
        f(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
        f(np.ones((2, 3), np.float32), np.ones((1, 3), np.float32))
        f(np.ones((2, 3), np.float32), np.ones((1, 3), np.float64))
    messages = [r.getMessage() for r in _records(caplog)]
    assert len(messages) == 3, messages
    assert "recompiled" not in messages[0]
    assert "recompiled for a new signature, argument w: new shape (1, 3) (was (2, 3))" in messages[1]
    assert "argument w: new dtype float64 (was float32)" in messages[2]


def test_fast_compile_is_info_only(caplog, monkeypatch):
    monkeypatch.setenv("IRGRAD_LOG_COMPILES_THRESHOLD", "inf")
    monkeypatch.delenv("IRGRAD_LOG_COMPILES", raising=False)
    f = ig.jit(scaled_sum)
    x = np.ones((3,), np.float32)
    with caplog.at_level(logging.INFO, logger="irgrad.jit"):
        f(x, x)
    records = _records(caplog)
    assert [r.levelno for r in records] == [logging.INFO]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="irgrad.jit"):
        ig.jit(scaled_sum)(x, x)
    assert _records(caplog) == []


def test_log_compiles_logs_every_compile(caplog, monkeypatch):
    monkeypatch.setenv("IRGRAD_LOG_COMPILES_THRESHOLD", "inf")
    monkeypatch.setenv("IRGRAD_LOG_COMPILES", "1")
    f = ig.jit(scaled_sum)
    with caplog.at_level(logging.WARNING, logger="irgrad.jit"):
        f(np.ones((3,), np.float32), np.ones((3,), np.float32))
        f(np.ones((4,), np.float32), np.ones((4,), np.float32))
    messages = [r.getMessage() for r in _records(caplog)]
    assert len(messages) == 2
    assert "argument x: new shape (4,) (was (3,))" in messages[1]


def test_threshold_default_and_errors(monkeypatch):
    monkeypatch.delenv("IRGRAD_LOG_COMPILES_THRESHOLD", raising=False)
    assert compile_log.threshold_seconds() == compile_log.DEFAULT_THRESHOLD_SECONDS
    monkeypatch.setenv("IRGRAD_LOG_COMPILES_THRESHOLD", "soon")
    with pytest.raises(ValueError, match="IRGRAD_LOG_COMPILES_THRESHOLD='soon'"):
        compile_log.threshold_seconds()
