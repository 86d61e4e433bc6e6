"""Red team: a student's name is text in grades.csv in every spreadsheet, not only in those that split on commas.

A spreadsheet whose locale writes decimals with a comma (German, French) opens a .csv splitting on ';'. A name is
the upload's file name, which may hold ';': `ada;=cmd|' /C calc'!A0.zip` was written unquoted (no comma, quote
or newline in it), and such a spreadsheet showed its second part as a cell starting with '=', a formula. _cell's
leading ' guards only the start of the name.
"""
import csv

from grader.instructor import grades

NAMES = ["ada;=cmd|' /C calc'!A0", "bo;+1+1", "ed;@SUM(1)", "fay;-2+3"]
FORMULA_START = ("=", "+", "-", "@")


def test_no_cell_starts_like_a_formula_when_split_on_semicolons(tmp_path):
    path = grades.write_csv(tmp_path, ["kv_cache"], {name: None for name in NAMES}, {"kv_cache": 35.0})
    with path.open(newline="") as f:
        by_comma = list(csv.reader(f))
    assert sorted(row[0] for row in by_comma[1:]) == sorted(NAMES)  # the names, whole, where commas split
    with path.open(newline="") as f:
        cells = [cell for row in csv.reader(f, delimiter=";") for cell in row]
    assert not [cell for cell in cells if cell.startswith(FORMULA_START)]
