"""Model-style answers for completion_status: what chat models return when asked for Python code, cut or whole,
and the real programs the hidden checks cut at random points."""

FENCE = "```"

MEDIAN = '''def median(values):
    """The middle value of a non-empty list (the mean of the two middle ones for an even length)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
'''

WORD_COUNT = '''import collections


def top_words(text, n=3):
    counts = collections.Counter(
        word.strip(".,!?").lower()
        for word in text.split()
    )
    return [word for word, _ in counts.most_common(n)]


print(top_words("the cat and the hat and the bat"))
'''

STACK = '''class Stack:
    """A last-in, first-out stack."""

    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        if not self._items:
            raise IndexError("pop from an empty stack")
        return self._items.pop()
'''

CONFIG = '''DEFAULTS = {
    "host": "localhost",
    "port": 8080,
    "paths": ["/health", "/metrics"],
}
GREETING = f"serving on {DEFAULTS['host']}:{DEFAULTS['port']}"
QUERY = """SELECT name, price
FROM items
WHERE price > 10"""
TOTAL = 1 + 2 + \\
    3 + 4
'''

RETRY = '''import time


def retry(fn, attempts=3, delay=0.5):
    """Call fn until it succeeds, at most `attempts` times."""
    for attempt in range(attempts):
        try:
            return fn()
        except ConnectionError:  # only network errors are retried
            if attempt == attempts - 1:
                raise
            time.sleep(delay * 2 ** attempt)
'''

FIZZBUZZ = '''for i in range(1, 16):
    if i % 15 == 0:
        print("FizzBuzz")
    elif i % 3 == 0:
        print('Fizz')
    elif i % 5 == 0:
        print("Buzz")
    else:
        print(i)
'''

FIB = '''import functools


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
'''

# A docstring with a markdown example: its ``` lines are indented by four spaces, so they are code, not fences.
SHOW = '''def show():
    """Print how to call fib.

    ```
    fib(10)
    ```
    """
    print("fib(10) == 55")
'''

# Real programs the hidden checks cut at random points (CONFIG also holds a backslash and a triple quote; RETRY a
# try whose except a cut can remove; FIB a decorator a cut can leave without its def).
PROGRAMS = {"median": MEDIAN, "word_count": WORD_COUNT, "stack": STACK, "config": CONFIG, "retry": RETRY,
            "fizzbuzz": FIZZBUZZ, "fib": FIB, "show": SHOW}
# What chat models write around their code.
PREAMBLES = ["Here is the function:\n\n", "Sure! This should work:\n", "", "Certainly. Below is a Python version.\n\n"]
OPENERS = ["```python\n", "```py\n", "```\n", "  ```python\n", "   ```python\n"]
AFTERWORDS = ["", "\n", "\nThis runs in O(n log n) time.", "\n\nLet me know if you need tests for it!\n"]


def fenced(code: str, preamble: str = "Here is the code:\n\n", opener: str = "```python\n",
           afterword: str = "\nHope this helps.") -> str:
    """`code` in a markdown fence, between prose."""
    return f"{preamble}{opener}{code}{FENCE}{afterword}"


# (what the case is, the text, the finish_reason) — expected statuses come from the goldens.
CASES = [
    ("a complete function", MEDIAN, "stop"),
    ("a complete class", STACK, "stop"),
    ("a complete script with imports and a generator expression", WORD_COUNT, "stop"),
    ("literals, an f-string, a triple-quoted string and a backslash continuation, all closed", CONFIG, "stop"),
    ("a complete function with a comment after its except clause", RETRY, "stop"),
    ("prose followed by a fenced program", fenced(MEDIAN), "stop"),
    ("prose, a fenced program, more prose", fenced(FIZZBUZZ, afterword="\n\nThe loop prints 15 lines.\n"), "stop"),
    ("a bare ``` fence", fenced(STACK, "", "```\n", ""), "eos"),
    ("two fenced blocks, the last one complete", fenced("pip install numpy\n", opener="```bash\n")
     + "\nThen:\n\n" + fenced(MEDIAN, ""), "stop"),
    ("a complete one-liner", "print(sum(x * x for x in range(10)))", "stop"),
    ("cut inside a call's brackets", "print(sum(x * x for x in range(10)", "stop"),
    ("cut inside a list literal", 'paths = [\n    "/health",\n    "/metrics",\n', "stop"),
    ("cut inside a dict literal, in a fence", fenced(CONFIG[:40], afterword=""), "stop"),
    ("cut inside nested brackets after a comma", "result = max(min(a, b),", "eos"),
    ("cut inside a string", 'print("Hello, wor', "stop"),
    ("cut inside a single-quoted string", "greeting = 'Good morn", "stop"),
    ("cut inside a triple-quoted docstring", 'def area(r):\n    """Area of a circle of radius r.\n\n    Uses', "stop"),
    ("cut inside a triple-quoted string with a newline", 'QUERY = """SELECT name\n', "stop"),
    ("cut after a backslash continuation", "total = 1 + 2 + \\\n", "stop"),
    ("cut after a backslash at the very end", "total = 1 + 2 + \\", "stop"),
    ("cut after def f():", "def f():", "stop"),
    ("cut after def f(): and a newline", "def f():\n", "eos"),
    ("cut after an if line, comment included", "if ready:  # only when ready\n", "stop"),
    ("cut after else:", FIZZBUZZ[:FIZZBUZZ.index("        print(i)")], "stop"),
    ("cut after class Point:", "class Point:", "stop"),
    ("an open markdown fence around complete code", "Here you go:\n\n```python\n" + MEDIAN, "stop"),
    ("an open markdown fence after a closed one", fenced("x = 1\n") + "\n\n```python\nprint(x)\n", "stop"),
    ("finish_reason length on code that parses", MEDIAN, "length"),
    ("finish_reason length on fenced code that parses", fenced(STACK), "length"),
    ("finish_reason length on code cut at a line end", MEDIAN[:MEDIAN.index("    if len")], "length"),
    ("complete but invalid: a missing operand", "x = 1 +\nprint(x)\n", "stop"),
    ("complete but invalid: prose without a fence", "The answer is to sort the list and take the middle.",
     "stop"),
    ("complete but invalid: JavaScript in a python fence", fenced("const x = [1, 2, 3];\nconsole.log(x);\n"),
     "stop"),
    ("complete but invalid: a body that is not indented", "def f():\nreturn 1\n", "stop"),
    ("complete but invalid: unbalanced closing bracket", "print(len([1, 2]]))\n", "stop"),
    ("complete but invalid: a string left open before more code", 'name = "Ada\nprint(name)\n', "stop"),
    ("complete but invalid: the last block is not Python", fenced(MEDIAN) + "\nRun it with:\n"
     + fenced("python median.py\n", opener="```bash\n"), "stop"),
    ("brackets and quotes inside strings and comments do not count", 'print("(: [ {")  # (((\n', "stop"),
    ("a colon inside a string at the end does not open a block", 'label = "total:"\n', "stop"),
    ("Anthropic's stop_reason max_tokens on code that parses", MEDIAN, "max_tokens"),
    ("Gemini's finish_reason MAX_TOKENS on fenced code that parses", fenced(STACK), "MAX_TOKENS"),
    ("OpenAI Responses' max_output_tokens on code cut at a line end", MEDIAN[:MEDIAN.index("    if len")],
     "max_output_tokens"),
    ("Anthropic's model_context_window_exceeded on code that parses", "def f(x):\n    return x + 1\n",
     "model_context_window_exceeded"),
    ("a try with no except: Python's REPL asks for more", "try:\n    import numpy\n", "stop"),
    ("a decorator with no def", FIB[:FIB.index("def fib")], "stop"),
    ("a fence indented by three spaces is a fence", fenced(FIB, opener="   ```python\n"), "stop"),
    ("a docstring's ``` indented by four spaces is code, not a fence", fenced(SHOW), "stop"),
    ("Anthropic's end_turn on complete code", fenced(FIB), "end_turn"),
    ("Gemini's STOP on complete code", SHOW, "STOP"),
]
