"""Bug: only finish_reason and compile decide; an open fence or code that stops mid-construct is not looked at
(nor does Python's REPL test get asked)."""


def _ends_unfinished(code):
    return False


def _extract_code(text):
    lines = text.splitlines()
    fences = [i for i, line in enumerate(lines) if FENCE.match(line)]
    if len(fences) % 2 == 1:
        return "\n".join(lines[fences[-1] + 1:])
    return "\n".join(lines[fences[-2] + 1:fences[-1]]) if fences else text
