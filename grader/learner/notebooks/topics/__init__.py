"""Per-topic notebook content: CONCEPT (markdown); SETUP, optional: code that makes the inputs the experiments share
and calls no function of the topic; EXPERIMENTS (pairs of markdown and code using `impl`, `ref` and `plt`), each of
which reads nothing another experiment made, so that one skipped for an unwritten function leaves the next intact;
CLOSING, optional: what the technique does not do."""
