"""How a call into the submission can go wrong, as the grader raises it: the submission raised, is not written yet,
crashed, hung, could not be imported, or sent back too much."""
from __future__ import annotations

import os
import signal

from grader.language import tr
from grader.text import printable


class SubmissionRaised(Exception):
    """The submission raised an exception during a call (`call` as shown, of the contract function `function`)."""

    def __init__(self, call: str, info: dict, function: str | None = None):
        self.call, self.function = call, function
        self.type_name = info["type"]
        self.type_names = list(info["types"])
        self.message = info["message"]
        self.where = info.get("where", "")
        super().__init__(tr("{call} raised {type}: {message}", call=call, type=self.type_name, message=self.message))


class NotImplementedYet(BaseException):
    """The submission still raises NotImplementedError: the check stops at once (no shrinking, no retries).

    `function` is the contract function that raised it: the one the check called, or another that it calls (then
    the check waits for that one, `called` says which was called)."""

    def __init__(self, function: str, called: str | None = None):
        self.function = function
        super().__init__(tr("{function} is not implemented yet (it raises NotImplementedError)", function=function)
                         if called in (None, function) else
                         tr("{called} waits for {function}, which is not implemented yet (it raises "
                            "NotImplementedError)", called=called, function=function))


class ChildFailure(BaseException):
    """The child crashed, hung or could not import the submission; `status` is 'error' or 'timeout'.

    `import_failure` marks a module that could not be imported: one error for its topic, not one per check.
    A BaseException so that neither a check nor hypothesis can catch it and carry on.
    """

    def __init__(self, status: str, message: str, import_failure: bool = False):
        self.status = status
        self.import_failure = import_failure
        super().__init__(message)


class ReplyTooLarge(ChildFailure):
    """A call sent back more bytes than its check accepts: the check fails, and its child, whose reply was never
    read, is ended."""

    def __init__(self, what: str, size: int, budget: int):
        super().__init__("failed", tr("{what} sent back a reply of {size} bytes ({size_mib:.1f} MiB), more than the "
                                      "{budget} bytes ({budget_mib:.1f} MiB) this check accepts from one call",
                                      what=what, size=size, size_mib=size / 2**20, budget=budget,
                                      budget_mib=budget / 2**20))


def exception_info(value) -> dict:
    """An exception report from the child, with every field forced to the expected type (it is untrusted)."""
    value = value if isinstance(value, dict) else {}
    types = value.get("types")
    raised = value.get("raised_in") if isinstance(value.get("raised_in"), dict) else {}
    line = raised.get("line")
    return {"type": printable(str(value.get("type", "an exception"))[:200]),
            "types": [str(t)[:200] for t in types] if isinstance(types, list) else [],
            "message": printable(str(value.get("message", ""))[:2000]),
            "where": printable(str(value.get("where", ""))[:2000]),
            "raised_in": {"function": printable(str(raised.get("function", ""))[:200]),
                          "file": printable(str(raised.get("file", ""))[:200]),
                          "line": line if type(line) is int else 0}}


def describe_status(status: int) -> str:
    """Say in words how a child process ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGSEGV:
            return tr("crashed with a segmentation fault (SIGSEGV)")
        if sig == signal.SIGKILL:
            return tr("was killed (SIGKILL), most likely for running out of memory")
        return tr("was killed by signal {signal}", signal=name)
    code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else status
    return tr("exited with code {code} (os._exit or a crash)", code=code)
