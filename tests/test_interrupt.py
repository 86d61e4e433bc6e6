"""A Ctrl-C while another thread of the grader imports is held back until that import ends, then stops the run:
raised inside importlib, it could leave the import lock held for good, and the run would hang (a selftest did)."""
import signal
import threading
import time

import pytest

from grader import interrupt


@pytest.fixture
def fresh_signals(monkeypatch):
    """This process's record of signals, empty, and left as it was after the test."""
    for name in ("_received", "_early", "_owed"):
        monkeypatch.setattr(interrupt, name, [])


def test_a_signal_during_a_threads_import_is_raised_when_the_import_ends(fresh_signals):
    importing, done = threading.Event(), threading.Event()

    def imports():
        with interrupt.while_importing():
            importing.set()
            done.wait(10)

    thread = threading.Thread(target=imports)
    held = False
    with pytest.raises(interrupt.Interrupted) as stopped:
        with interrupt.signals_interrupt():
            thread.start()
            assert importing.wait(10)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            for _ in range(20):  # the handler runs in these sleeps, and must not raise yet
                time.sleep(0.01)
            held = True
            done.set()
            thread.join(10)
            time.sleep(5)  # raised here, once the import has ended
    assert held and stopped.value.signum == signal.SIGINT


def test_a_signal_with_no_import_under_way_raises_at_once(fresh_signals):
    started = time.monotonic()
    with pytest.raises(interrupt.Interrupted):
        with interrupt.signals_interrupt():
            signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
            time.sleep(5)
    assert time.monotonic() - started < 4
