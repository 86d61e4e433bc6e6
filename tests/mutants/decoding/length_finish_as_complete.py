"""Bug: finish_reason is ignored, so an answer cut by the token limit counts as complete when it parses."""


def completion_status(text, finish_reason):
    code = _extract_code(text)
    if code is None or _ends_unfinished(code):
        return "truncated"
    try:
        compile(code, "<completion>", "exec", dont_inherit=True)
    except COMPILE_ERRORS:
        return "invalid"
    return "complete"
