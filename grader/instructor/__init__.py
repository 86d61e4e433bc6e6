"""The instructor's tools: grading a class (grade-batch, merge, report), the student handout, the Gradescope
autograder, CI workflows, selftest and the pinned versions."""
