"""The student's and self-learner's tools beside `check` and `grade`: watch, progress overview, the checks of one
function, and the self-study notebooks."""
