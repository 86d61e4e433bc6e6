"""The name that notebooks written before the learner's tools had a folder of their own import
(`import grader.notebooks as infergrade`): the same functions as grader.learner.notebooks, so they keep working."""
from grader.learner.notebooks import check, experiment, implementations, reference, start, use_cjk_font

__all__ = ["check", "experiment", "implementations", "reference", "start", "use_cjk_font"]
