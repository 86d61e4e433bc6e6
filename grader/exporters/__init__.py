"""Render a validated results document for other tools: Gradescope, JUnit XML, a terminal summary."""
