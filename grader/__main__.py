from grader.cli import command_line

command_line()
