"""Self-study notebooks: `import grader.notebooks as infergrade`, then `infergrade.check("sampling.top_p_filter")`."""
from grader.notebooks.experiment import experiment, implementations, reference
from grader.notebooks.inline import check, start

__all__ = ["check", "experiment", "implementations", "reference", "start"]
