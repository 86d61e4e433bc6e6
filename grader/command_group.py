"""The command line's group, whose instructors' commands and `serve` are imported only when one of them is asked
for (click's lazy subcommands): a student's `check` imports none of the batch, report and exporters' code."""
from __future__ import annotations

import importlib

import click

from grader import language

LAZY = {"grade-batch": "grader.instructor.commands:grade_batch", "merge": "grader.instructor.commands:merge_cmd",
        "report": "grader.instructor.commands:report_cmd", "gradescope": "grader.instructor.commands:gradescope_cmd",
        "init-ci": "grader.instructor.commands:init_ci", "serve": "grader.learner.warm.command:serve"}


class LazyGroup(click.Group):
    """A click group that also offers the commands of LAZY, each imported (with --lang) on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY and name not in self.commands:
            module, attribute = LAZY[name].split(":")
            command = getattr(importlib.import_module(module), attribute)
            language.add_option(command)
            self.add_command(command, name)
        return super().get_command(ctx, name)
