"""Per-topic notebook content: CONCEPT (markdown) and EXPERIMENTS (pairs of markdown and code using `impl`)."""
