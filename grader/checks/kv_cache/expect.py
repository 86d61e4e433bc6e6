"""How kv_cache checks compare a returned count or memory plan and word the call in a failure message."""
from grader.engine import diagnose, expect_equal, expect_type, fail, tr, type_name

PLAN_KEYS = ("weights", "kv_cache", "logits", "total")


def call_text(fn: str, config_text: str, **kwargs) -> str:
    """How a call reads in a failure message: `kv_cache_bytes(Mistral-7B-v0.1 config, seq_len=32768)`."""
    args = ", ".join([config_text] + [f"{name}={value!r}" for name, value in kwargs.items()])
    return f"{fn}({args})"


def expect_count(actual, expected: int, what: str, wrong: dict[str, int]) -> None:
    """Fail unless `actual` is the int `expected`, naming the misconception whose number it equals, if any."""
    expect_type(actual, int, what)
    expect_equal(actual, expected, what, misconceptions=wrong)


def expect_plan(actual, expected: dict, what: str, wrong: dict[str, dict]) -> None:
    """Fail unless `actual` is the memory plan `expected` (a dict of ints), naming the first entry that differs
    and the misconception whose plan it equals, if any."""
    if not isinstance(actual, dict) or set(actual) != set(PLAN_KEYS):
        keys = sorted(map(str, actual)) if isinstance(actual, dict) else type_name(actual)
        fail(tr("{what} returned {keys}; expected a dict with the keys {expected}", what=what, keys=keys,
                expected=list(PLAN_KEYS)))
    for key in PLAN_KEYS:
        expect_type(actual[key], int, f"{what}[{key!r}]")
    for key in PLAN_KEYS:
        if actual[key] != expected[key]:
            found = diagnose(actual, wrong, lambda got, predicted: got == predicted)
            fail(tr("{what}: expected {expected}, got {got}", what=f"{what}[{key!r}]", expected=expected[key],
                    got=actual[key]), found)
