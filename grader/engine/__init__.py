"""The check-author API (see grader/CHECKS.md)."""
from grader.engine.checks import (CheckFailure, check, diagnose, expect_close, expect_equal, expect_length,
                                  expect_raises, expect_type, fail, mismatch, more_failing, require, type_name)
from grader.engine.close import outside, within
from grader.engine.goldens import golden, reference
from grader.engine.tolerance import tolerance
from grader.language import tr
from grader.sandbox.codec import Opaque
from grader.sandbox.failures import SubmissionRaised
from grader.sandbox.remote import Remote

__all__ = ["CheckFailure", "check", "diagnose", "expect_close", "expect_equal", "expect_length", "expect_raises",
           "expect_type", "fail", "mismatch", "more_failing", "require", "type_name", "golden", "outside", "reference",
           "tolerance", "tr", "within", "Opaque", "Remote", "SubmissionRaised"]
