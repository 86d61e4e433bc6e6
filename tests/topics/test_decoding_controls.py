"""Issue 26 point 18: the decoding notebook's table of which interface takes which control, checked against the
parameter lists of the installed SDKs (the crosscheck extra), so that a table that drifts from an SDK fails.

Each row names a control and, per interface, the parameters that carry it (a dash: none). For every cell the test
asserts that each named parameter is in that interface's list and that none of the row's other names is: a row
that says OpenAI has no top-k fails once `top_k` appears among `Completions.create`'s parameters. Only names are
compared, never a library's wording. An interface whose SDK is not installed is skipped (vLLM is not in the
crosscheck extra).
"""
import inspect
import re

import pytest

from grader.learner.notebooks.topics import decoding as notebook

INTERFACES = ("OpenAI Chat Completions", "OpenAI Responses", "Anthropic Messages", "Gemini",
              "Hugging Face `generate`", "vLLM")
CONTROLS = ("temperature", "top-p", "top-k", "frequency and presence penalties",
            "repetition penalty (this exercise's)", "stop strings", "minimum length", "output limit")


def controls_table() -> dict[str, dict[str, set[str]]]:
    """Control -> interface -> the parameter names the notebook's table gives (backticked names of a cell)."""
    lines = [line for line in notebook.CONCEPT.splitlines() if line.startswith("| ")]
    cells = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    header, rows = cells[0], cells[1:]
    assert tuple(header[1:]) == INTERFACES, header
    return {row[0]: {name: set(re.findall(r"`(\w+)`", cell)) for name, cell in zip(header[1:], row[1:])}
            for row in rows}


def openai_chat() -> set[str]:
    completions = pytest.importorskip("openai.resources.chat", reason="openai is not installed (crosscheck extra)")
    return set(inspect.signature(completions.Completions.create).parameters)


def openai_responses() -> set[str]:
    responses = pytest.importorskip("openai.resources.responses",
                                    reason="openai is not installed (crosscheck extra)")
    return set(inspect.signature(responses.Responses.create).parameters)


def anthropic_messages() -> set[str]:
    resources = pytest.importorskip("anthropic.resources", reason="anthropic is not installed (crosscheck extra)")
    return set(inspect.signature(resources.Messages.create).parameters)


def gemini() -> set[str]:
    types = pytest.importorskip("google.genai.types", reason="google-genai is not installed (crosscheck extra)")
    return set(types.GenerateContentConfig.model_fields)


def hugging_face() -> set[str]:
    transformers = pytest.importorskip("transformers", reason="transformers is not installed (crosscheck extra)")
    return set(transformers.GenerationConfig().to_dict())


def vllm() -> set[str]:
    sampling_params = pytest.importorskip("vllm.sampling_params", reason="vLLM is not installed")
    return set(inspect.signature(sampling_params.SamplingParams.from_optional).parameters)


PARAMETERS = dict(zip(INTERFACES, (openai_chat, openai_responses, anthropic_messages, gemini, hugging_face, vllm)))


def test_the_table_names_every_control_and_interface():
    table = controls_table()
    assert tuple(table) == CONTROLS
    assert table["top-k"]["OpenAI Chat Completions"] == set() and table["top-k"]["Gemini"] == {"top_k"}
    assert all(any(cells.values()) for cells in table.values())


def disagreements(table: dict[str, dict[str, set[str]]], interface: str, accepted: set[str]) -> list[str]:
    """Where the table's column for `interface` disagrees with the parameters the SDK `accepted`."""
    wrong = []
    for control, cells in table.items():
        named, row = cells[interface], set().union(*cells.values())
        wrong += [f"{control}: `{p}` is not a parameter" for p in sorted(named - accepted)]
        wrong += [f"{control}: `{p}` is a parameter the table leaves out" for p in sorted((row - named) & accepted)]
    return wrong


@pytest.mark.parametrize("interface", INTERFACES)
def test_the_table_agrees_with_the_sdk(interface):
    wrong = disagreements(controls_table(), interface, PARAMETERS[interface]())
    assert not wrong, f"{interface}: " + "; ".join(wrong)


def test_a_drifted_table_is_caught():
    """A column that claims a parameter the SDK lacks, or leaves out one it has, disagrees."""
    table = {"top-k": {"A": {"top_k"}, "B": set()}, "top-p": {"A": {"top_p"}, "B": {"top_p"}}}
    assert disagreements(table, "A", {"top_p"}) == ["top-k: `top_k` is not a parameter"]
    assert disagreements(table, "B", {"top_p", "top_k"}) == ["top-k: `top_k` is a parameter the table leaves out"]
    assert disagreements(table, "B", {"top_p"}) == []
