"""How kv_cache checks compare a returned count and word the call in a failure message."""
from grader.engine import expect_equal, expect_type


def call_text(fn: str, config_text: str, **kwargs) -> str:
    """How a call reads in a failure message: `kv_cache_bytes(Mistral-7B-v0.1 config, seq_len=32768)`."""
    args = ", ".join([config_text] + [f"{name}={value!r}" for name, value in kwargs.items()])
    return f"{fn}({args})"


def expect_count(actual, expected: int, what: str, wrong: dict[str, int]) -> None:
    """Fail unless `actual` is the int `expected`, naming the misconception whose number it equals, if any."""
    expect_type(actual, int, what)
    expect_equal(actual, expected, what, misconceptions=wrong)
