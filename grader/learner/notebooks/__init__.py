"""Self-study notebooks: `import grader.learner.notebooks as infergrade`, then
`infergrade.check("sampling.top_p_filter")`."""
from grader.learner.notebooks.experiment import experiment, implementations, reference
from grader.learner.notebooks.fonts import use_cjk_font
from grader.learner.notebooks.inline import check, start

__all__ = ["check", "experiment", "implementations", "reference", "start", "use_cjk_font"]
