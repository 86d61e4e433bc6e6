"""Reading a submission: the folder the user named, a notebook's tagged cells, an archive of a class's uploads, and
which topics a student has started. Below grading: imports nothing of grading, the engine, the learner's or the
instructor's tools."""
